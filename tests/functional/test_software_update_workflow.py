"""cluster.software_update on fakes: one UpdateClusterSoftware per operation (a re-run after it was recorded
sends nothing), the watch step says which batch each group is at and records it, ends when the cluster is
InService with every node updated, and fails naming a node that went Failure."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from functions.domain.operations import Actor, Target
from functions.settings import StepsSettings
from functions.steps.engine import Engine
from functions.workflows.registry import WORKFLOWS
from tests.fakes import World

SETTINGS = StepsSettings(operations_table="ops", state_table="state", time_scale=1.0)
IDS = ["i-0aaaaaaaaaaaaaaaa", "i-0bbbbbbbbbbbbbbbb", "i-0cccccccccccccccc", "i-0dddddddddddddddd"]
LONG_AGO = datetime(2025, 1, 1, tzinfo=UTC)


class FakeSageMaker:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.status = "InService"
        self.nodes = {i: {"InstanceId": i, "InstanceGroupName": "workers", "LaunchTime": LONG_AGO,
                          "InstanceStatus": {"Status": "Running"}} for i in IDS}

    def describe_cluster(self, ClusterName: str) -> Any:
        return {"ClusterName": ClusterName, "ClusterStatus": self.status,
                "InstanceGroups": [{"InstanceGroupName": "workers", "SoftwareUpdateStatus": "InProgress"}]}

    def update_cluster_software(self, **params: Any) -> Any:
        self.calls.append(params)
        self.status = "SystemUpdating"
        return {"ClusterArn": "arn:aws:sagemaker:us-west-2:123456789012:cluster/abc"}

    def list_cluster_nodes(self, **params: Any) -> Any:
        return {"ClusterNodeSummaries": list(self.nodes.values())}

    def updating(self, *ids: str) -> None:
        for i in ids:
            self.nodes[i]["InstanceStatus"] = {"Status": "SystemUpdating"}

    def updated(self, *ids: str) -> None:
        for i in ids:
            self.nodes[i] |= {"InstanceStatus": {"Status": "Running"}, "CurrentImageReleaseVersion": "2025.11.20",
                              "LastSoftwareUpdateTime": datetime.now(UTC) + timedelta(seconds=1)}


def engine(w: World, sm: FakeSageMaker) -> Engine:
    return Engine(repo=w.repo, publisher=w.publisher, settings=SETTINGS, state=w.state, workflows=dict(WORKFLOWS),
                  clients=lambda service, region: {"sagemaker": sm}[service])


def begin(w: World, sm: FakeSageMaker) -> str:
    op, _ = w.service.start(kind="cluster.software_update", target=Target(cluster="demo", region="us-west-2"),
                            request={"cluster": "demo", "region": "us-west-2", "hyperpod_cluster": "demo",
                                     "eks_cluster": "demo", "groups": ["workers"], "batch_percent": 50,
                                     "image_id": None, "wait_seconds": 30, "instances": {"workers": 4}},
                            principal=Actor(sub="o", name="o"), idempotency_key=None)
    engine(w, sm).handle({"action": "begin", "operation_id": op.id})
    return op.id


def run(w: World, sm: FakeSageMaker, op_id: str, step: str) -> Any:
    return engine(w, sm).handle({"action": "run", "operation_id": op_id, "step": step})


def test_one_rolling_call_and_a_rerun_sends_nothing() -> None:
    w, sm = World(), FakeSageMaker()
    op_id = begin(w, sm)
    run(w, sm, op_id, "update")
    run(w, sm, op_id, "update")
    assert sm.calls == [{"ClusterName": "demo", "InstanceGroups": [{"InstanceGroupName": "workers"}],
                         "DeploymentConfig": {"RollingUpdatePolicy": {"MaximumBatchSize": {
                             "Type": "CAPACITY_PERCENT", "Value": 50}}, "WaitIntervalInSeconds": 30}}]
    assert "2 batch(es)" in (w.repo.get(op_id).step("update").message or "")


def test_the_watch_says_the_batch_and_ends_when_every_node_is_updated() -> None:
    w, sm = World(), FakeSageMaker()
    op_id = begin(w, sm)
    run(w, sm, op_id, "update")
    sm.updating(*IDS[:2])
    assert run(w, sm, op_id, "watch")["status"] == "WAIT"
    step = w.repo.get(op_id).step("watch")
    assert step.message and step.message.startswith("workers: batch 1 of 2: 2 node(s) updating (0/4 updated)")
    sm.updated(*IDS[:2])
    sm.updating(*IDS[2:])
    run(w, sm, op_id, "watch")
    step = w.repo.get(op_id).step("watch")
    assert step.message and step.message.startswith("workers: batch 2 of 2: 2 node(s) updating (2/4 updated)")
    assert step.outputs["progress"]["workers"]["most_updating"] == 2
    sm.updated(*IDS[2:])
    assert run(w, sm, op_id, "watch")["status"] == "WAIT"  # nodes done, the cluster still SystemUpdating
    sm.status = "InService"
    assert run(w, sm, op_id, "watch")["status"] == "DONE"
    step = w.repo.get(op_id).step("watch")
    assert step.message == "4 node(s) of workers updated in 2 batch(es); release 2025.11.20"


def test_a_node_that_fails_its_update_fails_the_operation_naming_it() -> None:
    w, sm = World(), FakeSageMaker()
    op_id = begin(w, sm)
    run(w, sm, op_id, "update")
    sm.nodes[IDS[1]]["InstanceStatus"] = {"Status": "Failure", "Message": "did not come back"}
    with pytest.raises(Exception, match=IDS[1]):
        run(w, sm, op_id, "watch")
