"""Waits an AWS event ends, on fakes: the step's Wait names the event, the engine answers AWAIT with the slow poll
as its timeout and records the task token by resource, the events function resumes it when the event brings
another status (never for the status the step saw), a stale token is forgotten, and an event that came before the
token was recorded resumes the wait at once."""

from __future__ import annotations

from typing import Any

from functions.domain import wakes
from functions.domain.asl import definition
from functions.domain.operations import Actor, Target
from functions.domain.workflow import SAFETY_POLL_SECONDS, Done, Wait, WakeOn, event_wait, known_end_wait
from functions.events.projector import Projector
from functions.settings import StepsSettings
from functions.steps.engine import Engine
from functions.workflows import hyperpod
from functions.workflows.context import StepContext, Workflow
from functions.workflows.registry import WORKFLOWS
from tests.fakes import World

ARN = "arn:aws:sagemaker:us-west-2:123456789012:cluster/abc123"


class SageMaker:
    def __init__(self, status: str) -> None:
        self.status = status

    def describe_cluster(self, ClusterName: str) -> dict[str, Any]:
        return {"ClusterName": ClusterName, "ClusterArn": ARN, "ClusterStatus": self.status, "InstanceGroups": []}


class Tokens:
    """Step Functions' side of SendTaskSuccess: which tokens are still waited on."""

    def __init__(self) -> None:
        self.waiting: set[str] = set()
        self.resumed: list[str] = []

    def resume(self, token: str) -> bool:
        if token not in self.waiting:
            return False  # TaskTimedOut / InvalidToken: its wait already polled
        self.waiting.discard(token)
        self.resumed.append(token)
        return True


def setup(status: str = "Creating") -> tuple[World, Engine, SageMaker, Tokens, str]:
    w = World()
    sm, tokens = SageMaker(status), Tokens()

    def watch(ctx: StepContext) -> Any:
        return hyperpod.watch(sm.describe_cluster("demo"), "creating", None) or Done(message="InService")

    w.service.steps_for["test.hyperpod"] = ("hyperpod_cluster",)
    op, _ = w.service.start(kind="test.hyperpod", target=Target(cluster="demo", region="us-west-2"), request={},
                            principal=Actor(sub="o", name="o"), idempotency_key=None)
    e = Engine(repo=w.repo, publisher=w.publisher, state=w.state, resume=tokens.resume,
               settings=StepsSettings(operations_table="o", state_table="s", time_scale=1.0),
               workflows={"test.hyperpod": Workflow(kind="test.hyperpod", steps={"hyperpod_cluster": watch})},
               clients=lambda service, region: sm)
    e.handle({"action": "begin", "operation_id": op.id})
    return w, e, sm, tokens, op.id


def projector(w: World, tokens: Tokens) -> Projector:
    return Projector(repo=w.repo, publisher=w.publisher, state=w.state, workflows=WORKFLOWS, runner=w.runner,
                     describe_hyperpod=lambda region, name: None, resume=tokens.resume)


def state_change(status: str) -> dict[str, Any]:
    return {"detail-type": "SageMaker HyperPod Cluster State Change", "source": "aws.sagemaker",
            "region": "us-west-2", "detail": {"ClusterArn": ARN, "ClusterName": "demo", "ClusterStatus": status}}


def test_a_hyperpod_wait_is_ended_by_the_clusters_state_change_not_by_polling() -> None:
    w, e, sm, tokens, op_id = setup()
    answer = e.handle({"action": "run", "operation_id": op_id, "step": "hyperpod_cluster", "wakes": True})
    assert answer["status"] == "AWAIT" and answer["wake"] == {"kind": "hyperpod", "resource": "us-west-2/demo",
                                                              "status": "Creating"}
    assert answer["wait_seconds"] == 1200 + SAFETY_POLL_SECONDS  # the slow poll: after the expected 20 min
    tokens.waiting.add("t1")
    e.handle({"action": "await", "operation_id": op_id, "awaiting": "hyperpod_cluster", "wake": answer["wake"],
              "token": "t1"})
    assert tokens.resumed == []  # still Creating: the wait goes on
    p = projector(w, tokens)
    assert p.project(state_change("Creating")) == "ignored" and tokens.resumed == []  # the status it saw
    sm.status = "InService"
    assert p.project(state_change("InService")).endswith("resumed 1") and tokens.resumed == ["t1"]
    assert w.state.query(wakes.key("hyperpod", "us-west-2/demo")) == []  # resumed once, then forgotten
    assert p.project(state_change("InService")) == "ignored"  # a repeated event resumes nothing
    done = e.handle({"action": "run", "operation_id": op_id, "step": "hyperpod_cluster", "wakes": True})
    assert done["status"] == "DONE"


