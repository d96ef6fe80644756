"""Plans for instance_group.add and instance_group.scale.

The add places the group with the allocator its `subnet` step calls, on the VPC view admission read (reuse
the zone's compute subnet with room, or carve a /20); the scale compares the count asked with the live
target count admission read (equal: the use case answers `changed: false` before any plan)."""

from __future__ import annotations

from typing import Any

from functions.domain.clusters.groups import DRAIN_TIMEOUT_DEFAULT_S
from functions.domain.clusters.network import VpcView, allocate_compute_subnet
from functions.domain.clusters.plan import group_capacity
from functions.domain.plans import Change, Draft, create, delete, update
from functions.domain.plans.base import PlanInput


def plan_group_add(p: PlanInput) -> Draft:
    r, g = p.request, p.request["group"]
    cluster = r["cluster"]
    changes: list[Change] = []
    view: VpcView | None = p.facts.get("vpc")
    if view is not None:
        alloc = allocate_compute_subnet(view.blocks, view.subnets, g["availability_zone"], group=g["name"],
                                        needed=int(g.get("addresses_needed") or 0))
        if alloc.subnet_id is None:
            changes += [create("AWS::EC2::Subnet", f"{cluster}-compute-{g['availability_zone']}", "subnet",
                               cidr=alloc.cidr, availability_zone=g["availability_zone"]),
                        create("AWS::EC2::RouteTable", f"{cluster}-compute-{g['availability_zone']}", "subnet",
                               route="0.0.0.0/0 via the NAT gateway")]
        else:
            changes.append(update("AWS::EC2::Subnet", alloc.subnet_id, "subnet", cidr=alloc.cidr,
                                  reserve_addresses=g.get("addresses_needed")))
    changes.append(update("AWS::SageMaker::Cluster", cluster, "instance_group",
                          add_group=_describe(g)))
    quota = {} if g.get("capacity_type") == "training-plan" else {g["instance_type"]: int(g["instance_count"])}
    return Draft(changes=_skip(changes, p.skip_steps), capacity=[group_capacity(g)], quota_requests=quota)


def plan_group_scale(p: PlanInput) -> Draft:
    r = p.request
    live: dict[str, Any] = p.facts.get("group") or {}
    before = int(p.facts.get("target_count", live.get("instance_count", 0)))
    after = int(r["instance_count"])
    changes = [update("AWS::SageMaker::Cluster", r["cluster"], "instance_group", group=r["group"],
                      instance_count={"from": before, "to": after})]
    g = {**live, "instance_count": after - before}
    quota = ({} if live.get("capacity_type") == "training-plan" or not live.get("instance_type")
             else {live["instance_type"]: after - before})
    warnings = ([f"scaling {r['group']} in removes {before - after} instances: work running on them stops"]
                if after < before else [])
    capacity = [group_capacity(g)] if live.get("instance_type") else []
    return Draft(changes=_skip(changes, p.skip_steps), capacity=capacity, quota_requests=quota, warnings=warnings)


def _describe(g: dict[str, Any]) -> str:
    return (f"{g['name']}: {g['instance_count']} x {g['instance_type']} ({g.get('capacity_type', 'on-demand')}, "
            f"{g['availability_zone']})")


def _skip(changes: list[Change], done: frozenset[str]) -> list[Change]:
    return [c.model_copy(update={"action": "none"}) if c.step in done else c for c in changes]


def plan_group_delete(p: PlanInput) -> Draft:
    """Cordon each node of the group, evict its pods (DaemonSet pods stay), then one UpdateCluster with
    InstanceGroupsToDelete; the capacity line is negative (what the group cost by the hour)."""
    r = p.request
    live: dict[str, Any] = p.facts.get("group") or {}
    nodes: list[str] = list(p.facts.get("kube_nodes") or [])
    pods: list[str] = list(p.facts.get("pods") or [])
    changes: list[Change] = [update("Kubernetes Node", n, "drain", cordon=True) for n in nodes]
    changes += [delete("Pod", ref, "drain", via="Eviction API (policy/v1), PodDisruptionBudgets respected")
                for ref in pods]
    changes.append(update("AWS::SageMaker::Cluster", r["cluster"], "instance_group",
                          InstanceGroupsToDelete=[r["group"]]))
    count = int(p.facts.get("target_count", live.get("instance_count", 0)) or 0)
    capacity = ([group_capacity({**live, "instance_count": -count})]
                if live.get("instance_type") and count else [])
    timeout = int(r.get("drain_timeout_s", DRAIN_TIMEOUT_DEFAULT_S))
    warnings = [f"deleting {r['group']} terminates its {count} instance(s): instance storage on them is lost",
                f"{len(pods)} pod(s) are evicted; a pod a PodDisruptionBudget keeps for more than {timeout} s "
                "fails the operation, named (nothing is deleted then)"]
    return Draft(changes=_skip(changes, p.skip_steps), capacity=capacity, warnings=warnings)
