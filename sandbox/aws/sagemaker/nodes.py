"""Nodes: launch, status transitions, removal; BatchDelete/Reboot/ReplaceClusterNodes,
ListClusterNodes and DescribeClusterNode."""

from __future__ import annotations

import copy
import random
import secrets
from collections.abc import Callable
from typing import Any

from sandbox.aws.runtime import ACCOUNT_ID, RUNTIME, now
from sandbox.aws.sagemaker import kube_nodes
from sandbox.aws.sagemaker.common import not_found, paginate, ts
from sandbox.aws.sagemaker.events import record_event
from sandbox.aws.sagemaker.kube_nodes import PENDING_REBOOT, PENDING_REPLACEMENT, SCHEDULABLE, UNSCHEDULABLE
from sandbox.aws.sagemaker.store import HyperPodCluster, require_in_service, store

IMAGE_KEYS = ("CurrentImageId", "DesiredImageId", "CurrentImageReleaseVersion", "DesiredImageReleaseVersion",
              "ImageVersionStatus")
NODE_DELETE_S = 120.0
REBOOT_S = 180.0
REPLACE_S = 600.0
NODE_HEALTH_EVENT = "SageMaker HyperPod Cluster Node Health Event"


def set_node_status(c: HyperPodCluster, node_id: str, status: str, message: str = "") -> None:
    node = c.nodes.get(node_id)
    if node is None:
        return
    node["InstanceStatus"] = {"Status": status, "Message": message or status}
    record_event(
        c, "Instance", f"Instance {node_id} status changed to {status}", node["InstanceGroupName"], node_id,
        level="Error" if status == "Failure" else "Info",
    )
    announce(c, node_id)


def _repair_action(health: str) -> str:
    return {PENDING_REBOOT: "Reboot", PENDING_REPLACEMENT: "Replace"}.get(health, "None")


def announce(c: HyperPodCluster, node_id: str) -> None:
    """Bring the instance's Kubernetes Node up to date; when its health changed, say so as HyperPod does:
    a cluster event and an EventBridge 'SageMaker HyperPod Cluster Node Health Event'."""
    kube_nodes.sync(c, node_id)
    node = c.nodes.get(node_id)
    if node is None:
        c.health.pop(node_id, None)
        return
    status = node["InstanceStatus"]["Status"]
    health = kube_nodes.health_of(c, node)
    prev = c.health.get(node_id)
    if prev is None and status not in ("DeepHealthCheckInProgress", "Running"):
        return  # not joined yet
    if prev == health:
        return
    c.health[node_id] = health
    if prev is None and health in (SCHEDULABLE, UNSCHEDULABLE):
        return  # joining (healthy, or into deep health checks) is not news
    fault = kube_nodes.active_fault(c, node_id)
    deep = c.deep_checks.get(node_id) or {}
    reason = str(fault["message"]) if fault and status == "Running" and deep.get("status") != "Failed" \
        else node["InstanceStatus"].get("Message", status)
    record_event(
        c, "Instance", f"Instance {node_id} health status changed to {health}: {reason}",
        node["InstanceGroupName"], node_id, level="Info" if health == SCHEDULABLE else "Warn",
    )
    RUNTIME.put_event(
        c.region,
        "aws.sagemaker",
        NODE_HEALTH_EVENT,
        {
            "ClusterArn": c.arn,
            "ClusterName": c.name,
            "InstanceGroupName": node["InstanceGroupName"],
            "InstanceId": node_id,
            "NodeLogicalId": node["NodeLogicalId"],
            "KubernetesNodeName": kube_nodes.node_name(node_id),
            "HealthStatus": health,
            "PreviousHealthStatus": prev,
            "HealthStatusReason": reason,
            "FaultType": fault["kind"] if fault and status == "Running" else None,
            "RepairAction": _repair_action(health),
            "NodeRecovery": c.spec.get("NodeRecovery", "Automatic"),
            "InstanceStatus": status,
        },
        [c.arn],
    )


def reboot_node(c: HyperPodCluster, node_id: str, reason: str = "Rebooting") -> None:
    """Pending (rebooting) now, Running after REBOOT_S; a reboot clears a fault the instance had."""
    set_node_status(c, node_id, "Pending", reason)

    def back() -> None:
        node = c.nodes.get(node_id)
        if node and node["InstanceStatus"]["Status"] == "Pending":
            c.faults.pop(node_id, None)
            c.deep_checks.pop(node_id, None)
            set_node_status(c, node_id, "Running")

    RUNTIME.after(REBOOT_S, back)


def replace_node(c: HyperPodCluster, node_id: str) -> None:
    """The instance shuts down (storage wiped) and a new one, with a new instance id, takes its place."""
    node = c.nodes.get(node_id)
    if node is None or node_id in c.replacing:
        return
    c.replacing.add(node_id)
    group = c.groups[node["InstanceGroupName"]]
    remove_node(c, node_id, NODE_DELETE_S)
    add_nodes(c, group, 1, REPLACE_S)


