"""Plans for storage.add, storage.remove and cluster.reconcile, step by step as functions/workflows/storage.py
runs them.

storage.add: `backing` makes sure of the add-ons the volume kind needs (`storage.backing_addons`, the list
the step uses; `facts["addons"]`: the add-ons there now), then makes the S3 volume's role, service account and
Pod Identity association, or the FSx for Lustre file system (priced per GiB-month); `volume` applies the
static PersistentVolume and its claim (in a PodStart namespace: admission checked it is one; never made here).
storage.remove goes back: claim and volume, then the association, service account and role, or the file
system (a bucket is never deleted). cluster.reconcile lists every add-on, Kubernetes object, role,
association and file system its steps make sure of (the same lists: `manifests.wanted_addons`,
`reconcile_objects`), `none` for what is already there (`facts`: add-ons, associations, the objects'
API paths found, the create's file system), so a plan of only `none` is a run that changes nothing.
"""

from __future__ import annotations

from typing import Any

from functions.domain import iam as iamdoc
from functions.domain import manifests, rbac
from functions.domain.plans import Capacity, Change, Draft, create, delete, none
from functions.domain.plans.base import PlanInput
from functions.domain.storage import volumes as st

ADDON = "eks-addon"
ROLE = "AWS::IAM::Role"
ASSOCIATION = "AWS::EKS::PodIdentityAssociation"
FSX = "AWS::FSx::FileSystem"
PV = "Kubernetes PersistentVolume"
PVC = "Kubernetes PersistentVolumeClaim"
S3_CSI_SA = ("kube-system", "s3-csi-driver-sa")  # the shared data volume's driver identity (cluster create)


def fsx_capacity(gib: int, throughput: int, sign: int = 1) -> Capacity:
    """FSx for Lustre PERSISTENT_2 storage, priced per GiB-month (price family "fsx")."""
    return Capacity(item=f"FSx for Lustre {gib} GiB ({throughput} MB/s/TiB)" + (" (removed)" if sign < 0 else ""),
                    price=("fsx", f"PERSISTENT_2/{throughput}"), count=sign * gib)


def _skip(changes: list[Change], done: frozenset[str]) -> list[Change]:
    return [c.model_copy(update={"action": "none"}) if c.step in done else c for c in changes]


def _addons(present: set[str], names: list[str], step: str) -> list[Change]:
    return [none(ADDON, a, step) if a in present else create(ADDON, a, step) for a in names]


# -- storage.add -----------------------------------------------------------------------------------
def plan_storage_add(p: PlanInput) -> Draft:
    r = p.request
    cluster, region, name, ns = r["cluster"], r["region"], r["name"], r["namespace"]
    present = set(p.facts.get("addons") or ())
    changes = _addons(present, st.backing_addons(r["kind"]), "backing")
    ns_change = none("Kubernetes Namespace", ns, "backing", note="a PodStart namespace (never made here)")
    capacity: list[Capacity] = []
    warnings: list[str] = []
    if r["kind"] == "s3":
        role = st.role_name(cluster, region, name)
        sa = f"{ns}/{st.service_account(name)}"
        access = "read-only" if r.get("read_only") else "read-write"
        changes += [create(ROLE, role, "backing", trust="pods.eks.amazonaws.com",
                           policy=f"{access} on s3://{r['bucket']}/{r.get('prefix') or ''}"),
                    ns_change,
                    create("Kubernetes ServiceAccount", sa, "backing"),
                    create(ASSOCIATION, sa, "backing", role=role),
                    none("AWS::S3::Bucket", r["bucket"], "backing", note="mounted as it is: never created or "
                                                                          "deleted by PodStart")]
        warnings.append(f"only pods running as service account {sa} can read the bucket through the volume; "
                        "S3 bills its storage and requests as before (no hourly cost here)")
    else:
        gib, throughput = int(r["storage_capacity_gib"]), int(r["throughput_mb_per_tib"])
        changes += [create(FSX, name, "backing", type="LUSTRE PERSISTENT_2", storage_gib=gib,
                           throughput_mb_per_tib=throughput, placement="a subnet and the security group of the "
                                                                        "cluster's instances",
                           takes="about 12 minutes")]
        capacity.append(fsx_capacity(gib, throughput))
        warnings.append("FSx for Lustre is billed per GiB-month from creation until it is removed, used or not")
    pv = st.pv_name(cluster, name, ns)
    if r["kind"] != "s3":
        changes.append(ns_change.model_copy(update={"step": "volume"}))
    changes += [create(PV, pv, "volume"), create(PVC, f"{ns}/{name}", "volume", volume=pv, then="watched to Bound")]
    return Draft(changes=_skip(changes, p.skip_steps), capacity=capacity, warnings=warnings)


