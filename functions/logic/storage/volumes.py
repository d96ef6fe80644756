"""Storage after create: list a cluster's volumes (live FSx lifecycle), add one (storage.add), remove one
(storage.remove; FSx only with ?confirm=<name>), list the objects under an S3 volume's prefix."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from functions.domain import manifests, tenancy
from functions.domain.clusters.record import ClusterRecord, ClusterStatus
from functions.domain.errors import Conflict, Forbidden, InvalidInput, NotFound
from functions.domain.operations import Actor, Operation, Target, now_iso
from functions.domain.plans import Plan
from functions.domain.principal import Role
from functions.domain.storage import volumes as st
from functions.domain.storage.plan import reconcile_objects
from functions.logic import live_reads
from functions.logic.clusters.views import find_record
from functions.logic.deps import Deps
from functions.logic.namespaces import require_managed
from functions.logic.plans import Started, start_or_plan

BASE_KINDS = ("cluster.create", "cluster.reconcile")
OBJECTS_MAX = 1000


def _base_outputs(deps: Deps, rec: ClusterRecord) -> tuple[dict[str, Any], dict[str, Any]]:
    """(create outputs, latest of create/reconcile outputs that saw the shared storage)."""
    ops, _ = deps.operations.list(cluster=rec.name, status=None, limit=100, token=None)
    ops = [o for o in ops if o.target.region == rec.region and o.kind in BASE_KINDS]
    create = next((o for o in ops if o.kind == "cluster.create"), None)
    latest = next((o for o in ops if o.outputs().get("data_bucket")), None)
    return (create.outputs() if create else {}), (latest.outputs() if latest else {})


def _fsx_lifecycle(deps: Deps, region: str, fs_id: str | None) -> str | None:
    if not fs_id:
        return None
    fs = deps.reader.file_system(region, fs_id)
    return str((fs or {}).get("Lifecycle") or ("DELETED" if fs is None else "UNKNOWN"))


def _base_items(deps: Deps, rec: ClusterRecord) -> list[st.StorageItem]:
    created, latest = _base_outputs(deps, rec)
    items: list[st.StorageItem] = []
    if latest.get("data_bucket"):
        phase = latest.get("s3_pvc_phase")
        items.append(st.StorageItem(
            name=manifests.DATA_VOLUME, kind="s3", origin="cluster", bucket=latest["data_bucket"], prefix="",
            status="AVAILABLE" if phase == "Bound" else "CREATING", read_only=False,
            role_arn=latest.get("s3_csi_role_arn"),
            pvc=st.PvcState(name=manifests.DATA_VOLUME, namespace="default", volume=manifests.DATA_VOLUME,
                            phase=phase, as_of=latest.get("storage_checked_at")),
            removable=False, message="the shared data bucket (PodStart's data contract); it stays with the cluster"))
    fs_id = created.get("fsx_file_system_id")
    if fs_id and not rec.storage.get("fsx_removed"):
        lifecycle = _fsx_lifecycle(deps, rec.region, fs_id)
        spec = (rec.storage.get("fsx_lustre") or {})
        items.append(st.StorageItem(
            name=manifests.FSX_VOLUME, kind="fsx_lustre", origin="cluster", file_system_id=fs_id, lifecycle=lifecycle,
            status=lifecycle or "UNKNOWN", storage_capacity_gib=spec.get("storage_capacity_gib"),
            throughput_mb_per_tib=spec.get("throughput_mb_per_tib"),
            pvc=st.PvcState(name=manifests.FSX_VOLUME, namespace="default", volume=manifests.FSX_VOLUME,
                            phase=created.get("fsx_pvc_phase"), as_of=created.get("storage_checked_at")),
            confirm_required=True))
    return items


def _added_item(deps: Deps, rec: st.StorageRecord) -> st.StorageItem:
    lifecycle = _fsx_lifecycle(deps, rec.region, rec.file_system_id) if rec.kind == "fsx_lustre" else None
    status: str = rec.status
    if status == "AVAILABLE" and lifecycle and lifecycle != "AVAILABLE":
        status = lifecycle  # AWS says otherwise now (e.g. DELETING, FAILED, or gone)
    return st.StorageItem(
        name=rec.name, kind=rec.kind, origin="added", status=status, bucket=rec.bucket,
        prefix=rec.prefix if rec.kind == "s3" else None, read_only=rec.read_only if rec.kind == "s3" else None,
        service_account=rec.service_account or (st.service_account(rec.name) if rec.kind == "s3" else None),
        role_arn=rec.role_arn, file_system_id=rec.file_system_id, lifecycle=lifecycle,
        storage_capacity_gib=rec.storage_capacity_gib, throughput_mb_per_tib=rec.throughput_mb_per_tib,
        pvc=st.PvcState(name=rec.name, namespace=rec.namespace, volume=st.pv_name(rec.cluster, rec.name, rec.namespace),
                        phase=rec.pvc_phase, as_of=rec.checked_at),
        operation_id=rec.operation_id, message=rec.message, confirm_required=rec.kind == "fsx_lustre")


def list_storage(deps: Deps, name: str, region: str | None) -> st.StorageList:
    rec = find_record(deps, name, region)
    added = [_added_item(deps, r) for r in st.StorageRecords(deps.state).of_cluster(rec.region, rec.name)]
    return st.StorageList(cluster=rec.name, region=rec.region, items=_base_items(deps, rec) + added)


def _require_active(rec: ClusterRecord) -> None:
    if rec.status is not ClusterStatus.ACTIVE:
        raise Conflict(f"cluster {rec.name} is {rec.status.value}; storage and dependencies change only on an "
                       f"ACTIVE cluster")


@dataclass
class AddAdmission:
    deps: Deps
    rec: ClusterRecord
    normalized: dict[str, Any]
    actor: Actor

    def normalize(self) -> dict[str, Any]:
        n, rec = self.normalized, self.rec
        name = n["name"]
        taken = {manifests.DATA_VOLUME, manifests.FSX_VOLUME} | {
            r.name for r in st.StorageRecords(self.deps.state).of_cluster(rec.region, rec.name)}
        if name in taken:
            raise Conflict(f"{rec.name} already has a volume named {name!r}",
                           errors=[{"loc": ["body", "name"], "msg": "already used on this cluster; choose another"}])
        require_managed(self.deps.kube(rec.eks_cluster_name, rec.region), n["namespace"], ["body", "namespace"])
        if n["kind"] == "s3":
            where = self.deps.reader.bucket_region(rec.region, n["bucket"])
            if where is None:
                raise InvalidInput.field(["body", "bucket"], f"no bucket {n['bucket']!r} that this account can see; "
                                                             f"PodStart mounts existing buckets only")
            if where != rec.region:
                raise InvalidInput.field(["body", "bucket"], f"{n['bucket']} is in {where}; mount a bucket in the "
                                                             f"cluster's region ({rec.region})")
        return {"cluster": rec.name, "region": rec.region, "eks_cluster_name": rec.eks_cluster_name,
                "hyperpod_cluster_name": rec.hyperpod_cluster_name, **n}

    def claim(self, op: Operation) -> None:
        n = self.normalized
        fields = {k: n[k] for k in ("bucket", "prefix", "read_only", "storage_capacity_gib", "throughput_mb_per_tib")
                  if k in n}
        rec = st.StorageRecord(cluster=self.rec.name, region=self.rec.region, name=n["name"], kind=n["kind"],
                               namespace=n["namespace"], status="CREATING", operation_id=op.id,
                               created_by=self.actor.name, created_at=now_iso(), **fields)
        if not st.StorageRecords(self.deps.state).create(rec):
            raise Conflict(f"{self.rec.name} already has a volume named {n['name']!r}",
                           errors=[{"loc": ["body", "name"], "msg": "already used on this cluster; choose another"}])

    def unclaim(self, op: Operation) -> None:
        st.StorageRecords(self.deps.state).delete(self.rec.region, self.rec.name, self.normalized["name"])


def _add_facts(deps: Deps, rec: ClusterRecord) -> dict[str, Any]:
    """What a dry run reads besides admission, read-only: the add-ons there (the backing step creates the
    missing ones). The claim's namespace is a PodStart namespace (admission checked it): never made here."""
    addons = [str(a["name"]) for a in deps.reader.addons(rec.region, rec.eks_cluster_name)]
    return {"addons": addons}


