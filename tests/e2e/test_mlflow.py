"""MLflow end to end on the sandbox: the catalog lists the seeded tracking server; a job submitted with `mlflow`
is planned (role, policy, Pod Identity association, ServiceAccount) without a write, then runs with the env and
its own ServiceAccount, whose role may call sagemaker-mlflow:* on that one server; the job page links the
MLflow UI (operators), where the metrics the job logged show; bad servers are refused naming the field; delete
removes what the job alone made."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
import jsonschema
import kubernetes_validate
import pytest

from tests.e2e.conftest import eventually, kube_client
from tests.e2e.plan_calls import request_writes, unplanned, writes
from tests.e2e.test_mcp_sandbox import over_http, text
from tests.reference import json_schema

IMAGE = "123456789012.dkr.ecr.us-west-2.amazonaws.com/train:2.5.1"
ACCOUNT = "123456789012"
SERVER = f"arn:aws:sagemaker:us-west-2:{ACCOUNT}:mlflow-tracking-server/podstart-demo"
FIELD = ["body", "mlflow", "tracking_server_arn"]


@pytest.fixture(scope="module")
def cluster(api: Any) -> str:
    return api.make_cluster("mlf", [{"name": "cpu", "instance_type": "ml.c5.large", "instance_count": 2,
                                       "availability_zone": "us-west-2a"}])


@pytest.fixture(scope="module")
def kube(sandbox: Any, cluster: str) -> Any:
    return kube_client(sandbox, cluster)


def _job(name: str, **over: Any) -> dict[str, Any]:
    return {"name": name, "recipe": "pytorch", "image": IMAGE, "instance_type": "ml.c5.large", "nodes": 2,
            "gpus_per_node": 0, "parameters": {"script": "train.py"},
            "mlflow": {"tracking_server_arn": SERVER, "experiment": "llama-sft"}, **over}


def test_catalog_lists_the_seeded_tracking_server_of_each_region(api: Any, viewer: Any) -> None:
    for region in ("us-west-2", "eu-west-2"):
        page = viewer.get("/v1/catalog/mlflow-tracking-servers", params={"region": region})
        assert page.status_code == 200, page.text
        [server] = [s for s in page.json()["items"] if s["name"] == "podstart-demo"]
        assert server["arn"] == f"arn:aws:sagemaker:{region}:{ACCOUNT}:mlflow-tracking-server/podstart-demo"
        assert server["status"] == "Created" and server["usable"] and server["size"] == "Small"
        assert server["tracking_server_url"].endswith(f".{region}.experiments.sagemaker.aws")
        assert server["mlflow_version"]
    r = api.get("/v1/catalog/mlflow-tracking-servers", params={"region": "xx-nowhere-1"})
    assert r.status_code == 422 and "region" in r.text


def test_bad_servers_are_refused_naming_the_field_and_nothing_starts(api: Any, aws: Any, cluster: str) -> None:
    base = f"/v1/clusters/{cluster}"
    before = len(api.get("/v1/operations", params={"cluster": cluster}).json()["items"])
    for arn in ("arn:aws:s3:::not-a-server", "podstart-demo"):
        r = api.post(f"{base}/jobs", json=_job("bad", mlflow={"tracking_server_arn": arn}))
        assert r.status_code == 422 and r.headers["content-type"].startswith("application/problem+json"), r.text
        assert r.json()["errors"][0]["loc"] == FIELD, r.text
    other = SERVER.replace("us-west-2", "us-east-1")
    for dry in (False, True):  # a plan refuses as the run does
        r = api.post(f"{base}/jobs", json=_job("bad", mlflow={"tracking_server_arn": other}),
                     params={"dry_run": "true"} if dry else {})
        assert r.status_code == 422 and r.json()["errors"][0]["loc"] == FIELD, r.text
        assert "us-east-1" in r.text and "us-west-2" in r.text
    r = api.post(f"{base}/jobs", json=_job("bad", mlflow={"tracking_server_arn": SERVER.replace("demo", "gone")}))
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == FIELD and "no MLflow tracking server" in r.text
    # A server still creating cannot take a job's runs yet: 409 saying its status and what to do.
    name = f"new-{uuid.uuid4().hex[:6]}"
    arn = aws("sagemaker").create_mlflow_tracking_server(
        TrackingServerName=name, ArtifactStoreUri="s3://bucket/mlflow",
        RoleArn=f"arn:aws:iam::{ACCOUNT}:role/mlflow")["TrackingServerArn"]
    r = api.post(f"{base}/jobs", json=_job("bad", mlflow={"tracking_server_arn": arn}))
    assert r.status_code == 409 and "Creating" in r.text, r.text
    r = api.post(f"{base}/jobs", json=_job("bad", env={"MLFLOW_TRACKING_URI": "http://x"}))
    assert r.status_code == 422 and r.json()["errors"][0]["loc"][:2] == ["body", "env"], r.text
    assert len(api.get("/v1/operations", params={"cluster": cluster}).json()["items"]) == before


def test_submit_with_mlflow_runs_scoped_and_links_the_ui(api: Any, viewer: Any, aws: Any, sandbox: Any,
                                                        kube: Any, cluster: str) -> None:
    from kubernetes import client

    base = f"/v1/clusters/{cluster}"
    # The plan: the role with its one-server policy, the association, the ServiceAccount; no write at all.
    key = uuid.uuid4().hex
    ops = len(api.get("/v1/operations", params={"cluster": cluster}).json()["items"])
    dry = api.post(f"{base}/jobs", json=_job("sft"), key=key, params={"dry_run": "true"})
    assert dry.status_code == 200, dry.text
    plan = dry.json()
    access = [(c["action"], c["kind"], c["name"]) for c in plan["changes"] if c["step"] == "mlflow_access"
              and c["action"] != "none"]
    role = next(n for _, k, n in access if k == "AWS::IAM::Role")
    assert role.startswith("podstart-mlflow-sft-")
    assert ("create", "AWS::EKS::PodIdentityAssociation", "default/sft-mlflow") in access, access
    policy = next(c for c in plan["changes"] if c["name"] == role)["details"]["policy"]
    assert policy == {"mlflow": {"Action": "sagemaker-mlflow:*", "Resource": SERVER}}
    assert ("create", "Kubernetes ServiceAccount", "sft-mlflow") in [
        (c["action"], c["kind"], c["name"]) for c in plan["changes"] if c["step"] == "submit"]
    assert request_writes(api, dry) == []
    assert len(api.get("/v1/operations", params={"cluster": cluster}).json()["items"]) == ops

    # The run: what it changed on AWS is what the plan listed.
    since = api.mark()
    r = api.post(f"{base}/jobs", json=_job("sft"), key=key)
    assert r.status_code == 202, r.text
    op = api.wait_terminal(r.json()["id"], timeout=240)
    assert op["status"] == "SUCCEEDED", op.get("error")
    steps = {s["name"]: s["status"] for s in op["steps"]}
    assert steps["mlflow_access"] == "SUCCEEDED" and steps["watch"] == "SUCCEEDED", steps
    assert unplanned(plan, writes(api, since)) == []

    # The rendered job, read with the Kubernetes client: the env and its own ServiceAccount.
    obj = client.CustomObjectsApi(kube).get_namespaced_custom_object(
        "sagemaker.amazonaws.com", "v1", "default", "hyperpodpytorchjobs", "sft")
    pod_spec = obj["spec"]["replicaSpecs"][0]["template"]["spec"]
    env = {e["name"]: e["value"] for e in pod_spec["containers"][0]["env"]}
    assert env["MLFLOW_TRACKING_URI"] == SERVER and env["MLFLOW_EXPERIMENT_NAME"] == "llama-sft"
    assert pod_spec["serviceAccountName"] == "sft-mlflow"
    schema = json_schema("hyperpodpytorchjob_spec.schema.json")
    jsonschema.Draft202012Validator(schema).validate(obj["spec"])
    sa = client.ApiClient(kube.configuration).sanitize_for_serialization(
        client.CoreV1Api(kube).read_namespaced_service_account("sft-mlflow", "default"))
    kubernetes_validate.validate({"apiVersion": "v1", "kind": "ServiceAccount", **sa}, "1.33", strict=True)
    pods = client.CoreV1Api(kube).list_namespaced_pod("default", label_selector="podstart.dev/job=sft").items
    assert pods and all(p.spec.service_account_name == "sft-mlflow" for p in pods)

    # Its role (in IAM): sagemaker-mlflow:* on exactly that server, assumed by EKS Pod Identity for that SA only.
    iam, eks = aws("iam"), aws("eks")
    doc = iam.get_role_policy(RoleName=role, PolicyName="mlflow")["PolicyDocument"]
    doc = json.loads(doc) if isinstance(doc, str) else doc
    assert [(s["Effect"], s["Action"], s["Resource"]) for s in doc["Statement"]] == [
        ("Allow", "sagemaker-mlflow:*", [SERVER])]
    assert iam.list_role_policies(RoleName=role)["PolicyNames"] == ["mlflow"]
    assert iam.list_attached_role_policies(RoleName=role)["AttachedPolicies"] == []
    [assoc] = eks.list_pod_identity_associations(clusterName=cluster, namespace="default",
                                                 serviceAccount="sft-mlflow")["associations"]
    detail = eks.describe_pod_identity_association(clusterName=cluster, associationId=assoc["associationId"])
    assert detail["association"]["roleArn"] == iam.get_role(RoleName=role)["Role"]["Arn"]

    # The job page: for an operator a presigned link that opens the experiment with the metrics the job logged;
    # a viewer sees the server and experiment, not the link.
    plain = api.get(f"{base}/jobs/sft")
    job = plain.json()
    assert job["mlflow"]["tracking_server_arn"] == SERVER and job["mlflow"]["experiment"] == "llama-sft"
    # a plain read (the job page refreshes every few seconds) makes no link: no SageMaker call at all
    assert job["mlflow"]["url"] is None and "mlflow_link=true" in job["mlflow"]["url_note"]
    assert [c["operation"] for c in api.calls(service="sagemaker", request_id=plain.headers["x-amzn-RequestId"])
            if "Mlflow" in c["operation"]] == []
    asked = api.get(f"{base}/jobs/sft", params={"mlflow_link": "true"})
    assert "CreatePresignedMlflowTrackingServerUrl" in [
        c["operation"] for c in api.calls(service="sagemaker", request_id=asked.headers["x-amzn-RequestId"])]
    url = asked.json()["mlflow"]["url"]
    assert url and "/sandbox/mlflow/us-west-2/podstart-demo/" in url, job["mlflow"]
    seen = viewer.get(f"{base}/jobs/sft", params={"mlflow_link": "true"}).json()["mlflow"]
    assert seen["url"] is None and "operators" in seen["url_note"]
    page = eventually(lambda: (p := httpx.get(url)).status_code == 200 and "train_samples_per_second" in p.text and p,
                      timeout=60.0)
    assert "Experiment: llama-sft" in page.text and "Run: sft" in page.text and "loss" in page.text
    assert httpx.get(url.split("?")[0] + "?authToken=forged").status_code == 403

    # The job page's chart: what the job logged to MLflow, step by step (read from the tracking server's MLflow
    # API), the run named after the job; a viewer reads it too.
    metrics = eventually(lambda: (m := viewer.get(f"{base}/jobs/sft/metrics").json())["source"] == "mlflow"
                         and len({s["name"] for s in m["series"]}) == 2 and m, timeout=30.0)
    assert metrics["run"] == "sft"
    series = {s["name"]: s["points"] for s in metrics["series"]}
    assert set(series) == {"loss", "train_samples_per_second"}
    loss = series["loss"]
    assert [p["step"] for p in loss] == sorted(p["step"] for p in loss) and loss[0]["value"] > loss[-1]["value"] > 0

    async def mcp(c: Any) -> Any:
        return await c.call_tool("get_job", {"cluster": cluster, "job": "sft", "mlflow_link": True})

    got = over_http(sandbox, mcp)
    assert not got.is_error and "/sandbox/mlflow/" in got.structured_content["mlflow"]["url"], text(got)
    assert got.structured_content["mlflow"]["experiment"] == "llama-sft"

    # Delete: planned (the job's association, role, ServiceAccount), then gone; the shared server stays.
    dry = api.http.delete(f"{base}/jobs/sft", params={"dry_run": "true"})
    assert dry.status_code == 200, dry.text
    assert {(c["kind"], c["name"]) for c in dry.json()["changes"] if c["step"] == "mlflow_access"} == {
        ("AWS::EKS::PodIdentityAssociation", "default/sft-mlflow"), ("AWS::IAM::Role", role),
        ("Kubernetes ServiceAccount", "sft-mlflow")}
    r = api.http.delete(f"{base}/jobs/sft", headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 202, r.text
    op = api.wait_terminal(r.json()["id"], timeout=120)
    assert op["status"] == "SUCCEEDED", op.get("error")
    assert [s["status"] for s in op["steps"]] == ["SUCCEEDED", "SUCCEEDED"]
    assert role not in [x["RoleName"] for x in iam.list_roles(PathPrefix="/podstart/")["Roles"]]
    assert eks.list_pod_identity_associations(clusterName=cluster, namespace="default",
                                              serviceAccount="sft-mlflow")["associations"] == []
    names = [s.metadata.name for s in client.CoreV1Api(kube).list_namespaced_service_account("default").items]
    assert "sft-mlflow" not in names
    assert aws("sagemaker").describe_mlflow_tracking_server(TrackingServerName="podstart-demo")["IsActive"] == "Active"