# -- storage.remove --------------------------------------------------------------------------------
def plan_storage_remove(p: PlanInput) -> Draft:
    r = p.request
    ns, name = r["namespace"], r["name"]
    changes = [delete(PVC, f"{ns}/{name}", "volume", note="waits while a pod still mounts it"),
               delete(PV, r["pv"], "volume")]
    capacity: list[Capacity] = []
    if r["kind"] == "s3":
        sa = f"{ns}/{r.get('service_account') or st.service_account(name)}"
        changes += [delete(ASSOCIATION, sa, "backing"), delete("Kubernetes ServiceAccount", sa, "backing")]
        if r.get("role_name"):
            changes.append(delete(ROLE, r["role_name"], "backing"))
        changes.append(none("AWS::S3::Bucket", str(r.get("bucket")), "backing", note="kept, with every object"))
        warnings = [f"the bucket {r.get('bucket')} and its objects stay; pods lose the mount"]
    else:
        fs_id = r.get("file_system_id")
        changes.append(delete(FSX, str(fs_id or f"{name} (being created)"), "backing",
                              data="every file on it is lost"))
        size: dict[str, Any] = p.facts.get("fsx") or {}
        if size.get("storage_capacity_gib") and size.get("throughput_mb_per_tib"):
            capacity.append(fsx_capacity(int(size["storage_capacity_gib"]), int(size["throughput_mb_per_tib"]), -1))
        warnings = [f"deleting FSx file system {fs_id or '(being created)'} deletes every file on it: copy what "
                    "you need first"]
    return Draft(changes=_skip(changes, p.skip_steps), capacity=capacity, warnings=warnings)


# -- cluster.reconcile -----------------------------------------------------------------------------
def reconcile_objects(request: dict[str, Any], added: list[dict[str, Any]], bucket: str
                      ) -> list[tuple[str, dict[str, Any]]]:
    """(step, object) for every Kubernetes object cluster.reconcile applies when missing: the dependency
    components, the shared data volume, the create's FSx volume, and each added volume's objects (the same
    manifest functions the steps call; only names, kinds and namespaces matter here)."""
    region, cluster = request["region"], request["cluster"]
    spec = request.get("storage") or {}
    out = [("dependencies", m) for m in manifests.dependency_components(region)]
    if spec.get("s3", True):
        out += [("storage", m) for m in manifests.s3_volume(bucket, region)]
    if spec.get("fsx_lustre"):
        out += [("storage", m) for m in manifests.fsx_volume("fs", "", "fsx", 1200)]
    for v in added:
        objs: list[dict[str, Any]] = [st.namespace_object(v["namespace"])]
        if v["kind"] == "s3":
            objs += [st.s3_service_account(v["name"], v["namespace"]),
                     *st.s3_volume(cluster, v["name"], v["namespace"], v.get("bucket") or "", v.get("prefix") or "",
                                   region, bool(v.get("read_only")))]
        else:
            objs += st.fsx_volume(cluster, v["name"], v["namespace"], "fs", "", "fsx", 1200)
        out += [("storage", m) for m in objs]
    return out


