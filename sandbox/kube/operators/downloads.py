"""The model download Job (the Job and its pod carry the label `podstart.dev/download`), run with the real
script's logic: the pod imports functions/assets/podstart_download.py (the file model.download ships in its
ConfigMap) and calls its start/copy_next/finish with a fake Hugging Face Hub and the embedded S3, one file per
minute of simulated time. So the bucket gets what a real Job writes: the files under models/{id}/{rev}/ (files
already there with the same size skipped: a retry resumes), `_podstart_manifest.json` after every file and
`_COMPLETE` at the end; `aws s3 ls` on the sandbox shows the model arriving. The script's log lines are the
pod's log.

Failures as on a real cluster: a token Secret that does not exist keeps the pod in CreateContainerConfigError;
a model id starting with `missing/` is not on the Hub (404) and one starting with `gated/` needs a token that
starts with `hf_` (401 otherwise): the script's permanent error ends the pod with exit code 3 and its
termination message, and the podFailurePolicy fails the Job."""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from functions.assets import podstart_download as dl
from sandbox.kube.operators.base import ReconcileContext, Reconciler, condition, update_status
from sandbox.kube.store import Obj, now_rfc3339

DOWNLOAD_LABEL = "podstart.dev/download"
MISSING_PREFIX = "missing/"
GATED_PREFIX = "gated/"
SECONDS_PER_FILE = 60.0
SHARDS = 4

_RUNS: dict[str, dict[str, Any]] = {}  # pod uid -> {"manifest", "workdir", "copied"}


