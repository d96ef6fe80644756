"""Models in the shared bucket: download one from Hugging Face (model.download, a Kubernetes Job that writes
under data/models/{model_id}/{revision}/ and skips files already there) and list what is there (from the
bucket itself, paged)."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any

from functions.domain import inference_manifests as im
from functions.domain.cluster_record import ClusterRecord
from functions.domain.errors import BadRequest, InvalidInput
from functions.domain.inference import (
    DOWNLOAD_IMAGE,
    MODELS_PREFIX,
    NAMESPACE,
    ModelDownload,
    download_job_name,
    model_of_key,
    model_prefix,
)
from functions.domain.operations import Actor, Operation, Target
from functions.domain.plans import Plan
from functions.domain.views import ModelList, ModelObject
from functions.logic import live_reads
from functions.logic.cluster_views import find_record
from functions.logic.deps import Deps
from functions.logic.endpoints import require_ready_cluster
from functions.logic.plans import Started, start_or_plan

PAGE_KEYS = 1000  # keys per ListObjectsV2 call
MAX_CALLS = 5  # a page of the models list reads at most this many pages of keys


def _objects(deps: Deps) -> Any:
    if deps.objects is None:
        raise RuntimeError("no bucket lister configured")
    return deps.objects


def count_files(deps: Deps, bucket: str, prefix: str) -> int:
    """Objects under the prefix (bounded: MAX_CALLS pages)."""
    n, after = 0, None
    for _ in range(MAX_CALLS):
        items, more = _objects(deps).list_objects(bucket, prefix, after, PAGE_KEYS)
        n += len(items)
        if not more or not items:
            break
        after = items[-1]["key"]
    return n


@dataclass
class DownloadAdmission:
    deps: Deps
    rec: ClusterRecord
    body: ModelDownload
    normalized: dict[str, Any] | None = None

    def normalize(self) -> dict[str, Any]:
        require_ready_cluster(self.rec)
        b = self.body
        if b.token_secret:
            kube = self.deps.kube(self.rec.eks_cluster_name, self.rec.region)
            if not kube.names(f"/api/v1/namespaces/{NAMESPACE}/secrets/{b.token_secret}"):  # never its values
                raise InvalidInput.field(["body", "token_secret"],
                                         f"{self.rec.name} has no Secret {b.token_secret!r} in namespace "
                                         f"{NAMESPACE}: create it (key `{im.TOKEN_KEY}`) first")
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


def download_facts(deps: Deps, rec: ClusterRecord, body: ModelDownload) -> dict[str, Any]:
    """What a dry run reads: an earlier download Job of this (model, revision), and the files under the prefix."""
    require_ready_cluster(rec)
    kube = deps.kube(rec.eks_cluster_name, rec.region)
    name = download_job_name(body.model_id, body.revision)
    bucket = live_reads.bucket(deps)
    return {"bucket": bucket, "job": kube.get(f"/apis/batch/v1/namespaces/{NAMESPACE}/jobs/{name}"),
            "files_in_bucket": count_files(deps, bucket, model_prefix(body.model_id, body.revision))}


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
    if not key.startswith(MODELS_PREFIX.lstrip("/")):
        raise BadRequest.field(["query", "next_token"], "not a token this API issued")
    return key


def list_models(deps: Deps, cluster: str, region: str | None, limit: int, token: str | None) -> ModelList:
    """Models under data/models/ of the shared bucket, in key order, `limit` (model, revision) per page. A page
    reads at most MAX_CALLS x PAGE_KEYS keys; past that its last model may continue on the next page."""
    rec = find_record(deps, cluster, region)
    bucket = live_reads.bucket(deps)
    root = MODELS_PREFIX.lstrip("/")
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
                    return _page(rec, bucket, groups, encode_token(groups[-1]["last_key"]))
                g = {"model_id": model_id, "revision": revision, "files": 0, "bytes": 0, "last_modified": None}
                groups.append(g)
            g["files"] += 1
            g["bytes"] += o["size"]
            g["last_key"] = o["key"]
            if o.get("last_modified") and (g["last_modified"] is None or o["last_modified"] > g["last_modified"]):
                g["last_modified"] = o["last_modified"]
        if not more or not items:
            break
        after = items[-1]["key"]
        if call == MAX_CALLS - 1:
            next_token = encode_token(after)
    return _page(rec, bucket, groups, next_token)


def _page(rec: ClusterRecord, bucket: str, groups: list[dict[str, Any]], token: str | None) -> ModelList:
    return ModelList(cluster=rec.name, region=rec.region, bucket=bucket, next_token=token, items=[
        ModelObject(model_id=g["model_id"], revision=g["revision"], files=g["files"], bytes=g["bytes"],
                    last_modified=g["last_modified"], path=f"{MODELS_PREFIX}{g['model_id']}/{g['revision']}/")
        for g in groups])
