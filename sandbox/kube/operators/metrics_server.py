"""metrics-server: `metrics.k8s.io` is served (`kubectl top`) while the add-on's Deployment is available."""

from __future__ import annotations

from sandbox.kube.metrics import GROUP, VERSION, serving
from sandbox.kube.operators.base import ReconcileContext, Reconciler
from sandbox.kube.registry import METRICS


def reconcile_metrics_api(ctx: ReconcileContext) -> None:
    """Register the aggregated API's types while metrics-server runs, drop them when it stops."""
    registered = ctx.store.registry.lookup(GROUP, VERSION, "nodes") is not None
    wanted = serving(ctx.store)
    if wanted and not registered:
        for rt in METRICS:
            ctx.store.registry.register(rt)
    elif registered and not wanted:
        for rt in METRICS:
            ctx.store.registry.unregister(rt.group, rt.version, rt.plural)


RECONCILERS: tuple[Reconciler, ...] = (reconcile_metrics_api,)
