"""Model downloads on the sandbox: a dry run plans the downloader's identity (role, ServiceAccount, Pod Identity
association, script ConfigMap), the Job and the S3 prefix and writes nothing; a download runs the real script's
logic, so the model's files, `_podstart_manifest.json` and `_COMPLETE` arrive under models/{id}/{rev}/ of the
shared bucket, the operation's progress is read from that manifest, and the models list shows it; a re-run after a
file went missing writes only that file; the token stays in its Secret; a model not on the Hub, or a gated one
without a valid token, fails with the script's reason; bad input is refused naming the field, with nothing made."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import kubernetes_validate
import pytest

from functions.domain.inference.requests import download_job_name
from sandbox.kube.operators import downloads as sandbox_downloads
from tests.e2e.plan_calls import request_writes, unplanned, writes

GPU_TYPE = "ml.g5.8xlarge"
TOKEN = "hf_sandboxTOKENvalue_9c1e"
FILES = 7  # sandbox models: config, tokenizer, index and four safetensors shards
K8S_VERSION = "1.31.0"


def key() -> str:
    return uuid.uuid4().hex


@pytest.fixture(scope="module")
def cluster(api: Any) -> str:
    cname = f"mdl-{uuid.uuid4().hex[:5]}"
    op = api.post("/v1/clusters", json={"name": cname, "region": "us-west-2", "instance_groups": [
        {"name": "gpu", "instance_type": GPU_TYPE, "instance_count": 1, "availability_zone": "us-west-2a"}]}).json()
    assert api.wait_terminal(op["id"], 180)["status"] == "SUCCEEDED"
    r = api.post(f"/v1/clusters/{cname}/secrets", json={"name": "hf-token", "data": {"token": TOKEN}})
    assert r.status_code == 201, r.text
    return cname


@pytest.fixture(scope="module")
def bucket(api: Any, cluster: str) -> str:
    return str(api.get(f"/v1/clusters/{cluster}/models").json()["bucket"])


MARKERS = ("_podstart_manifest.json", "_COMPLETE")
IDENTITY = [("create", "AWS::IAM::Role"), ("create", "Kubernetes ServiceAccount"),
            ("create", "AWS::EKS::PodIdentityAssociation"), ("create", "Kubernetes ConfigMap")]


def keys(aws: Any, bucket: str, prefix: str) -> dict[str, Any]:
    """The model's files under the prefix (the script's markers aside) and their times."""
    out = aws("s3").list_objects_v2(Bucket=bucket, Prefix=prefix)
    return {o["Key"].removeprefix(prefix): o["LastModified"] for o in out.get("Contents") or []
            if o["Key"].removeprefix(prefix) not in MARKERS}


def manifest(aws: Any, bucket: str, prefix: str) -> dict[str, Any]:
    return dict(json.loads(aws("s3").get_object(Bucket=bucket, Key=prefix + "_podstart_manifest.json")["Body"].read()))


def step(op: dict[str, Any], name: str) -> dict[str, Any]:
    return next(s for s in op["steps"] if s["name"] == name)


def start(api: Any, cluster: str, body: dict[str, Any], k: str | None = None) -> dict[str, Any]:
    r = api.post(f"/v1/clusters/{cluster}/models", json=body, key=k or key())
    assert r.status_code == 202, r.text
    return dict(r.json())


def watch(api: Any, op_id: str, timeout: float = 90) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The operation at its end, and the download step's outputs seen while it ran."""
    seen: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        op = api.get(f"/v1/operations/{op_id}").json()
        out = step(op, "download").get("outputs") or {}
        if out and (not seen or seen[-1] != out):
            seen.append(out)
        if op["status"] in ("SUCCEEDED", "FAILED", "CANCELLED"):
            return op, seen
        time.sleep(0.05)
    raise AssertionError(f"operation {op_id} still running")


