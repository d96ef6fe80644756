"""The step contract, executed: record RUNNING before acting, SUCCEEDED/FAILED after, typed errors.

Called by the state machine for every Task: begin, run (ensure + watch), await (an event ends the wait), finish,
fail.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError, EndpointConnectionError

from functions.adapters import aws
from functions.domain import operations as ops
from functions.domain import wakes
from functions.domain.errors import OperationCancelled, PermanentStepError, StepError, TransientStepError
from functions.domain.kinds import KINDS, step_budget
from functions.domain.operations import ErrorInfo, Operation, OperationStatus
from functions.domain.ports import EventPublisher, OperationRepository, StateStore
from functions.domain.service import OperationService
from functions.domain.workflow import Done, Skip, Wait, WakeOn, event_wait, known_end_wait, next_wait
from functions.observability import logger
from functions.settings import StepsSettings
from functions.workflows.context import StepContext, Workflow

TRANSIENT_CODES = {
    "Throttling", "ThrottlingException", "ThrottledException", "TooManyRequestsException",
    "RequestLimitExceeded", "ServiceUnavailable", "ServiceUnavailableException", "InternalFailure",
    "InternalError", "InternalServerError", "InternalServerException", "RequestTimeout",
    "RequestTimeoutException", "PriorRequestNotComplete", "SlowDown", "ProvisionedThroughputExceededException",
    "TransactionInProgressException",
}


def classify(exc: Exception) -> StepError:
    """One mapping from AWS/Kubernetes failures to retryable-or-not step errors."""
    if isinstance(exc, StepError):
        return exc
    if isinstance(exc, ClientError):
        code = exc.response.get("Error", {}).get("Code", "ClientError")
        status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 400)
        message = exc.response.get("Error", {}).get("Message") or str(exc)
        op_name = getattr(exc, "operation_name", "")
        text = f"{op_name}: {message}" if op_name else message
        if code in TRANSIENT_CODES or status >= 500:
            return TransientStepError(code, text)
        return PermanentStepError(code, text)
    if isinstance(exc, EndpointConnectionError | BotoCoreError | ConnectionError | TimeoutError):
        return TransientStepError(type(exc).__name__, str(exc))
    k8s_status = getattr(exc, "status", None)  # kubernetes ApiException
    if isinstance(k8s_status, int):
        if k8s_status == 429 or k8s_status >= 500:
            return TransientStepError(f"Kubernetes{k8s_status}", str(getattr(exc, "reason", exc)))
        return PermanentStepError(f"Kubernetes{k8s_status}", str(getattr(exc, "body", exc))[:500])
    return PermanentStepError(type(exc).__name__, str(exc))


MIN_BUDGET_S = 120.0  # a compressed sandbox budget never drops below two real minutes


def reply(status: str, wait_seconds: int = 0, wake: WakeOn | None = None, next_step: str = "") -> dict[str, Any]:
    """What a Task gets back: DONE, WAIT (a Wait state of wait_seconds) or AWAIT (a task-token wait for `wake`,
    looking again after wait_seconds at the latest); `next`: after a DONE, the next step the operation needs."""
    return {"status": status, "wait_seconds": wait_seconds,
            "wake": wake.model_dump(mode="json") if wake is not None else None, "next": next_step}


def next_needed(op: Operation, name: str) -> str:
    """The first step after `name`, in its kind's order, that the operation lists ("Finish" when none is)."""
    order = KINDS.get(op.kind) or tuple(s.name for s in op.steps)
    listed = {s.name for s in op.steps}
    later = order[order.index(name) + 1:] if name in order else ()
    return next((s for s in later if s in listed), "Finish")


def seconds_since(ts: str | None) -> float:
    if not ts:
        return 0.0
    return (datetime.now(UTC) - datetime.fromisoformat(ts.replace("Z", "+00:00"))).total_seconds()


def _human(seconds: float) -> str:
    return f"{seconds / 3600:g} h" if seconds >= 3600 else f"{seconds / 60:g} min"


