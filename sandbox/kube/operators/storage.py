"""Storage: PersistentVolumeClaims bind to their PersistentVolumes."""

from __future__ import annotations

import copy

from sandbox.kube.operators.base import ReconcileContext, Reconciler, update_status


def reconcile_volumes(ctx: ReconcileContext) -> None:
    """PVCs naming an existing PV bind to it; unclaimed PVs are Available."""
    pvs = {pv["metadata"]["name"]: pv for pv in ctx.store.list("v1", "PersistentVolume")}
    claimed: set[str] = set()
    for pvc in ctx.store.list("v1", "PersistentVolumeClaim"):
        vol = pvc.get("spec", {}).get("volumeName")
        pv = pvs.get(vol or "")
        if pv is None:
            continue
        claimed.add(pv["metadata"]["name"])
        meta = pvc["metadata"]
        ref = {
            "kind": "PersistentVolumeClaim",
            "namespace": meta["namespace"],
            "name": meta["name"],
            "uid": meta["uid"],
            "apiVersion": "v1",
        }
        if pv.get("spec", {}).get("claimRef") != ref:
            body = copy.deepcopy(pv)
            body["spec"]["claimRef"] = ref
            ctx.store.put(body)
            pv = ctx.store.get("v1", "PersistentVolume", pv["metadata"]["name"]) or pv
        update_status(ctx, pv, {"phase": "Bound"})
        update_status(
            ctx,
            pvc,
            {
                "phase": "Bound",
                "accessModes": pv.get("spec", {}).get("accessModes") or pvc.get("spec", {}).get("accessModes") or [],
                "capacity": pv.get("spec", {}).get("capacity") or {},
            },
        )
    for name, pv in pvs.items():
        if name not in claimed and not pv.get("spec", {}).get("claimRef"):
            update_status(ctx, pv, {"phase": "Available"})


RECONCILERS: tuple[Reconciler, ...] = (reconcile_volumes,)
