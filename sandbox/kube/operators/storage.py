"""Storage: the PersistentVolume controller for static volumes (as kube-controller-manager binds them).

- A claim naming a volume (`spec.volumeName`) binds to it when the volume exists, is free or
  pre-bound to this claim, and satisfies it (class, access modes, capacity); otherwise it stays
  Pending.
- A claim naming no volume binds to the volume pre-bound to it (`claimRef` with its namespace and
  name: how FSx and S3 static volumes are declared), else to the smallest free volume of its
  class that satisfies it; otherwise it stays Pending. (No dynamic provisioning.)
- Binding writes `claimRef` (with the claim's uid) on the volume and `volumeName` on the claim;
  both report phase Bound.
- A volume with no claim is Available; one whose bound claim is gone is Released; a bound claim
  whose volume is gone is Lost.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from sandbox.kube.operators.base import ReconcileContext, Reconciler, update_status
from sandbox.kube.store import Obj

_SUFFIX = {
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
    "n": 1e-9, "u": 1e-6, "m": 1e-3, "": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
}
_QUANTITY = re.compile(r"^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*([KMGTPE]i|[numkMGTPE]?)\s*$")
BIND_ANNOTATIONS = {"pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes"}


def quantity(value: Any) -> float | None:
    """A Kubernetes resource quantity ("1200Gi", "1.2Ti", "500M") in base units; None if unreadable."""
    match = _QUANTITY.match(str(value)) if value is not None else None
    if not match:
        return None
    return float(match.group(1)) * _SUFFIX[match.group(2)]


def _satisfies(pv: Obj, pvc: Obj) -> bool:
    pv_spec, pvc_spec = pv.get("spec") or {}, pvc.get("spec") or {}
    if (pv_spec.get("storageClassName") or "") != (pvc_spec.get("storageClassName") or ""):
        return False
    if not set(pvc_spec.get("accessModes") or []) <= set(pv_spec.get("accessModes") or []):
        return False
    want = quantity(((pvc_spec.get("resources") or {}).get("requests") or {}).get("storage"))
    have = quantity((pv_spec.get("capacity") or {}).get("storage"))
    return want is None or (have is not None and have >= want)


def _claim_ref(pv: Obj) -> dict[str, Any]:
    return (pv.get("spec") or {}).get("claimRef") or {}


def _names(pv: Obj, pvc: Obj) -> bool:
    """Does the volume's claimRef name this claim (by namespace and name, and uid when it has one)?"""
    ref, meta = _claim_ref(pv), pvc["metadata"]
    return (
        ref.get("namespace") == meta.get("namespace")
        and ref.get("name") == meta.get("name")
        and ref.get("uid") in (None, "", meta.get("uid"))
    )


def _choose(pvc: Obj, pvs: dict[str, Obj], taken: set[str]) -> Obj | None:
    named = (pvc.get("spec") or {}).get("volumeName")
    if named:
        pv = pvs.get(named)
        if pv is None or named in taken or (_claim_ref(pv) and not _names(pv, pvc)) or not _satisfies(pv, pvc):
            return None
        return pv
    prebound = [pv for name, pv in pvs.items() if name not in taken and _claim_ref(pv) and _names(pv, pvc)]
    if prebound:
        return prebound[0] if _satisfies(prebound[0], pvc) else None
    free = [pv for name, pv in pvs.items() if name not in taken and not _claim_ref(pv) and _satisfies(pv, pvc)]
    return min(free, key=lambda pv: quantity((pv["spec"].get("capacity") or {}).get("storage")) or 0, default=None)


def _bind(ctx: ReconcileContext, pv: Obj, pvc: Obj) -> tuple[Obj, Obj]:
    meta = pvc["metadata"]
    ref = {"kind": "PersistentVolumeClaim", "namespace": meta["namespace"], "name": meta["name"],
           "uid": meta["uid"], "apiVersion": "v1"}
    if _claim_ref(pv) != ref:
        body = copy.deepcopy(pv)
        body["spec"]["claimRef"] = ref
        pv = ctx.store.put(body)
    if (pvc.get("spec") or {}).get("volumeName") != pv["metadata"]["name"]:
        body = copy.deepcopy(pvc)
        body["spec"]["volumeName"] = pv["metadata"]["name"]
        annotations = body["metadata"].setdefault("annotations", {})
        annotations.update(BIND_ANNOTATIONS)
        pvc = ctx.store.put(body)
    return pv, pvc


