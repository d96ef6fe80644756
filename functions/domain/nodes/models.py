"""Nodes: request models for node actions, the escalation ladder, and the node views.

The ladder is investigate -> reboot -> replace. A replace is admitted when the node was rebooted in the last 24
hours (by PodStart, or by HyperPod's automatic node recovery: its cluster events say so), or HyperPod's health agent
already marked it `UnschedulablePendingReplacement`; otherwise it is a 409 naming the rung that comes first, unless
the request says `force` with a reason (recorded on the operation).

A node's health, as a list shows it: the HyperPod health label, the deep health check's result (label
`sagemaker.amazonaws.com/deep-health-check-status`, with the fault type and reason labels on a failure), Kubernetes'
Ready, the last fault event in one line, and the repairs HyperPod made by itself (`repair_of` reads its events)."""

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
DEEP_CHECK_LABEL = "sagemaker.amazonaws.com/deep-health-check-status"
FAULT_TYPE_LABEL = "sagemaker.amazonaws.com/fault-type"
FAULT_REASON_LABEL = "sagemaker.amazonaws.com/fault-reason"
HEALTHY = "Schedulable"

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
    operation_id: str | None = Field(default=None, description="PodStart's operation (None: HyperPod's own repair)")
    at: str
    reason: str | None = None
    by: Literal["podstart", "hyperpod"] = Field(default="podstart",
                                                description="hyperpod: its automatic node recovery, from its events")


# HyperPod's cluster events for its own node recovery (automatic reboot or replacement of a faulty instance).
_REPAIR = re.compile(r"(?i)\b(?:node recovery|automatic(?:ally)?|auto[- ]?(?:repair|recovery))\b.*?\b(reboot|replac)")
_FAULT_LEVELS = ("Error", "Warn", "Warning")


def repair_of(event: dict[str, Any]) -> LastAction | None:
    """A HyperPod cluster event that says it rebooted or replaced an instance by itself, as a LastAction."""
    found = _REPAIR.findall(str(event.get("Description") or ""))  # findall: the IAM scan reads "search" as an API
    if not found or not event.get("InstanceId"):
        return None
    return LastAction(action="reboot" if found[0].lower() == "reboot" else "replace", by="hyperpod",
                      at=iso(event.get("EventTime")) or "", reason=_line(event.get("Description"), 160))


def fault_of(event: dict[str, Any]) -> str | None:
    """A fault event of a node in one line ('<time> <description>'), or None for other events (repairs, a node
    turning healthy, status changes)."""
    text = str(event.get("Description") or "")
    if event.get("EventLevel") not in _FAULT_LEVELS or repair_of(event) is not None:
        return None
    if f"changed to {HEALTHY}" in text or "status changed to Running" in text:
        return None
    # "Instance i-...: <fault>" and "Instance i-... health status changed to X: <fault>": the fault is what matters
    text = re.sub(r"^Instance i-[0-9a-f]+(?: health status changed to \w+)?: ", "", text)
    return _line(f"{iso(event.get('EventTime')) or ''} {text}", 200)


def _line(text: Any, limit: int) -> str | None:
    if text is None:
        return None
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def latest(*actions: LastAction | None) -> LastAction | None:
    """The most recent of PodStart's last action and HyperPod's last repair of a node."""
    found = [a for a in actions if a is not None]
    return max(found, key=lambda a: a.at) if found else None


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
    """The next rung for a node. `last` is the latest of PodStart's own action and HyperPod's automatic repair
    (`latest`): a reboot HyperPod made by itself counts as the reboot rung."""
    now = now or datetime.now(UTC)
    rebooted = last.at if _recent_reboot(last, now) and last else None
    who = "HyperPod's node recovery" if last is not None and last.by == "hyperpod" else "PodStart"
    if health == "UnschedulablePendingReplacement":
        return Ladder(rung="replace", reason="HyperPod's health agent marked it for replacement", rebooted_at=rebooted)
    if rebooted:
        return Ladder(rung="replace" if health not in (None, "Schedulable") else "investigate",
                      reason=f"{who} rebooted it at {rebooted}" + (
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
    deep_health_check: str | None = Field(default=None, description="The last deep health check: InProgress, Passed "
                                                                      "or Failed (with the fault type and reason)")
    healthy: bool | None = Field(default=None, description="Schedulable, Ready, and no failed deep health check")
    last_fault: str | None = Field(default=None, description="The node's last fault event in the last 24 hours (or "
                                                             "since faulted_since), one line")
    gpus_allocatable: int | None = Field(default=None, description="nvidia.com/gpu or aws.amazon.com/neuroncore")
    gpus_requested: int | None = Field(default=None, description="What the pods bound to it request (never above "
                                                                 "allocatable: the scheduler counts them)")
    efa_allocatable: int | None = None
    launch_time: str | None = None
    last_action: LastAction | None = Field(default=None, description="The latest of PodStart's last node action and "
                                                                     "HyperPod's last automatic repair (by)")
    auto_repairs: int = Field(default=0, description="Reboots and replacements HyperPod made by itself in the window")
    rung: Rung | None = Field(default=None, description="The ladder's next rung for it (investigate, reboot, "
                                                        "replace)")


class NodeList(BaseModel):
    cluster: str | None = None
    region: str | None = None
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
    unhealthy: bool = False
    faulted_since: str | None = None
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
