"""Kubernetes objects of a model download: the downloader's ServiceAccount, its script's ConfigMap and the Job that
copies a model into the bucket, and how to read its progress and its end."""

from __future__ import annotations

from typing import Any

from functions.domain.inference.endpoint_objects import TOKEN_KEY, _meta
from functions.domain.manifests import MANAGED_LABELS

# --------------------------------------------------------------------------------------- download

DOWNLOAD_LABEL = "podstart.dev/download"
DOWNLOADER = "podstart-model-downloader"  # the ServiceAccount (Pod Identity) and the script's ConfigMap
SCRIPT_KEY = "podstart_download.py"
SCRIPT_DIR = "/opt/podstart"
MANIFEST = "_podstart_manifest.json"  # written by the script (functions/assets/podstart_download.py)
COMPLETE = "_COMPLETE"
MARKERS = (MANIFEST, COMPLETE)
EXIT_PERMANENT = 3  # the script's exit code when no retry helps: the podFailurePolicy fails the Job at once
COUNT_KEYS = ("files_done", "files_total", "bytes_done", "bytes_total", "files_skipped")


def downloader_service_account() -> dict[str, Any]:
    """The download Job's identity: EKS Pod Identity maps it to a role that may write models/* of the bucket."""
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(DOWNLOADER),
            "automountServiceAccountToken": False}


def download_script_configmap(script: str) -> dict[str, Any]:
    """The constant downloader script, mounted read-only into the Job (never a string built from input)."""
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta(DOWNLOADER), "data": {SCRIPT_KEY: script}}


def download_job(*, name: str, model_id: str, revision: str, bucket: str, prefix: str, region: str,
                 token_secret: str | None, image: str) -> dict[str, Any]:
    """A Job that runs the constant script on a pinned public Python image to copy a Hugging Face model into
    s3://bucket/prefix (models/{model_id}/{revision}/), skipping files already there (a retry resumes). The
    token comes from the Secret, never a literal; the identity from the ServiceAccount's Pod Identity."""
    env: list[dict[str, Any]] = [
        {"name": "MODEL_ID", "value": model_id}, {"name": "REVISION", "value": revision},
        {"name": "BUCKET", "value": bucket}, {"name": "PREFIX", "value": prefix},
        {"name": "AWS_REGION", "value": region}, {"name": "HOME", "value": "/work"},
        {"name": "PYTHONUNBUFFERED", "value": "1"}, {"name": "HF_HUB_DISABLE_TELEMETRY", "value": "1"},
    ]
    if token_secret:
        env.append({"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": token_secret, "key": TOKEN_KEY}}})
    labels = {**MANAGED_LABELS, DOWNLOAD_LABEL: name}
    return {
        "apiVersion": "batch/v1", "kind": "Job", "metadata": _meta(name, **{DOWNLOAD_LABEL: name}),
        "spec": {
            "backoffLimit": 3, "ttlSecondsAfterFinished": 86400,
            "podFailurePolicy": {"rules": [{"action": "FailJob", "onExitCodes": {
                "containerName": "download", "operator": "In", "values": [EXIT_PERMANENT]}}]},
            "template": {"metadata": {"labels": labels}, "spec": {
                "restartPolicy": "Never", "serviceAccountName": DOWNLOADER,
                "securityContext": {"runAsNonRoot": True, "runAsUser": 1000, "runAsGroup": 1000, "fsGroup": 1000,
                                    "seccompProfile": {"type": "RuntimeDefault"}},
                "containers": [{
                    "name": "download", "image": image,
                    "command": ["python3", f"{SCRIPT_DIR}/{SCRIPT_KEY}"],
                    "env": env,
                    "terminationMessagePolicy": "FallbackToLogsOnError",
                    "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                                        "capabilities": {"drop": ["ALL"]}},
                    "volumeMounts": [{"name": "script", "mountPath": SCRIPT_DIR, "readOnly": True},
                                     {"name": "work", "mountPath": "/work"}, {"name": "tmp", "mountPath": "/tmp"}],
                    "resources": {"requests": {"cpu": "1", "memory": "2Gi"},
                                  "limits": {"cpu": "2", "memory": "4Gi"}}}],
                "volumes": [{"name": "script", "configMap": {"name": DOWNLOADER, "defaultMode": 0o444}},
                            {"name": "work", "emptyDir": {}}, {"name": "tmp", "emptyDir": {}}]}}},
    }


def download_counts(manifest: dict[str, Any] | None) -> dict[str, int]:
    """The progress the script writes in `_podstart_manifest.json` under the model's prefix."""
    out: dict[str, int] = {}
    for key in COUNT_KEYS:
        v = (manifest or {}).get(key)
        if isinstance(v, int) and not isinstance(v, bool):
            out[key] = v
    return out


def job_finished(job: dict[str, Any] | None) -> str | None:
    """"Complete" or "Failed" when the Job has ended, else None."""
    for c in ((job or {}).get("status") or {}).get("conditions") or []:
        if c.get("status") == "True" and c.get("type") in ("Complete", "Failed"):
            return str(c["type"])
    return None


def download_present(manifest: dict[str, Any] | None, complete: bool, files_in_bucket: int) -> bool:
    """All files are there already: the `_COMPLETE` marker is there and at least as many files as the manifest
    counted are under the prefix (the step and the plan ask this, from the bucket alone)."""
    total = download_counts(manifest).get("files_total")
    return complete and total is not None and files_in_bucket >= total


def pod_failure(pods: list[dict[str, Any]]) -> str | None:
    """Why the download's pod ended or cannot start: its termination message (the script writes the reason), or
    a container that cannot be configured (a Secret gone). None while nothing failed."""
    for pod in sorted(pods, key=lambda p: str(p.get("metadata", {}).get("creationTimestamp") or ""), reverse=True):
        for cs in (pod.get("status") or {}).get("containerStatuses") or []:
            term = (cs.get("state") or {}).get("terminated") or {}
            if term and term.get("exitCode") not in (0, None):
                return str(term.get("message") or term.get("reason") or f"exit code {term.get('exitCode')}").strip()
            waiting = (cs.get("state") or {}).get("waiting") or {}
            if waiting.get("reason") in ("CreateContainerConfigError", "ErrImagePull", "ImagePullBackOff",
                                         "InvalidImageName"):
                return f"{waiting['reason']}: {waiting.get('message') or ''}".strip()
    return None
