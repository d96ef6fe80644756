"""PATCH /v1/clusters/{cluster}/instance-groups/{group}: the diff contract against the live group.

Only fields sent are compared, and with what HyperPod reports now (a group scaled outside PodStart is
scaled from where it really is); equal means `changed: false` and nothing starts. Fixed fields sent
with another value are a 409. More instances must fit the quota and the group's compute subnet."""

from __future__ import annotations

from typing import Any

from functions.domain.catalog import InstanceType
from functions.domain.clusters.groups import (
    immutable_conflicts,
    live_group,
    per_instance,
    quota_problem,
    wanted_change,
    zero_refusal,
)
from functions.domain.clusters.models import InstanceGroupPatch
from functions.domain.clusters.record import ClusterRecord, GroupRecord
from functions.domain.errors import Conflict, InvalidInput, NotFound
from functions.domain.operations import Actor, Target, now_iso
from functions.domain.plans import Plan
from functions.domain.views import NoChange
from functions.logic.clusters.group_add import require_active
from functions.logic.clusters.views import find_record, follow_live, group_view
from functions.logic.deps import Deps
from functions.logic.plans import Started, replay_of, start_or_plan


def _zone_aliases(deps: Deps, region: str, g: GroupRecord) -> set[str]:
    """The group's zone by name and by id: either names it (sending `usw2-az1` for the group's own zone is
    not a change)."""
    return {g.availability_zone, *(k for k, v in deps.reader.zones(region).items() if v == g.availability_zone)}


def _type_info(deps: Deps, region: str, g: GroupRecord) -> InstanceType | None:
    return deps.reader.offered(region, g.availability_zone).get(g.instance_type)


NODE_CLASSES = "/apis/karpenter.sagemaker.amazonaws.com/v1/hyperpodnodeclasses"


def _autoscaled(deps: Deps, rec: ClusterRecord, hp: dict[str, Any] | None) -> set[str]:
    """The instance groups HyperPod's Karpenter may scale (the HyperpodNodeClasses' groups); read only when
    autoscaling is on and a group is asked to go to zero."""
    if str(((hp or {}).get("AutoScaling") or {}).get("Mode", "")).lower() != "enable":
        return set()
    classes = deps.kube(rec.eks_cluster_name, rec.region).list(NODE_CLASSES)
    return {str(g) for c in classes for g in ((c.get("spec") or {}).get("instanceGroups") or [])}


def scale_instance_group(deps: Deps, name: str, region: str | None, group: str, patch: InstanceGroupPatch,
                         actor: Actor, key: str | None, dry_run: bool = False) -> Started | Plan | NoChange:
    rec = find_record(deps, name, region)
    current = rec.group(group)
    if current is None:
        raise NotFound(f"{rec.name} has no instance group {group!r}")
    sent = patch.model_dump(exclude_unset=True)
    conflicts = immutable_conflicts(sent, current.model_dump(mode="json"), _zone_aliases(deps, rec.region, current)
                                    if "availability_zone" in sent else {current.availability_zone})
    if conflicts:
        raise Conflict("; ".join(f"{e['loc'][-1]}: {e['msg']}" for e in conflicts), errors=conflicts)
    hp = deps.reader.describe_hyperpod(rec.region, rec.hyperpod_cluster_name) if rec.hyperpod_cluster_name else None
    detail = next((g for g in (hp or {}).get("InstanceGroups", []) if g["InstanceGroupName"] == group), None)
    if hp is not None:
        rec = follow_live(deps, rec, hp, now_iso(), save=not dry_run)
        current = rec.group(group) or current
    live = live_group(detail) if detail else None
    count = wanted_change(sent.get("instance_count"), live) if live else (
        None if sent.get("instance_count") in (None, current.instance_count) else sent["instance_count"])
    target = Target(cluster=rec.name, region=rec.region, resource=group)

    def request(n: int) -> dict[str, Any]:  # what start() hashes for the key: from what was sent, not live state
        return {"cluster": rec.name, "region": rec.region, "group": group, "instance_count": n,
                "addresses_needed": n * per_instance(_type_info(deps, rec.region, current), current.efa_only)}

    if count == 0:
        why = zero_refusal(group, ((hp or {}).get("AutoScaling") or {}).get("Mode"), _autoscaled(deps, rec, hp))
        if why:
            raise InvalidInput.field(["body", "instance_count"], why)
    if count is None:
        # the live count is as asked; if this key's operation is why, a retry gets that operation back
        again = None if dry_run or "instance_count" not in sent else replay_of(
            deps, kind="instance_group.scale", target=target, request=request(sent["instance_count"]),
            principal=actor, idempotency_key=key)
        return again or NoChange(instance_group=group_view(current))
    require_active(rec)
    base = live.target_count if live else current.instance_count
    extra = count - base
    quotas = {}
    if current.capacity_type != "training-plan":
        quotas = {q.instance_type: q for q in deps.reader.quotas(rec.region)}
        quota = quotas.get(current.instance_type)
        problem = quota_problem(extra, current.instance_type, quota)
        if problem:
            raise InvalidInput.field(["body", "instance_count"], problem)
    asked = request(count)
    needed = asked["addresses_needed"]
    if extra > 0 and live and live.subnet_ids:
        view = deps.reader.network(rec.region, live.subnet_ids)
        subnet = next((s for s in view.subnets if s.subnet_id == live.subnet_ids[0]), None)
        if subnet is not None and subnet.free_for(group) < needed:
            room = subnet.free_for(group) // max(1, needed // max(count, 1))
            raise InvalidInput.field(["body", "instance_count"],
                                     f"the group's compute subnet {subnet.cidr} has room for about {room} "
                                     f"instances of {current.instance_type}; add another group for more")
    return start_or_plan(
        deps, dry_run=dry_run, kind="instance_group.scale",
        target=target, request=asked, principal=actor, idempotency_key=key,
        facts={"quotas": quotas, "group": current.model_dump(mode="json"), "target_count": base})