def test_dry_run_plans_the_job_and_the_prefix_at_no_cost_and_writes_nothing(api: Any, sandbox: Any, cluster: str,
                                                                           bucket: str) -> None:
    body = {"model_id": "Qwen/Qwen3-1.7B", "revision": "main", "token_secret": "hf-token"}
    r = api.post(f"/v1/clusters/{cluster}/models", params={"dry_run": "true"}, json=body)
    assert r.status_code == 200, r.text
    plan = r.json()
    job = download_job_name("Qwen/Qwen3-1.7B", "main")
    assert [(c["action"], c["kind"]) for c in plan["changes"]][:4] == IDENTITY
    assert [(c["action"], c["kind"], c["name"]) for c in plan["changes"]][4:] == [
        ("create", "Kubernetes Job", job),
        ("update", "S3 prefix", f"s3://{bucket}/models/Qwen/Qwen3-1.7B/main/")]
    role = plan["changes"][0]
    assert role["step"] == "identity" and "models/*" in json.dumps(role)
    assert plan["cost"]["hourly"] == 0
    assert request_writes(api, r) == []
    assert sandbox.kube.store(cluster).get("batch/v1", "Job", job, "default") is None


def test_download_writes_the_files_with_progress_lists_the_model_and_keeps_the_token_secret(
        api: Any, sandbox: Any, aws: Any, cluster: str, bucket: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Five real minutes a file (1 s at the tests' time scale): the download outlasts the step's one-second floor
    # between looks (a Wait state's seconds are whole) several times, so its progress is seen on a loaded machine too
    monkeypatch.setattr(sandbox_downloads, "SECONDS_PER_FILE", 300.0)
    body = {"source": "huggingface", "model_id": "Qwen/Qwen3-1.7B", "revision": "main", "token_secret": "hf-token"}
    plan = api.post(f"/v1/clusters/{cluster}/models", params={"dry_run": "true"}, json=body).json()
    since = api.mark()
    k = key()
    op = start(api, cluster, body, k)
    assert start(api, cluster, body, k)["id"] == op["id"]  # same Idempotency-Key: the same operation
    done, seen = watch(api, op["id"])
    assert done["status"] == "SUCCEEDED", done["error"]
    name = download_job_name("Qwen/Qwen3-1.7B", "main")
    out = step(done, "download")["outputs"]
    assert out["job_name"] == name
    assert (out["files_done"], out["files_total"], out["files_skipped"]) == (FILES, FILES, 0)
    assert out["bytes_done"] == out["bytes_total"] > 0
    made_calls = writes(api, since)
    assert unplanned(plan, made_calls) == []
    called = {f"{c['service']}.{c['operation']}" for c in made_calls}
    assert {"iam.CreateRole", "iam.PutRolePolicy", "eks.CreatePodIdentityAssociation"} <= called, called
    made = [(c["action"], c["kind"], c["name"]) for c in plan["changes"] if c["kind"] == "Kubernetes Job"]
    assert made == [("create", "Kubernetes Job", name)]
    running = [s for s in seen if 0 < s.get("files_done", 0) < FILES]
    assert running, f"no progress seen while it ran: {seen}"

    prefix = "models/Qwen/Qwen3-1.7B/main/"
    files = keys(aws, bucket, prefix)
    assert len(files) == FILES and "config.json" in files and "model-00004-of-00004.safetensors" in files
    mf = manifest(aws, bucket, prefix)
    assert (mf["files_done"], mf["files_total"], mf["bytes_done"], mf["complete"]) == (
        FILES, FILES, out["bytes_done"], True)
    assert "_COMPLETE" in [o["Key"].removeprefix(prefix) for o in aws("s3").list_objects_v2(
        Bucket=bucket, Prefix=prefix)["Contents"]]
    # the identity the Job runs as: a Pod Identity association to a role that may touch models/* only
    sa = sandbox.kube.store(cluster).get("v1", "ServiceAccount", "podstart-model-downloader", "default")
    assert sa is not None
    ident = step(done, "identity")["outputs"]
    policy = aws("iam").get_role_policy(RoleName=ident["role"], PolicyName="model-download")["PolicyDocument"]
    policy_text = json.dumps(policy)
    assert "s3:*" not in policy_text and f"{bucket}/models/*" in policy_text and '"*"' not in policy_text
    cm = sandbox.kube.store(cluster).get("v1", "ConfigMap", "podstart-model-downloader", "default")
    assert "def copy_next" in cm["data"]["podstart_download.py"]
    listed = {(m["model_id"], m["revision"]): m for m in api.get(f"/v1/clusters/{cluster}/models").json()["items"]}
    m = listed[("Qwen/Qwen3-1.7B", "main")]
    assert (m["files"], m["bytes"], m["path"]) == (FILES, out["bytes_total"], "/data/models/Qwen/Qwen3-1.7B/main/")
    assert m["last_modified"] and m["complete"] is True

    job = sandbox.kube.store(cluster).get("batch/v1", "Job", name, "default")
    env = job["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf-token", "key": "token"}}} in env
    assert TOKEN not in json.dumps(job) and TOKEN not in json.dumps(done)
    rendered = {k: v for k, v in job.items() if k != "status"}
    rendered["metadata"] = {k: job["metadata"][k] for k in ("name", "namespace", "labels") if k in job["metadata"]}
    kubernetes_validate.validate(rendered, K8S_VERSION, strict=True)

    again = api.post(f"/v1/clusters/{cluster}/models", params={"dry_run": "true"}, json=body).json()
    assert [c["action"] for c in again["changes"]] == ["none"] * 6  # all there: nothing to download or make
    noop, _ = watch(api, start(api, cluster, body)["id"])
    assert noop["status"] == "SUCCEEDED" and "already" in step(noop, "download")["message"]
    assert keys(aws, bucket, prefix) == files