def _subnet_placement(region: str, subnets: list[str]) -> dict[str, str]:
    from moto.ec2.models import ec2_backends

    backend = ec2_backends[ACCOUNT_ID][region]
    for subnet_id in subnets:
        try:
            subnet = backend.get_subnet(subnet_id)
            return {
                "AvailabilityZone": subnet.availability_zone,
                "AvailabilityZoneId": subnet.availability_zone_id,
            }
        except Exception:
            continue
    return {"AvailabilityZone": f"{region}a", "AvailabilityZoneId": ""}


def add_nodes(c: HyperPodCluster, group: dict[str, Any], count: int, ready_s: float) -> None:
    """Add count nodes Pending; Running after ready_s (through DeepHealthCheckInProgress if asked)."""
    vpc = group.get("OverrideVpcConfig") or c.spec.get("VpcConfig") or {}
    placement = _subnet_placement(c.region, vpc.get("Subnets", []))
    if group.get("TrainingPlanArn"):
        plan = store(c.region).plans.get(group["TrainingPlanArn"])
        if plan:
            rc = plan["ReservedCapacitySummaries"][0]
            placement = {
                "AvailabilityZone": rc["AvailabilityZone"],
                "AvailabilityZoneId": rc["AvailabilityZoneId"],
            }
    deep = bool(group.get("OnStartDeepHealthChecks"))
    for _ in range(count):
        node_id = "i-0" + secrets.token_hex(8)
        ip = f"10.{random.randint(0, 255)}.{random.randint(0, 255)}.{random.randint(1, 254)}"
        c.nodes[node_id] = {
            "InstanceGroupName": group["InstanceGroupName"],
            "InstanceId": node_id,
            "NodeLogicalId": f"{group['InstanceGroupName']}-{secrets.token_hex(6)}",
            "InstanceStatus": {"Status": "Pending", "Message": "Pending"},
            "InstanceType": group["InstanceType"],
            "LaunchTime": now(),
            "LifeCycleConfig": group.get("LifeCycleConfig"),
            "ThreadsPerCore": group.get("ThreadsPerCore"),
            "InstanceStorageConfigs": group.get("InstanceStorageConfigs", []),
            "PrivatePrimaryIp": ip,
            "PrivateDnsHostname": f"ip-{ip.replace('.', '-')}.{c.region}.compute.internal",
            "Placement": placement,
            "KubernetesConfig": group.get("KubernetesConfig"),
            "CapacityType": "Spot" if "Spot" in (group.get("CapacityRequirements") or {}) else "OnDemand",
            "NetworkInterface": group.get("NetworkInterface"),
            **{k: group[k] for k in IMAGE_KEYS if group.get(k)},  # a new instance boots the group's image
        }
        record_event(c, "Instance", f"Instance {node_id} launched", group["InstanceGroupName"], node_id)
        if deep:
            RUNTIME.after(ready_s * 0.6, node_transition(c, node_id, "Pending", "DeepHealthCheckInProgress"))
            RUNTIME.after(ready_s * 0.95, node_transition(c, node_id, "DeepHealthCheckInProgress", "Running"))
        else:
            RUNTIME.after(ready_s * 0.9, node_transition(c, node_id, "Pending", "Running"))


def node_transition(c: HyperPodCluster, node_id: str, from_status: str, to_status: str) -> Callable[[], None]:
    def run() -> None:
        node = c.nodes.get(node_id)
        if node and node["InstanceStatus"]["Status"] == from_status:
            set_node_status(c, node_id, to_status)

    return run


def remove_node(c: HyperPodCluster, node_id: str, after_s: float) -> None:
    set_node_status(c, node_id, "ShuttingDown")

    def gone() -> None:
        node = c.nodes.pop(node_id, None)
        c.replacing.discard(node_id)
        c.faults.pop(node_id, None)
        c.deep_checks.pop(node_id, None)
        c.health.pop(node_id, None)
        kube_nodes.remove(c, node_id)
        if node is not None:
            record_event(c, "Instance", f"Instance {node_id} terminated", node["InstanceGroupName"], node_id)

    RUNTIME.after(after_s, gone)


def _resolve_nodes(c: HyperPodCluster, params: dict[str, Any]) -> tuple[list[str], list[str], list[str]]:
    """(found node ids, missing NodeIds, missing NodeLogicalIds)."""
    found: list[str] = []
    missing_ids: list[str] = []
    missing_logical: list[str] = []
    by_logical = {n["NodeLogicalId"]: i for i, n in c.nodes.items()}
    for node_id in params.get("NodeIds") or []:
        (found if node_id in c.nodes else missing_ids).append(node_id)
    for logical in params.get("NodeLogicalIds") or []:
        if logical in by_logical:
            found.append(by_logical[logical])
        else:
            missing_logical.append(logical)
    return found, missing_ids, missing_logical


