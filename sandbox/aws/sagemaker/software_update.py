"""Platform software updates: UpdateClusterSoftware with a rolling deployment.

A cluster's groups start on `PREVIOUS` (an older HyperPod release, `ImageVersionStatus: UpdateAvailable`);
an update moves the named groups to `LATEST` (or to the `ImageId` asked), group after group, each in batches
of at most `MaximumBatchSize` instances (`CAPACITY_PERCENT`: that percent of the group rounded down, at least
one; `INSTANCE_COUNT`: that many). The cluster is SystemUpdating meanwhile (groups SystemUpdating,
`SoftwareUpdateStatus: InProgress`). Each batch's instances go SystemUpdating (their Kubernetes Nodes NotReady,
`node-health-status: Unschedulable` and tainted) for `BATCH_S` AWS seconds, then Running on the new image
(`CurrentImageId`, `CurrentImageReleaseVersion`, `LastSoftwareUpdateTime` in DescribeClusterNode and
ListClusterNodes); `WaitIntervalInSeconds` passes between batches; a cluster event marks each batch's start and
end. An instance with a simulated `unreachable` fault fails its batch: it goes Failure, the group's
`SoftwareUpdateStatus` Failed, the cluster InService again with the rest of the groups untouched.
"""

from __future__ import annotations

import math
from typing import Any

from sandbox.aws.runtime import RUNTIME, now
from sandbox.aws.sagemaker.common import validation
from sandbox.aws.sagemaker.events import record_event, set_status
from sandbox.aws.sagemaker.nodes import IMAGE_KEYS, set_node_status
from sandbox.aws.sagemaker.store import HyperPodCluster, require_in_service, store

BATCH_S = 600.0  # one batch: instances restart on the new image and rejoin (AWS seconds, time-scaled)
PREVIOUS = {"CurrentImageId": "ami-0a1b2c3d4e5f60718", "CurrentImageReleaseVersion": "2025.9.15"}
LATEST = {"CurrentImageId": "ami-0f9e8d7c6b5a40321", "CurrentImageReleaseVersion": "2025.11.20"}


def initial_image() -> dict[str, str]:
    """What a new group (and its instances) runs: the previous release, an update available."""
    return {**PREVIOUS, "DesiredImageId": PREVIOUS["CurrentImageId"],
            "DesiredImageReleaseVersion": PREVIOUS["CurrentImageReleaseVersion"],
            "ImageVersionStatus": "UpdateAvailable"}


__all__ = ["IMAGE_KEYS", "initial_image", "update_cluster_software"]


def _batch_size(c: HyperPodCluster, group: str, size: dict[str, Any]) -> tuple[list[list[str]], int]:
    ids = sorted(i for i, n in c.nodes.items()
                 if n["InstanceGroupName"] == group and n["InstanceStatus"]["Status"] != "ShuttingDown")
    if not ids:
        return [], 0
    value = int(size.get("Value") or 0)
    per = max(1, math.floor(len(ids) * value / 100)) if size.get("Type") == "CAPACITY_PERCENT" else value
    per = min(per, len(ids))
    return [ids[i:i + per] for i in range(0, len(ids), per)], per


def update_cluster_software(self: Any) -> Any:
    from moto.core.responses import ActionResult

    params = self._get_params()
    with RUNTIME.lock:
        c = store(self.region).get(params["ClusterName"])
        require_in_service(c, "UpdateClusterSoftware")
        groups = [g.get("InstanceGroupName") for g in params.get("InstanceGroups") or []]
        if not groups:
            raise validation("InstanceGroups must name at least one instance group.")
        for g in groups:
            if g not in c.groups:
                raise validation(f"Instance group {g} does not exist in cluster {c.name}.")
        config = params.get("DeploymentConfig") or {}
        size = (config.get("RollingUpdatePolicy") or {}).get("MaximumBatchSize") or {"Type": "CAPACITY_PERCENT",
                                                                                     "Value": 100}
        if size.get("Type") not in ("INSTANCE_COUNT", "CAPACITY_PERCENT") or int(size.get("Value") or 0) < 1 or (
                size.get("Type") == "CAPACITY_PERCENT" and int(size["Value"]) > 100):
            raise validation(f"MaximumBatchSize {size} is not valid: Type INSTANCE_COUNT (1 or more) or "
                             "CAPACITY_PERCENT (1-100).")
        wait = float(config.get("WaitIntervalInSeconds") or 0)
        image = params.get("ImageId") or "default"
        target = dict(LATEST) if image == "default" else {**LATEST, "CurrentImageId": image}
        batches: list[tuple[str, list[str], int, int]] = []
        for g in groups:
            chunks, _ = _batch_size(c, g, size)
            batches += [(g, ids, k + 1, len(chunks)) for k, ids in enumerate(chunks)]
            detail = c.groups[g]
            detail.update({"Status": "SystemUpdating", "SoftwareUpdateStatus": "InProgress",
                           "DesiredImageId": target["CurrentImageId"],
                           "DesiredImageReleaseVersion": target["CurrentImageReleaseVersion"],
                           "ActiveSoftwareUpdateConfig": config})
        set_status(c, "SystemUpdating")
        record_event(c, "Cluster", f"Software update started on instance group(s) {', '.join(groups)} to release "
                                   f"{target['CurrentImageReleaseVersion']} ({target['CurrentImageId']}): "
                                   f"{len(batches)} batch(es)")
        RUNTIME.after(1.0, lambda: _start_batch(c, groups, batches, 0, target, wait))
        return ActionResult({"ClusterArn": c.arn})


