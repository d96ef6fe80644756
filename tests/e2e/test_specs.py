"""Spec documents over REST: every cluster shape the sandbox can create exports and plans back as no change; an
apply is idempotent under retry (a failed child is resumed, never repeated) and under a replayed key; pruning
deletes only with prune: true and with the role each deletion needs."""

from __future__ import annotations

import copy
import uuid
from typing import Any

import pytest

NAME = f"shapes-{uuid.uuid4().hex[:6]}"
CIDR = f"10.{150 + int(uuid.uuid4().hex[:4], 16) % 100}.0.0/16"  # its own: other files' VPCs share the sandbox
PLAN_ARN = "arn:aws:sagemaker:us-west-2:123456789012:training-plan/p5-4x-usw2"


def _cluster_doc(bucket: str) -> dict[str, Any]:
    return {"apiVersion": "podstart/v1", "kind": "Cluster", "metadata": {"name": NAME, "region": "us-west-2"},
            "spec": {
                "kubernetes_version": "1.32", "vpc_cidr": CIDR, "node_recovery": "none",
                "instance_groups": [
                    {"name": "gpu", "instance_type": "ml.g5.8xlarge", "instance_count": 2,
                     "availability_zone": "us-west-2a"},
                    {"name": "cpu", "instance_type": "ml.c5.large", "instance_count": 2,
                     "availability_zone": "usw2-az1", "capacity_type": "spot"},
                    {"name": "plan", "instance_type": "ml.p5.48xlarge", "instance_count": 1,
                     "availability_zone": "us-west-2a", "capacity_type": "training-plan",
                     "training_plan_arn": PLAN_ARN},
                    {"name": "efa", "instance_type": "ml.g6e.48xlarge", "instance_count": 1,
                     "availability_zone": "us-west-2a", "efa_only": True, "volume_size_gb": 200,
                     "deep_health_checks": []},
                ],
                "storage": {"s3": True, "fsx_lustre": {"storage_capacity_gib": 2400, "throughput_mb_per_tib": 500}},
                "volumes": [{"kind": "s3", "name": "raw", "bucket": bucket, "prefix": "raw/"},
                            {"kind": "fsx_lustre", "name": "scratch", "storage_capacity_gib": 1200,
                             "namespace": "default"}],
                "features": {
                    "training_operator": {"enabled": True},
                    "tiered_checkpointing": {"enabled": True, "memory_percent": 30},
                    "autoscaling": {"enabled": True, "instance_groups": ["cpu"], "cpu_limit": 100,
                                    "consolidate_after": "5m", "disruption_budget": "20%"},
                    "kuberay_operator": {"enabled": True},
                    "observability": {"enabled": True}, "metrics_server": {"enabled": True},
                }}}


@pytest.fixture(scope="module")
def shapes(api: Any) -> dict[str, Any]:
    bucket = api.get("/v1/sandbox").json()["buckets"]["data"]
    doc = _cluster_doc(bucket)
    key = uuid.uuid4().hex
    r = api.post("/v1/specs/apply", json={"documents": [doc]}, key=key)
    assert r.status_code == 202, r.text
    op = api.wait_terminal(r.json()["id"], timeout=240)
    assert op["status"] == "SUCCEEDED", op
    return {"doc": doc, "key": key, "op": op, "bucket": bucket}


def _plan(api: Any, docs: list[dict[str, Any]], prune: bool = False) -> dict[str, Any]:
    r = api.post("/v1/specs/plan", json={"documents": docs, "prune": prune})
    assert r.status_code == 200, r.text
    return dict(r.json())


def _ops(api: Any) -> list[dict[str, Any]]:
    return list(api.get("/v1/operations", params={"cluster": NAME, "limit": 100}).json()["items"])


