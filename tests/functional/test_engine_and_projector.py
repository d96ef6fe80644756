"""The step engine and the event projector on fakes: phases recorded before acting, budgets that end
a stuck step, terminal AWS states that fail it with AWS's reason, and events that keep records true."""

from __future__ import annotations

from typing import Any

import pytest

from functions.domain import operations as ops
from functions.domain.clusters.record import ClusterRecord, ClusterStatus, GroupRecord
from functions.domain.errors import PermanentStepError
from functions.domain.operations import Actor, OperationStatus, StepStatus, Target
from functions.domain.workflow import Done, Wait
from functions.events.projector import Projector
from functions.settings import StepsSettings
from functions.steps.engine import Engine
from functions.workflows import instance_groups
from functions.workflows.context import StepContext, Workflow
from functions.workflows.registry import WORKFLOWS
from tests.fakes import World

SETTINGS = StepsSettings(operations_table="ops", state_table="state", time_scale=1.0)


class FakeSageMaker:
    def __init__(self, cluster: dict[str, Any]) -> None:
        self.cluster = cluster
        self.updates: list[dict[str, Any]] = []

    def describe_cluster(self, ClusterName: str) -> dict[str, Any]:
        return self.cluster

    def update_cluster(self, **kw: Any) -> dict[str, Any]:
        self.updates.append(kw)
        return {}


def engine(w: World, table: dict[str, Workflow], clients: dict[str, Any] | None = None) -> Engine:
    return Engine(repo=w.repo, publisher=w.publisher, settings=SETTINGS, state=w.state, workflows=table,
                  clients=lambda service, region: (clients or {})[service])


def start(w: World, kind: str, request: dict[str, Any]) -> ops.Operation:
    op, _ = w.service.start(kind=kind, target=Target(cluster="demo", region="us-west-2"), request=request,
                            principal=Actor(sub="o", name="o"), idempotency_key=None)
    return op


def test_the_phase_is_recorded_before_the_step_acts_and_polls_do_not_move_the_version() -> None:
    w = World()
    seen: list[StepStatus] = []

    def watch(ctx: StepContext) -> Wait | Done:
        stored = w.repo.get(ctx.operation.id)
        assert stored is not None
        seen.append(stored.step("watch").status)
        return Wait(message="still CREATING", expected_seconds=60) if len(seen) < 3 else Done(message="ACTIVE")

    w.service.steps_for["test.kind"] = ("watch",)
    op = start(w, "test.kind", {})
    e = engine(w, {"test.kind": Workflow(kind="test.kind", steps={"watch": watch})})
    e.handle({"action": "begin", "operation_id": op.id})
    versions = []
    for _ in range(3):
        e.handle({"action": "run", "operation_id": op.id, "step": "watch"})
        current = w.repo.get(op.id)
        assert current is not None
        versions.append(current.version)
    assert seen == [StepStatus.RUNNING] * 3
    assert versions[0] == versions[1] and versions[2] > versions[1]  # the second poll changed nothing visible


def test_a_step_past_its_budget_fails_instead_of_polling_for_hours() -> None:
    w = World()
    w.service.steps_for["test.slow"] = ("hyperpod_cluster",)
    op = start(w, "test.slow", {})
    stored = w.repo.get(op.id)
    assert stored is not None
    started = ops.step_started(ops.begin(stored, "arn:x"), "hyperpod_cluster", now="2026-01-01T00:00:00.000Z")
    w.service.record(stored, ops.step_progress(started, "hyperpod_cluster", "HyperPod cluster is Creating"))
    e = engine(w, {"test.slow": Workflow(kind="test.slow", steps={
        "hyperpod_cluster": lambda ctx: Wait(message="HyperPod cluster is Creating")})})
    with pytest.raises(PermanentStepError) as timed_out:
        e.handle({"action": "run", "operation_id": op.id, "step": "hyperpod_cluster"})
    assert timed_out.value.code == "StepTimedOut" and "HyperPod cluster is Creating" in timed_out.value.message
    failed = w.repo.get(op.id)
    assert failed is not None and failed.step("hyperpod_cluster").status is StepStatus.FAILED


def test_scaling_a_failed_hyperpod_cluster_fails_the_step_with_awss_reason() -> None:
    w = World()
    sm = FakeSageMaker({"ClusterName": "demo", "ClusterStatus": "Failed", "FailureMessage": "quota exceeded",
                        "InstanceGroups": [{"InstanceGroupName": "accel", "TargetCount": 1}]})
    op = start(w, "instance_group.scale", {"cluster": "demo", "region": "us-west-2", "group": "accel",
                                           "instance_count": 2})
    e = engine(w, dict(WORKFLOWS), {"sagemaker": sm})
    e.handle({"action": "begin", "operation_id": op.id})
    with pytest.raises(PermanentStepError) as failed:
        e.handle({"action": "run", "operation_id": op.id, "step": "instance_group"})
    assert failed.value.code == "HyperPodClusterFailed" and "quota exceeded" in failed.value.message
    assert sm.updates == []  # nothing was asked of a failed cluster
    assert instance_groups.SCALE.step_names == ("instance_group",)


def projector(w: World, live: dict[str, Any] | None = None) -> Projector:
    return Projector(repo=w.repo, publisher=w.publisher, state=w.state, workflows=WORKFLOWS, runner=w.runner,
                     describe_hyperpod=lambda region, name: live)