def _object_name(m: dict[str, Any]) -> str:
    meta = m["metadata"]
    return f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else str(meta["name"])


def plan_cluster_reconcile(p: PlanInput) -> Draft:
    r, f = p.request, p.facts
    cluster, region = r["cluster"], r["region"]
    spec = r.get("storage") or {}
    present_addons = set(f.get("addons") or ())
    associations = {tuple(a) for a in f.get("associations") or ()}
    found = set(f.get("objects") or ())
    added: list[dict[str, Any]] = list(f.get("added") or [])
    changes = [] if f.get("api_access", True) else [
        create("AWS::EKS::AccessEntry", "PodStart API", "dependencies", kubernetes_groups=[rbac.GROUP])]
    changes += _addons(present_addons, manifests.wanted_addons(spec, bool(r.get("fsx_csi"))), "dependencies")
    objects = reconcile_objects(r, added, str(f.get("bucket") or ""))
    seen: set[str] = set()

    def obj(step: str, m: dict[str, Any]) -> Change:
        path = manifests.api_path(m)
        seen.add(path)
        kind = f"Kubernetes {m['kind']}"
        return (none(kind, _object_name(m), step, note="in place (re-applied as PodStart declares it)")
                if path in found else create(kind, _object_name(m), step))

    deps = [m for s, m in objects if s == "dependencies"]
    changes += [obj("dependencies", m) for m in deps]
    capacity: list[Capacity] = []
    warnings: list[str] = []
    s = "storage"
    if spec.get("s3", True):
        linked = S3_CSI_SA in associations
        role = iamdoc.role_name(cluster, region, "s3-csi")
        changes += [none(ROLE, role, s, note="in place (its policy is put back if it drifted)") if linked
                    else create(ROLE, role, s, trust="pods.eks.amazonaws.com", policy="the shared data bucket"),
                    none(ASSOCIATION, "/".join(S3_CSI_SA), s) if linked
                    else create(ASSOCIATION, "/".join(S3_CSI_SA), s, role=role)]
        changes += [obj(s, m) for m in manifests.s3_volume(str(f.get("bucket") or ""), region)]
    fsx = spec.get("fsx_lustre")
    if fsx:
        fs: dict[str, Any] = f.get("fsx") or {}
        if fs.get("id") and fs.get("lifecycle") not in (None, "DELETED", "DELETING"):
            changes.append(none(FSX, str(fs["id"]), s, lifecycle=fs.get("lifecycle")))
        else:
            gib, tp = int(fsx["storage_capacity_gib"]), int(fsx["throughput_mb_per_tib"])
            changes.append(create(FSX, cluster, s, type="LUSTRE PERSISTENT_2", storage_gib=gib,
                                  throughput_mb_per_tib=tp, takes="about 12 minutes"))
            capacity.append(fsx_capacity(gib, tp))
            warnings.append("the cluster's FSx for Lustre file system is gone: the run makes a new, empty one")
        changes += [obj(s, m) for m in manifests.fsx_volume("fs", "", "fsx", int(fsx["storage_capacity_gib"]))]
    for v in added:
        name, ns = v["name"], v["namespace"]
        if v["kind"] == "s3":
            sa = f"{ns}/{st.service_account(name)}"
            linked = (ns, st.service_account(name)) in associations
            role = st.role_name(cluster, region, name)
            changes += [none(ROLE, role, s, volume=name, note="in place") if linked
                        else create(ROLE, role, s, volume=name),
                        none(ASSOCIATION, sa, s) if linked else create(ASSOCIATION, sa, s, role=role)]
        elif v.get("lifecycle") in (None, "DELETED"):
            warnings.append(f"FSx file system {v.get('file_system_id')} of volume {name} no longer exists: the "
                            f"storage step fails; remove the volume and add it again")
    changes += [obj(s, m) for step, m in objects if step == s and manifests.api_path(m) not in seen]
    return Draft(changes=_skip(changes, p.skip_steps), capacity=capacity, warnings=warnings)
