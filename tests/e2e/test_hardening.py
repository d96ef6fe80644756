"""Hardening, end to end on the sandbox: what a user (or an attacker) sees when requests are replayed
after a crash, names are bad, and the account holds clusters PodStart does not track."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from functions.api.deps import services
from functions.domain import operations as ops
from functions.domain.clusters.models import ClusterCreate
from functions.domain.clusters.record import ClusterRecord, ClusterStatus
from functions.domain.kinds import KINDS
from functions.domain.operations import Actor, Target
from functions.logic.clusters.create import CreateAdmission


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def body(name: str) -> dict[str, Any]:
    return {"name": name, "region": "us-west-2", "instance_groups": [
        {"name": "accel", "instance_type": "ml.c5.large", "instance_count": 1, "availability_zone": "us-west-2a"}]}


def orphan(name: str, key: str | None, request: dict[str, Any], age: timedelta) -> ops.Operation:
    """What the API leaves behind when it dies between storing an operation and starting its workflow."""
    created = (datetime.now(UTC) - age).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    target = Target(cluster=name, region="us-west-2")
    req = ClusterCreate.model_validate(request)
    actor = Actor(sub="sandbox-admin", name="sandbox-admin")
    normalized = CreateAdmission(services(), req, actor, key).normalize()  # what the API stored
    sent = req.model_dump(mode="json")  # what it hashed
    op = ops.new_operation(op_id="op-" + uuid.uuid4().hex[:20], kind="cluster.create", target=target,
                           steps=KINDS["cluster.create"], request=normalized,
                           principal=Actor(sub="sandbox-admin", name="sandbox-admin"), idempotency_key=key,
                           now=created, request_digest=ops.request_hash("cluster.create", target, sent))
    svc = services()
    svc.records.create(ClusterRecord(name=name, region="us-west-2", status=ClusterStatus.CREATING,
                                     eks_cluster_name=name, created_by="sandbox-admin", created_at=created,
                                     operation_id=op.id))
    svc.operations.repo.create(op)
    return op


def test_a_replayed_create_after_a_crash_runs_the_stored_operation_instead_of_a_409(api: Any) -> None:
    name, key = unique("crash"), uuid.uuid4().hex
    stored = orphan(name, key, body(name), timedelta(seconds=5))
    r = api.post("/v1/clusters", json=body(name), key=key)
    assert r.status_code == 202, r.text
    assert r.json()["id"] == stored.id
    done = api.wait_terminal(stored.id, timeout=180)
    assert done["status"] == "SUCCEEDED", done["error"]
    assert api.get(f"/v1/clusters/{name}").json()["status"] == "ACTIVE"


def test_the_sweep_fails_an_operation_that_never_started_and_frees_the_cluster(api: Any) -> None:
    name = unique("swept")
    stored = orphan(name, None, body(name), timedelta(minutes=10))
    deadline = time.monotonic() + 30
    op = api.get(f"/v1/operations/{stored.id}").json()
    while op["status"] == "PENDING":
        assert time.monotonic() < deadline, "the sweep never ran"
        time.sleep(0.5)
        op = api.get(f"/v1/operations/{stored.id}").json()
    assert op["status"] == "FAILED" and op["error"]["code"] == "WorkflowNeverStarted"
    assert api.get(f"/v1/clusters/{name}").json()["status"] == "FAILED"
    d = api.http.delete(f"/v1/clusters/{name}", params={"confirm": name})  # the cluster is not locked any more
    assert d.status_code == 202, d.text


def test_import_refuses_a_name_that_is_not_a_cluster_name_with_a_suggestion_and_changes_nothing(
        api: Any, aws: Any) -> None:
    eks = aws("eks")
    before = api.mark()
    r = api.post("/v1/clusters/import", json={"region": "us-west-2", "eks_cluster_name": "Team_GPU_Cluster"})
    assert r.status_code == 422
    err = r.json()["errors"][0]
    assert err["loc"] == ["body", "name"] and "'team-gpu-cluster'" in err["msg"]
    r = api.post("/v1/clusters/import", json={"region": "us-west-2", "eks_cluster_name": "x", "name": "Bad Name"})
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "name"]
    about = [c for c in api.calls(after=before) if any(n in str(c["params"]) for n in ("Team_GPU_Cluster", "team-gpu"))]
    assert [c for c in about if not c["operation"].startswith(("Describe", "List", "Get"))
            and "audit" not in str(c["params"].get("TableName", ""))] == []  # the audit trail records the refusal
    assert not any(c["name"] == "team-gpu-cluster" for c in api.get("/v1/clusters").json()["items"])
    assert "Team_GPU_Cluster" not in eks.list_clusters()["clusters"]


def test_importing_is_an_admin_action(viewer: Any) -> None:
    r = viewer.post("/v1/clusters/import", json={"region": "us-west-2", "eks_cluster_name": "anything"})
    assert r.status_code == 403 and "admin" in r.json()["detail"]


def test_the_list_shows_hyperpod_clusters_podstart_does_not_track_as_importable(api: Any, aws: Any) -> None:
    eks, sm, ec2 = aws("eks"), aws("sagemaker"), aws("ec2")
    vpc = ec2.create_vpc(CidrBlock="172.31.0.0/16")["Vpc"]["VpcId"]
    sub = ec2.create_subnet(VpcId=vpc, CidrBlock="172.31.0.0/20", AvailabilityZone="us-west-2a")["Subnet"]["SubnetId"]
    name = unique("theirs")
    arn = eks.create_cluster(name=name, roleArn="arn:aws:iam::123456789012:role/theirs",
                             resourcesVpcConfig={"subnetIds": [sub]})["cluster"]["arn"]
    deadline = time.monotonic() + 60
    while eks.describe_cluster(name=name)["cluster"]["status"] != "ACTIVE":
        assert time.monotonic() < deadline
        time.sleep(0.3)
    sm.create_cluster(ClusterName=name, Orchestrator={"Eks": {"ClusterArn": arn}},
                      VpcConfig={"SecurityGroupIds": ["sg-12345678"], "Subnets": [sub]},
                      InstanceGroups=[{"InstanceGroupName": "w", "InstanceType": "ml.c5.large", "InstanceCount": 1,
                                       "ExecutionRole": "arn:aws:iam::123456789012:role/theirs", "ThreadsPerCore": 1,
                                       "LifeCycleConfig": {"SourceS3Uri": "s3://b/p", "OnCreate": "x.sh"}}])
    deadline = time.monotonic() + 30
    row = None
    while row is None:
        assert time.monotonic() < deadline, "the external cluster never showed in the list"
        rows = api.get("/v1/clusters", params={"limit": 100, "region": "us-west-2"}).json()["items"]
        row = next((c for c in rows if c["name"] == name), None)
        time.sleep(0.5)
    assert row["origin"] == "external" and row["importable"] is True and row["managed"] is False
    assert row["eks_cluster_name"] == name


def test_the_list_shows_counts_never_null_once_a_cluster_ran(api: Any) -> None:
    name = unique("counts")
    op = api.post("/v1/clusters", json=body(name)).json()
    assert api.wait_terminal(op["id"], timeout=180)["status"] == "SUCCEEDED"
    rows = {c["name"]: c for c in api.get("/v1/clusters", params={"limit": 100}).json()["items"]}
    group = rows[name]["instance_groups"][0]
    assert group["current_count"] == 1 and group["target_count"] == 1 and group["counts_as_of"]


def test_every_role_a_create_makes_carries_the_boundary_and_twins_in_two_regions_share_nothing(
        api: Any, sandbox: Any) -> None:
    import boto3

    iam = boto3.client("iam", region_name="us-east-1", endpoint_url=sandbox.aws.endpoint,
                       aws_access_key_id="testing", aws_secret_access_key="testing")
    name = unique("twin")
    ops_ = []
    for region, zone in (("us-west-2", "us-west-2a"), ("us-east-1", "us-east-1a")):
        b = {**body(name), "region": region}
        b["instance_groups"][0]["availability_zone"] = zone
        r = api.post("/v1/clusters", json=b)
        assert r.status_code == 202, r.text
        ops_.append(r.json()["id"])
    for op_id in ops_:
        assert api.wait_terminal(op_id, timeout=240)["status"] == "SUCCEEDED"
    roles = [r for r in iam.list_roles(PathPrefix="/podstart/")["Roles"]
             if r["RoleName"].startswith(f"podstart-{name}-")]
    assert len(roles) == 6  # eks, hyperpod and s3-csi, per region
    boundary = "arn:aws:iam::123456789012:policy/podstart-roles-boundary"
    for role in roles:
        got = iam.get_role(RoleName=role["RoleName"])["Role"]
        assert got["PermissionsBoundary"]["PermissionsBoundaryArn"] == boundary, role["RoleName"]
    d = api.http.delete(f"/v1/clusters/{name}", params={"confirm": name, "region": "us-east-1"})
    assert api.wait_terminal(d.json()["id"], timeout=240)["status"] == "SUCCEEDED"
    left = [r["RoleName"] for r in iam.list_roles(PathPrefix="/podstart/")["Roles"]
            if r["RoleName"].startswith(f"podstart-{name}-")]
    assert len(left) == 3
    assert api.get(f"/v1/clusters/{name}", params={"region": "us-west-2"}).json()["status"] == "ACTIVE"


def test_a_caller_without_the_role_is_refused_before_the_body_is_judged(viewer: Any, operator: Any) -> None:
    """403 before 422: who may not act learns nothing about field rules."""
    bad = {"name": "Not Valid!", "region": "nowhere", "instance_groups": []}
    r = viewer.post("/v1/clusters", json=bad)
    assert r.status_code == 403 and "operator" in r.json()["detail"]
    assert operator.post("/v1/clusters", json=bad).status_code == 422
    r = operator.post("/v1/clusters/import", json={"region": "x"})
    assert r.status_code == 403 and "admin" in r.json()["detail"]


def test_an_operator_cannot_retry_or_cancel_an_admins_delete(api: Any, operator: Any) -> None:
    name = unique("guard")
    created = api.post("/v1/clusters", json=body(name)).json()
    assert api.wait_terminal(created["id"], timeout=180)["status"] == "SUCCEEDED"
    fault = {"service": "eks", "operation": "DeleteCluster", "error_code": "AccessDeniedException", "count": 1}
    assert api.post("/v1/sandbox/faults", json=fault).status_code == 201
    d = api.http.delete(f"/v1/clusters/{name}", params={"confirm": name})
    failed = api.wait_terminal(d.json()["id"], timeout=180)
    assert failed["status"] == "FAILED"
    r = operator.post(f"/v1/operations/{failed['id']}/retry")
    assert r.status_code == 403 and "admin" in r.json()["detail"]
    retried = api.post(f"/v1/operations/{failed['id']}/retry")
    assert retried.status_code == 202
    done = api.wait_terminal(failed["id"], timeout=180)
    assert done["status"] == "SUCCEEDED"
    assert [(a["action"], a["principal"]["name"]) for a in done["attempts"]] == [("start", "sandbox-admin"),
                                                                                 ("retry", "sandbox-admin")]