def add_storage(deps: Deps, name: str, region: str | None, body: st.StorageAdd, actor: Actor,
                key: str | None, dry_run: bool = False) -> Started | Plan:
    rec = find_record(deps, name, region)
    errors, normalized = st.check_add(body)
    if errors:
        raise InvalidInput.of(errors)
    _require_active(rec)
    if normalized["kind"] == "s3":
        reg = check_bucket(deps, normalized["bucket"], normalized["prefix"], actor)
        normalized["registered"] = not reg.owned  # a bucket PodStart does not own: the operation needs an admin
    admission = AddAdmission(deps, rec, normalized, actor)
    facts = _add_facts(deps, rec) if dry_run else {}
    return start_or_plan(
        deps, dry_run=dry_run, kind="storage.add",
        target=Target(cluster=rec.name, region=rec.region, resource=f"storage/{normalized['name']}"),
        request={"cluster": rec.name, "region": rec.region, **normalized}, principal=actor, idempotency_key=key,
        admission=admission, facts=facts)


def remove_storage(deps: Deps, name: str, region: str | None, volume: str, confirm: str | None, actor: Actor,
                   key: str | None, dry_run: bool = False) -> Started | Plan:
    rec = find_record(deps, name, region)
    base = {i.name: i for i in _base_items(deps, rec)}
    request: dict[str, Any] = {"cluster": rec.name, "region": rec.region, "eks_cluster_name": rec.eks_cluster_name,
                               "name": volume}
    if volume == manifests.DATA_VOLUME:
        raise Conflict(f"{volume} mounts PodStart's shared data bucket, the cluster's data contract: it stays with "
                       f"the cluster (cluster delete removes it; the bucket is never deleted)")
    size: dict[str, Any] = {}
    if volume in base:
        item = base[volume]
        request |= {"kind": "fsx_lustre", "namespace": "default", "pv": volume, "origin": "cluster",
                    "file_system_id": item.file_system_id}
        size = {"storage_capacity_gib": item.storage_capacity_gib, "throughput_mb_per_tib": item.throughput_mb_per_tib}
    else:
        added = st.StorageRecords(deps.state).load(rec.region, rec.name, volume)
        if added is None:
            raise NotFound(f"{rec.name} has no volume named {volume!r}")
        request |= {"kind": added.kind, "namespace": added.namespace, "origin": "added",
                    "pv": st.pv_name(rec.name, added.name, added.namespace)}
        if added.kind == "s3":
            request |= {"bucket": added.bucket, "service_account": st.service_account(added.name),
                        "role_name": st.role_name(rec.name, rec.region, added.name)}
        else:
            request |= {"file_system_id": added.file_system_id}
            size = {"storage_capacity_gib": added.storage_capacity_gib,
                    "throughput_mb_per_tib": added.throughput_mb_per_tib}
    if request["kind"] == "fsx_lustre" and confirm != volume:
        raise InvalidInput.field(["query", "confirm"], f"removing {volume} deletes FSx file system "
                                                       f"{request.get('file_system_id') or '(being created)'} and "
                                                       f"every file on it: send confirm={volume}")
    if confirm is not None and confirm != volume:
        raise InvalidInput.field(["query", "confirm"], f"confirm names the volume ({volume})")
    return start_or_plan(
        deps, dry_run=dry_run, kind="storage.remove",
        target=Target(cluster=rec.name, region=rec.region, resource=f"storage/{volume}"),
        request=request, principal=actor, idempotency_key=key, facts={"fsx": size})


