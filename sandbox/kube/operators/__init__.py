"""Simulated controllers ("operators") that make a stored cluster look alive, time-scaled.

A reconciler is a function of a `ReconcileContext`; the controller loop calls every reconciler in
its list for every cluster on each tick. One module per controller family; `REGISTRY` lists the
families explicitly (a module that fails to import fails the server, never silently drops its
reconcilers). Add a family here, or a single reconciler with `KubeApiServer.add_reconciler`.
"""

from __future__ import annotations

from sandbox.kube.operators import (
    downloads,
    garbage,
    inference,
    kuberay,
    loadbalancers,
    metrics_server,
    scheduler,
    storage,
    training,
    workloads,
)
from sandbox.kube.operators.base import ReconcileContext, Reconciler
from sandbox.kube.operators.loop import ControllerLoop

REGISTRY: dict[str, tuple[Reconciler, ...]] = {
    "scheduler": scheduler.RECONCILERS,
    "workloads": workloads.RECONCILERS,
    "storage": storage.RECONCILERS,
    "training": training.RECONCILERS,
    "kuberay": kuberay.RECONCILERS,
    "garbage": garbage.RECONCILERS,
    "inference": inference.RECONCILERS,
    "downloads": downloads.RECONCILERS,
    "loadbalancers": loadbalancers.RECONCILERS,
    "metrics_server": metrics_server.RECONCILERS,
}
DEFAULT_RECONCILERS: tuple[Reconciler, ...] = tuple(r for family in REGISTRY.values() for r in family)

__all__ = ["DEFAULT_RECONCILERS", "REGISTRY", "ControllerLoop", "ReconcileContext", "Reconciler"]
