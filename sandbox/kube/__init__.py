"""Embedded Kubernetes API double for the sandbox (serves the official client and kubectl)."""

from sandbox.kube.errors import ApiError
from sandbox.kube.operators import DEFAULT_RECONCILERS, ReconcileContext, Reconciler
from sandbox.kube.registry import ResourceType, TypeRegistry
from sandbox.kube.server import KubeApiServer
from sandbox.kube.store import ClusterStore

__all__ = [
    "DEFAULT_RECONCILERS",
    "ApiError",
    "ClusterStore",
    "KubeApiServer",
    "ReconcileContext",
    "Reconciler",
    "ResourceType",
    "TypeRegistry",
]
