"""Plan for cluster.software_update: one UpdateClusterSoftware call, and per instance group the update of its
instances batch by batch (from/to image where HyperPod says them), with the disruption it causes."""

from __future__ import annotations

from typing import Any

from functions.domain.clusters.software_update import batch_count, batch_size
from functions.domain.plans import Change, Draft, update
from functions.domain.plans.base import PlanInput


def _version(image: Any, release: Any) -> str | None:
    if image and release:
        return f"{image} (release {release})"
    return str(image or release) if (image or release) else None


def plan_software_update(p: PlanInput) -> Draft:
    r = p.request
    pct = int(r["batch_percent"])
    facts: dict[str, dict[str, Any]] = {g["name"]: g for g in p.facts.get("groups") or []}
    deployment: dict[str, Any] = {"RollingUpdatePolicy": {"MaximumBatchSize": {"Type": "CAPACITY_PERCENT",
                                                                               "Value": pct}}}
    if r.get("wait_seconds") is not None:
        deployment["WaitIntervalInSeconds"] = r["wait_seconds"]
    call: dict[str, Any] = {"InstanceGroups": [{"InstanceGroupName": g} for g in r["groups"]],
                            "DeploymentConfig": deployment}
    if r.get("image_id"):
        call["ImageId"] = r["image_id"]
    changes: list[Change] = [update("AWS::SageMaker::Cluster", str(r.get("hyperpod_cluster") or r["cluster"]),
                                    "update", call="UpdateClusterSoftware", **call)]
    total_batches = 0
    warnings: list[str] = []
    for name in r["groups"]:
        g = facts.get(name) or {}
        n = int(g.get("instances") or (r.get("instances") or {}).get(name) or 0)
        size, count = batch_size(n, pct), batch_count(n, pct)
        total_batches += count
        # HyperPod says which release `default` means only once the update runs (DesiredImage* before it is the
        # image the group is meant to run now, not the next one)
        to = r.get("image_id") or "the latest HyperPod release"
        changes.append(update("AWS::SageMaker::ClusterInstanceGroup", name, "watch", instances=n,
                              instance_type=g.get("instance_type"), batches=count, batch_size=size,
                              from_image=_version(g.get("current_image"), g.get("current_release")) or "unknown",
                              to_image=to, image_status=g.get("image_status"),
                              then="every instance watched back to Running on the new image"))
        if n:
            warnings.append(f"{name}: {n} instance(s) restart in {count} batch(es) of at most {size}; pods running "
                            "on a batch's nodes are disrupted (the nodes go NotReady and unschedulable until "
                            "they rejoin)")
    warnings.append("nodes reboot batch by batch onto the new software: checkpoint long-running jobs first; "
                    "the cluster is SystemUpdating (no other change) until every batch is done")
    if r.get("wait_seconds"):
        warnings.append(f"HyperPod waits {r['wait_seconds']} s between batches")
    return Draft(changes=[c.model_copy(update={"action": "none"}) if c.step in p.skip_steps else c
                          for c in changes], warnings=warnings)
