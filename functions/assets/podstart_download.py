"""PodStart's model downloader: copies one Hugging Face model revision into the shared data bucket.

A constant script: model.download ships this file unchanged in a ConfigMap and the download Job runs it with
`python3 /opt/podstart/podstart_download.py` on a pinned public Python image. Nothing in it is built from
user input: MODEL_ID, REVISION, BUCKET and PREFIX come from the Job's env (validated by PodStart's API and
checked again here), HF_TOKEN from the token Secret (env valueFrom secretKeyRef, never a literal).

For each file of the revision it skips what is already at s3://BUCKET/PREFIX with the same size (a retry
resumes), else downloads it with huggingface_hub and uploads it, then rewrites `_podstart_manifest.json`
(files_total, files_done, files_skipped, bytes_total, bytes_done); when every file is there it writes the
`_COMPLETE` marker. Pods see the files at /data/{PREFIX} (the bucket is mounted at /data).

Exit codes: 0 done; 3 permanent (no such model or revision, gated without a valid token: the Job's
podFailurePolicy fails the Job at once); anything else is retried by the Job (backoffLimit). The reason goes
to /dev/termination-log, where PodStart reads it. The sandbox imports start/copy_next/finish with a fake hub,
so it runs this same logic.

Stdlib only at import time; huggingface_hub and boto3 (pinned below) are imported in main(), installed into
/work/pylib on first use when the image lacks them.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

REQUIREMENTS = ("huggingface_hub==2.4.0", "boto3==1.44.8")
MANIFEST = "_podstart_manifest.json"
COMPLETE = "_COMPLETE"
MARKERS = (MANIFEST, COMPLETE)
MODELS_ROOT = "models/"
EXIT_PERMANENT = 3
TERMINATION_LOG = "/dev/termination-log"
PYLIB = "/work/pylib"

MODEL_RE = re.compile(r"^[A-Za-z0-9_.-]{1,96}/[A-Za-z0-9_.-]{1,96}$")
REVISION_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
BUCKET_RE = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")


class PermanentError(Exception):
    """No retry helps: the model or revision does not exist, or it is gated and the token is missing/invalid."""


class Spec(NamedTuple):
    model_id: str
    revision: str
    bucket: str
    prefix: str
    token: str | None


class Hub(Protocol):
    def files(self, model_id: str, revision: str, token: str | None) -> list[tuple[str, int]]:
        """(path in the repository, size in bytes) of every file of the revision."""
        ...

    def fetch(self, model_id: str, revision: str, filename: str, token: str | None, dest: str) -> str:
        """Download one file under dest; the local path."""
        ...


def spec_from_env(env: dict[str, str]) -> Spec:
    model_id, revision = env.get("MODEL_ID", ""), env.get("REVISION", "main")
    bucket, prefix = env.get("BUCKET", ""), env.get("PREFIX", "")
    if not MODEL_RE.match(model_id) or ".." in model_id:
        raise PermanentError(f"MODEL_ID {model_id!r} is not an org/name Hugging Face id")
    if not REVISION_RE.match(revision) or ".." in revision:
        raise PermanentError(f"REVISION {revision!r} is not a branch, tag or commit")
    if not BUCKET_RE.match(bucket):
        raise PermanentError(f"BUCKET {bucket!r} is not a bucket name")
    if prefix != f"{MODELS_ROOT}{model_id}/{revision}/":
        raise PermanentError(f"PREFIX must be {MODELS_ROOT}{model_id}/{revision}/")
    return Spec(model_id, revision, bucket, prefix, env.get("HF_TOKEN") or None)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def present(s3: Any, spec: Spec) -> dict[str, int]:
    """Files already under the prefix and their sizes (the markers excluded)."""
    out: dict[str, int] = {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=spec.bucket, Prefix=spec.prefix):
        for o in page.get("Contents") or []:
            name = o["Key"][len(spec.prefix):]
            if name and name not in MARKERS:
                out[name] = int(o["Size"])
    return out


def write_manifest(s3: Any, spec: Spec, manifest: dict[str, Any]) -> None:
    manifest["updated_at"] = _now()
    s3.put_object(Bucket=spec.bucket, Key=spec.prefix + MANIFEST, Body=json.dumps(manifest).encode(),
                  ContentType="application/json")


def start(hub: Hub, s3: Any, spec: Spec) -> dict[str, Any]:
    """List the revision's files, mark those already in the bucket (same size) as done, write the manifest."""
    files = sorted(hub.files(spec.model_id, spec.revision, spec.token))
    there = present(s3, spec)
    entries: list[dict[str, Any]] = [{"name": n, "size": size, "done": there.get(n) == size} for n, size in files]
    skipped = [e for e in entries if e["done"]]
    manifest = {"model_id": spec.model_id, "revision": spec.revision, "complete": False,
                "files_total": len(entries), "bytes_total": sum(int(e["size"]) for e in entries),
                "files_done": len(skipped), "bytes_done": sum(int(e["size"]) for e in skipped),
                "files_skipped": len(skipped), "files": entries}
    s3.delete_object(Bucket=spec.bucket, Key=spec.prefix + COMPLETE)  # complete again only when all are there
    write_manifest(s3, spec, manifest)
    return manifest