def test_a_rerun_after_a_file_went_missing_writes_only_that_file(api: Any, sandbox: Any, aws: Any, cluster: str,
                                                                 bucket: str) -> None:
    body = {"model_id": "acme/tiny-llm", "revision": "v1"}
    prefix = "models/acme/tiny-llm/v1/"
    first, _ = watch(api, start(api, cluster, body)["id"])
    assert first["status"] == "SUCCEEDED", first["error"]
    before = keys(aws, bucket, prefix)
    aws("s3").delete_object(Bucket=bucket, Key=prefix + "model-00002-of-00004.safetensors")
    time.sleep(1.1)  # S3 times have one-second resolution

    dry = api.post(f"/v1/clusters/{cluster}/models", params={"dry_run": "true"}, json=body)
    plan = dry.json()
    assert [(c["action"], c["kind"]) for c in plan["changes"] if c["step"] == "download"] == [
        ("delete", "Kubernetes Job"), ("create", "Kubernetes Job"), ("update", "S3 prefix")]
    assert {c["action"] for c in plan["changes"] if c["step"] == "identity"} == {"none"}
    listed = {(m["model_id"], m["revision"]): m for m in api.get(f"/v1/clusters/{cluster}/models").json()["items"]}
    assert (listed[("acme/tiny-llm", "v1")]["files"], listed[("acme/tiny-llm", "v1")]["complete"]) == (FILES - 1, True)
    assert request_writes(api, dry) == []

    second, _ = watch(api, start(api, cluster, body)["id"])
    assert second["status"] == "SUCCEEDED", second["error"]
    out = step(second, "download")["outputs"]
    assert (out["files_done"], out["files_skipped"]) == (FILES, FILES - 1)
    assert manifest(aws, bucket, prefix)["files_skipped"] == FILES - 1
    after = keys(aws, bucket, prefix)
    assert set(after) == set(before)
    rewritten = {f for f in after if after[f] != before[f]}
    assert rewritten == {"model-00002-of-00004.safetensors"}


