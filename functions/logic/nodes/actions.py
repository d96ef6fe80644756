"""Node actions: reboot, replace (on the escalation ladder) and delete, each an operation that calls
HyperPod's Batch*ClusterNodes in batches of 25 and watches every node to the end; and on-demand deep health
checks (StartClusterHealthCheck) on a group's nodes, watched to a result per node and check."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from functions.domain.errors import Conflict, InvalidInput
from functions.domain.nodes.health_checks import HealthCheckStart
from functions.domain.nodes.models import (
    BATCH,
    GROUP_LABEL,
    HEALTH_LABEL,
    LADDER_WINDOW,
    LastAction,
    NodesDelete,
    NodesReboot,
    NodesReplace,
    kube_name,
    ladder,
    latest,
    may_replace,
)
from functions.domain.operations import Actor, Target, now_iso
from functions.domain.plans import Plan
from functions.logic.clusters.group_add import require_active
from functions.logic.deps import Deps
from functions.logic.nodes.views import hyperpod_of, last_actions, recent_history, record_actions
from functions.logic.plans import Started, replay_of, start_or_plan


def _seen(deps: Deps, name: str, region: str | None, node_ids: list[str]) -> dict[str, dict[str, str | None]]:
    """What admission reads of each node: its health label, group and instance type (one label-selected
    Kubernetes list); a node not in Kubernetes is asked of HyperPod (DescribeClusterNode), and an id the
    cluster does not have is a 422 naming it (nothing sent)."""
    rec, hp, reader = hyperpod_of(deps, name, region)
    names = [kube_name(i) for i in node_ids]
    nodes, _ = reader.kube_nodes(rec.region, rec.eks_cluster_name, f"kubernetes.io/hostname in ({','.join(names)})")
    seen: dict[str, dict[str, str | None]] = {}
    for n in nodes:
        labels = n["metadata"].get("labels") or {}
        seen[str(n["metadata"]["name"]).removeprefix("hyperpod-")] = {
            "health": labels.get(HEALTH_LABEL), "group": labels.get(GROUP_LABEL),
            "instance_type": labels.get("node.kubernetes.io/instance-type")}
    unknown = []
    for i in [i for i in node_ids if i not in seen][:25]:
        described = reader.describe_cluster_node(rec.region, hp, i)
        if described is None:
            unknown.append(i)
        else:
            seen[i] = {"health": None, "group": described.get("InstanceGroupName"),
                       "instance_type": described.get("InstanceType")}
    if unknown:
        raise InvalidInput.of([{"loc": ["body", "node_ids", node_ids.index(i)], "msg": f"{rec.name} has no node {i}"}
                               for i in unknown])
    return {i: seen.get(i) or {"health": None, "group": None, "instance_type": None} for i in node_ids}


def _start(deps: Deps, kind: str, name: str, region: str | None, request: dict[str, object], node_ids: list[str],
           actor: Actor, key: str | None, action: str, reason: str | None, *, seen: dict[str, Any],
           dry_run: bool) -> Started | Plan:
    rec, hp, _ = hyperpod_of(deps, name, region)
    require_active(rec)
    result = start_or_plan(
        deps, dry_run=dry_run, kind=kind, target=Target(cluster=rec.name, region=rec.region, resource="nodes"),
        request={"cluster": rec.name, "region": rec.region, "hyperpod_cluster": hp, "eks_cluster": rec.eks_cluster_name,
                 "node_ids": node_ids, "batch_size": BATCH, **request},
        principal=actor, idempotency_key=key, facts={"nodes": seen})
    if isinstance(result, Started) and not result.replayed:
        record_actions(deps, rec, node_ids, LastAction(action=action, operation_id=result.operation.id, at=now_iso(),
                                                       reason=reason))
    return result


def reboot_nodes(deps: Deps, name: str, region: str | None, body: NodesReboot, actor: Actor,
                 key: str | None, dry_run: bool = False) -> Started | Plan:
    seen = _seen(deps, name, region, body.node_ids)
    return _start(deps, "nodes.reboot", name, region, {"reason": body.reason}, body.node_ids, actor, key,
                  "reboot", body.reason, seen=seen, dry_run=dry_run)


def replace_nodes(deps: Deps, name: str, region: str | None, body: NodesReplace, actor: Actor,
                  key: str | None, dry_run: bool = False) -> Started | Plan:
    """The ladder: a node not rebooted in 24 h (by PodStart, or by HyperPod's own node recovery: its events say so)
    and that HyperPod has not marked for replacement is refused (409 naming the rung) unless `force` (with the
    reason, recorded)."""
    rec, hp, reader = hyperpod_of(deps, name, region)
    seen = _seen(deps, name, region, body.node_ids)
    health = {i: info["health"] for i, info in seen.items()}
    if not body.force:
        actions = last_actions(deps, rec)
        _, repairs = recent_history(reader, rec.region, hp, datetime.now(UTC) - LADDER_WINDOW)
        refused = []
        for node_id in body.node_ids:
            mine = repairs.get(node_id) or []
            h, last = health.get(node_id), latest(actions.get(node_id), mine[0] if mine else None)
            if not may_replace(h, last):
                refused.append((node_id, ladder(h, last)))
        if refused:
            first = refused[0][1]
            detail = "; ".join(f"{i}: next rung is {lad.rung} ({lad.reason})" for i, lad in refused[:10])
            raise Conflict(
                f"escalation ladder: investigate -> reboot -> replace. {len(refused)} node(s) were not rebooted (by "
                f"PodStart or HyperPod's node recovery) in the last 24 hours and are not marked "
                f"UnschedulablePendingReplacement; "
                f"{first.rung} first, or send force: true with a reason. {detail}",
                errors=[{"loc": ["body", "node_ids", body.node_ids.index(i)], "msg": f"{lad.rung} first: {lad.reason}"}
                        for i, lad in refused[:50]],
                ladder_rung=first.rung)
    return _start(deps, "nodes.replace", name, region,
                  {"reason": body.reason, "force": body.force, "storage_wiped": True}, body.node_ids, actor, key,
                  "replace", body.reason, seen=seen, dry_run=dry_run)


def delete_nodes(deps: Deps, name: str, region: str | None, body: NodesDelete, actor: Actor,
                 key: str | None, dry_run: bool = False) -> Started | Plan:
    rec, _, _ = hyperpod_of(deps, name, region)
    if rec.origin == "imported":
        raise Conflict(f"{rec.name} is imported: PodStart never terminates its instances (reboot or replace "
                       "them, or scale the group in its own tooling)")
    seen = _seen(deps, name, region, body.node_ids)
    return _start(deps, "nodes.delete", name, region, {}, body.node_ids, actor, key, "delete", None, seen=seen,
                  dry_run=dry_run)


def _group_node_ids(deps: Deps, name: str, region: str | None, group: str) -> list[str]:
    """Every instance of the group, as HyperPod lists them (ListClusterNodes, exact group name)."""
    rec, hp, reader = hyperpod_of(deps, name, region)
    ids: list[str] = []
    token: str | None = None
    while True:
        page, token = reader.list_cluster_nodes(rec.region, hp, group, 100, token)
        ids += [str(s["InstanceId"]) for s in page if s.get("InstanceGroupName") == group]
        if not token:
            return ids


def start_health_check(deps: Deps, name: str, region: str | None, body: HealthCheckStart, actor: Actor,
                       key: str | None, dry_run: bool = False) -> Started | Plan:
    """The group must exist (422 naming body.group), every node be in it (422 naming body.node_ids and the ids)
    and Schedulable (409 naming the others and their health): HyperPod runs deep health checks only on
    Running instances, and a node already unhealthy or checked has its answer."""
    rec, hp, _ = hyperpod_of(deps, name, region)
    require_active(rec)
    if rec.group(body.group) is None:
        raise InvalidInput.field(["body", "group"], f"{rec.name} has no instance group {body.group!r}")
    ids = body.node_ids if body.node_ids is not None else _group_node_ids(deps, name, region, body.group)
    if not ids:
        raise Conflict(f"instance group {body.group} of {rec.name} has no nodes to check")
    seen = _seen(deps, name, region, ids)
    elsewhere = [i for i in ids if seen[i]["group"] != body.group]
    if elsewhere:
        raise InvalidInput.of([{"loc": ["body", "node_ids", ids.index(i)],
                                "msg": f"{i} is not in instance group {body.group} (it is in {seen[i]['group']})"}
                               for i in elsewhere[:50]])
    target = Target(cluster=rec.name, region=rec.region, resource="nodes")
    request = {"cluster": rec.name, "region": rec.region, "hyperpod_cluster": hp,
               "eks_cluster": rec.eks_cluster_name, "group": body.group, "node_ids": ids,
               "checks": list(body.checks), "all_of_group": body.node_ids is None}
    busy = [i for i in ids if seen[i]["health"] != "Schedulable"]
    if busy and not dry_run:  # a retry of the request that started the checks finds its own nodes being checked
        replayed = replay_of(deps, kind="nodes.health_check", target=target, request=request, principal=actor,
                             idempotency_key=key)
        if replayed is not None:
            return replayed
    if busy:
        detail = ", ".join(f"{i} ({seen[i]['health'] or 'not joined'})" for i in busy[:20])
        raise Conflict(f"{len(busy)} node(s) are not Schedulable and Running: {detail}. Deep health checks run on "
                       "healthy nodes; read an unhealthy node first (get_node), then reboot or replace it",
                       errors=[{"loc": ["body", "node_ids", ids.index(i)] if body.node_ids else ["body", "group"],
                                "msg": f"{i} is {seen[i]['health'] or 'not joined'}"} for i in busy[:50]])
    return start_or_plan(deps, dry_run=dry_run, kind="nodes.health_check", target=target, request=request,
                         principal=actor, idempotency_key=key, facts={"nodes": seen})
