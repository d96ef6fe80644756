"""Training jobs end to end on the sandbox, on a CPU cluster (two ml.c5.large nodes, no GPU quota): submit
refuses a cluster without the training operator (the failed step names the add-on), the add-on enabled and the
operation retried, the HyperPodPyTorchJob runs one pod per node, logs are bounded, a killed pod spends the
recovery budget, refusals name the field with the numbers, a secret is write-only, delete removes the pods.
Dry runs before each real request plan what it then makes (the operator add-on while it is off), refuse what it
refuses, and change nothing: no AWS write, no Kubernetes object, no operation, a secret's values never echoed."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from tests.e2e.conftest import eventually
from tests.e2e.plan_calls import aws_writes, request_writes, unplanned, writes
from tests.e2e.test_mcp_sandbox import over_http, text

IMAGE = "123456789012.dkr.ecr.us-west-2.amazonaws.com/train:2.5.1"
HP = ("sagemaker.amazonaws.com/v1", "HyperPodPyTorchJob")
DRY = {"dry_run": "true"}


@pytest.fixture(scope="module")
def cluster(api: Any) -> str:
    return api.make_cluster("jobs", [{"name": "cpu", "instance_type": "ml.c5.large", "instance_count": 2,
                                       "availability_zone": "us-west-2a"}])


def _job(name: str, **over: Any) -> dict[str, Any]:
    return {"name": name, "recipe": "pytorch", "image": IMAGE, "instance_type": "ml.c5.large", "nodes": 2,
            "gpus_per_node": 0, "max_retries": 1, "secrets": ["hf-token"],
            "parameters": {"script": "train.py", "epochs": 2},
            "log_monitoring": [{"name": "hang", "log_pattern": r".*step (\d+).*",
                                "expected_recurring_frequency_s": 600}], **over}


def test_submit_run_logs_restart_budget_and_delete(api: Any, viewer: Any, aws: Any, sandbox: Any,
                                                   cluster: str) -> None:
    base = f"/v1/clusters/{cluster}"
    kube = sandbox.kube.store(cluster)
    before = len(api.get("/v1/operations", params={"cluster": cluster}).json()["items"])

    # Refusals: 422 problem+json naming the field, with the numbers; nothing starts.
    r = api.post(f"{base}/jobs", json=_job("too-big", nodes=3))
    assert r.status_code == 422 and r.headers["content-type"].startswith("application/problem+json"), r.text
    assert r.json()["errors"][0]["loc"][-1] == "nodes"
    assert "needs 3 ml.c5.large nodes; the cluster has 2 in cpu" in r.text
    r = api.post(f"{base}/jobs", json=_job("gpu", gpus_per_node=1))
    assert r.status_code == 422 and "ml.c5.large has 0 GPUs per instance" in r.text, r.text
    r = api.post(f"{base}/jobs", json=_job("badparam", parameters={"epochs": 0}))
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "parameters", "epochs"], r.text
    r = api.post(f"{base}/jobs", json=_job("latest", image="repo/train:latest"))
    assert r.status_code == 422 and "image" in r.text
    r = api.post(f"{base}/jobs", json=_job("elastic", elastic={"min_nodes": 1, "max_nodes": 2},
                                           parameters={}, recipe="verl"))
    assert r.status_code == 422 and "RayJob" in r.text, r.text
    assert viewer.post(f"{base}/jobs", json=_job("viewer")).status_code == 403
    for bad in (_job("too-big", nodes=3), _job("gpu", gpus_per_node=1)):  # a plan refuses as the run does
        real, dry = api.post(f"{base}/jobs", json=bad), api.post(f"{base}/jobs", json=bad, params={"dry_run": "true"})
        assert dry.status_code == real.status_code == 422 and dry.json()["errors"] == real.json()["errors"], dry.text
    assert viewer.post(f"{base}/jobs", json=_job("viewer"), params={"dry_run": "true"}).status_code == 403
    assert len(api.get("/v1/operations", params={"cluster": cluster}).json()["items"]) == before

    # A secret's dry run names the keys it would write, never a value, and writes nothing.
    secret = {"name": "hf-token", "data": {"HF_TOKEN": "hf_s3cr3t_value", "HUB": "plain_named_value"}}
    since = api.mark()
    dry = api.post(f"{base}/secrets", json=secret, params={"dry_run": "true"})
    assert dry.status_code == 200, dry.text
    [change] = dry.json()["changes"]
    assert (change["action"], change["kind"], change["name"]) == ("create", "Kubernetes Secret", "hf-token")
    assert change["details"]["keys"] == ["HF_TOKEN", "HUB"] and change["details"]["namespace"] == "default"
    assert "hf_s3cr3t_value" not in dry.text and "plain_named_value" not in dry.text
    assert kube.get("v1", "Secret", "hf-token", "default") is None and aws_writes(api, since) == []
    assert request_writes(api, dry) == []  # nor a Kubernetes write (the call log holds the API's Kubernetes calls)
    nowhere = {**secret, "namespace": "nowhere"}
    dry, real = (api.post(f"{base}/secrets", json=nowhere, params={"dry_run": "true"}),
                 api.post(f"{base}/secrets", json=nowhere))
    assert dry.status_code == real.status_code == 422, (dry.text, real.text)  # not a PodStart namespace
    assert dry.json()["errors"] == real.json()["errors"] == [
        {"loc": ["body", "namespace"], "msg": real.json()["errors"][0]["msg"]}] and "does not exist" in real.text

    # A secret is write-only: the answer names its keys, never its value.
    r = api.post(f"{base}/secrets", json={"name": "hf-token", "data": {"HF_TOKEN": "hf_s3cr3t_value",
                                                                        "HUB": "plain_named_value"}})
    assert r.status_code == 201 and r.json() == {"name": "hf-token", "namespace": "default",
                                                 "keys": ["HF_TOKEN", "HUB"]}, r.text
    assert "hf_s3cr3t_value" not in r.text
    # its one Kubernetes write, seen by the same call log (besides the audit record, DynamoDB PutItem)
    assert [w for w in request_writes(api, r) if w.startswith("kubernetes.")] == ["kubernetes.Apply"]
    trail = api.get("/v1/audit", params={"cluster": cluster}).text  # recorded, values masked whatever the key
    assert "create_secret" in trail or "secrets" in trail, trail[:500]
    assert "hf_s3cr3t_value" not in trail and "plain_named_value" not in trail
    assert viewer.post(f"{base}/secrets", json={"name": "x", "data": {"A": "b"}}).status_code == 403

    # The plan first (same Idempotency-Key as the real request after it: a dry run records nothing): the cluster
    # does not serve HyperPodPyTorchJob, so the operator step enables the training operator feature (its
    # prerequisites first: those in place listed unchanged), then the job; the nodes are there.
    key = uuid.uuid4().hex
    ops = len(api.get("/v1/operations", params={"cluster": cluster}).json()["items"])
    dry = api.post(f"{base}/jobs", json=_job("train"), key=key, params={"dry_run": "true"})
    assert dry.status_code == 200, dry.text
    plan = dry.json()
    assert plan["kind"] == "job.submit"
    addon = "amazon-sagemaker-hyperpod-training-operator"
    there = set(aws("eks").list_addons(clusterName=cluster)["addons"])
    assert [(c["action"], c["name"]) for c in plan["changes"] if c["kind"] == "eks-addon"] == [
        ("none" if a in there else "create", a) for a in ("cert-manager", "eks-pod-identity-agent", addon)]
    assert {c["kind"] for c in plan["changes"] if c["action"] == "create"} == {
        "eks-addon", "AWS::IAM::Role", "AWS::EKS::PodIdentityAssociation", "Kubernetes HyperPodPyTorchJob"}
    assert any("enables the training operator" in w for w in plan["warnings"]), plan["warnings"]
    [line] = plan["cost"]["lines"]
    assert line["paid"] and line["count"] == 2 and plan["cost"]["hourly"] == 0
    assert request_writes(api, dry) == [] and kube.registry.by_kind(*HP) is None  # no add-on, so no job either
    assert len(api.get("/v1/operations", params={"cluster": cluster}).json()["items"]) == ops

    # The real run: the operator step enables the feature (a visible step), then the job runs; what it changed
    # on AWS is what the plan listed.
    since = api.mark()
    r = api.post(f"{base}/jobs", json=_job("train"), key=key)
    assert r.status_code == 202, r.text
    assert api.post(f"{base}/jobs", json=_job("train"), key=key).json()["id"] == r.json()["id"]
    op = api.wait_terminal(r.json()["id"], timeout=180)
    assert op["status"] == "SUCCEEDED", op.get("error")
    enabled = next(s for s in op["steps"] if s["name"] == "training_operator")
    assert enabled["status"] == "SUCCEEDED", enabled
    assert "enabled training_operator for this job" in (enabled.get("message") or ""), enabled
    assert aws("eks").describe_addon(clusterName=cluster, addonName=addon)["addon"]["status"] == "ACTIVE"
    assert unplanned(plan, writes(api, since)) == []
    features = api.get(f"{base}/features").json()
    assert features["training_operator"]["enabled"] is True  # the features document shows it on
    planned = [(c["kind"].removeprefix("Kubernetes "), c["name"]) for c in plan["changes"]
               if c["kind"].startswith("Kubernetes ")]
    assert planned == [("HyperPodPyTorchJob", "train")] and kube.get(*HP, "train", "default") is not None
    taken = api.post(f"{base}/jobs", json=_job("train"), params={"dry_run": "true"})
    assert taken.status_code == 409 and "already exists" in taken.text  # as a real submit of that name now
    steps = {s["name"]: s["status"] for s in op["steps"]}
    assert steps == {"training_operator": "SUCCEEDED", "kuberay_operator": "SKIPPED", "mlflow_access": "SKIPPED",
                     "validate": "SUCCEEDED",
                     "submit": "SUCCEEDED", "watch": "SUCCEEDED"}, steps
    obj = kube.get(*HP, "train", "default")
    assert obj["metadata"]["managedFields"][0]["manager"] == "podstart"
    assert "hf_s3cr3t_value" not in json.dumps(obj)
    assert kube.get("v1", "Secret", "hf-token", "default") is not None

    # Detail: one pod per node, the budget, the data contract.
    job = api.get(f"{base}/jobs/train").json()
    assert job["status"] == "Running" and job["kind"] == "pytorch" and job["recipe"] == "pytorch"
    assert job["budget"] == {"used": 0, "max": 1, "exhausted": False}
    assert len({p["node"] for p in job["pods"]}) == 2 and all(p["phase"] == "Running" for p in job["pods"])
    assert job["data"]["checkpoints"] == "/data/checkpoints/train/" and job["image"] == IMAGE
    rows = api.get(f"{base}/jobs", params={"status": "Running"}).json()["items"]
    assert [j["name"] for j in rows] == ["train"]
    assert api.get(f"{base}/jobs", params={"status": "Failed"}).json()["items"] == []

    # The same through MCP: the job, its logs, the list (compact answers).
    async def mcp(client: Any) -> list[Any]:
        return [await client.call_tool("get_job", {"cluster": cluster, "job": "train"}),
                await client.call_tool("get_job_logs", {"cluster": cluster, "job": "train", "tail": 3}),
                await client.call_tool("list_jobs", {"cluster": cluster})]

    got, logs_tool, listed = over_http(sandbox, mcp)
    assert not got.is_error and got.structured_content["budget"]["max"] == 1, text(got)
    assert not logs_tool.is_error and len(logs_tool.structured_content["lines"]) <= 3, text(logs_tool)
    assert [j["name"] for j in listed.structured_content["items"]] == ["train"], text(listed)

    # Logs, bounded: the newest lines of a pod, steps and throughput.
    pod = job["pods"][0]["name"]
    logs = eventually(lambda: (x := api.get(f"{base}/jobs/train/logs", params={"tail": 2}).json())["lines"] and x)
    assert logs["pod"] == pod and len(logs["lines"]) <= 2 and "samples/s" in logs["lines"][-1]
    r = api.get(f"{base}/jobs/train/logs", params={"pod": "someone-else"})
    assert r.status_code == 422 and "pod" in r.text

    # A killed pod is a restart counted against the budget; the next one exhausts it and the job fails.
    kube.delete("v1", "Pod", pod, "default")
    eventually(lambda: api.get(f"{base}/jobs/train").json()["budget"]["used"] == 1)
    eventually(lambda: [p["phase"] for p in api.get(f"{base}/jobs/train").json()["pods"]] == ["Running", "Running"])
    kube.delete("v1", "Pod", pod, "default")
    failed = eventually(lambda: (x := api.get(f"{base}/jobs/train").json())["status"] == "Failed" and x)
    assert failed["budget"] == {"used": 1, "max": 1, "exhausted": True}
    assert any(c["type"] == "Failed" and "recovery budget" in (c["message"] or "") for c in failed["conditions"])

    # Delete: planned first (the job and each pod it has now), nothing deleted by the plan.
    since = api.mark()
    dry = api.http.delete(f"{base}/jobs/train", params={"dry_run": "true"})
    assert dry.status_code == 200, dry.text
    pods = sorted(p["metadata"]["name"]
                  for p in kube.list("v1", "Pod", "default", label_selector="podstart.dev/job=train"))
    changes = dry.json()["changes"]
    assert (changes[0]["action"], changes[0]["kind"], changes[0]["name"]) == (
        "delete", "Kubernetes HyperPodPyTorchJob", "train")
    assert sorted(c["name"] for c in changes[1:]) == pods and {c["kind"] for c in changes[1:]} <= {"Kubernetes Pod"}
    assert kube.get(*HP, "train", "default") is not None and aws_writes(api, since) == []
    assert api.http.delete(f"{base}/jobs/nothing", params={"dry_run": "true"}).status_code == 404

    # Delete: an operation; the job and its pods are gone.
    assert viewer.http.delete(f"{base}/jobs/train").status_code == 403
    r = api.http.delete(f"{base}/jobs/train", headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 202, r.text
    assert api.wait_terminal(r.json()["id"])["status"] == "SUCCEEDED"
    assert kube.list("v1", "Pod", "default", label_selector="podstart.dev/job=train") == []
    assert api.get(f"{base}/jobs/train").status_code == 404


def test_a_job_goes_only_into_a_podstart_namespace_an_admin_made_with_its_data_volume_and_is_listed(
        api: Any, operator: Any, sandbox: Any, cluster: str) -> None:
    # Given the operator is on (the first test enabled it), a team submits into a namespace that does not exist
    base = f"/v1/clusters/{cluster}"
    kube = sandbox.kube.store(cluster)
    body = _job("team-train", namespace="team-a", secrets=[], nodes=1)
    for r in (operator.post(f"{base}/jobs", json=body), operator.post(f"{base}/jobs", json=body, params=DRY)):
        assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "namespace"], r.text
        assert "POST /v1/clusters/{cluster}/namespaces" in r.json()["detail"]
    assert kube.get("v1", "Namespace", "team-a") is None  # a submit never makes a namespace
    # When an admin makes it (an operator may not), the job goes there with the namespace's data volume
    assert operator.post(f"{base}/namespaces", json={"name": "team-a"}).status_code == 403
    made = api.post(f"{base}/namespaces", json={"name": "team-a"}, key=uuid.uuid4().hex)
    assert made.status_code == 202 and api.wait_terminal(made.json()["id"])["status"] == "SUCCEEDED", made.text
    plan = operator.post(f"{base}/jobs", json=body, params=DRY).json()
    assert [(c["action"], c["kind"]) for c in plan["changes"] if c["step"] == "submit"] == [
        ("create", "Kubernetes HyperPodPyTorchJob")]
    r = operator.post(f"{base}/jobs", json=body, key=uuid.uuid4().hex)
    assert r.status_code == 202, r.text
    op = api.wait_terminal(r.json()["id"], timeout=120)
    assert op["status"] == "SUCCEEDED", op.get("error")
    # Then the job runs there on the namespace's data volume, and every face finds it there
    assert kube.get("v1", "PersistentVolumeClaim", "podstart-data", "team-a") is not None
    assert kube.get(*HP, "team-train", "team-a") is not None
    job = api.get(f"{base}/jobs/team-train", params={"namespace": "team-a"}).json()
    assert job["namespace"] == "team-a" and job["status"] == "Running", job
    assert api.get(f"{base}/jobs/team-train").status_code == 404  # not in default
    listed = {(j["namespace"], j["name"]) for j in api.get(f"{base}/jobs").json()["items"]}
    assert ("team-a", "team-train") in listed
    gone = api.http.delete(f"{base}/jobs/team-train", params={"namespace": "team-a"})
    assert gone.status_code == 202 and api.wait_terminal(gone.json()["id"])["status"] == "SUCCEEDED"
    assert kube.get(*HP, "team-train", "team-a") is None
