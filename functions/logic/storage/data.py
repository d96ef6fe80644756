"""Your data and models: browse the buckets PodStart may read (`list_data`), and check a workload's inputs before it
starts (every path exists, on a bucket PodStart may read, mounted where the workload runs).

A path is a /data path (PodStart's data bucket, at /data in every pod) or an S3 URI (functions/domain/storage/data.py).
A registered bucket reaches a workload's pods through a volume an admin mounted in the workload's namespace
(storage.add, kind s3: its own Pod Identity role, scoped to the bucket and prefix): this module finds that volume, and
refuses with a 422 naming the field when there is none, when it is read-only and the field writes, or when the object is
missing.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field

from functions.domain import tenancy
from functions.domain.clusters.record import ClusterRecord
from functions.domain.errors import InvalidInput
from functions.domain.storage import data
from functions.domain.storage import volumes as storage
from functions.domain.storage.data import DataMap, Mount, Ref
from functions.domain.training import recipes
from functions.logic import live_reads
from functions.logic.deps import Deps

DATASET_INFO = "dataset_info.json"  # LLaMA-Factory's index of a dataset folder
MODEL_MARKERS = ("config.json",)  # a Hugging Face model folder (what vLLM, LLaMA-Factory and MS-Swift load)
INFO_BYTES = 256 * 1024
PAGE = 200

Loc = tuple[str, ...]


class Need(BaseModel):
    """One path a workload names: where in the request, what it must be, and whether the workload writes there."""

    loc: Loc
    value: str
    kind: data.Kind | None = None  # file, dir, model; None: an output folder (need not exist)
    relative: bool = False  # a relative value is read under /data/datasets
    writes: bool = False


def job_needs(params: recipes._Params, output: str | None) -> list[Need]:
    """Every path a job names: its recipe's data parameters, and its output."""
    out: list[Need] = []
    relative = {"dataset", "train_files", "val_files"}
    for field, kind in type(params).DATA_FIELDS.items():
        value = getattr(params, field)
        if value is None or (kind == "model" and data.is_hf_id(value)):
            continue
        out.append(Need(loc=("body", "parameters", field), value=value, kind=kind, relative=field in relative))
    if output:
        out.append(Need(loc=("body", "output"), value=output, writes=True))
    return out


# -- which volume a path goes through ------------------------------------------------------------------------------

def namespace_mounts(deps: Deps, rec: ClusterRecord, namespace: str) -> list[Mount]:
    """The registered buckets' volumes in a namespace (storage.add, kind s3, not PodStart's own bucket)."""
    own = live_reads.bucket(deps)
    return [Mount(storage=r.name, namespace=r.namespace, bucket=r.bucket or "", prefix=r.prefix,
                  read_only=r.read_only, service_account=storage.service_account(r.name), status=r.status)
            for r in storage.StorageRecords(deps.state).of_cluster(rec.region, rec.name)
            if r.kind == "s3" and r.bucket and r.bucket != own and r.namespace == namespace]


def resolve(deps: Deps, rec: ClusterRecord, namespace: str, needs: list[Need],
            *, one_identity: bool = True) -> tuple[DataMap, list[tuple[Need, Ref]]]:
    """The DataMap a workload renders with (the data bucket and the volumes its paths go through) and each path
    parsed; InvalidInput listing every path that cannot reach the pods, each naming its field and saying why.
    `one_identity`: the pods run as one ServiceAccount, so all registered paths must go through one volume (a job
    that reports to MLflow runs as its own, which the mlflow_access step grants every volume's bucket access)."""
    own = live_reads.bucket(deps)
    regs = live_reads.registrations(deps)
    mounts = namespace_mounts(deps, rec, namespace)
    where = DataMap(data_bucket=own, mounts=mounts)
    used: dict[str, Mount] = {}
    errors: list[dict[str, Any]] = []
    parsed: list[tuple[Need, Ref]] = []
    for need in needs:
        try:
            ref = data.parse(need.value, relative_to=data.DATASETS if need.relative else None)
        except ValueError as exc:
            errors.append({"loc": list(need.loc), "msg": str(exc)})
            continue
        bucket = ref.bucket or own
        if tenancy.find_registration(regs, bucket, ref.key) is None:
            names = ", ".join(f"s3://{r.bucket}/{r.prefix}" for r in regs)
            errors.append({"loc": list(need.loc), "msg": f"{ref.uri(own)}: PodStart may not read {bucket}"
                           f"{'/' + ref.key if bucket in {r.bucket for r in regs} else ''}: it reads {names} (an "
                           f"admin registers more; README: Security)"})
            continue
        if ref.on_data_bucket(own):
            parsed.append((need, ref))
            continue
        mount = where.mount_for(ref)
        if mount is None:
            here = ", ".join(f"{m.storage} (s3://{m.bucket}/{m.prefix})" for m in mounts) or "none"
            errors.append({"loc": list(need.loc), "msg": (
                f"{ref.text}: no volume mounts s3://{ref.bucket}/ in namespace {namespace} (its volumes: {here}); an "
                f"admin mounts it with add_storage(kind=\"s3\", bucket=\"{ref.bucket}\", namespace=\"{namespace}\"), "
                f"or copy the data under /data")})
            continue
        if mount.status != "AVAILABLE":
            errors.append({"loc": list(need.loc), "msg": f"{ref.text}: volume {mount.storage} is {mount.status}"})
            continue
        if need.writes and mount.read_only:
            errors.append({"loc": list(need.loc), "msg": (
                f"{ref.text}: volume {mount.storage} mounts s3://{mount.bucket}/{mount.prefix} read-only; write under "
                f"/data or to a read-write volume")})
            continue
        used[mount.storage] = mount
        parsed.append((need, ref))
    if one_identity and len(used) > 1:
        names = ", ".join(sorted(used))
        errors.append({"loc": list(needs[-1].loc), "msg": (
            f"the paths go through volumes {names}, each read as its own ServiceAccount, and pods run as one: use one "
            f"volume (an admin can mount a common prefix), or report to MLflow (the job's own identity reads all)")})
    if errors:
        raise InvalidInput.of(errors)
    return DataMap(data_bucket=own, mounts=sorted(used.values(), key=lambda m: m.storage)), parsed


