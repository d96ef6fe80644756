"""nodes.health_check's start step on fakes: one StartClusterHealthCheck per operation (a re-run after it was
recorded sends nothing), a re-run whose first call went through but was not recorded adopts the checks
running, and any other refusal is raised."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from functions.domain.operations import Actor, Target
from functions.settings import StepsSettings
from functions.steps.engine import Engine
from functions.workflows.registry import WORKFLOWS
from tests.fakes import World

SETTINGS = StepsSettings(operations_table="ops", state_table="state", time_scale=1.0)
IDS = ["i-0aaaaaaaaaaaaaaaa", "i-0bbbbbbbbbbbbbbbb"]


class FakeSageMaker:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.status = {i: "Running" for i in IDS}

    def start_cluster_health_check(self, ClusterName: str, DeepHealthCheckConfigurations: list[Any]) -> Any:
        self.calls.append({"ClusterName": ClusterName, "DeepHealthCheckConfigurations": DeepHealthCheckConfigurations})
        ids = [i for c in DeepHealthCheckConfigurations for i in c["InstanceIds"]]
        busy = [i for i in ids if self.status[i] != "Running"]
        if busy:
            message = f"{busy[0]} is {self.status[busy[0]]}"
            raise ClientError({"Error": {"Code": "ValidationException", "Message": message}}, "StartClusterHealthCheck")
        for i in ids:
            self.status[i] = "DeepHealthCheckInProgress"
        return {"ClusterArn": "arn:aws:sagemaker:us-west-2:123456789012:cluster/abc"}

    def describe_cluster_node(self, ClusterName: str, NodeId: str) -> Any:
        return {"NodeDetails": {"InstanceId": NodeId, "InstanceStatus": {"Status": self.status[NodeId]}}}


def engine(w: World, sm: FakeSageMaker) -> Engine:
    return Engine(repo=w.repo, publisher=w.publisher, settings=SETTINGS, state=w.state, workflows=dict(WORKFLOWS),
                  clients=lambda service, region: {"sagemaker": sm}[service])


def begin(w: World, sm: FakeSageMaker) -> str:
    op, _ = w.service.start(kind="nodes.health_check", target=Target(cluster="demo", region="us-west-2"),
                            request={"cluster": "demo", "region": "us-west-2", "hyperpod_cluster": "demo",
                                     "eks_cluster": "demo", "group": "workers", "node_ids": IDS,
                                     "checks": ["InstanceStress"]},
                            principal=Actor(sub="o", name="o"), idempotency_key=None)
    engine(w, sm).handle({"action": "begin", "operation_id": op.id})
    return op.id


def run_start(w: World, sm: FakeSageMaker, op_id: str) -> None:
    engine(w, sm).handle({"action": "run", "operation_id": op_id, "step": "start"})


def test_one_call_naming_the_group_nodes_and_checks() -> None:
    w, sm = World(), FakeSageMaker()
    op_id = begin(w, sm)
    run_start(w, sm, op_id)
    assert sm.calls == [{"ClusterName": "demo", "DeepHealthCheckConfigurations": [
        {"InstanceGroupName": "workers", "InstanceIds": IDS, "DeepHealthChecks": ["InstanceStress"]}]}]
    assert w.repo.get(op_id).step("start").outputs["started_at"]


def test_a_rerun_whose_call_was_not_recorded_adopts_the_checks_running() -> None:
    w, sm = World(), FakeSageMaker()
    op_id = begin(w, sm)
    sm.status = dict.fromkeys(IDS, "DeepHealthCheckInProgress")  # the first call went through, its record was lost
    run_start(w, sm, op_id)
    assert len(sm.calls) == 1 and w.repo.get(op_id).step("start").outputs["started_at"]


def test_any_other_refusal_is_raised() -> None:
    w, sm = World(), FakeSageMaker()
    op_id = begin(w, sm)
    sm.status[IDS[1]] = "Pending"
    with pytest.raises(Exception, match="is Pending"):
        run_start(w, sm, op_id)