def test_every_cluster_shape_exports_and_plans_back_as_no_change(api: Any, shapes: dict[str, Any]) -> None:
    # The spec it was made from (a zone given by id, defaults left out) and its export both plan as no change
    assert _plan(api, [shapes["doc"]])["changed"] is False
    exported = api.get(f"/v1/clusters/{NAME}/spec", params={"include": "jobs,endpoints"}).json()["documents"]
    assert [d["kind"] for d in exported] == ["Cluster"]
    plan = _plan(api, exported)
    assert plan["changed"] is False and plan["summary"]["unchanged"] == 1, plan
    spec = exported[0]["spec"]
    groups = {g["name"]: g for g in spec["instance_groups"]}
    assert groups["plan"]["training_plan_arn"] == PLAN_ARN and groups["plan"]["capacity_type"] == "training-plan"
    assert groups["efa"]["efa_only"] is True and groups["efa"]["volume_size_gb"] == 200
    assert groups["cpu"]["availability_zone"] == "us-west-2b" and groups["cpu"]["capacity_type"] == "spot"
    assert spec["node_recovery"] == "none" and spec["kubernetes_version"] == "1.32"
    assert spec["storage"]["fsx_lustre"] == {"storage_capacity_gib": 2400, "throughput_mb_per_tib": 500}
    assert {v["name"]: v["namespace"] for v in spec["volumes"]} == {"raw": "default", "scratch": "default"}
    assert spec["features"]["autoscaling"] == {"enabled": True, "instance_groups": ["cpu"], "cpu_limit": 100,
                                               "consolidate_after": "5m", "disruption_budget": "20%"}
    assert spec["features"]["tiered_checkpointing"] == {"enabled": True, "memory_percent": 30}
    # Nothing secret leaves: no token, credential or key value anywhere in the export
    text = str(exported).lower()
    assert "hf_" not in text and "password" not in text
    # The schema editors read is the same models'
    schema = api.get("/v1/specs/schema").json()
    assert {"ClusterSpec", "TrainingJobSpec", "EndpointSpec"} <= set(schema["$defs"])
    assert "name" not in schema["$defs"]["ClusterSpec"]["properties"]


def test_a_replayed_key_returns_the_apply_and_an_unchanged_spec_starts_nothing(api: Any, shapes: dict[str, Any]
                                                                               ) -> None:
    before = len(_ops(api))
    again = api.post("/v1/specs/apply", json={"documents": [shapes["doc"]]}, key=shapes["key"])
    assert again.status_code == 202 and again.json()["id"] == shapes["op"]["id"]
    assert again.headers.get("Idempotent-Replayed") == "true"
    fresh = api.post("/v1/specs/apply", json={"documents": [shapes["doc"]]}, key=uuid.uuid4().hex)
    assert fresh.status_code == 200 and fresh.json()["changed"] is False
    assert len(_ops(api)) == before


def test_a_failed_child_fails_the_apply_and_a_retry_resumes_that_child_without_repeating_anything(
        api: Any, operator: Any, shapes: dict[str, Any]) -> None:
    doc = copy.deepcopy(shapes["doc"])
    doc["spec"]["instance_groups"][1]["instance_count"] = 3  # cpu: 2 -> 3
    doc["spec"]["features"]["kuberay_operator"] = {"enabled": False}
    # Given HyperPod refuses the next UpdateCluster (the scale's)
    fault = api.post("/v1/sandbox/faults", json={"service": "sagemaker", "operation": "UpdateCluster",
                                                 "error_code": "ValidationException", "count": 1,
                                                 "message": "injected by the test"})
    assert fault.status_code == 201, fault.text
    r = operator.post("/v1/specs/apply", json={"documents": [doc]}, key=uuid.uuid4().hex)
    assert r.status_code == 202, r.text
    failed = api.wait_terminal(r.json()["id"], timeout=120)
    # Then the apply fails at the groups phase, naming its child; the features phase never started
    assert failed["status"] == "FAILED" and failed["phase"] == "instance_groups"
    step = failed["steps"][0]
    child_id = step["outputs"]["instance_groups_operations"]["0"]["operation_id"]
    assert child_id in step["error"]["message"] and "injected by the test" in step["error"]["message"]
    assert [s["status"] for s in failed["steps"]] == ["FAILED", "PENDING"]
    # When the operator retries the apply
    retried = operator.post(f"/v1/operations/{failed['id']}/retry")
    assert retried.status_code == 202, retried.text
    done = api.wait_terminal(failed["id"], timeout=120)
    assert done["status"] == "SUCCEEDED", done
    # Then the same child ran again (its second attempt), and no second scale was ever started
    child = api.get(f"/v1/operations/{child_id}").json()
    assert child["status"] == "SUCCEEDED" and child["attempt"] == 2
    children = [o for o in _ops(api) if (o["idempotency_key"] or "").startswith(failed["id"] + "/")]
    assert sorted(o["kind"] for o in children) == ["features.update", "instance_group.scale"]
    groups = {g["name"]: g["target_count"] for g in api.get(f"/v1/clusters/{NAME}").json()["instance_groups"]}
    assert groups["cpu"] == 3
    assert _plan(api, [doc])["changed"] is False
    shapes["doc"] = doc


