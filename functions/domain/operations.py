"""The Operation record and its transitions: pure functions over frozen models.

Every mutation PodStart makes is an operation. Its workflow records each step's phase before the
step acts, so a retry resumes at the failed step and never repeats a finished mutation.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from functions.domain import redaction
from functions.domain.errors import Conflict

STATUS_TOOL = "get_operation"


class OperationStatus(StrEnum):
    PENDING = "PENDING"
    RUNNING = "RUNNING"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"

    @property
    def terminal(self) -> bool:
        return self in (OperationStatus.SUCCEEDED, OperationStatus.FAILED, OperationStatus.CANCELLED)


class StepStatus(StrEnum):
    PENDING = "PENDING"
    RUNNING = "RUNNING"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"
    SKIPPED = "SKIPPED"

    @property
    def done(self) -> bool:
        return self in (StepStatus.SUCCEEDED, StepStatus.SKIPPED)


class ErrorInfo(BaseModel):
    model_config = ConfigDict(frozen=True)

    code: str
    message: str
    retryable: bool


class Step(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    status: StepStatus = StepStatus.PENDING
    started_at: str | None = None
    ended_at: str | None = None
    message: str | None = None
    error: ErrorInfo | None = None
    attempts: int = 0  # times the step was (re)started, across operation retries
    polls: int = 0  # watch iterations in the current attempt
    outputs: dict[str, Any] = Field(default_factory=dict)  # what the step made or adopted


class Target(BaseModel):
    model_config = ConfigDict(frozen=True)

    cluster: str | None = None
    region: str | None = None
    resource: str | None = None  # e.g. an instance group name

    @property
    def lock_key(self) -> str:
        """Operations on the same cluster run one at a time; a job's operations lock only that job (jobs
        are independent workloads: one job watched to Running must not hold up another's submit)."""
        if self.cluster and self.resource and self.resource.startswith(("jobs/", "specs/")):
            # a spec.apply (specs/apply) holds its own lock: its child operations take the cluster's
            return f"LOCK#{self.region or '-'}/{self.cluster}/{self.resource}"
        return f"LOCK#{self.region or '-'}/{self.cluster or self.resource or '-'}"

    @property
    def index_key(self) -> str:
        return f"cluster/{self.cluster}" if self.cluster else f"resource/{self.resource or '-'}"


class Actor(BaseModel):
    model_config = ConfigDict(frozen=True)

    sub: str
    name: str
    role: str | None = None  # viewer | operator | admin, as it was when the actor acted


class Attempt(BaseModel):
    """One run of the operation: the first start or a retry, by whom and when."""

    model_config = ConfigDict(frozen=True)

    number: int
    action: str  # start | retry | cancel
    principal: Actor
    at: str


