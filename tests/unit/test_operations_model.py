"""Operation transitions: what a user sees in the record as a workflow runs, fails, and is retried."""

from __future__ import annotations

import pytest

from functions.domain import operations as ops
from functions.domain.errors import Conflict
from functions.domain.operations import Actor, ErrorInfo, OperationStatus, StepStatus, Target

ERR = ErrorInfo(code="AccessDenied", message="no", retryable=True)


def new(steps: tuple[str, ...] = ("a", "b", "c")) -> ops.Operation:
    return ops.new_operation(op_id="op-123456", kind="test.kind", target=Target(cluster="demo", region="us-west-2"),
                             steps=steps, request={"x": 1}, principal=Actor(sub="u", name="u"), idempotency_key=None)


def test_a_new_operation_is_pending_with_every_step_pending_and_names_its_status_tool() -> None:
    op = new()
    assert op.status is OperationStatus.PENDING and [s.status for s in op.steps] == [StepStatus.PENDING] * 3
    body = op.public()
    assert body["status_tool"] == "get_operation" and body["links"]["self"] == "/v1/operations/op-123456"
    assert "cancel" in body["links"] and "retry" not in body["links"]


def test_starting_a_step_records_the_phase_before_anything_acts() -> None:
    op = ops.step_started(ops.begin(new(), "arn:exec"), "a")
    assert op.phase == "a" and op.step("a").status is StepStatus.RUNNING and op.step("a").attempts == 1
    assert op.status is OperationStatus.RUNNING and op.execution_arn == "arn:exec"


def test_failure_lands_on_the_current_step_and_retry_keeps_what_succeeded() -> None:
    op = ops.step_succeeded(ops.step_started(new(), "a"), "a", "made", {"vpc_id": "vpc-1"})
    op = ops.step_started(op, "b")
    failed = ops.fail(op, ERR)
    assert failed.status is OperationStatus.FAILED and failed.step("b").status is StepStatus.FAILED
    assert failed.step("b").error == ERR and failed.error == ERR and "retry" in failed.public()["links"]
    retried = ops.prepare_retry(failed, Actor(sub="o", name="olga", role="operator"), now="2026-12-03T10:00:00Z")
    assert retried.status is OperationStatus.PENDING and retried.attempt == 2
    assert [(a.number, a.action, a.principal.name) for a in retried.attempts] == [(1, "start", "u"),
                                                                                   (2, "retry", "olga")]
    assert retried.attempts[1].at == "2026-12-03T10:00:00Z"
    assert [s.status for s in retried.steps] == [StepStatus.SUCCEEDED, StepStatus.PENDING, StepStatus.PENDING]
    assert retried.outputs() == {"vpc_id": "vpc-1"}


def test_only_failed_or_cancelled_operations_can_be_retried_and_only_live_ones_cancelled() -> None:
    with pytest.raises(Conflict):
        ops.prepare_retry(new(), Actor(sub="u", name="u"))
    done = ops.succeed(new(), {})
    with pytest.raises(Conflict):
        ops.cancel(done)
    cancelled = ops.cancel(ops.step_started(new(), "a"))
    assert cancelled.status is OperationStatus.CANCELLED and cancelled.step("a").status is StepStatus.FAILED
    assert ops.prepare_retry(cancelled, Actor(sub="u", name="u")).step("a").status is StepStatus.PENDING


def test_changes_name_each_step_and_status_change_once() -> None:
    op = new()
    assert [t for t, _ in ops.changes(None, op)] == ["Operation Status Changed"]
    started = ops.step_started(op, "a")
    kinds = [t for t, _ in ops.changes(op, started)]
    assert kinds == ["Operation Step Changed", "Operation Status Changed"]
    assert ops.changes(started, started) == []


def test_request_hash_is_canonical() -> None:
    t = Target(cluster="demo", region="us-west-2")
    assert ops.request_hash("k", t, {"a": 1, "b": [1, 2]}) == ops.request_hash("k", t, {"b": [1, 2], "a": 1})
    assert ops.request_hash("k", t, {"a": 1}) != ops.request_hash("k", t, {"a": 2})


def test_version_moves_only_when_a_reader_sees_a_change() -> None:
    """A bare internal poll (poll count, merged outputs, the same message again) leaves the version alone."""
    started = ops.advance(new(), ops.step_started(new(), "a"))
    assert started.version == 1 and started.revision == 1
    polled = ops.advance(started, ops.step_progress(started, "a", None, {"nat_gateway_id": "nat-1"}))
    assert polled.revision == 2 and polled.version == 1 and polled.changed_at == started.changed_at
    same_msg = ops.advance(polled, ops.step_progress(polled, "a", polled.step("a").message))
    assert same_msg.version == 1
    moved = ops.advance(same_msg, ops.step_progress(same_msg, "a", "EKS control plane is ACTIVE"))
    assert moved.version == 2 and moved.revision == 4
    done = ops.advance(moved, ops.step_succeeded(moved, "a", None))
    assert done.version == 3


def test_status_events_carry_the_actor_who_started_retried_or_cancelled() -> None:
    op = new()
    [(_, created)] = ops.changes(None, op)
    assert created["actor"]["sub"] == op.principal.sub
    boss = Actor(sub="b", name="boss", role="admin")
    cancelled = ops.cancel(ops.step_started(op, "a"), by=boss)
    status = [d for t, d in ops.changes(op, cancelled) if t == "Operation Status Changed"]
    assert [d["actor"]["name"] for d in status] == ["boss"]