def test_prune_deletes_only_when_asked_and_with_the_role_each_deletion_needs(api: Any, operator: Any,
                                                                             shapes: dict[str, Any]) -> None:
    doc = copy.deepcopy(shapes["doc"])
    doc["spec"]["volumes"] = []
    # Without prune: the volumes are kept, and the plan says so
    kept = _plan(api, [doc])
    assert kept["changed"] is False and any("raw" in w and "prune" in w for w in kept["warnings"])
    # With prune: each removal is a change, its operation planned
    plan = _plan(api, [doc], prune=True)
    assert {(d["path"], d["change"]) for d in plan["documents"][0]["diffs"]} == {
        ("spec.volumes[raw]", "delete"), ("spec.volumes[scratch]", "delete")}
    assert plan["summary"]["delete"] == 2
    # An operator may remove a mount but not an FSx file system (its data goes): 403, nothing starts
    before = len(_ops(api))
    r = operator.post("/v1/specs/apply", json={"documents": [doc], "prune": True}, key=uuid.uuid4().hex)
    assert r.status_code == 403 and "storage.remove scratch" in r.json()["detail"], r.text
    assert len(_ops(api)) == before
    # An admin's prune removes both, workloads' volumes last, in one apply
    r = api.post("/v1/specs/apply", json={"documents": [doc], "prune": True}, key=uuid.uuid4().hex)
    assert r.status_code == 202, r.text
    op = api.wait_terminal(r.json()["id"], timeout=120)
    assert op["status"] == "SUCCEEDED" and [s["name"] for s in op["steps"]] == ["prune"], op
    names = {i["name"] for i in api.get(f"/v1/clusters/{NAME}/storage").json()["items"]}
    assert "raw" not in names and "scratch" not in names
    assert _plan(api, [doc], prune=True)["changed"] is False


def test_documents_for_two_clusters_or_a_missing_one_are_refused_naming_the_field(api: Any,
                                                                                  shapes: dict[str, Any]) -> None:
    job = {"apiVersion": "podstart/v1", "kind": "TrainingJob", "metadata": {"name": "t", "cluster": "elsewhere"},
           "spec": {"recipe": "pytorch", "image": "repo/train:1", "instance_type": "ml.c5.large"}}
    r = api.post("/v1/specs/plan", json={"documents": [shapes["doc"], job]})
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "documents", 1, "metadata", "cluster"]
    r = api.post("/v1/specs/plan", json={"documents": [job]})
    assert r.status_code == 422 and "no cluster named 'elsewhere'" in r.text
    r = api.post("/v1/specs/plan", json={"documents": [{**shapes["doc"], "kind": "Nodepool"}]})
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "documents", 0, "kind"]


def test_an_agent_exports_and_plans_over_mcp_and_a_read_only_gateway_plans_but_never_applies(
        sandbox: Any, shapes: dict[str, Any]) -> None:
    from tests.e2e.test_mcp_sandbox import Client, over_http, over_stdio, text

    async def export_and_plan(client: Client) -> tuple[Any, Any]:
        exported = await client.call_tool("export_spec", {"cluster": NAME, "region": "us-west-2", "detail": "full"})
        assert not exported.is_error, text(exported)
        docs = exported.structured_content["documents"]
        return exported, await client.call_tool("plan_spec", {"documents": docs})

    exported, plan = over_http(sandbox, export_and_plan)
    assert not plan.is_error, text(plan)
    assert plan.structured_content["changed"] is False and "nothing differs" in plan.structured_content["next"]

    async def read_only(client: Client) -> tuple[Any, Any]:
        docs = exported.structured_content["documents"]
        return (await client.call_tool("plan_spec", {"documents": docs}),
                await client.call_tool("apply_spec", {"documents": docs}))

    planned, applied = over_stdio(sandbox, read_only, read_only=True)
    assert not planned.is_error and planned.structured_content["changed"] is False
    assert applied.is_error and "read-only" in text(applied).lower()
