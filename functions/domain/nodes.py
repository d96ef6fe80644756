"""Nodes: request models for node actions, the escalation ladder, and the node views.

The ladder is investigate -> reboot -> replace. A replace is admitted when PodStart rebooted the node in
the last 24 hours, or HyperPod's health agent already marked it `UnschedulablePendingReplacement`;
otherwise it is a 409 naming the rung that comes first, unless the request says `force` with a reason
(recorded on the operation)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

BATCH = 25  # HyperPod's Batch*ClusterNodes take at most 25 ids per call
MAX_IDS = 500
LADDER_WINDOW = timedelta(hours=24)
NODE_ID = r"^i-[0-9a-f]{8,17}$"
HEALTH_STATUSES = ("Schedulable", "Unschedulable", "UnschedulablePendingReboot", "UnschedulablePendingReplacement")
GPU_RESOURCES = ("nvidia.com/gpu", "aws.amazon.com/neuroncore")
EFA_RESOURCE = "vpc.amazonaws.com/efa"
HEALTH_LABEL = "sagemaker.amazonaws.com/node-health-status"
GROUP_LABEL = "sagemaker.amazonaws.com/instance-group-name"

NodeIds = list[str]


def batches(ids: list[str], size: int = BATCH) -> list[list[str]]:
    return [ids[i:i + size] for i in range(0, len(ids), size)]


def kube_name(node_id: str) -> str:
    """HyperPod's Kubernetes node name for an instance."""
    return f"hyperpod-{node_id}"


class _NodeAction(BaseModel):
    model_config = {"extra": "forbid"}

    node_ids: list[str] = Field(min_length=1, max_length=MAX_IDS,
                                description="Instance ids (i-...)")

    @field_validator("node_ids")
    @classmethod
    def _ids(cls, ids: list[str]) -> list[str]:
        bad = [i for i in ids if not re.match(NODE_ID, i)]
        if bad:
            raise ValueError(f"not HyperPod instance ids: {', '.join(bad[:5])} (expected i-0123456789abcdef0)")
        if len(set(ids)) != len(ids):
            raise ValueError("each node once")
        return ids


class NodesReboot(_NodeAction):
    """Reboot nodes (operation nodes.reboot): BatchRebootClusterNodes in batches of 25, watched to Ready."""

    reason: str = Field(min_length=1, max_length=500, description="Why (recorded)")


class NodesReplace(_NodeAction):
    """Replace nodes (operation nodes.replace): new instances, instance storage wiped."""

    reason: str = Field(min_length=1, max_length=500, description="Why (recorded)")
    confirm: Literal["replace"] = Field(description='Type "replace"')
    force: bool = Field(default=False, description="Skip the reboot-first rule")


class NodesDelete(_NodeAction):
    """Delete nodes (operation nodes.delete): BatchDeleteClusterNodes, their groups shrink."""

    confirm: Literal["delete"] = Field(description='Type "delete"')


# -- the ladder -------------------------------------------------------------------------------------
Rung = Literal["investigate", "reboot", "replace"]


class LastAction(BaseModel):
    action: str  # reboot | replace | delete
    operation_id: str
    at: str
    reason: str | None = None


class Ladder(BaseModel):
    """Where a node is on investigate -> reboot -> replace, and why."""

    rung: Rung = Field(description="The next rung for this node")
    reason: str
    rebooted_at: str | None = Field(default=None, description="When PodStart last rebooted it (24 h window)")


def _recent_reboot(last: LastAction | None, now: datetime) -> bool:
    if last is None or last.action != "reboot":
        return False
    try:
        at = datetime.fromisoformat(last.at.replace("Z", "+00:00"))
    except ValueError:
        return False
    return now - at <= LADDER_WINDOW


