"""Nodes: launch, status transitions, removal; BatchDelete/Reboot/ReplaceClusterNodes,
ListClusterNodes and DescribeClusterNode."""

from __future__ import annotations

import copy
import random
import secrets
from collections.abc import Callable
from typing import Any

from sandbox.aws.runtime import ACCOUNT_ID, RUNTIME, now
from sandbox.aws.sagemaker.common import not_found, paginate, ts
from sandbox.aws.sagemaker.events import record_event
from sandbox.aws.sagemaker.store import HyperPodCluster, require_in_service, store

NODE_DELETE_S = 120.0
REBOOT_S = 180.0
REPLACE_S = 600.0


def set_node_status(c: HyperPodCluster, node_id: str, status: str, message: str = "") -> None:
    node = c.nodes.get(node_id)
    if node is None:
        return
    node["InstanceStatus"] = {"Status": status, "Message": message or status}
    mirror_node(c, node)
    record_event(
        c, "Instance", f"Instance {node_id} status changed to {status}", node["InstanceGroupName"], node_id
    )


def _kube_store(c: HyperPodCluster) -> Any:
    arn = (((c.spec.get("Orchestrator") or {}).get("Eks") or {}).get("ClusterArn")) or ""
    return RUNTIME.kube.store_or_none(arn.rsplit("/", 1)[-1]) if RUNTIME.kube is not None and arn else None


def mirror_node(c: HyperPodCluster, node: dict[str, Any], gone: bool = False) -> None:
    """A Running HyperPod instance is a Ready Kubernetes Node of its EKS cluster (labels as HyperPod sets them,
    GPUs allocatable as the NVIDIA device plugin reports them); a terminated one leaves the cluster."""
    store = _kube_store(c)
    if store is None:
        return
    name = node["PrivateDnsHostname"]
    if gone or node["InstanceStatus"]["Status"] not in ("Running",):
        if store.get("v1", "Node", name) is not None and (gone or node["InstanceStatus"]["Status"] in (
                "ShuttingDown", "Failure")):
            store.delete("v1", "Node", name)
        return
    from moto.ec2.models.instance_types import INSTANCE_TYPES

    info = INSTANCE_TYPES.get(node["InstanceType"].removeprefix("ml."), {})
    gpus = sum(int(g.get("Count") or 0) for g in (info.get("GpuInfo") or {}).get("Gpus") or [])
    cpus = int((info.get("VCpuInfo") or {}).get("DefaultVCpus") or 2)
    mem = int((info.get("MemoryInfo") or {}).get("SizeInMiB") or 4096)
    capacity = {"cpu": str(cpus), "memory": f"{mem}Mi", "pods": "110",
                **({"nvidia.com/gpu": str(gpus)} if gpus else {})}
    zone = node["Placement"]["AvailabilityZone"]
    store.put({"apiVersion": "v1", "kind": "Node",
               "metadata": {"name": name, "labels": {
                   "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                   "node.kubernetes.io/instance-type": node["InstanceType"],
                   "topology.kubernetes.io/zone": zone,
                   "sagemaker.amazonaws.com/instance-group-name": node["InstanceGroupName"],
                   "sagemaker.amazonaws.com/node-health-status": "Schedulable",
                   "sagemaker.amazonaws.com/compute-type": "hyperpod"}},
               "spec": {"providerID": f"aws:///{zone}/{node['InstanceId']}"},
               "status": {"capacity": capacity, "allocatable": capacity,
                          "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                          "message": "kubelet is posting ready status"}],
                          "addresses": [{"type": "InternalIP", "address": node["PrivatePrimaryIp"]}]}})


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
        if (node := c.nodes.pop(node_id, None)) is not None:
            mirror_node(c, node, gone=True)
            record_event(c, "Instance", f"Instance {node_id} terminated", None, node_id)

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
            node = c.nodes[node_id]
            if action == "BatchRebootClusterNodes":
                set_node_status(c, node_id, "Pending", "Rebooting")
                RUNTIME.after(REBOOT_S, node_transition(c, node_id, "Pending", "Running"))
            else:
                group = c.groups[node["InstanceGroupName"]]
                remove_node(c, node_id, NODE_DELETE_S)
                add_nodes(c, group, 1, REPLACE_S)
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
        {"ClusterNodeSummaries": [{k: n[k] for k in _SUMMARY_KEYS} for n in page], "NextToken": token}
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
