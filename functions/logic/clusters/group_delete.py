"""DELETE /v1/clusters/{cluster}/instance-groups/{group}?confirm={group}: drain the group's nodes, then
UpdateCluster(InstanceGroupsToDelete) (admin, as nodes.delete: it terminates instances).

Refused: a wrong confirm (422 query.confirm), a group HyperPod does not list (404), the cluster's only
group (409: a HyperPod cluster keeps at least one instance group), a busy or inactive cluster (409)."""

from __future__ import annotations

from typing import Any

from functions.domain.clusters.groups import DRAIN_TIMEOUT_DEFAULT_S
from functions.domain.errors import Conflict, InvalidInput, NotFound
from functions.domain.nodes.models import GROUP_LABEL
from functions.domain.operations import Actor, Target, now_iso
from functions.domain.plans import Plan
from functions.logic.clusters.group_add import require_active
from functions.logic.clusters.views import find_record, follow_live
from functions.logic.deps import Deps
from functions.logic.plans import Started, start_or_plan


def _daemonset_pod(pod: dict[str, Any]) -> bool:
    return any(o.get("kind") == "DaemonSet" for o in (pod.get("metadata") or {}).get("ownerReferences") or [])


def _drain_view(deps: Deps, region: str, eks: str, group: str) -> tuple[list[str], list[str]]:
    """The group's Kubernetes nodes and the pods a drain evicts (reads only; empty where nodes are unread)."""
    if deps.nodes is None:
        return [], []
    items, _ = deps.nodes.kube_nodes(region, eks, f"{GROUP_LABEL}={group}")
    names = sorted(n["metadata"]["name"] for n in items)
    pods: list[str] = []
    for n in names:
        for pod in deps.nodes.kube_pods_on(region, eks, n):
            if _daemonset_pod(pod) or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                continue
            meta = pod["metadata"]
            pods.append(f"{meta.get('namespace', 'default')}/{meta['name']}")
    return names, sorted(pods)


def delete_instance_group(deps: Deps, name: str, region: str | None, group: str, confirm: str, actor: Actor,
                          key: str | None, dry_run: bool = False,
                          drain_timeout_s: int = DRAIN_TIMEOUT_DEFAULT_S) -> Started | Plan:
    if confirm != group:
        raise InvalidInput.field(["query", "confirm"], f"type the instance group name ({group}) to confirm the delete")
    rec = find_record(deps, name, region)
    hp = deps.reader.describe_hyperpod(rec.region, rec.hyperpod_cluster_name) if rec.hyperpod_cluster_name else None
    live = [g["InstanceGroupName"] for g in (hp or {}).get("InstanceGroups", [])]
    if hp is not None:
        rec = follow_live(deps, rec, hp, now_iso(), save=not dry_run)
    known = live if hp is not None else [g.name for g in rec.instance_groups]
    if group not in known:
        raise NotFound(f"{rec.name} has no instance group {group!r}")
    if len(known) == 1:
        raise Conflict(f"{group} is the only instance group of {rec.name}: a HyperPod cluster keeps at least one; "
                       "add another group first, or delete the cluster")
    require_active(rec)
    current = rec.group(group)
    detail: dict[str, Any] = next(
        (g for g in (hp or {}).get("InstanceGroups", []) if g["InstanceGroupName"] == group), {})
    facts: dict[str, Any] = {"group": current.model_dump(mode="json") if current else {},
                             "target_count": detail.get("TargetCount", current.instance_count if current else 0)}
    if dry_run:
        facts["kube_nodes"], facts["pods"] = _drain_view(deps, rec.region, rec.eks_cluster_name, group)
    return start_or_plan(
        deps, dry_run=dry_run, kind="instance_group.delete",
        target=Target(cluster=rec.name, region=rec.region, resource=group),
        request={"cluster": rec.name, "region": rec.region, "group": group, "eks_cluster_name": rec.eks_cluster_name,
                 "drain_timeout_s": drain_timeout_s},
        principal=actor, idempotency_key=key, facts=facts)
