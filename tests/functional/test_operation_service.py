"""The operation service and the retry/cancel use cases on fakes: what a caller sees when requests are
replayed, processes die half way, and operations are retried by people with different roles."""

from __future__ import annotations

from typing import Any

import pytest

from functions.domain import operations as ops
from functions.domain.clusters.record import ClusterRecord, ClusterStatus
from functions.domain.errors import Conflict, Forbidden
from functions.domain.operations import Actor, OperationStatus, Target
from functions.domain.principal import Principal, Role
from functions.logic import operations as op_logic
from tests.fakes import World

ADMIN = Principal(sub="a", name="ada", role=Role.admin)
OPERATOR = Principal(sub="o", name="olga", role=Role.operator)


def start(w: World, kind: str = "cluster.create", cluster: str = "demo", key: str | None = None,
          request: dict[str, Any] | None = None, sub: str = "o") -> ops.Operation:
    op, _ = w.service.start(kind=kind, target=Target(cluster=cluster, region="us-west-2"),
                            request=request or {"name": cluster}, principal=Actor(sub=sub, name=sub),
                            idempotency_key=key)
    return op


def record(w: World, name: str = "demo", operation_id: str | None = None) -> None:
    w.deps.records.save(ClusterRecord(name=name, region="us-west-2", status=ClusterStatus.FAILED,
                                      eks_cluster_name=name, created_by="o", created_at="2026-12-01T00:00:00Z",
                                      operation_id=operation_id))


def fail(w: World, op_id: str) -> ops.Operation:
    op = w.repo.get(op_id)
    assert op is not None
    failed = w.service.record(op, ops.fail(op, ops.ErrorInfo(code="X", message="boom", retryable=True)))
    w.repo.release(failed)
    return failed


def test_a_replay_of_a_request_whose_process_died_starts_that_operation_not_a_409() -> None:
    w = World()
    w.runner.fail_next = None
    # The first attempt stored the operation and its lock, then died before starting the workflow:
    orphan = ops.new_operation(op_id="op-orphan01", kind="cluster.create",
                               target=Target(cluster="demo", region="us-west-2"), steps=("a",),
                               request={"name": "demo"}, principal=Actor(sub="o", name="o"), idempotency_key="k1")
    w.repo.create(orphan)
    replayed = start(w, key="k1")
    assert replayed.id == orphan.id and replayed.execution_arn == w.runner.arn(orphan)
    with pytest.raises(Conflict) as other:  # someone else, or another body, still meets the lock
        start(w, key="k2")
    assert other.value.extra["running_operation"] == orphan.id


def test_the_sweep_fails_operations_that_never_started_and_frees_their_cluster() -> None:
    w = World()
    orphan = ops.new_operation(op_id="op-orphan02", kind="cluster.create",
                               target=Target(cluster="demo", region="us-west-2"), steps=("a",), request={},
                               principal=Actor(sub="o", name="o"), idempotency_key=None,
                               now="2026-12-01T10:00:00.000Z")
    w.repo.create(orphan)
    started = ops.new_operation(op_id="op-started1", kind="cluster.create",
                                target=Target(cluster="other", region="us-west-2"), steps=("a",), request={},
                                principal=Actor(sub="o", name="o"), idempotency_key=None,
                                now="2026-12-01T10:00:00.000Z")
    w.repo.create(started)
    w.runner.started[w.runner.arn(started)] = started  # its execution did start; only the ARN was never saved
    followed: list[tuple[str, OperationStatus | None]] = []

    def follow(ended: ops.Operation) -> None:  # the kind's records follow before the operation shows the end
        stored = w.repo.get(ended.id)
        followed.append((ended.status.value, stored.status if stored else None))

    swept = w.service.sweep(300, now=1796119800.0, follow=follow)
    assert [o.id for o in swept] == ["op-orphan02"]
    assert followed == [("FAILED", OperationStatus.PENDING)]
    failed = w.repo.get("op-orphan02")
    assert failed is not None and failed.status is OperationStatus.FAILED
    assert failed.error is not None and failed.error.code == "WorkflowNeverStarted"
    assert w.repo.holder(orphan.target) is None
    attached = w.repo.get("op-started1")
    assert attached is not None and attached.execution_arn == w.runner.arn(started)
    assert attached.status is OperationStatus.PENDING


