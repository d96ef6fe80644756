"""A VERL RayJob end to end on the sandbox, on two 1-GPU nodes (ml.g5.8xlarge): the cluster has no KubeRay, so
the submit's kuberay_operator step enables the feature (its CRDs, RBAC and Deployment, server-side applied; a
visible step); KubeRay turns the RayJob into a RayCluster and head/worker pods on the GPU nodes; logs are read
through REST and MCP; the feature refuses to go while a RayJob exists; delete removes the RayCluster and the
pods; disable and enable through PATCH .../features are planned first (the plan lists each object, the dry run
writes nothing) and a PATCH equal to the live state starts nothing."""

from __future__ import annotations

import uuid
from typing import Any

import jsonschema
import pytest

from functions.domain.features import kuberay
from tests.e2e.conftest import eventually
from tests.e2e.plan_calls import aws_writes, request_writes, unplanned, writes
from tests.e2e.test_mcp_sandbox import over_http, text

IMAGE = "verlai/verl:app-verl0.5-vllm0.9.1-mcore0.12.2-te2.2"
RAYJOB = ("ray.io/v1", "RayJob")
RAYCLUSTER = ("ray.io/v1", "RayCluster")
DEPLOYMENT = ("apps/v1", "Deployment", kuberay.NAME, kuberay.NAMESPACE)
CRD = "apiextensions.k8s.io/v1", "CustomResourceDefinition"


@pytest.fixture(scope="module")
def cluster(api: Any) -> str:
    return api.make_cluster("ray", [{"name": "gpu", "instance_type": "ml.g5.8xlarge", "instance_count": 2,
                                       "availability_zone": "us-west-2a"}])


def _verl(name: str, **over: Any) -> dict[str, Any]:
    return {"name": name, "recipe": "verl", "image": IMAGE, "instance_type": "ml.g5.8xlarge", "nodes": 2,
            "gpus_per_node": 1, "max_retries": 1, "parameters": {}, **over}


def _patch(api: Any, cluster: str, body: dict[str, Any], dry_run: bool = False) -> Any:
    return api.http.patch(f"/v1/clusters/{cluster}/features", json=body,
                          params={"dry_run": "true"} if dry_run else {},
                          headers={"Idempotency-Key": uuid.uuid4().hex})


