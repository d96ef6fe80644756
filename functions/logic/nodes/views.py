"""Node reads: the nodes page (ListClusterNodes, one label-selected Kubernetes node list, one list of the cluster's
live pods for the GPUs they request, one page of recent cluster events for faults and HyperPod's own repairs), a
node's detail (conditions, taints, pods, events, ladder) and the cluster events page."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from functions.domain.capacity.placement import node_gpus, requested
from functions.domain.clusters.record import ClusterRecord
from functions.domain.errors import BadRequest, Conflict, NotFound
from functions.domain.nodes.models import (
    DEEP_CHECK_LABEL,
    EFA_RESOURCE,
    FAULT_REASON_LABEL,
    FAULT_TYPE_LABEL,
    GROUP_LABEL,
    HEALTH_LABEL,
    HEALTHY,
    LADDER_WINDOW,
    ClusterEventView,
    EventList,
    LastAction,
    NodeCondition,
    NodeDetail,
    NodeList,
    NodePod,
    NodeRow,
    fault_of,
    gpus_of,
    int_quantity,
    iso,
    kube_name,
    ladder,
    latest,
    repair_of,
)
from functions.domain.ports import NodeReader
from functions.logic.clusters.views import find_record
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


def _deep(labels: dict[str, str]) -> str | None:
    status = labels.get(DEEP_CHECK_LABEL)
    if status != "Failed":
        return status
    why = ": ".join(x for x in (labels.get(FAULT_TYPE_LABEL), labels.get(FAULT_REASON_LABEL)) if x)
    return f"Failed ({why})" if why else "Failed"


def _row(summary: dict[str, Any] | None, node: dict[str, Any] | None, last: LastAction | None) -> NodeRow:
    labels = ((node or {}).get("metadata") or {}).get("labels") or {}
    allocatable = ((node or {}).get("status") or {}).get("allocatable") or {}
    s = summary or {}
    name = ((node or {}).get("metadata") or {}).get("name")
    health, ready, deep = labels.get(HEALTH_LABEL), _ready(node), _deep(labels)
    status = (s.get("InstanceStatus") or {}).get("Status") or ("Running" if ready else "Unknown")
    return NodeRow(
        node_id=s.get("InstanceId") or str(name or "").removeprefix("hyperpod-"),
        node_logical_id=s.get("NodeLogicalId") or labels.get("sagemaker.amazonaws.com/node-logical-id"),
        kubernetes_node=name,
        group=s.get("InstanceGroupName") or labels.get(GROUP_LABEL, ""),
        instance_type=s.get("InstanceType") or labels.get("node.kubernetes.io/instance-type", ""),
        zone=labels.get("topology.kubernetes.io/zone") or ((s.get("Placement") or {}).get("AvailabilityZone")),
        status=status,
        status_message=(s.get("InstanceStatus") or {}).get("Message"),
        health=health,
        ready=ready,
        deep_health_check=deep,
        healthy=None if node is None else (health in (None, HEALTHY) and ready is True and status == "Running"
                                           and not str(deep or "").startswith("Failed")),
        gpus_allocatable=gpus_of(allocatable),
        efa_allocatable=int_quantity(allocatable.get(EFA_RESOURCE)),
        launch_time=iso(s.get("LaunchTime")) or ((node or {}).get("metadata") or {}).get("creationTimestamp"),
        last_action=last,
        rung=ladder(health, last).rung if node is not None else None,
    )


def _token(raw: str | None) -> tuple[str, str | None]:
    if not raw:
        return "", None
    source, _, value = raw.partition(":")
    if source not in ("a", "k") or not value:
        raise BadRequest("next_token: not a token this API issued")
    return source, value


def list_nodes(deps: Deps, name: str, region: str | None, group: str | None, health: str | None, limit: int,
               next_token: str | None, unhealthy: bool = False, faulted_since: datetime | None = None) -> NodeList:
    """One page: ListClusterNodes then the page's Kubernetes nodes by name. With `health`, the page comes from the
    Kubernetes node list selected by the health label (HyperPod's status is then what the Node says: Running when
    Ready). Each row adds the GPUs its pods request, its last fault event and HyperPod's own repairs (one list of
    live pods, one page of cluster events since `faulted_since` or the ladder's 24 hours), and the ladder's next
    rung counting them. `unhealthy` and `faulted_since` keep the page's rows that match."""
    rec, hp, reader = hyperpod_of(deps, name, region)
    source, token = _token(next_token)
    actions = last_actions(deps, rec)
    if health:
        if source == "a":
            raise BadRequest("next_token: this token belongs to a list without health=")
        selector = f"{HEALTH_LABEL}={health}" + (f",{GROUP_LABEL}={group}" if group else "")
        nodes, cont = reader.kube_nodes(rec.region, rec.eks_cluster_name, selector, limit, token)
        pairs: list[tuple[dict[str, Any] | None, dict[str, Any] | None]] = [(None, n) for n in nodes]
        out_token = f"k:{cont}" if cont else None
    else:
        if source == "k":
            raise BadRequest("next_token: this token belongs to a list with health=")
        summaries, aws_token = reader.list_cluster_nodes(rec.region, hp, group, limit, token)
        if group:  # InstanceGroupNameContains matches substrings
            summaries = [s for s in summaries if s.get("InstanceGroupName") == group]
        names = [kube_name(s["InstanceId"]) for s in summaries]
        by_name: dict[str, dict[str, Any]] = {}
        if names:
            found, _ = reader.kube_nodes(rec.region, rec.eks_cluster_name,
                                         f"kubernetes.io/hostname in ({','.join(names)})")
            by_name = {n["metadata"]["name"]: n for n in found}
        pairs = [(s, by_name.get(kube_name(s["InstanceId"]))) for s in summaries]
        out_token = f"a:{aws_token}" if aws_token else None
    since = faulted_since or (datetime.now(UTC) - LADDER_WINDOW)
    faults, repairs = recent_history(reader, rec.region, hp, since)
    kube = [n for _, n in pairs if n is not None]
    used = {g.node: g.used for g in node_gpus(kube, reader.kube_pods(rec.region, rec.eks_cluster_name))} \
        if kube else {}
    rows = []
    for summary, node in pairs:
        node_id = (summary or {}).get("InstanceId") or str(((node or {}).get("metadata") or {}).get("name") or
                                                             "").removeprefix("hyperpod-")
        mine = repairs.get(node_id, [])
        row = _row(summary, node, latest(actions.get(node_id), mine[0] if mine else None))
        kname = ((node or {}).get("metadata") or {}).get("name")
        row = row.model_copy(update={"last_fault": faults.get(node_id), "auto_repairs": len(mine),
                                     "gpus_requested": used.get(str(kname)) if node is not None else None})
        if unhealthy and row.healthy is not False:
            continue
        if faulted_since is not None and row.last_fault is None:
            continue
        rows.append(row)
    return NodeList(cluster=rec.name, region=rec.region, items=rows, next_token=out_token)


