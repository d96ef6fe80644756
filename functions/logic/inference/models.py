"""Models in the shared bucket: download one from Hugging Face (model.download: the downloader's identity, then
a Kubernetes Job running a constant script that writes under models/{model_id}/{revision}/ (pods see
/data/models/...), skips files already there and keeps `_podstart_manifest.json` and `_COMPLETE` up to date)
and list what is there (from the bucket itself, paged)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from functions.assets import download_script
from functions.domain import iam as iamdoc
from functions.domain.clusters.record import ClusterRecord
from functions.domain.errors import BadRequest
from functions.domain.inference import manifests as im
from functions.domain.inference.endpoints import MODELS_PREFIX, NAMESPACE
from functions.domain.inference.requests import (
    DOWNLOAD_IMAGE,
    MODELS_KEY_PREFIX,
    ModelDownload,
    download_job_name,
    model_of_key,
    model_prefix,
)
from functions.domain.operations import Actor, Operation, Target
from functions.domain.plans import Plan
from functions.domain.views import ModelList, ModelObject
from functions.logic import live_reads
from functions.logic.clusters.views import find_record
from functions.logic.deps import Deps
from functions.logic.inference.endpoints import require_ready_cluster
from functions.logic.namespaces import require_podstart_secrets
from functions.logic.plans import Started, start_or_plan

PAGE_KEYS = 1000  # keys per ListObjectsV2 call
MANIFEST_BYTES = 4 << 20  # a manifest lists a revision's files: far below this
MAX_MANIFESTS = 10  # a page of the models list reads at most this many manifests (of downloads in progress)
MAX_CALLS = 5  # a page of the models list reads at most this many pages of keys


def _objects(deps: Deps) -> Any:
    if deps.objects is None:
        raise RuntimeError("no bucket lister configured")
    return deps.objects


def bucket_state(deps: Deps, bucket: str, prefix: str) -> tuple[int, bool]:
    """(files under the prefix without the script's markers, whether `_COMPLETE` is there); bounded reads."""
    n, complete, after = 0, False, None
    for _ in range(MAX_CALLS):
        items, more = _objects(deps).list_objects(bucket, prefix, after, PAGE_KEYS)
        for o in items:
            name = o["key"][len(prefix):]
            complete = complete or name == im.COMPLETE
            n += name not in im.MARKERS
        if not more or not items:
            break
        after = items[-1]["key"]
    return n, complete


def read_manifest(deps: Deps, bucket: str, prefix: str) -> dict[str, Any] | None:
    """The download script's `_podstart_manifest.json` under the prefix (None when absent or unreadable)."""
    raw = _objects(deps).read_small(bucket, prefix + im.MANIFEST, MANIFEST_BYTES)
    try:
        out = json.loads(raw) if raw else None
    except ValueError:
        return None
    return out if isinstance(out, dict) else None


@dataclass
class DownloadAdmission:
    deps: Deps
    rec: ClusterRecord
    body: ModelDownload
    normalized: dict[str, Any] | None = None

    def normalize(self) -> dict[str, Any]:
        require_ready_cluster(self.rec)
        b = self.body
        if b.token_secret:  # one PodStart wrote (key `token`): never a system Secret, never its values read
            kube = self.deps.kube(self.rec.eks_cluster_name, self.rec.region)
            require_podstart_secrets(kube, NAMESPACE, [(b.token_secret, ["body", "token_secret"])])
        self.normalized = {"cluster": self.rec.name, "region": self.rec.region,
                           "eks_cluster_name": self.rec.eks_cluster_name, "source": b.source,
                           "model_id": b.model_id, "revision": b.revision, "token_secret": b.token_secret,
                           "job_name": download_job_name(b.model_id, b.revision), "image": DOWNLOAD_IMAGE,
                           "bucket": live_reads.bucket(self.deps), "prefix": model_prefix(b.model_id, b.revision)}
        return self.normalized

    def claim(self, op: Operation) -> None:
        return None  # the Job's name is the claim: the target lock keeps two downloads of a model apart

    def unclaim(self, op: Operation) -> None:
        return None


def script_digest() -> str:
    """The downloader script's sha256 (the ConfigMap a run applies carries exactly this file)."""
    return hashlib.sha256(download_script().encode()).hexdigest()


def download_facts(deps: Deps, rec: ClusterRecord, body: ModelDownload) -> dict[str, Any]:
    """What a dry run reads: the downloader's identity (role linked by Pod Identity, ServiceAccount, ConfigMap),
    an earlier download Job of this (model, revision), and the bucket under the prefix (files, marker, manifest)."""
    require_ready_cluster(rec)
    kube = deps.kube(rec.eks_cluster_name, rec.region)
    name = download_job_name(body.model_id, body.revision)
    bucket = live_reads.bucket(deps)
    prefix = model_prefix(body.model_id, body.revision)
    files, complete = bucket_state(deps, bucket, prefix)
    cm = kube.get(f"/api/v1/namespaces/{NAMESPACE}/configmaps/{im.DOWNLOADER}") or {}
    script = ((cm.get("data") or {}).get(im.SCRIPT_KEY) or "").encode()
    linked = None
    if deps.features is not None:
        inputs = deps.features.read(rec.region, rec.name, rec.eks_cluster_name, rec.hyperpod_cluster_name)
        linked = (NAMESPACE, im.DOWNLOADER) in inputs.associations
    return {"bucket": bucket, "job": kube.get(f"/apis/batch/v1/namespaces/{NAMESPACE}/jobs/{name}"),
            "files_in_bucket": files, "complete": complete, "manifest": read_manifest(deps, bucket, prefix),
            "role": iamdoc.role_name(rec.name, rec.region, "models"), "linked": linked,
            "service_account": bool(kube.names(f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts/{im.DOWNLOADER}")),
            "script_current": bool(script) and hashlib.sha256(script).hexdigest() == script_digest()}


def download_model(deps: Deps, cluster: str, region: str | None, body: ModelDownload, actor: Actor,
                   key: str | None, dry_run: bool = False) -> Started | Plan:
    rec = find_record(deps, cluster, region)
    return start_or_plan(
        deps, dry_run=dry_run, kind="model.download",
        target=Target(cluster=rec.name, region=rec.region, resource=f"model/{body.model_id}/{body.revision}"),
        request={"cluster": rec.name, "region": rec.region, "model": body.model_dump(mode="json")},
        principal=actor, idempotency_key=key, admission=DownloadAdmission(deps, rec, body),
        facts=download_facts(deps, rec, body) if dry_run else None)


# --------------------------------------------------------------------------------------------- list

def encode_token(key: str) -> str:
    return base64.urlsafe_b64encode(key.encode()).decode().rstrip("=")


def decode_token(token: str) -> str:
    try:
        key = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise BadRequest.field(["query", "next_token"], "not a token this API issued") from None
    if not key.startswith(MODELS_KEY_PREFIX):
        raise BadRequest.field(["query", "next_token"], "not a token this API issued")
    return key


def list_models(deps: Deps, cluster: str, region: str | None, limit: int, token: str | None) -> ModelList:
    """Models under models/ of the shared bucket (pods see /data/models/), in key order, `limit` (model,
    revision) per page. A page reads at most MAX_CALLS x PAGE_KEYS keys; past that its last model may continue
    on the next page. The download script's markers are not files: `_COMPLETE` makes a model complete; a model
    without it shows the progress of its manifest (at most MAX_MANIFESTS reads a page)."""
    rec = find_record(deps, cluster, region)
    bucket = live_reads.bucket(deps)
    root = MODELS_KEY_PREFIX
    after = decode_token(token) if token else None
    groups: list[dict[str, Any]] = []
    next_token: str | None = None
    for call in range(MAX_CALLS):
        items, more = _objects(deps).list_objects(bucket, root, after, PAGE_KEYS)
        for o in items:
            parsed = model_of_key(o["key"])
            if parsed is None:
                continue
            model_id, revision, _ = parsed
            g = groups[-1] if groups else None
            if g is None or (g["model_id"], g["revision"]) != (model_id, revision):
                if len(groups) == limit:  # the first key of the page after this one
                    return _page(deps, rec, bucket, groups, encode_token(groups[-1]["last_key"]))
                g = {"model_id": model_id, "revision": revision, "files": 0, "bytes": 0, "last_modified": None,
                     "complete": False}
                groups.append(g)
            g["last_key"] = o["key"]
            if parsed[2] in im.MARKERS:
                g["complete"] = g["complete"] or parsed[2] == im.COMPLETE
                continue
            g["files"] += 1
            g["bytes"] += o["size"]
            if o.get("last_modified") and (g["last_modified"] is None or o["last_modified"] > g["last_modified"]):
                g["last_modified"] = o["last_modified"]
        if not more or not items:
            break
        after = items[-1]["key"]
        if call == MAX_CALLS - 1:
            next_token = encode_token(after)
    return _page(deps, rec, bucket, groups, next_token)


def _page(deps: Deps, rec: ClusterRecord, bucket: str, groups: list[dict[str, Any]],
          token: str | None) -> ModelList:
    reads = 0
    for g in groups:
        if g["complete"] or reads >= MAX_MANIFESTS:
            continue
        reads += 1
        m = read_manifest(deps, bucket, model_prefix(g["model_id"], g["revision"]))
        g["files_total"] = (im.download_counts(m) or {}).get("files_total")
    return ModelList(cluster=rec.name, region=rec.region, bucket=bucket, next_token=token, items=[
        ModelObject(model_id=g["model_id"], revision=g["revision"], files=g["files"], bytes=g["bytes"],
                    last_modified=g["last_modified"], path=f"{MODELS_PREFIX}{g['model_id']}/{g['revision']}/",
                    complete=g["complete"], files_total=g.get("files_total"))
        for g in groups])
