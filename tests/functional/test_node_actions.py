"""Node actions on fakes: Batch*ClusterNodes in batches of 25, a retried step never resends a batch, and
HyperPod's refusals fail the operation naming the nodes; the escalation ladder's rungs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from functions.domain.errors import PermanentStepError, TransientStepError
from functions.domain.nodes.models import LastAction, ladder, may_replace
from functions.domain.operations import Actor, Target
from functions.settings import StepsSettings
from functions.steps.engine import Engine
from functions.workflows.registry import WORKFLOWS
from tests.fakes import World

SETTINGS = StepsSettings(operations_table="ops", state_table="state", time_scale=1.0)


class FakeSageMaker:
    def __init__(self, refuse: set[str] | None = None, fail_after: int | None = None) -> None:
        self.calls: list[list[str]] = []
        self.refuse = refuse or set()
        self.fail_after = fail_after

    def batch_reboot_cluster_nodes(self, ClusterName: str, NodeIds: list[str]) -> dict[str, Any]:
        if self.fail_after is not None and len(self.calls) >= self.fail_after:
            raise ConnectionError("throttled")
        self.calls.append(list(NodeIds))
        return {"Successful": [i for i in NodeIds if i not in self.refuse],
                "Failed": [{"NodeId": i, "ErrorCode": "InstanceIdNotFound", "Message": "no such node"}
                           for i in NodeIds if i in self.refuse]}


def ids(n: int) -> list[str]:
    return [f"i-{k:017x}" for k in range(n)]


def engine(w: World, sm: FakeSageMaker) -> Engine:
    return Engine(repo=w.repo, publisher=w.publisher, settings=SETTINGS, state=w.state, workflows=dict(WORKFLOWS),
                  clients=lambda service, region: {"sagemaker": sm}[service])


def begin_reboot(w: World, sm: FakeSageMaker, node_ids: list[str]) -> str:
    op, _ = w.service.start(kind="nodes.reboot", target=Target(cluster="demo", region="us-west-2"),
                            request={"cluster": "demo", "region": "us-west-2", "hyperpod_cluster": "demo",
                                     "eks_cluster": "demo", "node_ids": node_ids, "batch_size": 25, "reason": "xid"},
                            principal=Actor(sub="o", name="o"), idempotency_key=None)
    engine(w, sm).handle({"action": "begin", "operation_id": op.id})
    return op.id


def run_reboot(w: World, sm: FakeSageMaker, node_ids: list[str]) -> str:
    op_id = begin_reboot(w, sm, node_ids)
    engine(w, sm).handle({"action": "run", "operation_id": op_id, "step": "reboot"})
    return op_id


def test_sixty_nodes_are_rebooted_in_three_calls_of_at_most_25() -> None:
    sm = FakeSageMaker()
    run_reboot(World(), sm, ids(60))
    assert [len(c) for c in sm.calls] == [25, 25, 10]
    assert sorted(i for c in sm.calls for i in c) == ids(60)


def test_a_retried_step_sends_only_the_batches_not_yet_sent() -> None:
    w, sm = World(), FakeSageMaker(fail_after=1)
    op_id = begin_reboot(w, sm, ids(30))
    with pytest.raises(TransientStepError, match="throttled"):
        engine(w, sm).handle({"action": "run", "operation_id": op_id, "step": "reboot"})
    sm.fail_after = None
    engine(w, sm).handle({"action": "run", "operation_id": op_id, "step": "reboot"})
    assert sm.calls == [ids(30)[:25], ids(30)[25:]]


def test_hyperpods_refusal_fails_the_step_naming_the_node() -> None:
    sm = FakeSageMaker(refuse={ids(3)[1]})
    with pytest.raises(PermanentStepError) as refused:
        run_reboot(World(), sm, ids(3))
    assert refused.value.code == "NodeActionRefused" and ids(3)[1] in refused.value.message


def test_the_ladder_investigate_reboot_replace() -> None:
    now = datetime.now(UTC)
    recent = LastAction(action="reboot", operation_id="op-1", at=(now - timedelta(hours=2)).isoformat())
    old = LastAction(action="reboot", operation_id="op-1", at=(now - timedelta(hours=30)).isoformat())
    assert ladder("Schedulable", None).rung == "investigate"
    assert ladder("UnschedulablePendingReboot", None).rung == "reboot"
    assert ladder("UnschedulablePendingReboot", old).rung == "reboot"
    assert ladder("UnschedulablePendingReboot", recent).rung == "replace"
    assert ladder("UnschedulablePendingReplacement", None).rung == "replace"
    assert not may_replace("UnschedulablePendingReboot", None) and not may_replace("Schedulable", old)
    assert may_replace("Schedulable", recent) and may_replace("UnschedulablePendingReplacement", None)
