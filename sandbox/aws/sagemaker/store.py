"""The HyperPod cluster store: one per region, clusters with their groups, nodes and events."""

from __future__ import annotations

import copy
import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from sandbox.aws.runtime import RUNTIME, now
from sandbox.aws.sagemaker.common import conflict, not_found


@dataclass
class HyperPodCluster:
    region: str
    name: str
    arn: str
    spec: dict[str, Any]  # every top-level request field but InstanceGroups
    groups: dict[str, dict[str, Any]]  # InstanceGroupName -> ClusterInstanceGroupDetails
    status: str = "Creating"
    failure_message: str = ""
    creation_time: dt.datetime = field(default_factory=now)
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    faults: dict[str, dict[str, Any]] = field(default_factory=dict)  # instance id -> simulated fault
    replacing: set[str] = field(default_factory=set)  # instance ids shutting down for a replacement
    health: dict[str, str] = field(default_factory=dict)  # instance id -> last health status announced
    # instance id -> its latest deep health check: {"status": InProgress|Passed|Failed, "checks": [...],
    # "results": {check: {"passed": bool, "reason": str}}}
    deep_checks: dict[str, dict[str, Any]] = field(default_factory=dict)

    def describe(self) -> dict[str, Any]:
        groups = []
        for g in self.groups.values():
            detail = copy.deepcopy(g)
            detail["CurrentCount"] = sum(
                1
                for n in self.nodes.values()
                if n["InstanceGroupName"] == g["InstanceGroupName"]
                and n["InstanceStatus"]["Status"] == "Running"
            )
            groups.append(detail)
        out = {
            "ClusterArn": self.arn,
            "ClusterName": self.name,
            "ClusterStatus": self.status,
            "CreationTime": self.creation_time,
            "InstanceGroups": groups,
            **copy.deepcopy(self.spec),
        }
        if self.failure_message:
            out["FailureMessage"] = self.failure_message
        return out

    def summary(self) -> dict[str, Any]:
        plans = sorted({g["TrainingPlanArn"] for g in self.groups.values() if g.get("TrainingPlanArn")})
        out = {
            "ClusterArn": self.arn,
            "ClusterName": self.name,
            "CreationTime": self.creation_time,
            "ClusterStatus": self.status,
        }
        if plans:
            out["TrainingPlanArns"] = plans
        return out


class HyperPodStore:
    def __init__(self, region: str) -> None:
        self.region = region
        self.clusters: dict[str, HyperPodCluster] = {}
        self.plans: dict[str, dict[str, Any]] = {}

    def get(self, name_or_arn: str) -> HyperPodCluster:
        for c in self.clusters.values():
            if name_or_arn in (c.name, c.arn):
                return c
        raise not_found(f"Resource Not Found: Cluster '{name_or_arn}' does not exist.")


_STORES: dict[str, HyperPodStore] = {}


def store(region: str) -> HyperPodStore:
    with RUNTIME.lock:
        if region not in _STORES:
            _STORES[region] = HyperPodStore(region)
        return _STORES[region]


def all_stores() -> list[HyperPodStore]:
    with RUNTIME.lock:
        return list(_STORES.values())


def require_in_service(c: HyperPodCluster, operation: str) -> None:
    if c.status != "InService":
        raise conflict(f"Cluster {c.name} is in {c.status} status; {operation} needs InService.")
