"""POST /v1/clusters: admit the request against the account's live state, claim the name, start
cluster.create."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from functions.domain.clusters.groups import addresses_for
from functions.domain.clusters.models import ClusterCreate, check_create
from functions.domain.clusters.network import COMPUTE_USABLE, max_instances_per_subnet, plan_fits
from functions.domain.clusters.record import ClusterRecord, ClusterStatus, GroupRecord
from functions.domain.errors import Conflict, InvalidInput
from functions.domain.operations import Actor, Operation, Target, now_iso
from functions.domain.plans import Plan
from functions.logic.deps import Deps
from functions.logic.plans import Started, start_or_plan

NAME_TAKEN = {"loc": ["body", "name"], "msg": "already taken in this region"}


@dataclass
class CreateAdmission:
    deps: Deps
    req: ClusterCreate
    actor: Actor
    idempotency_key: str | None
    normalized: dict[str, Any] | None = None
    facts: dict[str, Any] = field(default_factory=dict)  # what admission read, for a plan

    def normalize(self) -> dict[str, Any]:
        snap = self.deps.reader.snapshot(self.req.region, list(self.req.instance_groups), self.deps.records.all())
        self.facts = {"quotas": snap.quotas, "region_zones": sorted(snap.zone_ids)}
        if self.req.name in snap.taken_names:
            raise Conflict(f"a cluster named {self.req.name!r} already exists in {self.req.region}",
                           errors=[NAME_TAKEN])
        errors, normalized = check_create(self.req, snap)
        if not errors:
            for i, g in enumerate(normalized["instance_groups"]):
                info = snap.offered.get(g["availability_zone"], {}).get(g["instance_type"])
                g["addresses_needed"] = addresses_for(g["instance_count"], info, g["efa_only"])
                if g["addresses_needed"] > COMPUTE_USABLE:
                    errors.append({"loc": ["body", "instance_groups", i, "instance_count"], "msg": (
                        f"{g['instance_count']} x {g['instance_type']} need about {g['addresses_needed']} VPC "
                        f"addresses; a /20 compute subnet holds {COMPUTE_USABLE}: split the group (at most "
                        f"{max_instances_per_subnet(info.efa_max_interfaces if info else 1, g['efa_only'])} "
                        f"instances each)")})
        if not errors:
            zones = sorted({g["availability_zone"] for g in normalized["instance_groups"]})
            why = plan_fits(normalized["vpc_cidr"], zones[:2] or ["a", "b"], zones,
                            [(g["name"], g["availability_zone"], g["addresses_needed"])
                             for g in normalized["instance_groups"]])
            if why:
                errors.append({"loc": ["body", "vpc_cidr" if self.req.vpc_cidr else "instance_groups"], "msg": why})
        if errors:
            raise InvalidInput.of(errors)
        self.normalized = normalized
        return normalized

    def claim(self, op: Operation) -> None:
        assert self.normalized is not None
        n = self.normalized
        rec = ClusterRecord(
            name=n["name"], region=n["region"], status=ClusterStatus.CREATING, origin="created",
            eks_cluster_name=n["name"], hyperpod_cluster_name=n["name"], kubernetes_version=n["kubernetes_version"],
            node_recovery=n["node_recovery"], vpc_cidr=n["vpc_cidr"], created_by=self.actor.name,
            created_at=now_iso(), operation_id=op.id, idempotency_key=self.idempotency_key,
            instance_groups=[GroupRecord(**{k: g[k] for k in GroupRecord.model_fields if k in g})
                             for g in n["instance_groups"]],
            storage=n.get("storage") or {},
        )
        if not self.deps.records.create(rec):
            raise Conflict(f"a cluster named {rec.name!r} already exists in {rec.region}", errors=[NAME_TAKEN])

    def unclaim(self, op: Operation) -> None:
        self.deps.records.delete(self.req.region, self.req.name)


def create_cluster(deps: Deps, req: ClusterCreate, actor: Actor, key: str | None,
                   dry_run: bool = False) -> Started | Plan:
    return start_or_plan(
        deps, dry_run=dry_run, kind="cluster.create", target=Target(cluster=req.name, region=req.region),
        request=req.model_dump(mode="json"), principal=actor, idempotency_key=key,
        admission=CreateAdmission(deps, req, actor, key),
    )
