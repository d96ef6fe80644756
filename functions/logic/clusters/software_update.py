"""POST /v1/clusters/{cluster}/software-update: HyperPod's UpdateClusterSoftware on instance groups, rolling
batch by batch (operation cluster.software_update, operator).

Refused, changing nothing: an imported cluster (409: its owners patch it; the IAM grant is for clusters PodStart
created), a group the cluster does not have (422 naming body.groups[i]), another operation
running on the cluster (409 naming it), a cluster that is not ACTIVE in PodStart or whose HyperPod cluster is
not InService (409: HyperPod updates software only on an InService cluster). A retry with the same
Idempotency-Key returns the first operation (admission runs for a new request only, so a cluster busy with
that very update does not refuse its own replay)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from functions.domain.clusters.record import ClusterRecord
from functions.domain.clusters.software_update import SoftwareUpdate
from functions.domain.errors import Conflict, InvalidInput
from functions.domain.operations import Actor, Operation, Target
from functions.domain.plans import Plan
from functions.logic.clusters.group_add import require_active
from functions.logic.clusters.views import find_record
from functions.logic.deps import Deps
from functions.logic.plans import Started, start_or_plan


def _group_fact(g: dict[str, Any]) -> dict[str, Any]:
    return {"name": g["InstanceGroupName"], "instance_type": g.get("InstanceType"),
            "instances": int(g.get("CurrentCount", g.get("TargetCount", 0)) or 0),
            "current_image": g.get("CurrentImageId"), "current_release": g.get("CurrentImageReleaseVersion"),
            "image_status": g.get("ImageVersionStatus")}


@dataclass
class SoftwareUpdateAdmission:
    deps: Deps
    rec: ClusterRecord
    body: SoftwareUpdate
    target: Target
    facts: dict[str, Any] = field(default_factory=dict)

    def normalize(self) -> dict[str, Any]:
        rec = self.rec
        if rec.origin == "imported":
            raise Conflict(f"{rec.name} is imported: PodStart does not update its platform software (every node "
                           "restarts); its owners patch it with their own tooling")
        hp = self.deps.reader.describe_hyperpod(rec.region, rec.hyperpod_cluster_name or rec.name)
        live = {g["InstanceGroupName"]: g for g in (hp or {}).get("InstanceGroups", [])}
        names = self.body.groups if self.body.groups is not None else sorted(live)
        unknown = [(i, g) for i, g in enumerate(names) if g not in live]
        if hp is not None and unknown:
            raise InvalidInput.of([{"loc": ["body", "groups", i], "msg": f"{rec.name} has no instance group {g!r}"}
                                   for i, g in unknown])
        self.deps.operations.check_free(self.target)
        require_active(rec)
        status = (hp or {}).get("ClusterStatus")
        if status != "InService":
            raise Conflict(f"HyperPod cluster {rec.hyperpod_cluster_name} is {status or 'not there'}: its software "
                           "updates only when it is InService; wait for what it is doing to finish")
        self.facts["groups"] = [_group_fact(live[g]) for g in names]
        return {"cluster": rec.name, "region": rec.region, "hyperpod_cluster": rec.hyperpod_cluster_name,
                "eks_cluster": rec.eks_cluster_name, "groups": names,
                "batch_percent": self.body.rolling.batch_percent, "image_id": self.body.image_id,
                "wait_seconds": self.body.wait_seconds,
                "instances": {g: int(self.facts["groups"][i]["instances"]) for i, g in enumerate(names)}}

    def claim(self, op: Operation) -> None:
        pass

    def unclaim(self, op: Operation) -> None:
        pass


def update_software(deps: Deps, name: str, region: str | None, body: SoftwareUpdate, actor: Actor,
                    key: str | None, dry_run: bool = False) -> Started | Plan:
    rec = find_record(deps, name, region)
    target = Target(cluster=rec.name, region=rec.region, resource="software")
    return start_or_plan(
        deps, dry_run=dry_run, kind="cluster.software_update", target=target,
        request={"cluster": rec.name, "region": rec.region, **body.model_dump(mode="json")},
        principal=actor, idempotency_key=key, admission=SoftwareUpdateAdmission(deps, rec, body, target))