def test_an_event_that_came_before_the_token_was_recorded_resumes_the_wait_at_once() -> None:
    w, e, sm, tokens, op_id = setup()
    answer = e.handle({"action": "run", "operation_id": op_id, "step": "hyperpod_cluster", "wakes": True})
    sm.status = "InService"  # ... and its event already went by, with nobody waiting
    assert projector(w, tokens).project(state_change("InService")) == "ignored"
    tokens.waiting.add("t1")
    e.handle({"action": "await", "operation_id": op_id, "awaiting": "hyperpod_cluster", "wake": answer["wake"],
              "token": "t1"})
    assert tokens.resumed == ["t1"] and w.state.query(wakes.key("hyperpod", "us-west-2/demo")) == []


def test_a_stale_token_is_forgotten_and_the_poll_carries_on() -> None:
    w, e, _sm, tokens, op_id = setup()
    answer = e.handle({"action": "run", "operation_id": op_id, "step": "hyperpod_cluster", "wakes": True})
    e.handle({"action": "await", "operation_id": op_id, "awaiting": "hyperpod_cluster", "wake": answer["wake"],
              "token": "t-timed-out"})  # its wait timed out into the poll before the event came
    assert projector(w, tokens).project(state_change("InService")) == "ignored"
    assert tokens.resumed == [] and w.state.query(wakes.key("hyperpod", "us-west-2/demo")) == []
    again = e.handle({"action": "run", "operation_id": op_id, "step": "hyperpod_cluster", "wakes": True})
    assert again["status"] == "AWAIT" and again["wait_seconds"] == SAFETY_POLL_SECONDS  # later polls: every 5 min


def test_an_execution_of_a_definition_without_await_states_polls_as_before() -> None:
    _w, e, _sm, _tokens, op_id = setup()  # started before the upgrade: its run Tasks do not say "wakes"
    answer = e.handle({"action": "run", "operation_id": op_id, "step": "hyperpod_cluster"})
    assert answer["status"] == "WAIT" and answer["wake"] is None


def test_a_child_operations_end_resumes_its_parent_only_when_its_execution_ends() -> None:
    w, tokens = World(), Tokens()
    p = projector(w, tokens)
    wake = WakeOn(kind=wakes.OPERATION, resource="op-child", status="RUNNING")
    wakes.register(w.state, wake, "op-parent", "instance_groups", "t1")
    tokens.waiting.add("t1")

    def execution(status: str) -> dict[str, Any]:
        return {"detail-type": "Step Functions Execution Status Change", "source": "aws.states", "detail": {
            "status": status, "input": '{"operation_id": "op-child"}', "executionArn": "arn:x"}}

    p.project(execution("RUNNING"))
    assert tokens.resumed == []
    assert p.project(execution("SUCCEEDED")).endswith("resumed 1") and tokens.resumed == ["t1"]


def test_the_generated_state_machine_waits_by_token_with_the_poll_as_timeout() -> None:
    states = definition("x.y", ("one",))["States"]
    assert [c["Next"] for c in states["one?"]["Choices"]] == ["one~wait", "one~event"]
    event = states["one~event"]
    assert event["Resource"].endswith(":lambda:invoke.waitForTaskToken")
    assert event["Parameters"]["Payload"]["token.$"] == "$$.Task.Token"
    assert event["TimeoutSecondsPath"] == "$.result.wait_seconds" and event["Next"] == "one"
    assert [(c["ErrorEquals"], c["Next"]) for c in event["Catch"]] == [(["States.Timeout"], "one"),
                                                                       (["States.ALL"], "RecordFailure")]


def test_waits_for_a_known_end_look_near_it_and_event_waits_poll_slowly() -> None:
    assert known_end_wait(0, 598.5, 1) == 599 and known_end_wait(0, 598.5, 60) == 10  # EKS: ~10 min after createdAt
    assert [known_end_wait(n, -5, 1) for n in (1, 2, 3, 4)] == [10, 20, 30, 30]  # late: back off as before
    assert event_wait(0, 1200, 1) == 1500 and event_wait(1, 1200, 1) == 300 and event_wait(3, None, 600) == 1
    assert Wait(message="m").wake_on is None  # polling stays the default


def test_a_failing_look_at_the_resource_leaves_the_wait_to_the_event_or_the_poll() -> None:
    w, e, sm, tokens, op_id = setup()
    answer = e.handle({"action": "run", "operation_id": op_id, "step": "hyperpod_cluster", "wakes": True})

    def throttled(ClusterName: str) -> dict[str, Any]:
        from botocore.exceptions import ClientError

        raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "slow down"}}, "DescribeCluster")

    sm.describe_cluster = throttled  # type: ignore[method-assign]
    tokens.waiting.add("t1")
    assert e.handle({"action": "await", "operation_id": op_id, "awaiting": "hyperpod_cluster",
                     "wake": answer["wake"], "token": "t1"})["status"] == "AWAITING"
    assert tokens.resumed == [] and len(w.state.query(wakes.key("hyperpod", "us-west-2/demo"))) == 1