def copy_next(hub: Hub, s3: Any, spec: Spec, manifest: dict[str, Any], workdir: str,
              log: Callable[[str], None] = print) -> bool:
    """Download and upload the next file not done yet and update the manifest; False when none is left."""
    entry = next((e for e in manifest["files"] if not e["done"]), None)
    if entry is None:
        return False
    path = hub.fetch(spec.model_id, spec.revision, entry["name"], spec.token, workdir)
    try:
        s3.upload_file(path, spec.bucket, spec.prefix + entry["name"])
    finally:
        if os.path.exists(path):
            os.remove(path)  # one file on local disk at a time
    entry["done"] = True
    manifest["files_done"] += 1
    manifest["bytes_done"] += int(entry["size"])
    write_manifest(s3, spec, manifest)
    log(f"{manifest['files_done']}/{manifest['files_total']} {entry['name']} ({entry['size']} bytes)")
    return True


def finish(s3: Any, spec: Spec, manifest: dict[str, Any]) -> None:
    manifest["complete"] = True
    write_manifest(s3, spec, manifest)
    s3.put_object(Bucket=spec.bucket, Key=spec.prefix + COMPLETE, Body=b"")


def run(hub: Hub, s3: Any, spec: Spec, workdir: str, log: Callable[[str], None] = print) -> dict[str, Any]:
    manifest = start(hub, s3, spec)
    log(f"{spec.model_id}@{spec.revision}: {manifest['files_total']} files, {manifest['files_skipped']} "
        f"already in s3://{spec.bucket}/{spec.prefix}")
    while copy_next(hub, s3, spec, manifest, workdir, log):
        pass
    finish(s3, spec, manifest)
    log(f"complete: {manifest['files_total']} files, {manifest['bytes_total']} bytes")
    return manifest


class HfHub:
    """The Hugging Face Hub through huggingface_hub; its not-found and gated errors become PermanentError."""

    def __init__(self) -> None:
        import huggingface_hub
        from huggingface_hub import errors

        self.hf = huggingface_hub
        self.permanent: tuple[type[BaseException], ...] = (
            errors.RepositoryNotFoundError, errors.RevisionNotFoundError, errors.GatedRepoError,
            errors.EntryNotFoundError)

    def files(self, model_id: str, revision: str, token: str | None) -> list[tuple[str, int]]:
        try:
            info = self.hf.HfApi().model_info(model_id, revision=revision, files_metadata=True, token=token)
        except self.permanent as err:
            raise PermanentError(f"{model_id}@{revision}: {err}") from err
        return [(s.rfilename, int(s.size or 0)) for s in info.siblings or []]

    def fetch(self, model_id: str, revision: str, filename: str, token: str | None, dest: str) -> str:
        try:
            return str(self.hf.hf_hub_download(repo_id=model_id, filename=filename, revision=revision, token=token,
                                               local_dir=dest))
        except self.permanent as err:
            raise PermanentError(f"{model_id}@{revision}/{filename}: {err}") from err


def bootstrap() -> None:
    """Install the pinned requirements into PYLIB when the image lacks them (a constant argv, no shell)."""
    try:
        import boto3  # noqa: F401
        import huggingface_hub  # noqa: F401
        return
    except ImportError:
        pass
    import subprocess

    subprocess.run([sys.executable, "-m", "pip", "install", "--no-cache-dir", "--disable-pip-version-check",
                    "--quiet", "--target", PYLIB, *REQUIREMENTS], check=True)
    sys.path.insert(0, PYLIB)


def _terminate(message: str) -> None:
    print(message, file=sys.stderr)
    try:
        with open(TERMINATION_LOG, "w") as f:
            f.write(message[-3500:])
    except OSError:
        pass


def main(env: dict[str, str] | None = None, hub: Hub | None = None, s3: Any = None) -> int:
    env = dict(os.environ) if env is None else env
    try:
        spec = spec_from_env(env)
        if hub is None or s3 is None:
            bootstrap()
            import boto3

            s3 = s3 or boto3.client("s3", region_name=env.get("AWS_REGION") or None)
            hub = hub or HfHub()
        workdir = env.get("WORKDIR") or "/work/files"
        os.makedirs(workdir, exist_ok=True)
        run(hub, s3, spec, workdir)
        return 0
    except PermanentError as err:
        _terminate(f"permanent: {err}")
        return EXIT_PERMANENT
    except Exception as err:  # retried by the Job: network, throttling, a pod evicted mid-file
        _terminate(f"{type(err).__name__}: {err}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