# -- do the inputs exist ------------------------------------------------------------------------------------------

def check_exists(deps: Deps, rec: ClusterRecord, parsed: list[tuple[Need, Ref]],
                 params: Any = None) -> list[dict[str, Any]]:
    """What the dry run (and the submit) finds: each input as it will be read, or a 422 naming the field and what
    was looked for. Outputs need not exist. Returns one line per input for the plan."""
    own = live_reads.bucket(deps)
    errors: list[dict[str, Any]] = []
    found: list[dict[str, Any]] = []
    for need, ref in parsed:
        if need.kind is None:
            found.append({"field": ".".join(need.loc[1:]), "uri": ref.uri(own), "writes": True})
            continue
        bucket = ref.bucket or own
        why, seen = _missing(deps, rec.region, bucket, ref.key, need.kind)
        loc = list(need.loc)
        if why is None and need.kind == "dir" and need.loc[-1] == "dataset_dir" and params is not None:
            wrong, why = _dataset_info(deps, bucket, ref.key, str(getattr(params, "dataset", "")), rec.region)
            if wrong == "dataset":  # the folder is there: the dataset it names is not (the field to fix)
                loc, why = [*need.loc[:-1], "dataset"], f"{why} (in {need.value})"
        if why is not None:
            errors.append({"loc": loc, "msg": why if loc[-1] == "dataset" else f"{need.value}: {why}"})
            continue
        found.append({"field": ".".join(need.loc[1:]), "uri": ref.uri(own), **seen})
    if errors:
        raise InvalidInput.of(errors)
    return found


def _missing(deps: Deps, region: str, bucket: str, key: str, kind: data.Kind) -> tuple[str | None, dict[str, Any]]:
    """(why the input is not there, or None; what was found)."""
    if kind == "file" and not key.endswith("/"):
        page = deps.reader.list_objects(region, bucket, key, 5, None)
        hit = next((o for o in page["objects"] if o["key"] == key), None)
        if hit is not None:
            return None, {"bytes": hit["size"]}
        if any(p == key + "/" for p in page["prefixes"]):
            return f"s3://{bucket}/{key} is a folder; name a file in it", {}
        return f"no object s3://{bucket}/{key} (looked for that key)", {}
    prefix = key if key.endswith("/") else key + "/"
    page = deps.reader.list_objects(region, bucket, prefix, PAGE, None)
    names = {o["key"][len(prefix):] for o in page["objects"]}
    if not names and not page["prefixes"]:
        return f"nothing under s3://{bucket}/{prefix} (looked for objects with that prefix)", {}
    if kind == "model":
        missing = [m for m in MODEL_MARKERS if m not in names]
        if missing:
            return (f"s3://{bucket}/{prefix} is not a Hugging Face model folder: no {', '.join(missing)} (looked for "
                    f"s3://{bucket}/{prefix}{missing[0]})"), {}
    return None, {"objects": len(page["objects"]) + len(page["prefixes"]),
                  **({"more": True} if page["truncated"] else {})}


