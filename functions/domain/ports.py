"""Small interfaces the domain needs; adapters implement them, tests use in-memory fakes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from functions.domain.events import Envelope
from functions.domain.operations import Operation, OperationStatus, Target


class LockHeld(Exception):
    def __init__(self, holder_id: str) -> None:
        super().__init__(holder_id)
        self.holder_id = holder_id


class StaleWrite(Exception):
    """Someone else wrote the record since it was read."""


class OperationRepository(Protocol):
    def create(self, op: Operation) -> None:
        """Store a new operation and take its target's lock atomically; LockHeld if taken."""

    def get(self, op_id: str) -> Operation | None: ...

    def save(self, old: Operation, new: Operation) -> Operation:
        """Write `new` if the stored version is still old.version; returns it with version + 1."""

    def acquire(self, op: Operation) -> None:
        """Take the target lock for an existing operation (a retry); LockHeld if taken."""

    def release(self, op: Operation) -> None: ...

    def holder(self, target: Target) -> str | None: ...

    def break_lock(self, target: Target, holder_id: str) -> None: ...

    def list(
        self, *, cluster: str | None, status: OperationStatus | None, limit: int, token: str | None
    ) -> tuple[list[Operation], str | None]: ...


class EventPublisher(Protocol):
    def publish(self, envelopes: list[Envelope]) -> int:
        """Publish in batches; returns the number of entries that failed."""


class WorkflowRunner(Protocol):
    def start(self, op: Operation) -> str:
        """Start the operation's workflow execution; returns its ARN."""

    def stop(self, execution_arn: str, cause: str) -> None: ...

    def has_workflow(self, kind: str) -> bool: ...


class IdempotencyGuard(Protocol):
    def once(self, *, scope: str, key: str, request_hash: str, create: Callable[[], str]) -> str:
        """Run create() at most once per (scope, key); return its result (an operation id) on replays.

        Raises IdempotencyMismatch when the key was used with a different request, and
        IdempotencyInProgress while the first call with that key is still running.
        """


class IdempotencyMismatch(Exception):
    pass


class IdempotencyInProgress(Exception):
    pass
