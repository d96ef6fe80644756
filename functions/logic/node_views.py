"""Node reads: the nodes page (two calls: ListClusterNodes and one label-selected Kubernetes node list),
a node's detail (conditions, taints, pods, events, ladder) and the cluster events page."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from functions.domain.cluster_record import ClusterRecord
from functions.domain.errors import BadRequest, Conflict, NotFound
from functions.domain.nodes import (
    EFA_RESOURCE,
    GROUP_LABEL,
    HEALTH_LABEL,
    ClusterEventView,
    EventList,
    LastAction,
    NodeCondition,
    NodeDetail,
    NodeList,
    NodePod,
    NodeRow,
    gpus_of,
    int_quantity,
    iso,
    kube_name,
    ladder,
)
from functions.domain.ports import NodeReader
from functions.logic.cluster_views import find_record
from functions.logic.deps import Deps

ACTIONS_SK = "node-actions"


def actions_key(region: str, cluster: str) -> tuple[str, str]:
    return f"NODES#{region}#{cluster}", ACTIONS_SK


def last_actions(deps: Deps, rec: ClusterRecord) -> dict[str, LastAction]:
    body = deps.state.get(*actions_key(rec.region, rec.name)) or {}
    return {k: LastAction.model_validate(v) for k, v in (body.get("nodes") or {}).items()}


def record_actions(deps: Deps, rec: ClusterRecord, node_ids: list[str], action: LastAction) -> None:
    body = deps.state.get(*actions_key(rec.region, rec.name)) or {}
    nodes = dict(body.get("nodes") or {})
    for node_id in node_ids:
        nodes[node_id] = action.model_dump(mode="json")
    deps.state.put(*actions_key(rec.region, rec.name), {"nodes": nodes})


def hyperpod_of(deps: Deps, name: str, region: str | None) -> tuple[ClusterRecord, str, NodeReader]:
    rec = find_record(deps, name, region)
    if not rec.hyperpod_cluster_name:
        raise Conflict(f"{rec.name} has no HyperPod cluster yet (status {rec.status.value})")
    assert deps.nodes is not None
    return rec, rec.hyperpod_cluster_name, deps.nodes


def _ready(node: dict[str, Any] | None) -> bool | None:
    if node is None:
        return None
    for c in (node.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            return bool(c.get("status") == "True")
    return None


def _row(summary: dict[str, Any] | None, node: dict[str, Any] | None, last: LastAction | None) -> NodeRow:
    labels = ((node or {}).get("metadata") or {}).get("labels") or {}
    allocatable = ((node or {}).get("status") or {}).get("allocatable") or {}
    s = summary or {}
    name = ((node or {}).get("metadata") or {}).get("name")
    return NodeRow(
        node_id=s.get("InstanceId") or str(name or "").removeprefix("hyperpod-"),
        node_logical_id=s.get("NodeLogicalId") or labels.get("sagemaker.amazonaws.com/node-logical-id"),
        kubernetes_node=name,
        group=s.get("InstanceGroupName") or labels.get(GROUP_LABEL, ""),
        instance_type=s.get("InstanceType") or labels.get("node.kubernetes.io/instance-type", ""),
        zone=labels.get("topology.kubernetes.io/zone") or ((s.get("Placement") or {}).get("AvailabilityZone")),
        status=(s.get("InstanceStatus") or {}).get("Status") or ("Running" if _ready(node) else "Unknown"),
        status_message=(s.get("InstanceStatus") or {}).get("Message"),
        health=labels.get(HEALTH_LABEL),
        ready=_ready(node),
        gpus_allocatable=gpus_of(allocatable),
        efa_allocatable=int_quantity(allocatable.get(EFA_RESOURCE)),
        launch_time=iso(s.get("LaunchTime")) or ((node or {}).get("metadata") or {}).get("creationTimestamp"),
        last_action=last,
    )


def _token(raw: str | None) -> tuple[str, str | None]:
    if not raw:
        return "", None
    source, _, value = raw.partition(":")
    if source not in ("a", "k") or not value:
        raise BadRequest("next_token: not a token this API issued")
    return source, value


def list_nodes(deps: Deps, name: str, region: str | None, group: str | None, health: str | None, limit: int,
               next_token: str | None) -> NodeList:
    """One page: ListClusterNodes then the page's Kubernetes nodes by name (two calls). With `health`,
    the page comes from the Kubernetes node list selected by the health label (one call; HyperPod's
    status is then what the Node says: Running when Ready)."""
    rec, hp, reader = hyperpod_of(deps, name, region)
    source, token = _token(next_token)
    actions = last_actions(deps, rec)
    if health:
        if source == "a":
            raise BadRequest("next_token: this token belongs to a list without health=")
        selector = f"{HEALTH_LABEL}={health}" + (f",{GROUP_LABEL}={group}" if group else "")
        nodes, cont = reader.kube_nodes(rec.region, rec.eks_cluster_name, selector, limit, token)
        rows = [_row(None, n, actions.get(str(n["metadata"]["name"]).removeprefix("hyperpod-"))) for n in nodes]
        return NodeList(items=rows, next_token=f"k:{cont}" if cont else None)
    if source == "k":
        raise BadRequest("next_token: this token belongs to a list with health=")
    summaries, aws_token = reader.list_cluster_nodes(rec.region, hp, group, limit, token)
    if group:  # InstanceGroupNameContains matches substrings
        summaries = [s for s in summaries if s.get("InstanceGroupName") == group]
    names = [kube_name(s["InstanceId"]) for s in summaries]
    by_name: dict[str, dict[str, Any]] = {}
    if names:
        nodes, _ = reader.kube_nodes(rec.region, rec.eks_cluster_name, f"kubernetes.io/hostname in ({','.join(names)})")
        by_name = {n["metadata"]["name"]: n for n in nodes}
    rows = [_row(s, by_name.get(kube_name(s["InstanceId"])), actions.get(s["InstanceId"])) for s in summaries]
    return NodeList(items=rows, next_token=f"a:{aws_token}" if aws_token else None)


def _event(e: dict[str, Any]) -> ClusterEventView:
    return ClusterEventView(event_id=e.get("EventId", ""), time=iso(e.get("EventTime")) or "",
                            level=e.get("EventLevel"), resource_type=e.get("ResourceType"),
                            group=e.get("InstanceGroupName"), node_id=e.get("InstanceId"),
                            description=e.get("Description", ""))


def node_detail(deps: Deps, name: str, region: str | None, node_id: str) -> NodeDetail:
    rec, hp, reader = hyperpod_of(deps, name, region)
    detail = reader.describe_cluster_node(rec.region, hp, node_id)
    if detail is None:
        raise NotFound(f"{rec.name} has no node {node_id}")
    kname = kube_name(node_id)
    node = reader.kube_node(rec.region, rec.eks_cluster_name, kname)
    pods = reader.kube_pods_on(rec.region, rec.eks_cluster_name, kname) if node else []
    events, _ = reader.cluster_events(rec.region, hp, node_id=node_id, limit=20)
    last = last_actions(deps, rec).get(node_id)
    row = _row(detail, node, last)
    views = []
    allocated = 0
    for p in pods:
        meta, spec = p.get("metadata") or {}, p.get("spec") or {}
        gpus = 0
        for c in spec.get("containers") or []:
            res = c.get("resources") or {}
            gpus += gpus_of({**(res.get("limits") or {}), **(res.get("requests") or {})}) or 0
        phase = (p.get("status") or {}).get("phase")
        if phase not in ("Succeeded", "Failed"):
            allocated += gpus
        views.append(NodePod(namespace=meta.get("namespace", ""), name=meta.get("name", ""), phase=phase, gpus=gpus))
    status = (node or {}).get("status") or {}
    return NodeDetail(
        **row.model_dump(),
        private_ip=detail.get("PrivatePrimaryIp"), private_dns=detail.get("PrivateDnsHostname"),
        capacity_type=detail.get("CapacityType"),
        conditions=[NodeCondition(type=c.get("type", ""), status=c.get("status", ""), reason=c.get("reason"),
                                  message=c.get("message"), since=c.get("lastTransitionTime"))
                    for c in status.get("conditions") or []],
        taints=list(((node or {}).get("spec") or {}).get("taints") or []),
        labels=dict(((node or {}).get("metadata") or {}).get("labels") or {}),
        gpus_allocated=allocated if node else None,
        pods=views,
        events=[_event(e) for e in events],
        ladder=ladder(row.health, last),
    )


def list_events(deps: Deps, name: str, region: str | None, node_id: str | None, group: str | None,
                since: datetime | None, limit: int, next_token: str | None) -> EventList:
    rec, hp, reader = hyperpod_of(deps, name, region)
    events, token = reader.cluster_events(rec.region, hp, node_id=node_id, group=group, since=since, limit=limit,
                                          token=next_token)
    return EventList(items=[_event(e) for e in events], next_token=token)