def test_verl_rayjob_enables_kuberay_runs_on_gpu_nodes_logs_and_deletes(api: Any, sandbox: Any, aws: Any,
                                                                        cluster: str) -> None:
    base = f"/v1/clusters/{cluster}"
    kube = sandbox.kube.store(cluster)
    doc = api.get(f"{base}/features").json()
    assert doc["kuberay_operator"]["enabled"] is False and doc["kuberay_operator"]["status"] == "DISABLED", doc

    # The plan first: the operator step enables the KubeRay feature (every object it applies), then the RayJob.
    key = uuid.uuid4().hex
    dry = api.post(f"{base}/jobs", json=_verl("grpo"), key=key, params={"dry_run": "true"})
    assert dry.status_code == 200, dry.text
    plan = dry.json()
    feature_lines = [(c["action"], c["kind"], c["name"]) for c in plan["changes"] if c["step"] == "kuberay_operator"]
    assert feature_lines == [("create", f"Kubernetes {o['kind']}", kuberay.label(o)) for o in kuberay.objects()]
    assert ("create", "Kubernetes RayJob", "grpo") in [(c["action"], c["kind"], c["name"]) for c in plan["changes"]]
    assert any("enables the KubeRay operator" in w for w in plan["warnings"]), plan["warnings"]
    assert request_writes(api, dry) == [] and kube.registry.by_kind(*RAYJOB) is None  # the dry run wrote nothing

    # The real run: the kuberay_operator step is visible and enabled the feature; the job runs.
    since = api.mark()
    r = api.post(f"{base}/jobs", json=_verl("grpo"), key=key)
    assert r.status_code == 202, r.text
    op = api.wait_terminal(r.json()["id"], timeout=180)
    assert op["status"] == "SUCCEEDED", op.get("error")
    steps = {s["name"]: s for s in op["steps"]}
    assert steps["training_operator"]["status"] == "SKIPPED"
    assert steps["kuberay_operator"]["status"] == "SUCCEEDED"
    assert "enabled kuberay_operator for this job" in steps["kuberay_operator"]["message"], steps["kuberay_operator"]
    assert unplanned(plan, writes(api, since)) == [] and aws_writes(api, since) == []  # Kubernetes only
    for name in kuberay.CRD_NAMES:
        assert kube.get(*CRD, name)["metadata"]["managedFields"][0]["manager"] == "podstart"
    dep = kube.get(*DEPLOYMENT)
    assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == "quay.io/kuberay/operator:v1.7.0"
    assert kube.get("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", kuberay.NAME) is not None
    features = api.get(f"{base}/features").json()["kuberay_operator"]
    assert (features["enabled"], features["status"], features["version"]) == (True, "ACTIVE", "v1.7.0"), features

    # KubeRay made a RayCluster owned by the RayJob, a head pod and one worker per GPU node.
    job_obj = kube.get(*RAYJOB, "grpo", "default")
    assert job_obj["status"]["jobDeploymentStatus"] == "Running" and job_obj["status"]["jobStatus"] == "RUNNING"
    rc = kube.get(*RAYCLUSTER, job_obj["status"]["rayClusterName"], "default")
    assert rc["metadata"]["ownerReferences"][0]["uid"] == job_obj["metadata"]["uid"]
    for obj, plural in ((job_obj, "rayjobs"), (rc, "rayclusters")):  # spec and status as KubeRay v1.7.0 has them
        schema = next(v for v in kuberay.crd(plural)["spec"]["versions"] if v["name"] == "v1")["schema"]
        jsonschema.Draft7Validator(schema["openAPIV3Schema"]).validate(obj)
    job = api.get(f"{base}/jobs/grpo").json()
    assert job["kind"] == "ray" and job["status"] == "Running" and job["recipe"] == "verl", job
    assert job["budget"] == {"used": 0, "max": 1, "exhausted": False}
    assert [c["type"] for c in job["conditions"]] == ["Running"] and job["image"] == IMAGE
    workers = [p for p in job["pods"] if "-worker-" in p["name"]]
    heads = [p for p in job["pods"] if "-head-" in p["name"]]
    assert len(heads) == 1 and len(workers) == 2 and all(p["phase"] == "Running" for p in job["pods"]), job["pods"]
    gpu_nodes = {n["metadata"]["name"] for n in kube.list("v1", "Node")
                 if n["status"]["allocatable"].get("nvidia.com/gpu") == "1"}
    assert {p["node"] for p in workers} == gpu_nodes  # one 1-GPU worker on each GPU node
    assert [j["name"] for j in api.get(f"{base}/jobs", params={"status": "Running"}).json()["items"]] == ["grpo"]

    # Logs: the head pod prints the driver's lines (steps, throughput), through REST and MCP.
    logs = eventually(lambda: (x := api.get(f"{base}/jobs/grpo/logs", params={"tail": 5}).json())
                  and any("samples/s" in line for line in x["lines"]) and x)
    assert logs["pod"] == heads[0]["name"] and len(logs["lines"]) <= 5

    async def mcp(client: Any) -> Any:
        return await client.call_tool("get_job_logs", {"cluster": cluster, "job": "grpo", "tail": 3})

    got = over_http(sandbox, mcp)
    assert not got.is_error and any("step:" in line for line in got.structured_content["lines"]), text(got)

    # The feature cannot go while a RayJob exists: 409 naming it, dry run or not, nothing changed.
    for dry_run in (True, False):
        r = _patch(api, cluster, {"kuberay_operator": {"enabled": False}}, dry_run=dry_run)
        assert r.status_code == 409 and "default/grpo" in r.text, r.text
    assert kube.get(*DEPLOYMENT) is not None

    # Delete: the RayJob, its RayCluster and its pods go.
    r = api.http.delete(f"{base}/jobs/grpo", headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 202, r.text
    assert api.wait_terminal(r.json()["id"])["status"] == "SUCCEEDED"
    assert kube.list("v1", "Pod", "default", label_selector="podstart.dev/job=grpo") == []
    assert kube.get(*RAYCLUSTER, rc["metadata"]["name"], "default") is None
    assert api.get(f"{base}/jobs/grpo").status_code == 404


def test_kuberay_feature_disable_and_enable_through_patch_planned_first(api: Any, sandbox: Any,
                                                                         cluster: str) -> None:
    base = f"/v1/clusters/{cluster}"
    kube = sandbox.kube.store(cluster)
    if kube.get(*DEPLOYMENT) is None:  # run alone: enable it first
        assert api.wait_terminal(_patch(api, cluster, {"kuberay_operator": {"enabled": True}}).json()["id"])[
            "status"] == "SUCCEEDED"

    # A PATCH equal to the live state starts nothing and writes nothing.
    same = _patch(api, cluster, {"kuberay_operator": {"enabled": True}})
    assert same.status_code == 200 and same.json()["changed"] is False, same.text
    assert [w for w in request_writes(api, same) if not w.startswith("dynamodb.")] == []  # the audit record only

    async def mcp(client: Any) -> list[Any]:  # the same switch through MCP: read it, and a no-op update
        return [await client.call_tool("get_features", {"cluster": cluster}),
                await client.call_tool("update_features", {"cluster": cluster,
                                                           "kuberay_operator": {"enabled": True}})]

    got, updated = over_http(sandbox, mcp)
    # the compact view: a line per feature, its status first ("ACTIVE v1.7.0")
    assert not got.is_error and str(got.structured_content["kuberay_operator"]).startswith("ACTIVE"), text(got)
    assert not updated.is_error and updated.structured_content["changed"] is False, text(updated)

    # Disable, planned: the Deployment and RBAC go, the CRDs stay; the dry run writes nothing.
    dry = _patch(api, cluster, {"kuberay_operator": {"enabled": False}}, dry_run=True)
    assert dry.status_code == 200, dry.text
    lines = [(c["action"], c["kind"], c["name"]) for c in dry.json()["changes"]]
    assert lines[0] == ("delete", "Kubernetes Deployment", f"{kuberay.NAMESPACE}/{kuberay.NAME}")
    assert ("delete", "Kubernetes ClusterRole", kuberay.NAME) in lines
    assert ("none", "Kubernetes CustomResourceDefinition", "rayjobs.ray.io") in lines
    assert request_writes(api, dry) == [] and kube.get(*DEPLOYMENT) is not None
    r = _patch(api, cluster, {"kuberay_operator": {"enabled": False}})
    assert r.status_code == 202, r.text
    op = api.wait_terminal(r.json()["id"])
    assert op["status"] == "SUCCEEDED" and [s["name"] for s in op["steps"]] == ["disable_kuberay_operator"], op
    assert kube.get(*DEPLOYMENT) is None, (op["steps"], kube.get(*DEPLOYMENT)["metadata"])
    assert kube.get("rbac.authorization.k8s.io/v1", "ClusterRole", kuberay.NAME) is None
    assert kube.get(*CRD, "rayjobs.ray.io") is not None  # kept, as helm uninstall keeps a chart's CRDs
    doc = api.get(f"{base}/features").json()["kuberay_operator"]
    assert (doc["enabled"], doc["status"]) == (False, "DISABLED"), doc

    # Enable, planned: the CRDs are in place (none), the operator's objects are created.
    dry = _patch(api, cluster, {"kuberay_operator": {"enabled": True}}, dry_run=True)
    lines = [(c["action"], c["kind"]) for c in dry.json()["changes"]]
    assert lines.count(("none", "Kubernetes CustomResourceDefinition")) == 3
    assert ("create", "Kubernetes Deployment") in lines and request_writes(api, dry) == []
    r = _patch(api, cluster, {"kuberay_operator": {"enabled": True}})
    assert r.status_code == 202, r.text
    assert api.wait_terminal(r.json()["id"])["status"] == "SUCCEEDED"
    doc = api.get(f"{base}/features").json()["kuberay_operator"]
    assert (doc["enabled"], doc["status"]) == (True, "ACTIVE"), doc
