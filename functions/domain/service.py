"""Operations engine: start, read, watch, retry and cancel operations. Pure: adapters come in."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from functions.domain import operations as ops
from functions.domain.errors import Conflict, InvalidInput, NotFound
from functions.domain.events import envelope
from functions.domain.kinds import check_role
from functions.domain.operations import Actor, Operation, OperationStatus, Target
from functions.domain.ports import (
    EventPublisher,
    IdempotencyGuard,
    IdempotencyInProgress,
    IdempotencyMismatch,
    LockHeld,
    OperationRepository,
    StaleWrite,
    WorkflowRunner,
)

MAX_WAIT_SECONDS = 20  # API Gateway answers within 29 s
RACE_WINDOW_S = 2.0


def _age(ts: str | None) -> float:
    if not ts:
        return float("inf")
    return (datetime.now(UTC) - datetime.fromisoformat(ts.replace("Z", "+00:00"))).total_seconds()


class Admission(Protocol):
    def normalize(self) -> dict[str, Any]:
        """Check the request against live state (raise a Problem to refuse); the request to store."""

    def claim(self, op: Operation) -> None: ...

    def unclaim(self, op: Operation) -> None: ...


def new_id() -> str:
    return "op-" + uuid.uuid4().hex[:20]


@dataclass
class OperationService:
    repo: OperationRepository
    publisher: EventPublisher
    runner: WorkflowRunner
    guard: IdempotencyGuard
    correlation_id: Callable[[], str] = lambda: "-"
    id_factory: Callable[[], str] = new_id
    sleep: Callable[[float], None] = time.sleep
    monotonic: Callable[[], float] = time.monotonic
    steps_for: dict[str, tuple[str, ...]] = field(default_factory=dict)

    # -- writes -------------------------------------------------------------------------------
    def record(self, old: Operation | None, new: Operation) -> Operation:
        saved = self.repo.save(old, ops.advance(old, new)) if old is not None else new
        cid = self.correlation_id()
        self.publisher.publish([envelope(t, d, cid) for t, d in ops.changes(old, saved)])
        return saved

    def start(
        self,
        *,
        kind: str,
        target: Target,
        request: dict[str, Any],
        principal: Actor,
        idempotency_key: str | None,
        admission: Admission | None = None,
        steps: tuple[str, ...] | None = None,
    ) -> tuple[Operation, bool]:
        """Start an operation; returns (operation, created). A replayed key returns the first one.

        `admission` checks the request against live state and normalizes it; it runs only for a new
        request (a replay returns the first operation without checking again), and it may claim a
        resource (a cluster name) that is released if the operation cannot be stored.
        """
        all_steps = self.steps_for.get(kind)
        if all_steps is None or not self.runner.has_workflow(kind):
            raise NotFound(f"no workflow is deployed for operation kind {kind!r}")
        if steps is None:
            steps = all_steps
        elif not steps or [s for s in all_steps if s in steps] != list(steps):
            # a kind whose steps depend on the request (features.update) lists only those it needs, in order
            raise ValueError(f"{steps} is not an ordered subset of {kind}'s steps")
        rhash = ops.request_hash(kind, target, request)
        created: list[Operation] = []

        def create() -> str:
            if idempotency_key:  # a replay after the first attempt died half way: finish that one
                orphan = self._unlaunched(target, principal, idempotency_key, rhash)
                if orphan is not None:
                    created.append(self._launch(orphan))
                    return orphan.id
            normalized = admission.normalize() if admission else request
            check_role(principal.role, kind, normalized)  # what this very request needs (FSx removal: admin)
            op = ops.new_operation(
                op_id=self.id_factory(), kind=kind, target=target, steps=steps, request=normalized,
                principal=principal, idempotency_key=idempotency_key, request_digest=rhash,
            )
            if admission:
                admission.claim(op)
            try:
                self._create_locked(op)
            except Exception:
                if admission:
                    admission.unclaim(op)
                raise
            self.record(None, op)
            created.append(self._launch(op))
            return op.id

        if idempotency_key:
            try:
                op_id = self.guard.once(scope=principal.sub, key=idempotency_key, request_hash=rhash, create=create)
            except IdempotencyMismatch:
                raise InvalidInput(
                    "Idempotency-Key was already used with a different request; use a new key for a new request",
                    errors=[{"loc": ["header", "Idempotency-Key"], "msg": "reused with a different request"}],
                ) from None
            except IdempotencyInProgress:
                raise Conflict("a request with this Idempotency-Key is still being processed; retry shortly",
                               idempotency_key_in_progress=True) from None
        else:
            op_id = create()
        if created:
            return created[0], True
        return self.get(op_id), False

    def deployed(self, kind: str) -> bool:
        return kind in self.steps_for and self.runner.has_workflow(kind)

    def check_free(self, target: Target) -> None:
        """Read only: the 409 a start would answer while another operation holds the target (a dry run's check)."""
        holder_id = self.repo.holder(target)
        holder = self.repo.get(holder_id) if holder_id else None
        if holder is not None and not holder.status.terminal:
            raise Conflict(
                f"{holder.kind} operation {holder.id} is {holder.status} on "
                f"{target.cluster or target.resource}; wait for it to finish or cancel it",
                running_operation=holder.id,
                running_operation_kind=holder.kind,
            )

    def _unlaunched(self, target: Target, principal: Actor, key: str, rhash: str) -> Operation | None:
        """The operation this very request (same caller, key and body) stored before its process died:
        it holds the target's lock, is still PENDING, and no workflow runs it yet."""
        holder_id = self.repo.holder(target)
        holder = self.repo.get(holder_id) if holder_id else None
        if (holder is not None and holder.status is OperationStatus.PENDING and holder.execution_arn is None
                and holder.idempotency_key == key and holder.principal.sub == principal.sub
                and holder.request_hash == rhash):
            return holder
        return None

    def _create_locked(self, op: Operation) -> None:
        for _ in range(2):
            try:
                self.repo.create(op)
                return
            except LockHeld as held:
                self._raise_if_active(op.target, held.holder_id)
        raise Conflict(f"{op.target.cluster or op.target.resource} is busy; try again")

    def _raise_if_active(self, target: Target, holder_id: str) -> None:
        holder = self.repo.get(holder_id)
        if holder is not None and not holder.status.terminal:
            raise Conflict(
                f"{holder.kind} operation {holder.id} is {holder.status} on "
                f"{target.cluster or target.resource}; wait for it to finish or cancel it",
                running_operation=holder.id,
                running_operation_kind=holder.kind,
            )
        self.repo.break_lock(target, holder_id)  # a stale lock left by an operation that ended

    def _launch(self, op: Operation) -> Operation:
        try:
            arn = self.runner.start(op)
        except Exception as exc:  # the workflow never started: fail the operation, free the target
            failed = ops.fail(op, ops.ErrorInfo(code="WorkflowStartFailed", message=str(exc), retryable=True))
            failed = self.record(self.get(op.id), failed)
            self.repo.release(failed)
            return failed
        for _ in range(5):
            current = self.get(op.id)
            if current.execution_arn == arn or current.status.terminal:
                return current
            try:
                return self.record(current, current.model_copy(update={"execution_arn": arn}))
            except StaleWrite:  # the workflow's first step wrote meanwhile
                continue
        return self.get(op.id)

    def retry(self, op_id: str, principal: Actor) -> Operation:
        op = self.get(op_id)
        fresh = ops.prepare_retry(op, principal)  # Conflict unless FAILED/CANCELLED
        for _ in range(2):
            try:
                self.repo.acquire(fresh)
                break
            except LockHeld as held:
                if held.holder_id == op.id:
                    break
                self._raise_if_active(op.target, held.holder_id)
        saved = self.record(op, fresh)
        return self._launch(saved)

    def cancel(self, op_id: str, by: Actor | None = None) -> Operation:
        for _ in range(5):  # a running step records its progress meanwhile: read again and cancel that
            op = self.get(op_id)
            try:
                cancelled = self.record(op, ops.cancel(op, by=by))
                break
            except StaleWrite:
                continue
        else:
            raise Conflict(f"operation {op_id} kept changing while it was being cancelled; try again")
        if op.execution_arn:
            try:
                self.runner.stop(op.execution_arn, "cancelled by request")
            except Exception:
                pass
        self.repo.release(cancelled)
        return cancelled

    def sweep(self, older_than_seconds: float, now: float | None = None,
              follow: Callable[[Operation], None] | None = None) -> list[Operation]:
        """Fail operations left PENDING with no workflow (the API died between storing the operation and
        starting its execution) and free their targets. An execution that did start (its name is derived
        from the operation id) is attached instead. `follow` lets the kind's records follow the failure before
        the operation shows it (as a workflow's end does: a reader who sees the operation FAILED sees them too)."""
        swept: list[Operation] = []
        for op in self.repo.pending_older_than(older_than_seconds, now):
            if op.execution_arn is not None or op.status is not OperationStatus.PENDING:
                continue
            arn = self.runner.find(op)
            try:
                if arn is not None:
                    self.record(op, op.model_copy(update={"execution_arn": arn}))
                    continue
                ended = ops.fail(op, ops.ErrorInfo(
                    code="WorkflowNeverStarted", retryable=True,
                    message="the request was stored but its workflow never started (the API stopped half way); "
                            "retry the operation or send the request again with the same Idempotency-Key"))
                if follow is not None:
                    follow(ended)
                failed = self.record(op, ended)
            except StaleWrite:
                continue  # someone moved it meanwhile: it is not an orphan
            self.repo.release(failed)
            swept.append(failed)
        return swept

    # -- reads --------------------------------------------------------------------------------
    def get(self, op_id: str) -> Operation:
        op = self.repo.get(op_id)
        if op is None:
            raise NotFound(f"operation {op_id} does not exist")
        return op

    def watch(self, op_id: str, wait_seconds: float, since_version: int | None = None) -> Operation:
        """Long poll: return on the operation's next reader-visible change, when it ends, or after the wait.

        A stale `since_version` is harmless: it does not make the call return at once (a client that keeps
        passing an old version would otherwise poll in a busy loop); only a change made in the last
        RACE_WINDOW_S seconds that the caller may have missed between two calls returns at once.
        """
        op = self.get(op_id)
        if op.status.terminal or wait_seconds <= 0:
            return op
        if since_version is not None and since_version < op.version and _age(op.changed_at) <= RACE_WINDOW_S:
            return op
        baseline = op.version
        deadline = self.monotonic() + min(wait_seconds, MAX_WAIT_SECONDS)
        delay = 0.25
        while self.monotonic() < deadline:
            self.sleep(min(delay, max(0.0, deadline - self.monotonic())))
            op = self.get(op_id)
            if op.version != baseline or op.status.terminal:
                return op
            delay = min(delay * 1.5, 2.0)
        return op

    def list(
        self, *, cluster: str | None, status: OperationStatus | None, limit: int, token: str | None
    ) -> tuple[list[Operation], str | None]:
        return self.repo.list(cluster=cluster, status=status, limit=limit, token=token)