class Operation(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    kind: str
    target: Target
    status: OperationStatus = OperationStatus.PENDING
    phase: str | None = None
    steps: tuple[Step, ...] = ()
    request: dict[str, Any] = Field(default_factory=dict)
    request_hash: str = ""
    result: dict[str, Any] | None = None
    error: ErrorInfo | None = None
    principal: Actor
    idempotency_key: str | None = None
    created_at: str
    updated_at: str
    attempt: int = 1  # 1 + number of retries
    attempts: tuple[Attempt, ...] = ()  # who started and who retried, in order
    execution_arn: str | None = None
    revision: int = 0  # optimistic concurrency: +1 on every write
    version: int = 0  # what readers watch: +1 only when something a reader sees changes (see `visible`)
    changed_at: str | None = None  # when `version` last moved
    status_tool: str = STATUS_TOOL

    @property
    def links(self) -> dict[str, str]:
        base = f"/v1/operations/{self.id}"
        links = {"self": base}
        if self.status in (OperationStatus.FAILED, OperationStatus.CANCELLED):
            links["retry"] = f"{base}/retry"
        if not self.status.terminal:
            links["cancel"] = f"{base}/cancel"
        return links

    def step(self, name: str) -> Step:
        for s in self.steps:
            if s.name == name:
                return s
        raise KeyError(name)

    def outputs(self) -> dict[str, Any]:
        """Everything earlier steps recorded, merged in step order (later steps win)."""
        merged: dict[str, Any] = {}
        for s in self.steps:
            merged.update(s.outputs)
        return merged

    def public(self) -> dict[str, Any]:
        """The record as every face shows it (REST body, MCP structured content, events)."""
        body = self.model_dump(mode="json", exclude={"request_hash", "version", "execution_arn", "revision",
                                                     "changed_at"})
        body["request"] = env_names_only(body.get("request"))
        body["links"] = self.links
        body["version"] = self.version
        return body

    def visible(self) -> tuple[Any, ...]:
        """What a reader of the operation cares about; `version` moves only when this changes (a bare
        internal poll of a step, which only counts polls or merges outputs, leaves it alone)."""
        return (self.status, self.phase, self.attempt, self.error,
                tuple((s.name, s.status, s.message, s.error) for s in self.steps))


def env_names_only(value: Any) -> Any:
    """A request as readers see it: the names of environment variables (a job's `env`), never their values."""
    if isinstance(value, dict):
        return {k: ({n: redaction.MASK for n in v} if k == "env" and isinstance(v, dict) else env_names_only(v))
                for k, v in value.items()}
    if isinstance(value, list):
        return [env_names_only(v) for v in value]
    return value


def advance(old: Operation, new: Operation, now: str | None = None) -> Operation:
    """The next stored revision of `old`: revision + 1; version + 1 only on a reader-visible change."""
    changed = old.visible() != new.visible()
    return new.model_copy(update={
        "revision": old.revision + 1,
        "version": old.version + 1 if changed else old.version,
        "changed_at": (now or now_iso()) if changed else old.changed_at,
    })


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def request_hash(kind: str, target: Target, request: dict[str, Any]) -> str:
    canonical = json.dumps(
        {"kind": kind, "target": target.model_dump(mode="json"), "request": request},
        sort_keys=True,
        separators=(",", ":"),
        default=str,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def new_operation(
    *,
    op_id: str,
    kind: str,
    target: Target,
    steps: tuple[str, ...],
    request: dict[str, Any],
    principal: Actor,
    idempotency_key: str | None,
    now: str | None = None,
    request_digest: str | None = None,
) -> Operation:
    """`request_digest`: the hash of the request as the caller sent it (before admission normalized it),
    which is what a replay of the same request compares with. The stored request passes the one redaction first
    (a credential-looking value is masked; the REST edge refused any in the body already)."""
    ts = now or now_iso()
    return Operation(
        id=op_id,
        kind=kind,
        target=target,
        steps=tuple(Step(name=s) for s in steps),
        request=redaction.redact(request, by_key=False, bound=False),
        request_hash=request_digest or request_hash(kind, target, request),
        principal=principal,
        idempotency_key=idempotency_key,
        created_at=ts,
        updated_at=ts,
        changed_at=ts,
        attempts=(Attempt(number=1, action="start", principal=principal, at=ts),),
    )


def _replace_step(op: Operation, name: str, **changes: Any) -> tuple[Step, ...]:
    op.step(name)  # KeyError for an unknown step
    return tuple(s.model_copy(update=changes) if s.name == name else s for s in op.steps)


def _touch(op: Operation, now: str | None, **changes: Any) -> Operation:
    return op.model_copy(update={"updated_at": now or now_iso(), **changes})


def begin(op: Operation, execution_arn: str | None, now: str | None = None) -> Operation:
    if op.status.terminal:
        raise Conflict(f"operation {op.id} is {op.status}")
    return _touch(op, now, status=OperationStatus.RUNNING, execution_arn=execution_arn or op.execution_arn)


def step_started(op: Operation, name: str, now: str | None = None) -> Operation:
    ts = now or now_iso()
    s = op.step(name)
    steps = _replace_step(
        op, name, status=StepStatus.RUNNING, started_at=ts, ended_at=None, error=None,
        message=None, attempts=s.attempts + 1, polls=0,
    )
    return _touch(op, ts, steps=steps, phase=name, status=OperationStatus.RUNNING)


def step_progress(
    op: Operation, name: str, message: str | None, outputs: dict[str, Any] | None = None,
    now: str | None = None,
) -> Operation:
    s = op.step(name)
    steps = _replace_step(
        op, name, polls=s.polls + 1, message=message or s.message, outputs={**s.outputs, **(outputs or {})}
    )
    return _touch(op, now, steps=steps)


def merge_outputs(op: Operation, name: str, outputs: dict[str, Any]) -> Operation:
    if not outputs:
        return op
    s = op.step(name)
    return op.model_copy(update={"steps": _replace_step(op, name, outputs={**s.outputs, **outputs})})


def step_succeeded(
    op: Operation, name: str, message: str | None, outputs: dict[str, Any] | None = None,
    now: str | None = None,
) -> Operation:
    ts = now or now_iso()
    s = op.step(name)
    steps = _replace_step(
        op, name, status=StepStatus.SUCCEEDED, ended_at=ts, message=message or s.message,
        outputs={**s.outputs, **(outputs or {})}, error=None,
    )
    return _touch(op, ts, steps=steps)


def step_skipped(op: Operation, name: str, message: str, now: str | None = None) -> Operation:
    ts = now or now_iso()
    steps = _replace_step(op, name, status=StepStatus.SKIPPED, ended_at=ts, message=message)
    return _touch(op, ts, steps=steps)


def step_failed(op: Operation, name: str, error: ErrorInfo, now: str | None = None) -> Operation:
    ts = now or now_iso()
    steps = _replace_step(op, name, status=StepStatus.FAILED, ended_at=ts, error=error, message=error.message)
    return _touch(op, ts, steps=steps)


def fail(op: Operation, error: ErrorInfo, now: str | None = None) -> Operation:
    """The operation failed at its current phase; the phase step carries the error."""
    ts = now or now_iso()
    steps = op.steps
    if op.phase:
        s = op.step(op.phase)
        if s.status is not StepStatus.FAILED:
            steps = _replace_step(op, op.phase, status=StepStatus.FAILED, ended_at=ts, error=error,
                                  message=error.message)
        else:
            error = s.error or error
    return _touch(op, ts, steps=steps, status=OperationStatus.FAILED, error=error)


def succeed(op: Operation, result: dict[str, Any] | None, now: str | None = None) -> Operation:
    return _touch(op, now, status=OperationStatus.SUCCEEDED, result=result, error=None, phase=None)


def cancel(op: Operation, now: str | None = None, by: Actor | None = None) -> Operation:
    if op.status.terminal:
        raise Conflict(f"operation {op.id} is already {op.status}; only a PENDING or RUNNING one can be cancelled",
                       operation_id=op.id)
    ts = now or now_iso()
    err = ErrorInfo(code="OperationCancelled", message="cancelled by request", retryable=True)
    steps = op.steps
    if op.phase and op.step(op.phase).status is StepStatus.RUNNING:
        steps = _replace_step(op, op.phase, status=StepStatus.FAILED, ended_at=ts, error=err, message=err.message)
    attempts = op.attempts if by is None else (*op.attempts, Attempt(number=op.attempt, action="cancel",
                                                                      principal=by, at=ts))
    return _touch(op, ts, steps=steps, status=OperationStatus.CANCELLED, error=err, attempts=attempts)


def prepare_retry(op: Operation, by: Actor, now: str | None = None) -> Operation:
    """Reset what did not finish; steps that SUCCEEDED stay done and are skipped by the new run."""
    if op.status not in (OperationStatus.FAILED, OperationStatus.CANCELLED):
        raise Conflict(
            f"operation {op.id} is {op.status}; only a FAILED or CANCELLED operation can be retried",
            operation_id=op.id,
        )
    ts = now or now_iso()
    steps = tuple(
        s if s.status.done else s.model_copy(update={"status": StepStatus.PENDING, "error": None, "ended_at": None})
        for s in op.steps
    )
    attempt = op.attempt + 1
    attempts = (*op.attempts, Attempt(number=attempt, action="retry", principal=by, at=ts))
    return _touch(op, ts, steps=steps, status=OperationStatus.PENDING, error=None, attempt=attempt,
                  attempts=attempts, phase=None)


def changes(old: Operation | None, new: Operation) -> list[tuple[str, dict[str, Any]]]:
    """Events a write implies: (detail-type, data), in the order they happened."""
    out: list[tuple[str, dict[str, Any]]] = []
    old_steps = {s.name: s for s in old.steps} if old else {}
    for s in new.steps:
        before = old_steps.get(s.name)
        if before is None or before.status != s.status or before.message != s.message:
            if old is None and s.status is StepStatus.PENDING:
                continue
            out.append(("Operation Step Changed", {
                "operation_id": new.id, "kind": new.kind, "target": new.target.model_dump(mode="json"),
                "step": s.model_dump(mode="json", exclude={"outputs"}),
            }))
    if old is None or old.status != new.status:
        out.append(("Operation Status Changed", {
            "operation_id": new.id, "kind": new.kind, "target": new.target.model_dump(mode="json"),
            "status": new.status.value, "phase": new.phase,
            "previous_status": old.status.value if old else None,
            "error": new.error.model_dump(mode="json") if new.error else None,
            # who caused this status: the start's principal, or whoever retried or cancelled it last
            "actor": (new.attempts[-1].principal if new.attempts else new.principal).model_dump(mode="json"),
        }))
    return out


def execution_name(op: Operation) -> str:
    """The name of the Step Functions execution of the operation's current attempt (unique per state machine: a
    second start of the same attempt starts nothing; an event about another attempt's execution is not this one's)."""
    return f"{op.id}-{op.attempt}"
