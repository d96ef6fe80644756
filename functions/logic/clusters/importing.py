"""POST /v1/clusters/import: adopt an existing EKS cluster (and its HyperPod cluster). An admin action:
it grants PodStart's role cluster-admin on the EKS cluster. The name is checked before anything else."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from functions.domain.catalog import HYPERPOD_REGIONS
from functions.domain.clusters.models import ClusterImport
from functions.domain.clusters.record import ClusterRecord, ClusterStatus
from functions.domain.errors import Conflict, InvalidInput
from functions.domain.operations import Actor, Operation, Target, now_iso
from functions.domain.plans import Plan
from functions.logic.deps import Deps
from functions.logic.plans import Started, start_or_plan


@dataclass
class ImportAdmission:
    deps: Deps
    req: ClusterImport
    actor: Actor

    @property
    def name(self) -> str:
        return self.req.podstart_name

    def normalize(self) -> dict[str, Any]:
        if self.req.region not in HYPERPOD_REGIONS:
            raise InvalidInput.field(["body", "region"], f"{self.req.region!r} is not a region where HyperPod runs")
        if self.deps.records.load(self.req.region, self.name) is not None:
            raise Conflict(f"PodStart already has a cluster named {self.name!r} in {self.req.region}",
                           errors=[{"loc": ["body", "name"], "msg": "already known to PodStart; pass another name"}])
        tracked = [r for r in self.deps.records.all()
                   if r.region == self.req.region and r.eks_cluster_name == self.req.eks_cluster_name]
        if tracked:
            raise Conflict(f"EKS cluster {self.req.eks_cluster_name!r} is already PodStart's cluster "
                           f"{tracked[0].name!r}", errors=[{"loc": ["body", "eks_cluster_name"],
                                                            "msg": "already tracked by PodStart"}])
        if self.deps.reader.describe_eks(self.req.region, self.req.eks_cluster_name) is None:
            raise InvalidInput.field(["body", "eks_cluster_name"],
                                     f"no EKS cluster {self.req.eks_cluster_name!r} in {self.req.region}")
        return {"name": self.name, "region": self.req.region, "eks_cluster_name": self.req.eks_cluster_name}

    def claim(self, op: Operation) -> None:
        rec = ClusterRecord(name=self.name, region=self.req.region, status=ClusterStatus.IMPORTING, origin="imported",
                            eks_cluster_name=self.req.eks_cluster_name, created_by=self.actor.name,
                            created_at=now_iso(), operation_id=op.id)
        if not self.deps.records.create(rec):
            raise Conflict(f"PodStart already has a cluster named {rec.name!r} in {rec.region}")

    def unclaim(self, op: Operation) -> None:
        self.deps.records.delete(self.req.region, self.name)


def import_cluster(deps: Deps, req: ClusterImport, actor: Actor, key: str | None,
                   dry_run: bool = False) -> Started | Plan:
    adm = ImportAdmission(deps, req, actor)
    return start_or_plan(deps, dry_run=dry_run, kind="cluster.import",
                         target=Target(cluster=adm.name, region=req.region), request=req.model_dump(mode="json"),
                         principal=actor, idempotency_key=key, admission=adm)