def test_a_model_not_on_the_hub_fails_with_the_reason(api: Any, cluster: str) -> None:
    op, _ = watch(api, start(api, cluster, {"model_id": "missing/nothing-here"})["id"])
    assert op["status"] == "FAILED"
    assert "404" in json.dumps(op["error"]) and "Not Found" in json.dumps(op["error"])


def test_a_gated_model_needs_a_valid_token_as_on_the_hub(api: Any, aws: Any, cluster: str, bucket: str) -> None:
    op, _ = watch(api, start(api, cluster, {"model_id": "gated/llama-tiny"})["id"])
    assert op["status"] == "FAILED" and "401" in json.dumps(op["error"])
    assert "_COMPLETE" not in keys(aws, bucket, "models/gated/llama-tiny/main/")
    ok, _ = watch(api, start(api, cluster, {"model_id": "gated/llama-tiny", "token_secret": "hf-token"})["id"])
    assert ok["status"] == "SUCCEEDED", ok["error"]
    assert len(keys(aws, bucket, "models/gated/llama-tiny/main/")) == FILES


def test_a_retry_after_fixing_the_token_resumes_at_the_download_step(api: Any, aws: Any, cluster: str,
                                                                      bucket: str) -> None:
    r = api.post(f"/v1/clusters/{cluster}/secrets", json={"name": "stale-token", "data": {"token": "expired"}})
    assert r.status_code == 201, r.text
    body = {"model_id": "gated/retry-me", "token_secret": "stale-token"}
    failed, _ = watch(api, start(api, cluster, body)["id"])
    assert failed["status"] == "FAILED" and "401" in json.dumps(failed["error"])
    assert step(failed, "identity")["status"] == "SUCCEEDED" and step(failed, "download")["status"] == "FAILED"
    r = api.post(f"/v1/clusters/{cluster}/secrets", json={"name": "stale-token", "data": {"token": TOKEN}})
    assert r.status_code == 201, r.text
    retry = api.post(f"/v1/operations/{failed['id']}/retry", key=key())
    assert retry.status_code == 202, retry.text
    done, _ = watch(api, failed["id"])
    assert done["status"] == "SUCCEEDED", done["error"]
    assert len(keys(aws, bucket, "models/gated/retry-me/main/")) == FILES
    assert TOKEN not in json.dumps(done)


def test_bad_input_is_refused_naming_the_field_and_makes_nothing(api: Any, viewer: Any, sandbox: Any,
                                                                 cluster: str) -> None:
    url = f"/v1/clusters/{cluster}/models"
    for body, field in (({"model_id": "no-org"}, "model_id"), ({"model_id": "a/b", "revision": "x y"}, "revision"),
                        ({"model_id": "a/b", "token_secret": "Bad_Name"}, "token_secret"),
                        ({"model_id": "a/b", "token_secret": "no-such-secret"}, "token_secret"),
                        ({"model_id": "a/b", "source": "s3"}, "source")):
        r = api.post(url, json=body, key=key())
        assert r.status_code == 422, (body, r.text)
        assert ["body", field] in [e["loc"][:2] for e in r.json()["errors"]], r.text
    assert sandbox.kube.store(cluster).get("batch/v1", "Job", download_job_name("a/b", "main"), "default") is None
    assert viewer.post(url, json={"model_id": "a/b"}, key=key()).status_code == 403
    names = api.get(f"/v1/clusters/{cluster}/secrets")
    # names only, sorted: the module's hf-token (and stale-token when the retry test ran first on this worker)
    listed = names.json()
    assert listed["namespace"] == "default" and "hf-token" in listed["names"], listed
    assert listed["names"] == sorted(listed["names"]) and set(listed["names"]) <= {"hf-token", "stale-token"}
    assert TOKEN not in names.text and "expired" not in names.text
    assert viewer.get(f"/v1/clusters/{cluster}/secrets").status_code == 403
    assert viewer.get(url).status_code == 200
    assert api.get(url, params={"next_token": "bm90LWEta2V5"}).status_code == 400