def test_a_workflow_that_died_still_shows_failed_and_frees_its_cluster() -> None:
    w = World()
    op = start(w, "cluster.create", {"name": "demo"})
    w.deps.records.save(ClusterRecord(name="demo", region="us-west-2", status=ClusterStatus.CREATING,
                                      eks_cluster_name="demo", created_by="o", created_at="x", operation_id=op.id))
    outcome = projector(w).project({"detail-type": "Step Functions Execution Status Change", "detail": {
        "status": "TIMED_OUT", "input": f'{{"operation_id": "{op.id}"}}', "executionArn": op.execution_arn}})
    assert outcome == "failed"
    failed = w.repo.get(op.id)
    assert failed is not None and failed.status is OperationStatus.FAILED
    rec = w.deps.records.load("us-west-2", "demo")
    assert rec is not None and rec.status is ClusterStatus.FAILED and w.repo.holder(op.target) is None


def test_a_late_failure_event_of_the_first_attempt_does_not_fail_the_retry() -> None:
    w = World()
    op = start(w, "cluster.create", {"name": "demo"})
    first_arn = w.runner.arn(op)
    failed = w.service.record(op, ops.fail(op, ops.ErrorInfo(code="X", message="boom", retryable=True)))
    # Given a retry recorded, its execution not begun yet (the record still names the first attempt's)
    retried = w.service.record(failed, ops.prepare_retry(failed, Actor(sub="o", name="o")))
    assert retried.attempt == 2 and retried.execution_arn in (None, first_arn)
    # When the first attempt's FAILED event arrives only now (EventBridge delivers late under load)
    outcome = projector(w).project({"detail-type": "Step Functions Execution Status Change", "detail": {
        "status": "FAILED", "input": f'{{"operation_id": "{op.id}"}}', "executionArn": first_arn}})
    # Then the retry runs on
    assert outcome == "ignored"
    now = w.repo.get(op.id)
    assert now is not None and now.status is not OperationStatus.FAILED and now.attempt == 2


def test_hyperpod_events_keep_the_records_last_known_counts() -> None:
    w = World()
    w.deps.records.save(ClusterRecord(
        name="demo", region="us-west-2", status=ClusterStatus.ACTIVE, eks_cluster_name="demo",
        hyperpod_cluster_name="demo", created_by="o", created_at="x",
        instance_groups=[GroupRecord(name="accel", instance_type="ml.g5.8xlarge", instance_count=2,
                                     availability_zone="us-west-2a", capacity_type="on-demand")]))
    live = {"ClusterName": "demo", "ClusterStatus": "Updating",
            "InstanceGroups": [{"InstanceGroupName": "accel", "TargetCount": 3, "CurrentCount": 2,
                                "Status": "Updating"}]}
    event = {"detail-type": "SageMaker HyperPod Cluster Event", "region": "us-west-2",
             "detail": {"EventDetails": {"ClusterName": "demo", "ResourceType": "Instance"}}}
    assert projector(w, live).project(event) == "recorded"
    rec = w.deps.records.load("us-west-2", "demo")
    assert rec is not None and rec.hyperpod_status == "Updating"
    g = rec.instance_groups[0]
    assert (g.instance_count, g.current_count, g.status) == (3, 2, "Updating") and g.counts_as_of


def test_the_scheduled_sweep_runs_through_the_projector() -> None:
    w = World()
    orphan = ops.new_operation(op_id="op-orphan03", kind="cluster.create",
                               target=Target(cluster="demo", region="us-west-2"), steps=("a",), request={},
                               principal=Actor(sub="o", name="o"), idempotency_key=None,
                               now="2020-01-01T00:00:00.000Z")
    w.repo.create(orphan)
    w.deps.records.save(ClusterRecord(name="demo", region="us-west-2", status=ClusterStatus.CREATING,
                                      eks_cluster_name="demo", created_by="o", created_at="x",
                                      operation_id=orphan.id))
    assert projector(w).project({"source": "aws.events", "detail-type": "Scheduled Event", "detail": {}}) == "swept 1"
    rec = w.deps.records.load("us-west-2", "demo")
    assert rec is not None and rec.status is ClusterStatus.FAILED


def test_the_delete_step_refuses_a_hyperpod_cluster_podstart_did_not_tag() -> None:
    class Untagged(FakeSageMaker):
        deleted: list[str] = []

        def list_tags(self, ResourceArn: str) -> dict[str, Any]:
            return {"Tags": [{"Key": "team", "Value": "ml"}]}

        def delete_cluster(self, ClusterName: str) -> dict[str, Any]:
            self.deleted.append(ClusterName)
            return {}

    w = World()
    sm = Untagged({"ClusterName": "demo", "ClusterArn": "arn:aws:sagemaker:us-west-2:1:cluster/x",
                   "ClusterStatus": "InService"})
    op = start(w, "cluster.delete", {"name": "demo", "region": "us-west-2", "origin": "created"})
    e = engine(w, dict(WORKFLOWS), {"sagemaker": sm})
    e.handle({"action": "begin", "operation_id": op.id})
    with pytest.raises(PermanentStepError) as refused:
        e.handle({"action": "run", "operation_id": op.id, "step": "hyperpod_cluster"})
    assert refused.value.code == "NotManagedByPodStart" and sm.deleted == []