@dataclass
class Engine:
    repo: OperationRepository
    publisher: EventPublisher
    settings: StepsSettings
    state: StateStore
    workflows: Mapping[str, Workflow]
    clients: Callable[[str, str | None], Any] = aws.client
    resume: Callable[[str], bool] | None = None  # SendTaskSuccess(token); False when the token is stale

    def _service(self) -> OperationService:
        # Only record/publish are used here; the API owns start/retry/cancel.
        return OperationService(repo=self.repo, publisher=self.publisher, runner=None, guard=None,  # type: ignore[arg-type]
                                correlation_id=lambda: logger.get_correlation_id() or "-")

    def _load(self, op_id: str) -> Operation:
        op = self.repo.get(op_id)
        if op is None:
            raise PermanentStepError("OperationNotFound", f"operation {op_id} does not exist")
        return op

    def handle(self, event: dict[str, Any]) -> dict[str, Any]:
        action = event["action"]
        op = self._load(event["operation_id"])
        if action == "fail":
            return self._fail(op, event.get("error") or {})
        if op.status is OperationStatus.CANCELLED:
            raise OperationCancelled("OperationCancelled", f"operation {op.id} was cancelled")
        if action == "begin":
            begun = ops.begin(op, event.get("execution"))
            self._hook(begun)
            self._service().record(op, begun)
            return reply("DONE")
        if action == "run":
            answer = self._run(op, event["step"], can_await=bool(event.get("wakes")))
            return {**answer, "next": next_needed(op, event["step"])} if answer["status"] == "DONE" else answer
        if action == "await":
            return self._await(op, str(event["awaiting"]), WakeOn.model_validate(event["wake"]), str(event["token"]))
        if action == "finish":
            done = ops.succeed(op, op.outputs())
            self._hook(done)  # records follow before the operation shows as ended
            saved = self._service().record(op, done)
            self.repo.release(saved)
            return reply("DONE")
        raise PermanentStepError("UnknownAction", f"unknown action {action!r}")

    def _hook(self, op: Operation) -> None:
        """Let the kind's records follow the operation (RUNNING, SUCCEEDED, FAILED)."""
        workflow = self.workflows.get(op.kind)
        hook = workflow.on_status if workflow else None
        if hook is not None:
            try:
                hook(op, self.state)
            except Exception:
                logger.exception("status hook failed", kind=op.kind)

    def _run(self, op: Operation, name: str, can_await: bool = False) -> dict[str, Any]:
        svc = self._service()
        if name not in {s.name for s in op.steps}:
            return reply("DONE")  # a step this operation does not need (features.update)
        step = op.step(name)
        if step.status.done:
            return reply("DONE")  # a retry skips what already succeeded
        workflow = self.workflows.get(op.kind)
        impl = workflow.steps.get(name) if workflow else None
        if workflow is None or impl is None:
            raise PermanentStepError("UnknownStep", f"{op.kind} has no step {name!r}")
        if step.status is not ops.StepStatus.RUNNING:
            op = svc.record(op, ops.step_started(op, name))  # the phase is recorded before anything acts
            step = op.step(name)
        real_budget = step_budget(op.kind, name)
        if seconds_since(step.started_at) > max(MIN_BUDGET_S, real_budget / max(self.settings.time_scale, 1e-6)):
            timed_out = PermanentStepError("StepTimedOut", f"{name} did not finish within {_human(real_budget)}"
                                           f" (last: {step.message or 'no progress reported'})")
            svc.record(op, ops.step_failed(op, name, ErrorInfo(code=timed_out.code, message=timed_out.message,
                                                               retryable=True)))
            raise timed_out
        ctx = StepContext(operation=op, step=step, settings=self.settings, clients=self.clients, state=self.state)
        try:
            outcome = impl(ctx)
        except Exception as exc:
            err = classify(exc)
            kept = ops.merge_outputs(op, name, ctx.made)  # ids the step made before it failed
            if isinstance(err, TransientStepError):
                logger.warning("transient step error", step=name, code=err.code, error=err.message)
                svc.record(op, ops.step_progress(kept, name, f"retrying after {err.code}: {err.message}"[:500]))
            else:
                logger.error("step failed", step=name, code=err.code, error=err.message)
                svc.record(op, ops.step_failed(kept, name, ErrorInfo(code=err.code, message=err.message[:1000],
                                                                     retryable=True)))
            raise err from exc
        if isinstance(outcome, Wait):
            scale = self.settings.time_scale
            svc.record(op, ops.step_progress(op, name, outcome.message, {**ctx.made, **outcome.outputs}))
            if outcome.wake_on is not None and can_await:
                return reply("AWAIT", event_wait(step.polls, outcome.expected_seconds, scale), outcome.wake_on)
            if outcome.from_start:
                return reply("WAIT", known_end_wait(step.polls, outcome.expected_seconds, scale))
            return reply("WAIT", next_wait(step.polls, outcome.expected_seconds, scale))
        if isinstance(outcome, Skip):
            svc.record(op, ops.step_skipped(op, name, outcome.message))
            return reply("DONE")
        assert isinstance(outcome, Done)
        svc.record(op, ops.step_succeeded(op, name, outcome.message, {**ctx.made, **outcome.outputs}))
        return reply("DONE")

    def _await(self, op: Operation, name: str, wake: WakeOn, token: str) -> dict[str, Any]:
        """Record the task token where the events function finds it, then look once: a resource that already
        moved (its event came before the token was recorded) resumes the wait at once."""
        try:
            waiter = wakes.register(self.state, wake, op.id, name, token)
        except Exception as exc:
            raise classify(exc) from exc  # a throttle is retried by the state's Retry
        try:
            now = self._status_of(wake)
        except Exception:  # the look is an optimisation: the event, or the slow poll, still ends the wait
            logger.warning("could not look at the waited-on resource", step=name, resource=wake.resource)
            now = None
        if now is not None and now != wake.status and self.resume is not None:
            logger.info("resumed at once", step=name, resource=wake.resource, status=now)
            if self.resume(token):
                wakes.forget(self.state, waiter)
        return reply("AWAITING")

    def _status_of(self, wake: WakeOn) -> str | None:
        """The waited-on resource's status now ("Gone" when it no longer exists; None: unknown kind)."""
        if wake.kind == wakes.HYPERPOD:
            from functions.workflows import hyperpod

            region, _, name = wake.resource.partition("/")
            cluster = hyperpod.describe(self.clients("sagemaker", region), name)
            return str(cluster.get("ClusterStatus")) if cluster is not None else "Gone"
        if wake.kind == wakes.OPERATION:
            child = self.repo.get(wake.resource)  # only its end ends the wait (not PENDING -> RUNNING)
            if child is None:
                return "Gone"
            return child.status.value if child.status.terminal else wake.status
        return None

    def _fail(self, op: Operation, error: dict[str, Any]) -> dict[str, Any]:
        if op.status.terminal:
            self.repo.release(op)
            return reply("DONE")
        code = str(error.get("Error") or "StepFailed")
        message = str(error.get("Cause") or code)
        try:
            cause = json.loads(message)
            message = str(cause.get("errorMessage") or message)
        except (ValueError, AttributeError):
            pass
        info = ErrorInfo(code=code, message=message[:1000], retryable=True)
        failed = ops.fail(op, info)
        self._hook(failed)
        saved = self._service().record(op, failed)
        self.repo.release(saved)
        return reply("DONE")
