"""Garbage collection: dependents whose owner (by uid) is gone are deleted."""

from __future__ import annotations

from sandbox.kube.errors import ApiError
from sandbox.kube.operators.base import ReconcileContext, Reconciler


def reconcile_garbage(ctx: ReconcileContext) -> None:
    """Delete dependents whose owners (by uid) are gone; collect pods owned by a deleted Job etc. RayClusters come
    first so the pods of a RayCluster whose RayJob was deleted go in the same tick."""
    store = ctx.store
    for kind, av in (("RayCluster", "ray.io/v1"), ("Pod", "v1"), ("ReplicaSet", "apps/v1"), ("Job", "batch/v1")):
        try:
            objs = store.list(av, kind)
        except ApiError:
            continue  # a kind whose CRD is not installed (RayCluster without KubeRay)
        for obj in objs:
            refs = obj["metadata"].get("ownerReferences") or []
            if not refs:
                continue
            alive = False
            for ref in refs:
                try:
                    owner = store.get(
                        ref.get("apiVersion", ""),
                        ref.get("kind", ""),
                        ref.get("name", ""),
                        obj["metadata"].get("namespace"),
                    )
                except ApiError:
                    owner = None
                if owner is None:
                    try:
                        owner = store.get(ref.get("apiVersion", ""), ref.get("kind", ""), ref.get("name", ""))
                    except ApiError:
                        owner = None
                if owner is not None and owner["metadata"]["uid"] == ref.get("uid"):
                    alive = True
            if not alive:
                store.delete(av, kind, obj["metadata"]["name"], obj["metadata"].get("namespace"))


RECONCILERS: tuple[Reconciler, ...] = (reconcile_garbage,)
