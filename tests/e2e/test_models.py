"""Model downloads on the sandbox: a dry run plans the Job and the S3 prefix and writes nothing; a download
writes the model's files into the shared bucket with progress on the operation, and the models list shows it;
a re-run after a file went missing writes only that file; the token stays in its Secret; a model not on the
Hub or a missing token Secret fail with the reason; bad input is refused naming the field, with nothing made."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import kubernetes_validate
import pytest

from functions.domain.inference import download_job_name
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


def keys(aws: Any, bucket: str, prefix: str) -> dict[str, Any]:
    out = aws("s3").list_objects_v2(Bucket=bucket, Prefix=prefix)
    return {o["Key"].removeprefix(prefix): o["LastModified"] for o in out.get("Contents") or []}


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
        out = op["steps"][0].get("outputs") or {}
        if out and (not seen or seen[-1] != out):
            seen.append(out)
        if op["status"] in ("SUCCEEDED", "FAILED", "CANCELLED"):
            return op, seen
        time.sleep(0.05)
    raise AssertionError(f"operation {op_id} still running")


def test_dry_run_plans_the_job_and_the_prefix_at_no_cost_and_writes_nothing(api: Any, sandbox: Any, cluster: str,
                                                                           bucket: str) -> None:
    body = {"model_id": "Qwen/Qwen3-0.6B", "revision": "main", "token_secret": "hf-token"}
    r = api.post(f"/v1/clusters/{cluster}/models", params={"dry_run": "true"}, json=body)
    assert r.status_code == 200, r.text
    plan = r.json()
    job = download_job_name("Qwen/Qwen3-0.6B", "main")
    assert [(c["action"], c["kind"], c["name"]) for c in plan["changes"]] == [
        ("create", "Kubernetes Job", job),
        ("update", "S3 prefix", f"s3://{bucket}/data/models/Qwen/Qwen3-0.6B/main/")]
    assert plan["cost"]["hourly"] == 0
    assert request_writes(api, r) == []
    assert sandbox.kube.store(cluster).get("batch/v1", "Job", job, "default") is None


def test_download_writes_the_files_with_progress_lists_the_model_and_keeps_the_token_secret(
        api: Any, sandbox: Any, aws: Any, cluster: str, bucket: str) -> None:
    body = {"source": "huggingface", "model_id": "Qwen/Qwen3-0.6B", "revision": "main", "token_secret": "hf-token"}
    plan = api.post(f"/v1/clusters/{cluster}/models", params={"dry_run": "true"}, json=body).json()
    since = len(api.calls())
    k = key()
    op = start(api, cluster, body, k)
    assert start(api, cluster, body, k)["id"] == op["id"]  # same Idempotency-Key: the same operation
    done, seen = watch(api, op["id"])
    assert done["status"] == "SUCCEEDED", done["error"]
    name = download_job_name("Qwen/Qwen3-0.6B", "main")
    out = done["steps"][0]["outputs"]
    assert out["job_name"] == name
    assert (out["files_done"], out["files_total"], out["files_skipped"]) == (FILES, FILES, 0)
    assert out["bytes_done"] == out["bytes_total"] > 0
    assert unplanned(plan, writes(api, since)) == []
    made = [(c["action"], c["kind"], c["name"]) for c in plan["changes"] if c["kind"] == "Kubernetes Job"]
    assert made == [("create", "Kubernetes Job", name)]
    running = [s for s in seen if 0 < s.get("files_done", 0) < FILES]
    assert running, f"no progress seen while it ran: {seen}"

    files = keys(aws, bucket, "data/models/Qwen/Qwen3-0.6B/main/")
    assert len(files) == FILES and "config.json" in files and "model-00004-of-00004.safetensors" in files
    listed = {(m["model_id"], m["revision"]): m for m in api.get(f"/v1/clusters/{cluster}/models").json()["items"]}
    m = listed[("Qwen/Qwen3-0.6B", "main")]
    assert (m["files"], m["bytes"], m["path"]) == (FILES, out["bytes_total"], "/data/models/Qwen/Qwen3-0.6B/main/")
    assert m["last_modified"]

    job = sandbox.kube.store(cluster).get("batch/v1", "Job", name, "default")
    env = job["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf-token", "key": "token"}}} in env
    assert TOKEN not in json.dumps(job) and TOKEN not in json.dumps(done)
    manifest = {k: v for k, v in job.items() if k != "status"}
    manifest["metadata"] = {k: job["metadata"][k] for k in ("name", "namespace", "labels", "annotations")}
    kubernetes_validate.validate(manifest, K8S_VERSION, strict=True)

    again = api.post(f"/v1/clusters/{cluster}/models", params={"dry_run": "true"}, json=body).json()
    assert [c["action"] for c in again["changes"]] == ["none", "none"]  # all there: nothing to download
    noop, _ = watch(api, start(api, cluster, body)["id"])
    assert noop["status"] == "SUCCEEDED" and "already" in noop["steps"][0]["message"]
    assert keys(aws, bucket, "data/models/Qwen/Qwen3-0.6B/main/") == files


def test_a_rerun_after_a_file_went_missing_writes_only_that_file(api: Any, sandbox: Any, aws: Any, cluster: str,
                                                                 bucket: str) -> None:
    body = {"model_id": "acme/tiny-llm", "revision": "v1"}
    prefix = "data/models/acme/tiny-llm/v1/"
    first, _ = watch(api, start(api, cluster, body)["id"])
    assert first["status"] == "SUCCEEDED", first["error"]
    before = keys(aws, bucket, prefix)
    aws("s3").delete_object(Bucket=bucket, Key=prefix + "model-00002-of-00004.safetensors")
    time.sleep(1.1)  # S3 times have one-second resolution

    dry = api.post(f"/v1/clusters/{cluster}/models", params={"dry_run": "true"}, json=body)
    plan = dry.json()
    assert [(c["action"], c["kind"]) for c in plan["changes"]] == [
        ("delete", "Kubernetes Job"), ("create", "Kubernetes Job"), ("update", "S3 prefix")]
    assert request_writes(api, dry) == []

    second, _ = watch(api, start(api, cluster, body)["id"])
    assert second["status"] == "SUCCEEDED", second["error"]
    out = second["steps"][0]["outputs"]
    assert (out["files_done"], out["files_skipped"]) == (FILES, FILES - 1)
    after = keys(aws, bucket, prefix)
    assert set(after) == set(before)
    rewritten = {f for f in after if after[f] != before[f]}
    assert rewritten == {"model-00002-of-00004.safetensors"}


def test_a_model_not_on_the_hub_fails_with_the_reason(api: Any, cluster: str) -> None:
    op, _ = watch(api, start(api, cluster, {"model_id": "missing/nothing-here"})["id"])
    assert op["status"] == "FAILED"
    assert "not found" in json.dumps(op["error"])


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
    assert names.json() == {"namespace": "default", "names": ["hf-token"]} and TOKEN not in names.text
    assert viewer.get(f"/v1/clusters/{cluster}/secrets").status_code == 403
    assert viewer.get(url).status_code == 200
    assert api.get(url, params={"next_token": "bm90LWEta2V5"}).status_code == 400