def check_bucket(deps: Deps, bucket: str, prefix: str, actor: Actor,
                 loc: tuple[str, ...] = ("body", "bucket")) -> tenancy.Registration:
    """The registration that lets PodStart mount `bucket` at `prefix`: 422 naming the field for a bucket PodStart
    may not read, 403 for a registered bucket PodStart does not own when the caller is not an admin."""
    regs = live_reads.registrations(deps)
    refusal = tenancy.bucket_refusal(regs, bucket, prefix, is_admin=actor.role == Role.admin.name)
    if refusal is not None:
        status, why = refusal
        if status == 403:
            raise Forbidden(why)
        raise InvalidInput.field(list(loc), why)
    reg = tenancy.find_registration(regs, bucket, prefix)
    assert reg is not None
    return reg


def _check_subprefix(prefix: str) -> None:
    if prefix.startswith("/") or any(part == ".." for part in prefix.split("/")):
        raise InvalidInput.field(["query", "prefix"], "a key prefix under the volume's own: no leading '/', no '..'")


def list_objects(deps: Deps, name: str, region: str | None, volume: str, prefix: str, limit: int,
                 token: str | None) -> st.ObjectList:
    rec = find_record(deps, name, region)
    _check_subprefix(prefix)
    if volume == manifests.DATA_VOLUME:
        _, latest = _base_outputs(deps, rec)
        bucket, base = latest.get("data_bucket"), ""
        if not bucket:
            raise NotFound(f"{rec.name} has no {volume} volume yet")
    else:
        added = st.StorageRecords(deps.state).load(rec.region, rec.name, volume)
        if added is None:
            if volume in {i.name for i in _base_items(deps, rec)}:
                raise Conflict(f"{volume} is an FSx for Lustre file system: list it from a pod that mounts it")
            raise NotFound(f"{rec.name} has no volume named {volume!r}")
        if added.kind != "s3" or not added.bucket:
            raise Conflict(f"{volume} is an FSx for Lustre file system: list it from a pod that mounts it")
        bucket, base = added.bucket, added.prefix
    if tenancy.find_registration(live_reads.registrations(deps), bucket, base + prefix) is None:
        raise Conflict(f"{bucket}/{base} is no longer a bucket (or prefix) PodStart may read: an admin registers it "
                       f"at deploy time (README: Security)")
    page = deps.reader.list_objects(rec.region, bucket, base + prefix, min(limit, OBJECTS_MAX), token)
    return st.ObjectList(storage=volume, bucket=bucket, prefix=base + prefix,
                         objects=[st.ObjectEntry(**o) for o in page["objects"]], prefixes=page["prefixes"],
                         truncated=page["truncated"], next_token=page["next_token"])