def test_retry_needs_the_role_of_the_operations_kind_and_records_who_retried() -> None:
    w = World()
    op = start(w, kind="cluster.delete", sub="a")
    record(w, operation_id=op.id)
    fail(w, op.id)
    with pytest.raises(Forbidden):
        op_logic.retry(w.deps, op.id, OPERATOR)
    with pytest.raises(Forbidden):
        op_logic.cancel(w.deps, op.id, OPERATOR)
    retried = op_logic.retry(w.deps, op.id, ADMIN).operation  # type: ignore[union-attr]
    assert retried.attempt == 2 and [(a.action, a.principal.name, a.principal.role) for a in retried.attempts] == [
        ("start", "a", None), ("retry", "ada", "admin")]


def test_a_create_whose_cluster_was_deleted_meanwhile_cannot_be_retried() -> None:
    w = World()
    create = start(w)
    fail(w, create.id)  # no record: the cluster was deleted since
    with pytest.raises(Conflict) as gone:
        op_logic.retry(w.deps, create.id, OPERATOR)
    assert "no longer exists" in gone.value.detail
    record(w, operation_id=create.id)
    delete = start(w, kind="cluster.delete")
    fail(w, delete.id)
    with pytest.raises(Conflict) as later:  # not the latest operation on the cluster any more
        op_logic.retry(w.deps, create.id, OPERATOR)
    assert later.value.extra["latest_operation"] == delete.id
    assert w.runner.started.keys() == {w.runner.arn(create), w.runner.arn(delete)}


def test_a_stale_version_waits_for_the_next_change_instead_of_returning_at_once() -> None:
    w = World()
    op = start(w)
    current = w.repo.get(op.id)
    assert current is not None
    moved = w.service.record(current, ops.begin(current, "arn:x"))
    moved = moved.model_copy(update={"changed_at": "2026-01-01T00:00:00.000Z"})
    w.repo.items[op.id] = moved
    clock = iter(range(0, 1000, 5))
    slept: list[float] = []
    w.service.monotonic = lambda: float(next(clock))
    w.service.sleep = slept.append
    polled = w.service.watch(op.id, 20, since_version=0)  # far behind, and the change is old
    assert polled.version == moved.version and slept  # it waited for a change, it did not return at once
    assert w.service.watch(op.id, 20, since_version=moved.version).version == moved.version


def test_a_cancel_that_meets_a_step_recording_its_progress_cancels_the_newer_record() -> None:
    w = World()
    op = start(w)
    running = w.service.record(op, op.model_copy(update={"status": OperationStatus.RUNNING,
                                                          "phase": "eks_control_plane"}))
    real_get = w.repo.get
    reads: list[str] = []

    def get_then_step_writes(op_id: str) -> ops.Operation | None:
        seen = real_get(op_id)
        reads.append(op_id)
        if len(reads) == 2 and seen is not None:  # the step records a poll between the cancel's read and write
            w.service.record(seen, seen.model_copy(update={"message": "waiting (2/20)"}))
        return seen

    w.repo.get = get_then_step_writes  # type: ignore[method-assign]
    cancelled = op_logic.cancel(w.deps, running.id, OPERATOR)
    stored = real_get(running.id)
    assert len(reads) > 2 and stored is not None and stored.status is OperationStatus.CANCELLED
    assert cancelled.operation.status is OperationStatus.CANCELLED and stored.message == "waiting (2/20)"
    assert w.repo.holder(op.target) is None  # the cluster is free for the next operation
