"""The operations engine, proven on a workflow defined here, running in the sandbox's Step Functions.

Given a three-step workflow whose steps make real (embedded) AWS calls, when operations run, fail,
are retried and cancelled, then the records, the call log and the event feed say what a user expects.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from functions.api.deps import services
from functions.domain.operations import Actor, Target
from functions.domain.workflow import Done, Wait
from functions.workflows.context import StepContext

KIND = "test.network"


def ensure_vpc(ctx: StepContext) -> Done:
    """Look before create: adopt the VPC a previous attempt made."""
    ec2 = ctx.aws("ec2")
    name = ctx.operation.target.resource or ctx.operation.target.cluster
    found = ec2.describe_vpcs(Filters=[{"Name": "tag:podstart:test", "Values": [name]}])["Vpcs"]
    if found:
        return Done(message="adopted VPC", outputs={"vpc_id": found[0]["VpcId"]})
    vpc = ec2.create_vpc(CidrBlock="10.77.0.0/16", TagSpecifications=[{
        "ResourceType": "vpc", "Tags": [{"Key": "podstart:test", "Value": name}]}])["Vpc"]
    return Done(message="created VPC", outputs={"vpc_id": vpc["VpcId"]})


def slow(ctx: StepContext) -> Wait | Done:
    polls_needed = int(ctx.request.get("polls", 1))
    if ctx.step.polls < polls_needed:
        return Wait(message=f"waiting ({ctx.step.polls + 1}/{polls_needed})", expected_seconds=30)
    return Done(message="waited")


def tag(ctx: StepContext) -> Done:
    ctx.aws("ec2").create_tags(Resources=[ctx.outputs["vpc_id"]], Tags=[{"Key": "done", "Value": "yes"}])
    return Done(message="tagged")


@pytest.fixture(scope="module", autouse=True)
def workflow(sandbox: Any) -> None:
    sandbox.register_workflow(KIND, {"vpc": ensure_vpc, "slow": slow, "tag": tag})


def start(name: str, key: str | None = None, on_cluster: bool = False, **request: Any) -> dict[str, Any]:
    target = Target(cluster=name, region="us-west-2") if on_cluster else Target(resource=name, region="us-west-2")
    op, _ = services().operations.start(
        kind=KIND, target=target, request=request,
        principal=Actor(sub="sandbox-admin", name="sandbox-admin"), idempotency_key=key,
    )
    return op.public()


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def test_operation_runs_every_step_in_order_and_succeeds(api: Any, sandbox: Any) -> None:
    op = start(unique("ok"))
    assert op["status"] in ("PENDING", "RUNNING") and op["status_tool"] == "get_operation"
    done = api.wait_terminal(op["id"])
    assert done["status"] == "SUCCEEDED", done
    assert [s["name"] for s in done["steps"]] == ["vpc", "slow", "tag"]
    assert all(s["status"] == "SUCCEEDED" and s["started_at"] and s["ended_at"] for s in done["steps"])
    assert done["result"]["vpc_id"].startswith("vpc-")
    types = [e["detail_type"] for e in sandbox.feed.recent if e["data"].get("operation_id") == op["id"]]
    assert "Operation Step Changed" in types and types[-1] == "Operation Status Changed"
    last = [e for e in sandbox.feed.recent if e["data"].get("operation_id") == op["id"]][-1]
    assert last["data"]["status"] == "SUCCEEDED" and last["metadata"]["version"] == "1"


def test_permanent_error_fails_at_the_step_and_retry_resumes_there(api: Any) -> None:
    name = unique("fail")
    fault = {"service": "ec2", "operation": "CreateTags", "error_code": "UnauthorizedOperation", "count": 1,
             "message": "not allowed"}
    assert api.post("/v1/sandbox/faults", json=fault).status_code == 201
    failed = api.wait_terminal(start(name)["id"])
    assert failed["status"] == "FAILED"
    tag_step = failed["steps"][2]
    assert tag_step["status"] == "FAILED" and tag_step["error"]["code"] == "UnauthorizedOperation"
    assert failed["error"]["code"] == "UnauthorizedOperation" and "retry" in failed["links"]
    creates_before = [c for c in api.calls("ec2", "CreateVpc") if c["outcome"] == "ok"]

    retried = api.post(f"/v1/operations/{failed['id']}/retry")
    assert retried.status_code == 202 and retried.headers["location"] == f"/v1/operations/{failed['id']}"
    done = api.wait_terminal(failed["id"])
    assert done["status"] == "SUCCEEDED" and done["attempt"] == 2
    assert [s["attempts"] for s in done["steps"]] == [1, 1, 2]  # earlier steps were not run again
    creates_after = [c for c in api.calls("ec2", "CreateVpc") if c["outcome"] == "ok"]
    assert len(creates_after) == len(creates_before)  # no earlier mutation repeated


def test_throttling_is_absorbed_by_state_machine_retry(api: Any) -> None:
    fault = {"service": "ec2", "operation": "CreateVpc", "error_code": "RequestLimitExceeded", "count": 2}
    api.post("/v1/sandbox/faults", json=fault)
    done = api.wait_terminal(start(unique("throttle"))["id"])
    assert done["status"] == "SUCCEEDED"
    outcomes = [c["outcome"] for c in api.calls("ec2", "CreateVpc")][-3:]
    assert outcomes == ["RequestLimitExceeded", "RequestLimitExceeded", "ok"]


def test_second_operation_on_a_busy_target_is_refused_naming_the_running_one(api: Any) -> None:
    name = unique("busy")
    first = start(name, polls=3)
    with pytest.raises(Exception) as refused:
        start(name)
    problem = refused.value.to_problem()  # type: ignore[attr-defined]
    assert problem["status"] == 409 and problem["running_operation"] == first["id"]
    assert api.wait_terminal(first["id"])["status"] == "SUCCEEDED"
    assert api.wait_terminal(start(name)["id"])["status"] == "SUCCEEDED"  # free again once it ended


def test_idempotency_key_replays_the_same_operation_and_rejects_a_different_body(api: Any) -> None:
    name, key = unique("idem"), uuid.uuid4().hex
    first = start(name, key=key)
    again = start(name, key=key)
    assert again["id"] == first["id"]
    with pytest.raises(Exception) as mismatch:
        start(name, key=key, polls=2)
    assert mismatch.value.to_problem()["status"] == 422  # type: ignore[attr-defined]
    assert api.wait_terminal(first["id"])["status"] == "SUCCEEDED"


def test_cancel_stops_a_running_operation_and_retry_completes_it(api: Any) -> None:
    op = start(unique("cancel"), polls=20)
    while api.get(f"/v1/operations/{op['id']}").json()["phase"] != "slow":
        time.sleep(0.2)
    cancelled = api.post(f"/v1/operations/{op['id']}/cancel")
    assert cancelled.status_code == 202 and cancelled.json()["status"] == "CANCELLED"
    assert api.post(f"/v1/operations/{op['id']}/cancel").status_code == 409
    time.sleep(1.5)
    assert api.get(f"/v1/operations/{op['id']}").json()["status"] == "CANCELLED"  # nothing resurrected it


def test_long_poll_returns_early_on_change(api: Any) -> None:
    op = start(unique("poll"), polls=2)
    t0 = time.monotonic()
    changed = api.get(f"/v1/operations/{op['id']}", params={"wait": 20, "version": op["version"]}).json()
    assert changed["version"] != op["version"] and time.monotonic() - t0 < 15
    api.wait_terminal(op["id"])


def test_operations_list_filters_by_cluster_and_status_and_paginates(api: Any) -> None:
    name = unique("list")
    ids = [api.wait_terminal(start(name, on_cluster=True)["id"])["id"] for _ in range(3)]
    page = api.get("/v1/operations", params={"cluster": name, "limit": 2}).json()
    assert len(page["items"]) == 2 and page["next_token"]
    rest = api.get("/v1/operations", params={"cluster": name, "limit": 2, "next_token": page["next_token"]}).json()
    assert {o["id"] for o in page["items"] + rest["items"]} == set(ids)
    failed = api.get("/v1/operations", params={"cluster": name, "status": "FAILED"}).json()
    assert failed["items"] == []
    bad = api.get("/v1/operations", params={"status": "DONE"})
    assert bad.status_code == 422 and bad.json()["errors"][0]["loc"] == ["query", "status"]
