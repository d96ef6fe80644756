"""Storage after create through REST, checked with boto3 and the Kubernetes double: mount an existing S3
bucket (a role scoped to its prefix, a claim that binds), list its objects, remove it (the bucket stays),
clear 4xx that change nothing, and the reconcile operation re-running the dependencies idempotently."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import pytest

from sandbox.resources import TEAM_BUCKET
from tests.e2e.plan_calls import request_writes, unplanned, writes

DRY = {"dry_run": "true"}


@pytest.fixture(scope="module")
def cluster(api: Any) -> str:
    cname = f"stor-{uuid.uuid4().hex[:6]}"
    body = {"name": cname, "region": "us-west-2",
            "instance_groups": [{"name": "workers", "instance_type": "ml.c5.large", "instance_count": 1,
                                 "availability_zone": "us-west-2a"}]}
    op = api.post("/v1/clusters", json=body, key=uuid.uuid4().hex).json()
    assert api.wait_terminal(op["id"], timeout=180)["status"] == "SUCCEEDED"
    return cname


def _bound(sandbox: Any, cluster: str, name: str, namespace: str) -> dict[str, Any]:
    kube = sandbox.kube.store(cluster)
    deadline = time.monotonic() + 10
    while ((pvc := kube.get("v1", "PersistentVolumeClaim", name, namespace)) or {}).get(
            "status", {}).get("phase") != "Bound":
        assert time.monotonic() < deadline, pvc
        time.sleep(0.1)
    return pvc  # type: ignore[no-any-return]


def test_mount_list_and_remove_an_s3_bucket(api: Any, viewer: Any, aws: Any, sandbox: Any, cluster: str) -> None:
    bucket = TEAM_BUCKET  # a bucket an admin registered (the sandbox's PODSTART_REGISTERED_BUCKETS)
    s3 = aws("s3")
    run = uuid.uuid4().hex[:8]
    for key in ("train/a.jsonl", "train/b.jsonl", "train/sub/c.jsonl", "other/x"):
        s3.put_object(Bucket=bucket, Key=f"{run}/{key}", Body=b"{}")
    made = api.post(f"/v1/clusters/{cluster}/namespaces", json={"name": "ml"}, key=uuid.uuid4().hex)
    assert made.status_code == 202 and api.wait_terminal(made.json()["id"])["status"] == "SUCCEEDED", made.text

    # Bad input: problem+json naming the field, nothing started.
    before = len(api.get("/v1/operations", params={"cluster": cluster}).json()["items"])
    r = api.post(f"/v1/clusters/{cluster}/storage", json={"kind": "s3", "bucket": "no-such-bucket-here"})
    assert r.status_code == 422 and r.headers["content-type"].startswith("application/problem+json"), r.text
    assert any(e["loc"][-1] == "bucket" for e in r.json()["errors"]), r.json()
    dry = api.post(f"/v1/clusters/{cluster}/storage", json={"kind": "s3", "bucket": "no-such-bucket-here"},
                   params=DRY)
    assert (dry.status_code, dry.json()["errors"]) == (422, r.json()["errors"])  # the same problem
    r = api.post(f"/v1/clusters/{cluster}/storage", json={"kind": "fsx_lustre", "storage_capacity_gib": 1000,
                                                            "throughput_mb_per_tib": 250})
    assert r.status_code == 422 and "storage_capacity_gib" in r.text, r.text
    assert viewer.post(f"/v1/clusters/{cluster}/storage", json={"kind": "s3", "bucket": bucket}).status_code == 403
    assert len(api.get("/v1/operations", params={"cluster": cluster}).json()["items"]) == before

    # Add: one operation per Idempotency-Key; the retry answers the same operation.
    key = uuid.uuid4().hex
    body = {"kind": "s3", "name": "train", "bucket": bucket, "prefix": f"{run}/train/", "namespace": "ml"}
    since = api.mark()
    dry = api.post(f"/v1/clusters/{cluster}/storage", json=body, key=key, params=DRY)
    assert dry.status_code == 200, dry.text
    plan = dry.json()
    assert writes(api, since) == [] and sandbox.kube.store(cluster).get("v1", "PersistentVolumeClaim", "train",
                                                                        "ml") is None
    assert request_writes(api, dry) == []  # no write at all, Kubernetes and PodStart's own tables included
    assert plan["kind"] == "storage.add" and plan["cost"] == {**plan["cost"], "hourly": 0, "lines": []}
    assert {(c["action"], c["kind"]) for c in plan["changes"]} >= {
        ("create", "AWS::IAM::Role"), ("create", "AWS::EKS::PodIdentityAssociation"),
        ("none", "Kubernetes Namespace"), ("create", "Kubernetes PersistentVolumeClaim"),
        ("none", "AWS::S3::Bucket")}
    assert "train" not in {i["name"] for i in api.get(f"/v1/clusters/{cluster}/storage").json()["items"]}
    since = api.mark()
    r = api.post(f"/v1/clusters/{cluster}/storage", json=body, key=key)
    assert r.status_code == 202, r.text
    again = api.post(f"/v1/clusters/{cluster}/storage", json=body, key=key)
    assert again.json()["id"] == r.json()["id"]
    op = api.wait_terminal(r.json()["id"])
    assert op["kind"] == "storage.add" and op["status"] == "SUCCEEDED", op.get("error")
    made = writes(api, since)
    assert made and unplanned(plan, made) == [], unplanned(plan, made)
    dup = api.post(f"/v1/clusters/{cluster}/storage", json=body)
    assert dup.status_code == 409 and "name" in dup.text, dup.text
    assert api.post(f"/v1/clusters/{cluster}/storage", json=body, params=DRY).status_code == 409

    pvc = _bound(sandbox, cluster, "train", "ml")
    items = {i["name"]: i for i in api.get(f"/v1/clusters/{cluster}/storage").json()["items"]}
    vol = items["train"]
    assert vol["kind"] == "s3" and vol["origin"] == "added" and vol["bucket"] == bucket
    assert vol["pvc"]["namespace"] == "ml" and vol["pvc"]["volume"] == pvc["spec"]["volumeName"]

    # The role is scoped to the bucket and prefix: never s3:* and never a * resource.
    iam = aws("iam")
    role = vol["role_arn"].rsplit("/", 1)[1]
    docs = [iam.get_role_policy(RoleName=role, PolicyName=p)["PolicyDocument"]
            for p in iam.list_role_policies(RoleName=role)["PolicyNames"]]
    statements = [s for d in docs for s in (json.loads(d) if isinstance(d, str) else d)["Statement"]]
    assert statements
    for s in statements:
        actions = s["Action"] if isinstance(s["Action"], list) else [s["Action"]]
        resources = s["Resource"] if isinstance(s["Resource"], list) else [s["Resource"]]
        assert "s3:*" not in actions and "*" not in resources, s
        assert all(bucket in res for res in resources), s

    # Objects: one level under the volume's prefix, bounded.
    listing = api.get(f"/v1/clusters/{cluster}/storage/train/objects", params={"limit": 1}).json()
    assert listing["bucket"] == bucket and listing["prefix"] == f"{run}/train/"
    assert len(listing["objects"]) == 1 and listing["truncated"] is True and listing["next_token"]
    following = api.get(f"/v1/clusters/{cluster}/storage/train/objects",
                        params={"limit": 1, "next_token": listing["next_token"]}).json()
    assert [o["key"] for o in following["objects"]] == [f"{run}/train/b.jsonl"]
    # a token this listing did not issue (the fuzzer found one that made the sandbox's S3 answer 500) is the caller's
    forged = api.get(f"/v1/clusters/{cluster}/storage/train/objects", params={"next_token": "[Filtered]"})
    assert forged.status_code == 400 and "next_token" in forged.text, forged.text
    listing = api.get(f"/v1/clusters/{cluster}/storage/train/objects").json()
    assert [o["key"] for o in listing["objects"]] == [f"{run}/train/a.jsonl", f"{run}/train/b.jsonl"]
    assert listing["prefixes"] == [f"{run}/train/sub/"]
    assert api.get(f"/v1/clusters/{cluster}/storage/train/objects",
                   params={"prefix": "../"}).status_code == 422

    # Remove: the claim and volume go, the bucket and its data stay.
    assert api.http.delete(f"/v1/clusters/{cluster}/storage/podstart-data").status_code == 409
    since = api.mark()
    dry = api.http.delete(f"/v1/clusters/{cluster}/storage/train", params=DRY)
    plan = dry.json()
    assert request_writes(api, dry) == [] and writes(api, since) == []
    assert sandbox.kube.store(cluster).get("v1", "PersistentVolumeClaim", "train", "ml")
    assert [(c["action"], c["kind"]) for c in plan["changes"]][:2] == [
        ("delete", "Kubernetes PersistentVolumeClaim"), ("delete", "Kubernetes PersistentVolume")]
    assert ("none", "AWS::S3::Bucket", bucket) in [(c["action"], c["kind"], c["name"]) for c in plan["changes"]]
    since = api.mark()
    r = api.http.delete(f"/v1/clusters/{cluster}/storage/train")
    assert r.status_code == 202, r.text
    op = api.wait_terminal(r.json()["id"])
    assert op["kind"] == "storage.remove" and op["status"] == "SUCCEEDED", op.get("error")
    assert unplanned(plan, writes(api, since)) == []
    kube = sandbox.kube.store(cluster)
    assert kube.get("v1", "PersistentVolumeClaim", "train", "ml") is None
    assert kube.get("v1", "PersistentVolume", pvc["spec"]["volumeName"]) is None
    assert len(s3.list_objects_v2(Bucket=bucket, Prefix=f"{run}/")["Contents"]) == 4
    assert "train" not in {i["name"] for i in api.get(f"/v1/clusters/{cluster}/storage").json()["items"]}
    assert api.http.delete(f"/v1/clusters/{cluster}/storage/train").status_code == 404


def test_reconcile_reruns_dependencies_without_duplicates(api: Any, aws: Any, sandbox: Any, cluster: str) -> None:
    eks = aws("eks")
    addons = sorted(eks.list_addons(clusterName=cluster)["addons"])
    since = api.mark()
    dry = api.post(f"/v1/clusters/{cluster}/reconcile", params=DRY)
    assert dry.status_code == 200, dry.text
    plan = dry.json()
    assert writes(api, since) == []
    # Everything is in place: the plan lists each add-on, object, role and association, and changes none
    assert {c["action"] for c in plan["changes"]} == {"none"}, [c for c in plan["changes"] if c["action"] != "none"]
    assert {"coredns", "default/podstart-data", "kube-system/neuron-device-plugin-daemonset"} <= {
        c["name"] for c in plan["changes"]}
    mark = api.mark()
    r = api.post(f"/v1/clusters/{cluster}/reconcile", key=uuid.uuid4().hex)
    assert r.status_code == 202, r.text
    op = api.wait_terminal(r.json()["id"])
    assert op["kind"] == "cluster.reconcile" and op["status"] == "SUCCEEDED", op.get("error")
    assert sorted(eks.list_addons(clusterName=cluster)["addons"]) == addons
    # Everything was already there: nothing created again (no add-on, role or association twice).
    created = [c["operation"] for c in api.calls(after=mark) if c["operation"].startswith("Create")]
    assert created == [], created
    assert writes(api, mark) == []  # a plan of only `none` is a run that changes nothing
    # The base set includes the Neuron device plugin, so Trainium groups work.
    kube = sandbox.kube.store(cluster)
    assert kube.get("apps/v1", "DaemonSet", "neuron-device-plugin-daemonset", "kube-system") is not None


def test_mcp_storage_tools_list_and_name_the_bad_field(sandbox: Any, cluster: str) -> None:
    from tests.e2e.test_mcp_sandbox import over_http, text

    async def go(client: Any) -> tuple[Any, Any]:
        listed = await client.call_tool("list_storage", {"cluster": cluster})
        bad = await client.call_tool("add_storage", {"cluster": cluster, "kind": "s3", "bucket": "Not_A_Bucket"})
        return listed, bad
    listed, bad = over_http(sandbox, go)
    assert not listed.is_error, text(listed)
    assert "podstart-data" in {v["name"] for v in listed.structured_content["items"]}
    assert len(text(listed).encode()) <= 4096
    assert bad.is_error and "HTTP 422" in text(bad) and "bucket" in text(bad), text(bad)


def test_fsx_added_after_create_binds_when_available_and_goes_only_with_confirm(api: Any, aws: Any, sandbox: Any,
                                                                                 cluster: str) -> None:
    body = {"kind": "fsx_lustre", "name": "scratch", "storage_capacity_gib": 1200, "throughput_mb_per_tib": 125}
    fsx_before = len(aws("fsx").describe_file_systems()["FileSystems"])
    since = api.mark()
    plan = api.post(f"/v1/clusters/{cluster}/storage", json=body, params=DRY).json()
    assert writes(api, since) == [] and len(aws("fsx").describe_file_systems()["FileSystems"]) == fsx_before
    assert ("create", "AWS::FSx::FileSystem", "scratch") in [(c["action"], c["kind"], c["name"])
                                                            for c in plan["changes"]]
    [line] = plan["cost"]["lines"]
    assert "FSx for Lustre 1200 GiB" in line["item"] and line["count"] == 1200  # priced per GiB-month
    since = api.mark()
    r = api.post(f"/v1/clusters/{cluster}/storage", json=body)
    assert r.status_code == 202, r.text
    op = api.wait_terminal(r.json()["id"])
    assert op["status"] == "SUCCEEDED", op.get("error")
    made = writes(api, since)
    assert "CreateFileSystem" in [c["operation"] for c in made] and unplanned(plan, made) == []
    fs_id = {i["name"]: i for i in api.get(f"/v1/clusters/{cluster}/storage").json()["items"]}["scratch"][
        "file_system_id"]
    fs = aws("fsx").describe_file_systems(FileSystemIds=[fs_id])["FileSystems"][0]
    assert fs["Lifecycle"] == "AVAILABLE" and fs["LustreConfiguration"]["PerUnitStorageThroughput"] == 125
    pvc = _bound(sandbox, cluster, "scratch", "default")
    pv = sandbox.kube.store(cluster).get("v1", "PersistentVolume", pvc["spec"]["volumeName"])
    assert pv["spec"]["csi"]["volumeHandle"] == fs_id

    # Deleting its data needs the name typed again; without it nothing starts.
    r = api.http.delete(f"/v1/clusters/{cluster}/storage/scratch")
    assert r.status_code == 422 and "confirm" in r.text, r.text
    assert api.http.delete(f"/v1/clusters/{cluster}/storage/scratch", params=DRY).status_code == 422
    gone = api.http.delete(f"/v1/clusters/{cluster}/storage/scratch", params={**DRY, "confirm": "scratch"}).json()
    assert ("delete", "AWS::FSx::FileSystem", fs_id) in [(c["action"], c["kind"], c["name"]) for c in gone["changes"]]
    assert gone["cost"]["lines"][0]["count"] == -1200  # removing it saves its storage
    assert aws("fsx").describe_file_systems(FileSystemIds=[fs_id])["FileSystems"][0]["Lifecycle"] == "AVAILABLE"
    r = api.http.delete(f"/v1/clusters/{cluster}/storage/scratch", params={"confirm": "scratch"})
    assert r.status_code == 202, r.text
    assert api.wait_terminal(r.json()["id"])["status"] == "SUCCEEDED"
    left = [f for f in aws("fsx").describe_file_systems()["FileSystems"] if f["FileSystemId"] == fs_id]
    assert not left or left[0]["Lifecycle"] == "DELETING", left
    assert sandbox.kube.store(cluster).get("v1", "PersistentVolumeClaim", "scratch", "default") is None


def test_a_fault_while_adding_fails_there_and_retry_finishes_without_duplicates(api: Any, viewer: Any, aws: Any,
                                                                                 sandbox: Any, cluster: str) -> None:
    bucket = sandbox.info["buckets"]["data"]  # PodStart's own data bucket: an operator's to mount
    api.post("/v1/sandbox/faults", json={"service": "eks", "operation": "CreatePodIdentityAssociation",
                                         "error_code": "AccessDeniedException", "count": 1, "message": "injected"})
    start = api.mark()
    r = api.post(f"/v1/clusters/{cluster}/storage", json={"kind": "s3", "name": "faulty", "bucket": bucket,
                                                          "prefix": "faulty/"})
    failed = api.wait_terminal(r.json()["id"])
    assert failed["status"] == "FAILED" and failed["phase"] == "backing", failed
    assert viewer.post(f"/v1/operations/{failed['id']}/retry").status_code == 403
    mark = api.mark()
    assert api.post(f"/v1/operations/{failed['id']}/retry").status_code == 202
    done = api.wait_terminal(failed["id"])
    assert done["status"] == "SUCCEEDED", done.get("error")
    made = [c["operation"] for c in api.calls(after=start) if c["operation"].startswith(("Create", "Put"))
            and c["outcome"] == "ok"]
    assert made.count("CreateRole") == 1 and made.count("CreatePodIdentityAssociation") == 1, made
    assert not [c for c in api.calls(after=mark) if c["operation"] == "CreateRole"]
    _bound(sandbox, cluster, "faulty", "default")