EVENT_PAGES = 3  # pages of 100 recent events a nodes page reads for faults and repairs


def recent_history(reader: NodeReader, region: str, hp: str,
                   since: datetime) -> tuple[dict[str, str], dict[str, list[LastAction]]]:
    """From the cluster's events since `since` (newest first, bounded): each node's last fault in one line, and
    the repairs HyperPod made by itself, newest first."""
    faults: dict[str, str] = {}
    repairs: dict[str, list[LastAction]] = {}
    token: str | None = None
    for _ in range(EVENT_PAGES):
        events, token = reader.cluster_events(region, hp, since=since, limit=100, token=token)
        for e in events:
            node_id = e.get("InstanceId")
            if not node_id:
                continue
            fix = repair_of(e)
            if fix is not None:
                repairs.setdefault(node_id, []).append(fix)
            elif node_id not in faults and (line := fault_of(e)) is not None:
                faults[node_id] = line
        if not token:
            break
    return faults, repairs


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
    window = datetime.now(UTC) - LADDER_WINDOW
    fixes = [f for f in (repair_of(e) for e in events) if f is not None and _after(f.at, window)]
    last = latest(last_actions(deps, rec).get(node_id), fixes[0] if fixes else None)
    row = _row(detail, node, last)
    fault = next((line for e in events if (line := fault_of(e)) is not None), None)
    row = row.model_copy(update={"last_fault": fault, "auto_repairs": len(fixes)})
    # The GPUs its pods request, counted as the capacity advisor and the scheduler count (placement.node_gpus)
    allocated = node_gpus([node], pods)[0].used if node else None
    row = row.model_copy(update={"gpus_requested": allocated})
    views = [NodePod(namespace=(p.get("metadata") or {}).get("namespace", ""),
                     name=(p.get("metadata") or {}).get("name", ""), phase=(p.get("status") or {}).get("phase"),
                     gpus=requested(p)) for p in pods]
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
        gpus_allocated=allocated,
        pods=views,
        events=[_event(e) for e in events],
        ladder=ladder(row.health, last),
    )


def _after(at: str, t: datetime) -> bool:
    try:
        when = datetime.fromisoformat(at.replace("Z", "+00:00"))
    except ValueError:
        return False
    return (when if when.tzinfo else when.replace(tzinfo=UTC)) >= t


def list_events(deps: Deps, name: str, region: str | None, node_id: str | None, group: str | None,
                since: datetime | None, limit: int, next_token: str | None) -> EventList:
    rec, hp, reader = hyperpod_of(deps, name, region)
    events, token = reader.cluster_events(rec.region, hp, node_id=node_id, group=group, since=since, limit=limit,
                                          token=next_token)
    return EventList(items=[_event(e) for e in events], next_token=token)