PVC_PROTECTION, PV_PROTECTION = "kubernetes.io/pvc-protection", "kubernetes.io/pv-protection"


def _release_finalizer(ctx: ReconcileContext, obj: Obj, finalizer: str) -> None:
    body = copy.deepcopy(obj)
    body["metadata"]["finalizers"] = [f for f in body["metadata"].get("finalizers") or [] if f != finalizer]
    ctx.store.put(body)  # the last finalizer gone on a deleting object: the store removes it


def _in_use(ctx: ReconcileContext, pvc: Obj) -> bool:
    """Is a pod that has not finished mounting this claim?"""
    meta = pvc["metadata"]
    for pod in ctx.store.list("v1", "Pod", meta["namespace"]):
        if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        for volume in (pod.get("spec") or {}).get("volumes") or []:
            if (volume.get("persistentVolumeClaim") or {}).get("claimName") == meta["name"]:
                return True
    return False


def reconcile_protection(ctx: ReconcileContext) -> None:
    """Storage object in-use protection: a deleted claim goes once no pod uses it, a deleted volume
    once no claim is bound to it."""
    for pvc in ctx.store.list("v1", "PersistentVolumeClaim"):
        meta = pvc["metadata"]
        if meta.get("deletionTimestamp") and PVC_PROTECTION in (meta.get("finalizers") or []) and not _in_use(ctx, pvc):
            _release_finalizer(ctx, pvc, PVC_PROTECTION)
    for pv in ctx.store.list("v1", "PersistentVolume"):
        meta = pv["metadata"]
        if meta.get("deletionTimestamp") and PV_PROTECTION in (meta.get("finalizers") or []) \
                and (pv.get("status") or {}).get("phase") != "Bound":
            _release_finalizer(ctx, pv, PV_PROTECTION)


def _bound_to(pvc: Obj, pvs: dict[str, Obj]) -> Obj | None:
    """The volume this claim is bound to already (both sides agree), if any."""
    pv = pvs.get((pvc.get("spec") or {}).get("volumeName") or "")
    return pv if pv is not None and _claim_ref(pv).get("uid") == pvc["metadata"].get("uid") else None


def reconcile_volumes(ctx: ReconcileContext) -> None:
    pvs = {pv["metadata"]["name"]: pv for pv in ctx.store.list("v1", "PersistentVolume")}
    claims = ctx.store.list("v1", "PersistentVolumeClaim")
    taken: set[str] = set()
    # Claims already bound keep their volumes first (even while being deleted), so no other claim
    # can take one; a volume being deleted takes no new claim.
    for pvc in claims:
        if (pv := _bound_to(pvc, pvs)) is not None:
            taken.add(pv["metadata"]["name"])
    available = {name: pv for name, pv in pvs.items() if not pv["metadata"].get("deletionTimestamp")}
    for pvc in claims:
        pv = _bound_to(pvc, pvs)
        if pv is None:
            if pvc["metadata"].get("deletionTimestamp"):
                continue
            pv = _choose(pvc, available, taken)
        if pv is None:
            was_bound = (pvc["metadata"].get("annotations") or {}).get("pv.kubernetes.io/bind-completed") == "yes"
            lost = was_bound and (pvc.get("spec") or {}).get("volumeName") not in pvs
            update_status(ctx, pvc, {"phase": "Lost"} if lost else {"phase": "Pending"})
            continue
        taken.add(pv["metadata"]["name"])
        pv, pvc = _bind(ctx, pv, pvc)
        pvs[pv["metadata"]["name"]] = pv
        update_status(ctx, pv, {"phase": "Bound"})
        update_status(ctx, pvc, {
            "phase": "Bound",
            "accessModes": pv["spec"].get("accessModes") or pvc["spec"].get("accessModes") or [],
            "capacity": pv["spec"].get("capacity") or {},
        })
    for name, pv in pvs.items():
        if name in taken:
            continue
        ref = _claim_ref(pv)
        # A volume that was bound (its claimRef has a uid) and lost its claim is Released, not reused.
        update_status(ctx, pv, {"phase": "Released" if ref.get("uid") else "Available"})


RECONCILERS: tuple[Reconciler, ...] = (reconcile_volumes, reconcile_protection)