def model_files(model_id: str, revision: str) -> list[tuple[str, bytes]]:
    """The files of a sandbox model: small, deterministic contents (same model and revision, same bytes)."""
    def body(name: str, size: int) -> bytes:
        seed = hashlib.sha256(f"{model_id}@{revision}/{name}".encode()).hexdigest().encode()
        return (seed * (size // len(seed) + 1))[:size]

    names = [("config.json", 512), ("tokenizer.json", 2048), ("model.safetensors.index.json", 256)]
    names += [(f"model-{i:05d}-of-{SHARDS:05d}.safetensors", 4096) for i in range(1, SHARDS + 1)]
    return [(n, body(n, size)) for n, size in names]


class SandboxHub:
    """The Hub as the script sees it (dl.Hub): the sandbox's deterministic models, 404 and 401 as on the Hub."""

    def _check(self, model_id: str, token: str | None, *, download: bool) -> None:
        if model_id.startswith(MISSING_PREFIX):
            raise dl.PermanentError(f"{model_id}: 404 Client Error: Repository Not Found for url: "
                                    f"https://huggingface.co/api/models/{model_id}")
        if download and model_id.startswith(GATED_PREFIX) and not (token or "").startswith("hf_"):
            raise dl.PermanentError(f"{model_id}: 401 Client Error: access to model {model_id} is restricted; "
                                    "a valid Hugging Face token is needed")

    def files(self, model_id: str, revision: str, token: str | None) -> list[tuple[str, int]]:
        self._check(model_id, token, download=False)
        return [(n, len(b)) for n, b in model_files(model_id, revision)]

    def fetch(self, model_id: str, revision: str, filename: str, token: str | None, dest: str) -> str:
        self._check(model_id, token, download=True)
        data = dict(model_files(model_id, revision))[filename]
        path = Path(dest) / filename
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return str(path)


def _s3() -> Any:
    import boto3

    endpoint = (f"http://127.0.0.1:{os.environ['MOTO_PORT']}" if os.environ.get("MOTO_PORT")
                else os.environ.get("AWS_ENDPOINT_URL"))
    return boto3.client("s3", region_name=os.environ.get("AWS_REGION") or "us-east-1", endpoint_url=endpoint,
                        aws_access_key_id="testing", aws_secret_access_key="testing")


def _env(ctx: ReconcileContext, pod: Obj) -> tuple[dict[str, str], str | None]:
    """The container's env as the kubelet resolves it; the name of a referenced Secret that does not exist."""
    values: dict[str, str] = {}
    ns = pod["metadata"].get("namespace")
    for c in (pod.get("spec") or {}).get("containers") or []:
        for e in c.get("env") or []:
            if "value" in e:
                values[e["name"]] = str(e["value"])
            ref = (e.get("valueFrom") or {}).get("secretKeyRef") or {}
            if ref.get("name"):
                secret = ctx.store.get("v1", "Secret", str(ref["name"]), ns)
                key = str(ref.get("key", ""))
                raw = ((secret or {}).get("data") or {}).get(key)
                plain = ((secret or {}).get("stringData") or {}).get(key)  # the store keeps what was applied
                if secret is None or (raw is None and plain is None):
                    return values, str(ref["name"])
                values[e["name"]] = str(plain) if plain is not None else base64.b64decode(str(raw)).decode()
    return values, None


def _container(pod: Obj) -> dict[str, Any]:
    return dict(((pod.get("status") or {}).get("containerStatuses") or [{"name": "download"}])[0])


def _config_error(ctx: ReconcileContext, pod: Obj, secret: str) -> None:
    cs = _container(pod)
    if ((cs.get("state") or {}).get("waiting") or {}).get("reason") == "CreateContainerConfigError":
        return
    cs.update(ready=False, started=False, state={"waiting": {"reason": "CreateContainerConfigError",
                                                             "message": f'secret "{secret}" not found'}})
    update_status(ctx, pod, {**(pod.get("status") or {}), "phase": "Pending", "containerStatuses": [cs]})


def _fail(ctx: ReconcileContext, job: Obj, pod: Obj, message: str) -> None:
    now = now_rfc3339()
    cs = _container(pod)
    cs.update(ready=False, started=False, state={"terminated": {
        "exitCode": dl.EXIT_PERMANENT, "reason": "Error", "message": message, "finishedAt": now}})
    update_status(ctx, pod, {**(pod.get("status") or {}), "phase": "Failed", "containerStatuses": [cs]})
    status = dict(job.get("status") or {})
    update_status(ctx, job, {**status, "failed": 1, "active": 0, "conditions": [condition(
        "Failed", "True", "PodFailurePolicy",
        f"Container download for pod {pod['metadata'].get('namespace')}/{pod['metadata']['name']} failed with exit "
        f"code {dl.EXIT_PERMANENT} matching FailJob rule at index 0")]})


def _succeed(ctx: ReconcileContext, pod: Obj) -> None:
    now = now_rfc3339()
    status = pod.get("status") or {}
    update_status(ctx, pod, {**status, "phase": "Succeeded", "containerStatuses": [
        {**cs, "ready": False, "started": False,
         "state": {"terminated": {"exitCode": 0, "reason": "Completed", "finishedAt": now}}}
        for cs in status.get("containerStatuses") or []]})


def _done(uid: str) -> None:
    run = _RUNS.pop(uid, None)
    if run:
        shutil.rmtree(run["workdir"], ignore_errors=True)


def reconcile_downloads(ctx: ReconcileContext) -> None:
    hub = SandboxHub()
    for pod in ctx.store.list("v1", "Pod", label_selector=DOWNLOAD_LABEL):
        meta = pod["metadata"]
        if (pod.get("status") or {}).get("phase") not in ("Running", "Pending") or meta.get("deletionTimestamp"):
            _done(meta.get("uid", ""))
            continue
        ns, uid = meta.get("namespace") or "default", meta.get("uid", "")
        job_name = (meta.get("labels") or {}).get("job-name")
        job = ctx.store.get("batch/v1", "Job", job_name, ns) if job_name else None
        if job is None:
            continue
        env, missing = _env(ctx, pod)
        if missing:
            _config_error(ctx, pod, missing)
            continue
        if (pod.get("status") or {}).get("phase") != "Running":
            continue

        def log(line: str, pod_name: str = meta["name"], namespace: str = ns) -> None:
            ctx.store.append_log(namespace, pod_name, line + "\n")

        s3 = _s3()
        run = _RUNS.get(uid)
        try:
            if run is None:
                spec = dl.spec_from_env(env)
                manifest = dl.start(hub, s3, spec)
                log(f"{spec.model_id}@{spec.revision}: {manifest['files_total']} files, "
                    f"{manifest['files_skipped']} already in s3://{spec.bucket}/{spec.prefix}")
                _RUNS[uid] = {"spec": spec, "manifest": manifest, "copied": 0,
                              "workdir": tempfile.mkdtemp(prefix="podstart-dl-")}
                continue
            if not ctx.waited(pod, SECONDS_PER_FILE * (run["copied"] + 1), "download"):
                continue
            if dl.copy_next(hub, s3, run["spec"], run["manifest"], run["workdir"], log):
                run["copied"] += 1
                continue
            dl.finish(s3, run["spec"], run["manifest"])
            log(f"complete: {run['manifest']['files_total']} files, {run['manifest']['bytes_total']} bytes")
        except dl.PermanentError as err:
            message = f"permanent: {err}"
            log(message)
            _fail(ctx, job, pod, message)
            _done(uid)
            continue
        _succeed(ctx, pod)
        _done(uid)


RECONCILERS: tuple[Reconciler, ...] = (reconcile_downloads,)