# -- cluster.reconcile -----------------------------------------------------------------------------
def _reconcile_facts(deps: Deps, rec: ClusterRecord, request: dict[str, Any], created: dict[str, Any],
                     added: list[st.StorageRecord]) -> dict[str, Any]:
    """What a reconcile dry run reads, read-only: the add-ons and Pod Identity associations there (the features
    reader's one pass over EKS), which of the objects the steps apply exist (one GET each), the create's file
    system and each added one's lifecycle."""
    if deps.features is None:
        raise RuntimeError("the API was built without a feature reader")
    inputs = deps.features.read(rec.region, rec.name, rec.eks_cluster_name, None)
    bucket = deps.features.bucket
    vols = [{**r.model_dump(mode="json"), "lifecycle": _fsx_lifecycle(deps, rec.region, r.file_system_id)
             if r.kind == "fsx_lustre" else None} for r in added]
    kube = deps.kube(rec.eks_cluster_name, rec.region)
    paths = {manifests.api_path(m) for _, m in reconcile_objects(request, vols, bucket)}
    fs_id = created.get("fsx_file_system_id")
    readers = list(getattr(getattr(deps, "settings", None), "reader_roles", []) or [])
    entries = set(deps.reader.access_entries(rec.region, rec.eks_cluster_name)) if readers else set()
    return {"api_access": set(readers) <= entries,
            "addons": sorted(inputs.addons), "associations": [list(a) for a in inputs.associations],
            "objects": sorted(p for p in paths if kube.get(p) is not None), "added": vols, "bucket": bucket,
            "fsx": {"id": fs_id, "lifecycle": _fsx_lifecycle(deps, rec.region, fs_id)} if fs_id else {}}


def reconcile_cluster(deps: Deps, name: str, region: str | None, actor: Actor, key: str | None,
                      dry_run: bool = False) -> Started | Plan:
    rec = find_record(deps, name, region)
    _require_active(rec)
    created, _ = _base_outputs(deps, rec)
    spec: dict[str, Any] = dict(rec.storage) if rec.created_by_podstart else {"s3": True}
    spec.pop("fsx_removed", None)
    if rec.storage.get("fsx_removed"):
        spec["fsx_lustre"] = None
    added = st.StorageRecords(deps.state).of_cluster(rec.region, rec.name)
    request = {"name": rec.name, "cluster": rec.name, "region": rec.region, "origin": rec.origin,
               "eks_cluster_name": rec.eks_cluster_name, "hyperpod_cluster_name": rec.hyperpod_cluster_name,
               "storage": {"s3": spec.get("s3", True), "fsx_lustre": spec.get("fsx_lustre")},
               "fsx_csi": any(r.kind == "fsx_lustre" for r in added),
               "compute_subnets": created.get("compute_subnets") or {},
               "security_group_id": created.get("security_group_id")}
    facts = _reconcile_facts(deps, rec, request, created, [r for r in added if r.status == "AVAILABLE"]) \
        if dry_run else {}
    return start_or_plan(deps, dry_run=dry_run, kind="cluster.reconcile",
                         target=Target(cluster=rec.name, region=rec.region), request=request, principal=actor,
                         idempotency_key=key, facts=facts)