def _live(c: HyperPodCluster) -> bool:
    return store(c.region).clusters.get(c.name) is c and c.status == "SystemUpdating"


def _start_batch(c: HyperPodCluster, groups: list[str], batches: list[tuple[str, list[str], int, int]], i: int,
                 target: dict[str, str], wait: float) -> None:
    with RUNTIME.lock:
        if not _live(c):
            return
        if i >= len(batches):
            _finish(c, groups, target)
            return
        group, ids, k, of = batches[i]
        ids = [x for x in ids if x in c.nodes]
        record_event(c, "InstanceGroup", f"Software update of instance group {group}: batch {k} of {of} started on "
                                         f"{len(ids)} instance(s): {', '.join(ids)}", group)
        broken = [x for x in ids if (c.faults.get(x) or {}).get("kind") == "unreachable"]
        if broken:
            _fail(c, groups, group, broken[0])
            return
        for node_id in ids:
            set_node_status(c, node_id, "SystemUpdating",
                            f"Updating platform software to release {target['CurrentImageReleaseVersion']} "
                            f"(batch {k} of {of})")
        RUNTIME.after(BATCH_S, lambda: _end_batch(c, groups, batches, i, ids, target, wait))


def _end_batch(c: HyperPodCluster, groups: list[str], batches: list[tuple[str, list[str], int, int]], i: int,
               ids: list[str], target: dict[str, str], wait: float) -> None:
    with RUNTIME.lock:
        if not _live(c):
            return
        group, _, k, of = batches[i]
        for node_id in ids:
            node = c.nodes.get(node_id)
            if node is None or node["InstanceStatus"]["Status"] != "SystemUpdating":
                continue
            node.update({**target, "DesiredImageId": target["CurrentImageId"],
                         "DesiredImageReleaseVersion": target["CurrentImageReleaseVersion"],
                         "ImageVersionStatus": "UpToDate", "LastSoftwareUpdateTime": now()})
            set_node_status(c, node_id, "Running", f"Platform software updated to release "
                                                   f"{target['CurrentImageReleaseVersion']}")
        record_event(c, "InstanceGroup", f"Software update of instance group {group}: batch {k} of {of} completed",
                     group)
        RUNTIME.after(max(wait, 1.0), lambda: _start_batch(c, groups, batches, i + 1, target, wait))


def _finish(c: HyperPodCluster, groups: list[str], target: dict[str, str]) -> None:
    for g in groups:
        detail = c.groups.get(g)
        if detail is None:
            continue
        detail.update({**target, "Status": "InService", "SoftwareUpdateStatus": "Succeeded",
                       "ImageVersionStatus": "UpToDate"})
        detail.pop("ActiveSoftwareUpdateConfig", None)
    record_event(c, "Cluster", f"Software update completed on instance group(s) {', '.join(groups)}: release "
                               f"{target['CurrentImageReleaseVersion']}")
    set_status(c, "InService")


def _fail(c: HyperPodCluster, groups: list[str], group: str, node_id: str) -> None:
    set_node_status(c, node_id, "Failure", "Software update failed: the instance did not come back after restart")
    for g in groups:
        detail = c.groups.get(g)
        if detail is None:
            continue
        detail["Status"] = "InService"
        detail.pop("ActiveSoftwareUpdateConfig", None)
        detail["SoftwareUpdateStatus"] = "Failed" if g == group else detail.get("SoftwareUpdateStatus", "Pending")
    record_event(c, "InstanceGroup", f"Software update of instance group {group} failed on instance {node_id}",
                 group, node_id, level="Error")
    set_status(c, "InService")
