"""POST /v1/clusters/{cluster}/instance-groups: validated like a create's group (zone, offering, quota,
capacity type), placed by the same allocator (the VPC must have a NAT gateway and room for the group's
addresses), then instance_group.add."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from functions.domain.clusters.groups import addresses_for
from functions.domain.clusters.models import InstanceGroupAdd, check_group, default_health_checks
from functions.domain.clusters.network import placement_problem
from functions.domain.clusters.record import ClusterRecord, ClusterStatus
from functions.domain.errors import Conflict, InvalidInput
from functions.domain.operations import Actor, Operation, Target
from functions.domain.plans import Plan
from functions.logic.clusters.views import find_record
from functions.logic.deps import Deps
from functions.logic.plans import Started, start_or_plan


def require_active(rec: ClusterRecord) -> None:
    if rec.status is not ClusterStatus.ACTIVE or not rec.hyperpod_cluster_name:
        raise Conflict(f"cluster {rec.name} is {rec.status.value}"
                       + ("" if rec.hyperpod_cluster_name else " and has no HyperPod cluster")
                       + "; instance groups change only on an ACTIVE HyperPod cluster")


@dataclass
class AddGroupAdmission:
    deps: Deps
    rec: ClusterRecord
    group: InstanceGroupAdd
    facts: dict[str, Any] = field(default_factory=dict)  # what admission read, for a plan

    def normalize(self) -> dict[str, Any]:
        require_active(self.rec)
        if self.rec.group(self.group.name) is not None:
            raise Conflict(f"{self.rec.name} already has an instance group {self.group.name!r}",
                           errors=[{"loc": ["body", "name"], "msg": "already exists in this cluster"}])
        snap = self.deps.reader.snapshot(self.rec.region, [self.group], self.deps.records.all())
        self.facts["quotas"] = snap.quotas
        errors, zone = check_group(self.group, [], snap, self.rec.region)
        if errors:
            raise InvalidInput.of(errors)
        info = snap.offered.get(zone or "", {}).get(self.group.instance_type)
        needed = addresses_for(self.group.instance_count, info, self.group.efa_only)
        hp = self.deps.reader.describe_hyperpod(self.rec.region, self.rec.hyperpod_cluster_name or self.rec.name)
        subnets = ((hp or {}).get("VpcConfig") or {}).get("Subnets") or []
        if subnets:
            view = self.deps.reader.network(self.rec.region, subnets)
            self.facts["vpc"] = view
            problem = placement_problem(view, zone or "", self.group.name, needed)
            if problem:
                field = "instance_count" if "split it" in problem else "availability_zone"
                loc = ["path", "cluster"] if "NAT" in problem else ["body", field]
                raise InvalidInput.of([{"loc": loc, "msg": problem}])
        g = {**self.group.model_dump(mode="json"), "availability_zone": zone,
             "availability_zone_id": snap.zone_ids.get(zone or "", ""),
             "deep_health_checks": default_health_checks(self.group, info),
             "accelerated": bool(info and info.accelerated), "addresses_needed": needed}
        return {"cluster": self.rec.name, "region": self.rec.region, "group": g}

    def claim(self, op: Operation) -> None:
        pass

    def unclaim(self, op: Operation) -> None:
        pass


def add_instance_group(deps: Deps, name: str, region: str | None, group: InstanceGroupAdd, actor: Actor,
                       key: str | None, dry_run: bool = False) -> Started | Plan:
    rec = find_record(deps, name, region)
    return start_or_plan(
        deps, dry_run=dry_run, kind="instance_group.add",
        target=Target(cluster=rec.name, region=rec.region, resource=group.name),
        request={"cluster": rec.name, "region": rec.region, "group": group.model_dump(mode="json")},
        principal=actor, idempotency_key=key, admission=AddGroupAdmission(deps, rec, group))
