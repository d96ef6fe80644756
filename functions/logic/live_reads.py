"""Reads a dry run makes of a cluster's Kubernetes API to plan what the workflow will find (never a write):
whether the API server serves a kind (the operator steps' check), and the free GPUs of an instance type
(the count the validate step makes, `training.live_capacity`)."""

from __future__ import annotations

from typing import Any

from functions.domain import tenancy
from functions.domain.capacity import placement
from functions.domain.ports import ClusterKube
from functions.domain.training import rules as training
from functions.logic.deps import Deps


def serves(kube: ClusterKube, api_version: str, kind: str) -> bool:
    """True when the API server serves the kind (its CRD is installed): API discovery, as kubectl reads it."""
    base = f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"
    doc = kube.get(base) or {}
    return any(r.get("kind") == kind for r in doc.get("resources") or [])


def live_gpus(kube: ClusterKube, instance_type: str) -> dict[str, Any] | None:
    live = training.live_capacity(kube.list("/api/v1/nodes"), kube.list("/api/v1/pods"), instance_type)
    return live.model_dump() if live is not None else None


def gpu_facts(kube: ClusterKube, instance_type: str, pods: int, gpus_per_pod: int, *,
              one_per_node: bool) -> dict[str, Any]:
    """A dry run's GPU facts from one read of the Nodes and Pods: `live` (free GPUs of the type, as the steps count
    them) and `placement` (where the pods would run now, or what they would wait for)."""
    nodes, running = kube.list("/api/v1/nodes"), kube.list("/api/v1/pods")
    live = training.live_capacity(nodes, running, instance_type)
    where = placement.place(placement.node_gpus(nodes, running), instance_type, pods, gpus_per_pod,
                            one_per_node=one_per_node)
    return {"live": live.model_dump() if live is not None else None, "placement": where.model_dump(mode="json")}


def bucket(deps: Deps) -> str:
    """PodStart's data bucket, as the workflows read it from their settings."""
    settings = getattr(deps, "settings", None)
    return str(getattr(settings, "data_bucket", "") or getattr(deps.features, "bucket", "") or "podstart-data")


def registrations(deps: Deps) -> list[tenancy.Registration]:
    """Every bucket PodStart may read: its data bucket, then the ones an admin registered at deploy time."""
    settings = getattr(deps, "settings", None)
    return tenancy.registrations(bucket(deps), tenancy.parse_registrations(
        str(getattr(settings, "registered_buckets", "") or "")))


def feature_inputs(deps: Deps, rec: Any) -> Any:
    """What the features document reads (add-ons, Pod Identity associations, ...): a dry run whose operator step
    would enable a feature plans it from these, as the features PATCH's dry run does."""
    if deps.features is None:
        return None
    return deps.features.read(rec.region, rec.name, rec.eks_cluster_name, rec.hyperpod_cluster_name)


def home_region(deps: Deps) -> str:
    """The region PodStart runs in (its data bucket's), as the settings say."""
    settings = getattr(deps, "settings", None)
    return str(getattr(settings, "aws_region", "") or "us-west-2")
