"""The model download Job (the Job and its pod carry the label `podstart.dev/download`): its pod writes the
model's files into the embedded S3 under the Job's TARGET, one every minute of simulated time, skipping files
already there (a retry resumes), and reports progress in the Job's `podstart.dev/files-done`, `files-total`,
`bytes-done`, `bytes-total` and `files-skipped` annotations, as the real runner does.

It fails (the Job's Failed condition says why) when the token Secret the Job names (HF_TOKEN's secretKeyRef)
is missing, or when the model id starts with `missing/` (the sandbox's "no such repository on the Hub")."""

from __future__ import annotations

import hashlib
import os
from typing import Any

from botocore.exceptions import ClientError

from sandbox.kube.operators.base import ReconcileContext, Reconciler, condition, update_status
from sandbox.kube.store import Obj, now_rfc3339

DOWNLOAD_LABEL = "podstart.dev/download"
MISSING_PREFIX = "missing/"
SECONDS_PER_FILE = 60.0
SHARDS = 4
ANN = "podstart.dev/"


def model_files(model_id: str, revision: str) -> list[tuple[str, bytes]]:
    """The files of a sandbox model: small, deterministic contents (same model and revision, same bytes)."""
    def body(name: str, size: int) -> bytes:
        seed = hashlib.sha256(f"{model_id}@{revision}/{name}".encode()).hexdigest().encode()
        return (seed * (size // len(seed) + 1))[:size]

    names = [("config.json", 512), ("tokenizer.json", 2048), ("model.safetensors.index.json", 256)]
    names += [(f"model-{i:05d}-of-{SHARDS:05d}.safetensors", 4096) for i in range(1, SHARDS + 1)]
    return [(n, body(n, size)) for n, size in names]


def _s3() -> Any:
    import boto3

    endpoint = (f"http://127.0.0.1:{os.environ['MOTO_PORT']}" if os.environ.get("MOTO_PORT")
                else os.environ.get("AWS_ENDPOINT_URL"))
    return boto3.client("s3", region_name=os.environ.get("AWS_REGION") or "us-east-1", endpoint_url=endpoint,
                        aws_access_key_id="testing", aws_secret_access_key="testing")


def _env(pod: Obj) -> tuple[dict[str, str], str | None]:
    values: dict[str, str] = {}
    secret = None
    for c in (pod.get("spec") or {}).get("containers") or []:
        for e in c.get("env") or []:
            if "value" in e:
                values[e["name"]] = str(e["value"])
            ref = ((e.get("valueFrom") or {}).get("secretKeyRef") or {})
            if e.get("name") == "HF_TOKEN" and ref.get("name"):
                secret = str(ref["name"])
    return values, secret


def _annotate(ctx: ReconcileContext, job: Obj, **counts: int) -> Obj:
    body = dict(job)
    meta = dict(body["metadata"])
    meta["annotations"] = {**(meta.get("annotations") or {}),
                           **{ANN + k.replace("_", "-"): str(v) for k, v in counts.items()}}
    body["metadata"] = meta
    return ctx.store.put(body)


def _fail(ctx: ReconcileContext, job: Obj, pod: Obj, message: str) -> None:
    update_status(ctx, pod, {**(pod.get("status") or {}), "phase": "Failed", "message": message})
    status = dict(job.get("status") or {})
    update_status(ctx, job, {**status, "failed": 1, "active": 0,
                             "conditions": [condition("Failed", "True", "BackoffLimitExceeded", message)]})


def _succeed(ctx: ReconcileContext, pod: Obj) -> None:
    now = now_rfc3339()
    status = pod.get("status") or {}
    update_status(ctx, pod, {**status, "phase": "Succeeded", "containerStatuses": [
        {**cs, "ready": False, "started": False,
         "state": {"terminated": {"exitCode": 0, "reason": "Completed", "finishedAt": now}}}
        for cs in status.get("containerStatuses") or []]})


def reconcile_downloads(ctx: ReconcileContext) -> None:
    for pod in ctx.store.list("v1", "Pod", label_selector=DOWNLOAD_LABEL):
        if (pod.get("status") or {}).get("phase") != "Running" or pod["metadata"].get("deletionTimestamp"):
            continue
        ns = pod["metadata"].get("namespace")
        job_name = (pod["metadata"].get("labels") or {}).get("job-name")
        job = ctx.store.get("batch/v1", "Job", job_name, ns) if job_name else None
        if job is None:
            continue
        env, secret = _env(pod)
        model_id, revision = env.get("MODEL_ID", ""), env.get("REVISION", "main")
        bucket, _, prefix = env.get("TARGET", "").removeprefix("s3://").partition("/")
        files = model_files(model_id, revision)
        ann = job["metadata"].get("annotations") or {}
        if ANN + "files-total" not in ann:
            if secret and ctx.store.get("v1", "Secret", secret, ns) is None:
                _fail(ctx, job, pod, f"secret {secret!r} not found: the Hugging Face token is missing")
                continue
            if model_id.startswith(MISSING_PREFIX):
                _fail(ctx, job, pod, f"404 Client Error: repository {model_id} not found on the Hugging Face Hub")
                continue
            _annotate(ctx, job, files_total=len(files), bytes_total=sum(len(b) for _, b in files),
                      files_done=0, bytes_done=0, files_skipped=0)
            continue
        done = int(ann.get(ANN + "files-done", "0"))
        if done >= len(files):
            _succeed(ctx, pod)
            continue
        if not ctx.waited(pod, SECONDS_PER_FILE * (done + 1), "download"):
            continue
        name, data = files[done]
        s3, key = _s3(), prefix + name
        skipped = int(ann.get(ANN + "files-skipped", "0"))
        try:
            s3.head_object(Bucket=bucket, Key=key)
            skipped += 1
        except ClientError:
            s3.put_object(Bucket=bucket, Key=key, Body=data)
        _annotate(ctx, job, files_done=done + 1, bytes_done=int(ann.get(ANN + "bytes-done", "0")) + len(data),
                  files_skipped=skipped)


RECONCILERS: tuple[Reconciler, ...] = (reconcile_downloads,)