def _dataset_info(deps: Deps, bucket: str, key: str, datasets: str, region: str) -> tuple[str, str | None]:
    """LLaMA-Factory reads `dataset` from dataset_dir's dataset_info.json: it must be there, define each name, and
    each file it names must exist. (the field at fault: dataset_dir or dataset, why) or (_, None)."""
    prefix = key if key.endswith("/") else key + "/"
    info_key = prefix + DATASET_INFO
    raw = deps.objects.read_small(bucket, info_key, INFO_BYTES) if deps.objects is not None else None
    if raw is None:
        return "dataset_dir", f"no {DATASET_INFO} in it (looked for s3://{bucket}/{info_key})"
    try:
        info = json.loads(raw)
    except ValueError:
        return "dataset_dir", f"s3://{bucket}/{info_key} is not JSON"
    if not isinstance(info, dict):
        return "dataset_dir", f"s3://{bucket}/{info_key} is not a JSON object of datasets"
    for name in [n.strip() for n in datasets.split(",") if n.strip()]:
        entry = info.get(name)
        if not isinstance(entry, dict):
            known = ", ".join(sorted(info)[:10]) or "none"
            return "dataset", f"{DATASET_INFO} defines no dataset {name!r} (it defines: {known})"
        file_name = entry.get("file_name")
        if isinstance(file_name, str) and not entry.get("hf_hub_url") and not entry.get("ms_hub_url"):
            if file_name.startswith("/") or ".." in file_name.split("/"):
                return "dataset", f"dataset {name}: file_name {file_name!r} must be relative to the folder"
            why, _ = _missing(deps, region, bucket, prefix + file_name.rstrip("/"),
                              "dir" if file_name.endswith("/") else "file")
            if why is not None:
                return "dataset", f"dataset {name} names {file_name}: {why}"
    return "", None


# -- GET /v1/data -----------------------------------------------------------------------------------------------------

class DataMountView(BaseModel):
    cluster: str
    namespace: str
    storage: str = Field(description="The volume (claim) name")
    read_only: bool
    path: str = Field(description="Where the pods see it")


class DataRoot(BaseModel):
    uri: str = Field(description="s3://bucket/prefix: the keys PodStart may read")
    path: str | None = Field(default=None, description="/data for PodStart's data bucket (in every pod)")
    owned: bool = Field(description="PodStart's own data bucket")
    mounted: list[DataMountView] = Field(default_factory=list,
                                         description="Where a registered bucket is mounted (jobs there may read it)")


class DataEntry(BaseModel):
    uri: str
    size: int | None = Field(default=None, description="Bytes (a file); None for a folder")
    last_modified: str | None = None


class DataListing(BaseModel):
    """GET /v1/data: without uri, the buckets PodStart may read; with one, one level under it."""

    uri: str | None = Field(default=None, description="The folder listed")
    path: str | None = Field(default=None, description="Where pods see this folder (/data/... or /s3/<bucket>/...)")
    roots: list[DataRoot] = Field(default_factory=list)
    folders: list[str] = Field(default_factory=list)
    files: list[DataEntry] = Field(default_factory=list)
    truncated: bool = False
    next_token: str | None = None
    how: str = Field(description="How to name these in a job or endpoint")


HOW = ("Name a file or folder as /data/<key> (PodStart's data bucket, in every pod) or s3://bucket/key on a "
       "registered bucket mounted in the workload's namespace (pods see it at /s3/bucket/key)")


def list_data(deps: Deps, uri: str | None, cluster: str | None, region: str | None, limit: int,
              token: str | None) -> DataListing:
    from functions.logic.clusters.views import find_record

    own = live_reads.bucket(deps)
    regs = live_reads.registrations(deps)
    rec = find_record(deps, cluster, region) if cluster else None
    if not uri:
        mounts: dict[str, list[DataMountView]] = {}
        if rec is not None:
            for r in storage.StorageRecords(deps.state).of_cluster(rec.region, rec.name):
                if r.kind == "s3" and r.bucket and r.bucket != own:
                    m = Mount(storage=r.name, namespace=r.namespace, bucket=r.bucket, prefix=r.prefix,
                              read_only=r.read_only, service_account=storage.service_account(r.name))
                    mounts.setdefault(r.bucket, []).append(DataMountView(
                        cluster=rec.name, namespace=r.namespace, storage=r.name, read_only=r.read_only, path=m.path))
        return DataListing(path=None, roots=[DataRoot(uri=f"s3://{r.bucket}/{r.prefix}",
                                           path=data.DATA_MOUNT if r.owned else None, owned=r.owned,
                                           mounted=mounts.get(r.bucket, []))
                                  for r in regs], how=HOW)
    try:
        ref = data.parse(uri)
    except ValueError as exc:
        raise InvalidInput.field(["query", "uri"], str(exc)) from None
    bucket = ref.bucket or own
    prefix = ref.key if ref.key.endswith("/") or not ref.key else ref.key + "/"
    if tenancy.find_registration(regs, bucket, prefix) is None:
        names = ", ".join(f"s3://{r.bucket}/{r.prefix}" for r in regs)
        raise InvalidInput.field(["query", "uri"], f"PodStart may not read s3://{bucket}/{prefix}: it reads {names}")
    where = region or (rec.region if rec else None) or live_reads.home_region(deps)
    page = deps.reader.list_objects(where, bucket, prefix, min(limit, 1000), token)
    path = f"{data.DATA_MOUNT}/{prefix}" if bucket == own else f"{data.S3_MOUNT}/{bucket}/{prefix}"
    return DataListing(uri=f"s3://{bucket}/{prefix}", path=path,
                       folders=[f"s3://{bucket}/{p}" for p in page["prefixes"]],
                       files=[DataEntry(uri=f"s3://{bucket}/{o['key']}", size=o["size"],
                                        last_modified=o.get("last_modified")) for o in page["objects"]],
                       truncated=page["truncated"], next_token=page["next_token"], how=HOW)
