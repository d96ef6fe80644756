"""Cluster lifecycle through REST on the sandbox: create end to end, idempotency, faults at every
step with retry resuming there, throttling absorbed, and bad input refused with nothing created."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

MUTATING_PREFIXES = ("Create", "Put", "Attach", "Associate", "Allocate", "Authorize", "Modify", "Update",
                     "Delete", "Run", "Start", "Batch", "Tag")
STEPS = ["eks_control_plane", "activate", "dependencies", "hyperpod_cluster", "storage"]


def name(prefix: str = "c") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def group(**over: Any) -> dict[str, Any]:
    return {"name": "accel", "instance_type": "ml.g5.8xlarge", "instance_count": 1,
            "availability_zone": "us-west-2a", **over}


def body(cluster: str, **over: Any) -> dict[str, Any]:
    return {"name": cluster, "region": "us-west-2", "instance_groups": [group()], **over}


def mutations(api: Any, since: int, until: int | None = None) -> list[str]:
    return [m.split(" ", 1)[0] for m in mutation_calls(api, since, until)]


def mutation_calls(api: Any, since: int, until: int | None = None) -> list[str]:
    """'service.Operation {params}' for each successful mutating AWS call in the window."""
    calls = api.calls(after=since, until=until)
    return [f"{c['service']}.{c['operation']} {json.dumps(c['params'], sort_keys=True)}" for c in calls
            if c["operation"].startswith(MUTATING_PREFIXES) and c["service"] not in ("dynamodb", "eventbridge")
            and c["outcome"] == "ok"]


def test_create_runs_the_five_steps_and_the_hyperpod_cluster_is_in_service(api: Any, aws: Any) -> None:
    cluster = name("demo")
    req = body(cluster, instance_groups=[group(instance_type="ml.p5.48xlarge", instance_count=2)])
    r = api.post("/v1/clusters", json=req, key=uuid.uuid4().hex)
    assert r.status_code == 202, r.text
    op = r.json()
    assert op["kind"] == "cluster.create" and [s["name"] for s in op["steps"]] == STEPS
    assert r.headers["location"] == f"/v1/operations/{op['id']}"
    done = api.wait_terminal(op["id"])
    assert done["status"] == "SUCCEEDED", done["error"]
    assert all(s["status"] == "SUCCEEDED" for s in done["steps"])
    started = [s["started_at"] for s in done["steps"]]
    assert started == sorted(started)

    hp = aws("sagemaker").describe_cluster(ClusterName=cluster)
    assert hp["ClusterStatus"] == "InService" and hp["NodeRecovery"] == "Automatic"
    assert hp["Orchestrator"]["Eks"]["ClusterArn"].endswith(f":cluster/{cluster}")
    g = hp["InstanceGroups"][0]
    assert set(g["OnStartDeepHealthChecks"]) == {"InstanceStress", "InstanceConnectivity"}
    assert aws("eks").describe_cluster(name=cluster)["cluster"]["status"] == "ACTIVE"

    detail = api.get(f"/v1/clusters/{cluster}").json()
    assert detail["status"] == "ACTIVE" and detail["active"] is True
    assert detail["instance_groups"][0]["current_count"] == 2
    assert {d["name"] for d in detail["dependencies"]} >= {"eks-pod-identity-agent", "aws-mountpoint-s3-csi-driver"}
    assert detail["storage"][0]["kind"] == "s3-mountpoint"
    listed = {c["name"]: c for c in api.get("/v1/clusters").json()["items"]}
    assert listed[cluster]["status"] == "ACTIVE" and listed[cluster]["hyperpod_status"] == "InService"
    assert api.get("/v1/preferences").json()["active_cluster"] == {"name": cluster, "region": "us-west-2"}


def test_same_idempotency_key_twice_is_one_operation_and_one_create_call(api: Any) -> None:
    cluster, key = name("idem"), uuid.uuid4().hex
    first = api.post("/v1/clusters", json=body(cluster), key=key)
    second = api.post("/v1/clusters", json=body(cluster), key=key)
    assert first.status_code == second.status_code == 202
    assert first.json()["id"] == second.json()["id"]
    api.wait_terminal(first.json()["id"])
    third = api.post("/v1/clusters", json=body(cluster), key=key)  # a blind retry after it finished
    assert third.json()["id"] == first.json()["id"]
    creates = [c for c in api.calls("sagemaker", "CreateCluster") if c["params"].get("ClusterName") == cluster]
    assert len(creates) == 1
    other = api.post("/v1/clusters", json=body(cluster, node_recovery="none"), key=key)
    assert other.status_code == 422 and other.json()["errors"][0]["loc"] == ["header", "Idempotency-Key"]


FAULTS = {
    "eks_control_plane": ("eks", "CreateCluster", "InvalidParameterException"),
    "activate": ("eks", "DescribeAccessEntry", "AccessDeniedException"),
    "dependencies": ("eks", "CreateAddon", "InvalidParameterException"),
    "hyperpod_cluster": ("sagemaker", "CreateCluster", "ValidationException"),
    "storage": ("eks", "CreatePodIdentityAssociation", "AccessDeniedException"),
}


@pytest.mark.parametrize("step", STEPS)
def test_a_fault_in_each_step_fails_there_and_retry_resumes_without_repeating(api: Any, step: str) -> None:
    service, operation, code = FAULTS[step]
    api.post("/v1/sandbox/faults", json={"service": service, "operation": operation, "error_code": code,
                                         "count": 1, "message": f"injected into {step}"})
    cluster = name(step.replace("_", "")[:8])
    start = api.mark()
    failed = api.wait_terminal(api.post("/v1/clusters", json=body(cluster)).json()["id"])
    assert failed["status"] == "FAILED" and failed["phase"] == step
    by_name = {s["name"]: s for s in failed["steps"]}
    assert by_name[step]["status"] == "FAILED" and by_name[step]["error"]["code"] == code
    before = STEPS[: STEPS.index(step)]
    assert all(by_name[s]["status"] == "SUCCEEDED" for s in before)
    assert api.get(f"/v1/clusters/{cluster}").json()["status"] == "FAILED"

    mark = api.mark()
    retried = api.post(f"/v1/operations/{failed['id']}/retry")
    assert retried.status_code == 202
    done = api.wait_terminal(failed["id"])
    assert done["status"] == "SUCCEEDED", done["error"]
    assert [s["attempts"] for s in done["steps"]][: len(before)] == [1] * len(before)
    made_before = set(mutation_calls(api, start, mark))
    made_after = set(mutation_calls(api, mark))
    assert made_before and not made_before & made_after, made_before & made_after  # nothing made twice
    assert api.get(f"/v1/clusters/{cluster}").json()["status"] == "ACTIVE"


def test_throttling_twice_is_absorbed_by_retry(api: Any) -> None:
    api.post("/v1/sandbox/faults", json={"service": "sagemaker", "operation": "CreateCluster",
                                         "error_code": "ThrottlingException", "count": 2})
    cluster = name("thr")
    done = api.wait_terminal(api.post("/v1/clusters", json=body(cluster)).json()["id"])
    assert done["status"] == "SUCCEEDED", done["error"]
    outcomes = [c["outcome"] for c in api.calls("sagemaker", "CreateCluster")
                if c["params"].get("ClusterName") == cluster]
    assert outcomes == ["ThrottlingException", "ThrottlingException", "ok"]


BAD = [
    ("name", {"name": "Bad_Name"}, ["body", "name"]),
    ("region", {"region": "mars-west-1"}, ["body", "region"]),
    ("zone", {"instance_groups": [group(availability_zone="eu-west-1a")]},
     ["body", "instance_groups", 0, "availability_zone"]),
    ("count", {"instance_groups": [group(instance_count=0)]}, ["body", "instance_groups", 0, "instance_count"]),
    ("quota", {"instance_groups": [group(instance_count=17)]}, ["body", "instance_groups", 0, "instance_count"]),
    ("plan missing", {"instance_groups": [group(capacity_type="training-plan")]}, ["body", "instance_groups", 0]),
    ("spot with plan", {"instance_groups": [group(
        capacity_type="spot", training_plan_arn="arn:aws:sagemaker:us-west-2:123456789012:training-plan/x")]},
     ["body", "instance_groups", 0]),
    ("efa-only", {"instance_groups": [group(efa_only=True)]}, ["body", "instance_groups", 0, "efa_only"]),
    ("public cidr", {"vpc_cidr": "8.8.0.0/16"}, ["body", "vpc_cidr"]),
    ("tiny cidr", {"vpc_cidr": "10.1.0.0/24"}, ["body", "vpc_cidr"]),
    ("groups", {"instance_groups": [group(), group()]}, ["body", "instance_groups"]),
    ("unknown field", {"colour": "blue"}, ["body", "colour"]),
]


@pytest.mark.parametrize(("case", "change", "loc"), BAD, ids=[b[0] for b in BAD])
def test_bad_input_is_refused_naming_the_field_and_nothing_is_created(
        api: Any, case: str, change: dict[str, Any], loc: list[Any]) -> None:
    mark = api.mark()
    r = api.post("/v1/clusters", json={**body(name("bad")), **change})
    assert r.status_code == 422, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    assert r.json()["errors"][0]["loc"][: len(loc)] == loc, r.json()
    assert mutations(api, mark) == []


def test_a_type_not_offered_in_the_zone_is_refused(api: Any) -> None:
    offered = {z: {t["name"] for t in api.get("/v1/catalog/instance-types",
                                              params={"region": "us-west-2", "availability_zone": z}).json()["items"]}
               for z in ("us-west-2a", "us-west-2b", "us-west-2c", "us-west-2d")}
    everywhere = set.union(*offered.values())
    zone, itype = next((z, t) for z in offered for t in sorted(everywhere - offered[z]))
    mark = api.mark()
    r = api.post("/v1/clusters", json=body(name("nt"), instance_groups=[group(instance_type=itype,
                                                                                availability_zone=zone)]))
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "instance_groups", 0, "instance_type"]
    assert mutations(api, mark) == []


def test_training_plan_must_match_type_zone_and_count(api: Any) -> None:
    plans = api.get("/v1/catalog/training-plans", params={"region": "us-west-2"}).json()["items"]
    plan = plans[0]
    r = api.post("/v1/clusters", json=body(name("tp"), instance_groups=[group(
        capacity_type="training-plan", training_plan_arn=plan["arn"], instance_type="ml.g5.8xlarge")]))
    assert r.status_code == 422
    assert any(e["loc"][-1] == "training_plan_arn" and plan["instance_type"] in e["msg"] for e in r.json()["errors"])


def test_overlapping_vpc_cidr_and_taken_name_are_refused(api: Any) -> None:
    taken = api.get("/v1/clusters").json()["items"][0]
    r = api.post("/v1/clusters", json=body(taken["name"]))
    assert r.status_code == 409 and r.json()["errors"][0]["loc"] == ["body", "name"]
    r = api.post("/v1/clusters", json=body(name("ov"), vpc_cidr="10.90.0.0/16"))
    assert r.status_code == 422 and "overlaps" in r.json()["errors"][0]["msg"]


def test_viewer_cannot_create(viewer: Any) -> None:
    r = viewer.post("/v1/clusters", json=body(name("v")))
    assert r.status_code == 403