def batch_delete_cluster_nodes(self: Any) -> Any:
    from moto.core.responses import ActionResult

    params = self._get_params()
    with RUNTIME.lock:
        c = store(self.region).get(params["ClusterName"])
        found, missing, missing_logical = _resolve_nodes(c, params)
        for node_id in found:
            node = c.nodes[node_id]
            group = c.groups.get(node["InstanceGroupName"])
            if group is not None and node["InstanceStatus"]["Status"] != "ShuttingDown":
                group["TargetCount"] = max(group["TargetCount"] - 1, 0)
            remove_node(c, node_id, NODE_DELETE_S)
        return ActionResult(
            {
                "Successful": [i for i in found if i in (params.get("NodeIds") or [])],
                "SuccessfulNodeLogicalIds": [
                    c.nodes[i]["NodeLogicalId"] for i in found if i not in (params.get("NodeIds") or [])
                ],
                "Failed": [
                    {"NodeId": i, "Code": "NodeIdNotFound", "Message": f"Node {i} not found"} for i in missing
                ],
                "FailedNodeLogicalIds": [
                    {"NodeLogicalId": i, "Code": "NodeIdNotFound", "Message": "not found"}
                    for i in missing_logical
                ],
            }
        )


def _batch_node_action(self: Any, action: str) -> Any:
    from moto.core.responses import ActionResult

    params = self._get_params()
    with RUNTIME.lock:
        c = store(self.region).get(params["ClusterName"])
        require_in_service(c, action)
        found, missing, missing_logical = _resolve_nodes(c, params)
        for node_id in found:
            if action == "BatchRebootClusterNodes":
                reboot_node(c, node_id)
            else:
                replace_node(c, node_id)
        return ActionResult(
            {
                "Successful": [i for i in found if i in (params.get("NodeIds") or [])],
                "SuccessfulNodeLogicalIds": [
                    c.nodes[i]["NodeLogicalId"] for i in found if i not in (params.get("NodeIds") or [])
                ],
                "Failed": [
                    {"NodeId": i, "ErrorCode": "InstanceIdNotFound", "Message": f"Node {i} not found"}
                    for i in missing
                ],
                "FailedNodeLogicalIds": [
                    {"NodeLogicalId": i, "ErrorCode": "InstanceIdNotFound", "Message": "not found"}
                    for i in missing_logical
                ],
            }
        )


def batch_reboot_cluster_nodes(self: Any) -> Any:
    return _batch_node_action(self, "BatchRebootClusterNodes")


def batch_replace_cluster_nodes(self: Any) -> Any:
    return _batch_node_action(self, "BatchReplaceClusterNodes")


_SUMMARY_KEYS = (
    "InstanceGroupName",
    "InstanceId",
    "NodeLogicalId",
    "InstanceType",
    "LaunchTime",
    "InstanceStatus",
    "PrivateDnsHostname",
    "LastSoftwareUpdateTime",
    "CurrentImageReleaseVersion",
    "ImageVersionStatus",
)


def list_cluster_nodes(self: Any) -> Any:
    from moto.core.responses import ActionResult

    with RUNTIME.lock:
        c = store(self.region).get(self._get_param("ClusterName"))
        nodes = [copy.deepcopy(n) for n in c.nodes.values()]
    contains = self._get_param("InstanceGroupNameContains")
    if contains:
        nodes = [n for n in nodes if contains in n["InstanceGroupName"]]
    after, before = self._get_param("CreationTimeAfter"), self._get_param("CreationTimeBefore")
    if after:
        nodes = [n for n in nodes if n["LaunchTime"].timestamp() > ts(after)]
    if before:
        nodes = [n for n in nodes if n["LaunchTime"].timestamp() < ts(before)]
    by_name = self._get_param("SortBy") == "Name"
    nodes.sort(
        key=lambda n: (
            (n["InstanceGroupName"], n["InstanceId"]) if by_name else (n["LaunchTime"], n["InstanceId"])
        ),
        reverse=self._get_param("SortOrder") == "Descending",
    )
    page, token = paginate(nodes, self._get_param("MaxResults"), self._get_param("NextToken"))
    return ActionResult(
        {"ClusterNodeSummaries": [{k: n[k] for k in _SUMMARY_KEYS if k in n} for n in page], "NextToken": token}
    )


def describe_cluster_node(self: Any) -> Any:
    from moto.core.responses import ActionResult

    params = self._get_params()
    with RUNTIME.lock:
        c = store(self.region).get(params["ClusterName"])
        found, _, _ = _resolve_nodes(
            c,
            {
                "NodeIds": [params["NodeId"]] if params.get("NodeId") else [],
                "NodeLogicalIds": [params["NodeLogicalId"]] if params.get("NodeLogicalId") else [],
            },
        )
        if not found:
            raise not_found(
                f"Resource Not Found: Node '{params.get('NodeId') or params.get('NodeLogicalId')}' "
                f"does not exist in cluster '{c.name}'."
            )
        return ActionResult({"NodeDetails": copy.deepcopy(c.nodes[found[0]])})