def ladder(health: str | None, last: LastAction | None, now: datetime | None = None) -> Ladder:
    now = now or datetime.now(UTC)
    rebooted = last.at if _recent_reboot(last, now) and last else None
    if health == "UnschedulablePendingReplacement":
        return Ladder(rung="replace", reason="HyperPod's health agent marked it for replacement", rebooted_at=rebooted)
    if rebooted:
        return Ladder(rung="replace" if health not in (None, "Schedulable") else "investigate",
                      reason=f"PodStart rebooted it at {rebooted}" + (
                          "; it is still unhealthy" if health not in (None, "Schedulable") else "; healthy since"),
                      rebooted_at=rebooted)
    if health in ("UnschedulablePendingReboot", "Unschedulable"):
        return Ladder(rung="reboot", reason=f"health is {health}: a reboot comes before a replacement")
    return Ladder(rung="investigate", reason="healthy or unknown: read its conditions, pods and events first")


def may_replace(health: str | None, last: LastAction | None, now: datetime | None = None) -> bool:
    now = now or datetime.now(UTC)
    return health == "UnschedulablePendingReplacement" or _recent_reboot(last, now)


# -- views ------------------------------------------------------------------------------------------
class NodeRow(BaseModel):
    node_id: str = Field(description="The HyperPod instance id")
    node_logical_id: str | None = None
    kubernetes_node: str | None = Field(default=None, description="The Kubernetes node name (None: not joined)")
    group: str
    instance_type: str
    zone: str | None = None
    status: str = Field(description="HyperPod instance status: Running, Pending, ShuttingDown, Failure, ...")
    status_message: str | None = None
    health: str | None = Field(default=None, description="sagemaker.amazonaws.com/node-health-status label")
    ready: bool | None = Field(default=None, description="The Kubernetes Ready condition")
    gpus_allocatable: int | None = Field(default=None, description="nvidia.com/gpu or aws.amazon.com/neuroncore")
    efa_allocatable: int | None = None
    launch_time: str | None = None
    last_action: LastAction | None = Field(default=None, description="The last node action PodStart took")


class NodeList(BaseModel):
    items: list[NodeRow]
    next_token: str | None = None


class NodeCondition(BaseModel):
    type: str
    status: str
    reason: str | None = None
    message: str | None = None
    since: str | None = None


class NodePod(BaseModel):
    namespace: str
    name: str
    phase: str | None = None
    gpus: int = 0


class ClusterEventView(BaseModel):
    event_id: str
    time: str
    level: str | None = None
    resource_type: str | None = None
    group: str | None = None
    node_id: str | None = None
    description: str


class EventList(BaseModel):
    items: list[ClusterEventView]
    next_token: str | None = None


class NodeDetail(NodeRow):
    private_ip: str | None = None
    private_dns: str | None = None
    capacity_type: str | None = None
    conditions: list[NodeCondition] = Field(default_factory=list)
    taints: list[dict[str, Any]] = Field(default_factory=list)
    labels: dict[str, str] = Field(default_factory=dict)
    gpus_allocated: int | None = None
    pods: list[NodePod] = Field(default_factory=list)
    events: list[ClusterEventView] = Field(default_factory=list)
    ladder: Ladder


class NodeListQuery(BaseModel):
    """What a nodes page asks for (validated by the route's Query parameters)."""

    group: str | None = None
    health: str | None = None
    limit: int = 100
    next_token: str | None = None

    @model_validator(mode="after")
    def _health(self) -> NodeListQuery:
        if self.health is not None and self.health not in HEALTH_STATUSES:
            raise ValueError(f"health must be one of {', '.join(HEALTH_STATUSES)}")
        return self


def int_quantity(value: Any) -> int | None:
    try:
        return int(str(value)) if value is not None else None
    except ValueError:
        return None


def gpus_of(resources: dict[str, Any] | None) -> int | None:
    resources = resources or {}
    for name in GPU_RESOURCES:
        if name in resources:
            return int_quantity(resources[name])
    return None


def iso(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
    return str(value)
