"""SageMaker HyperPod extension: a faithful cluster store replacing moto's cluster operations.

moto 5.2 drops Orchestrator/NodeRecovery, rejects current instance types, never leaves InService
and cannot paginate nodes. Here clusters keep every request field, move Creating -> InService
(and Updating, Deleting) on the time scale, nodes come and go through realistic statuses, and
training plans, cluster events and EventBridge state-change events exist.
"""

from __future__ import annotations

import copy
import datetime as dt
import random
import secrets
import string
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from sandbox.aws.runtime import ACCOUNT_ID, RUNTIME, now

CREATE_S = 1200.0  # HyperPod cluster creation: ~20 min
UPDATE_S = 600.0
DELETE_S = 300.0
NODE_DELETE_S = 120.0
REBOOT_S = 180.0
REPLACE_S = 600.0

SEED_PLANS: dict[str, list[tuple[str, str, int, str, str]]] = {
    # region -> (plan name, instance type, count, AZ, AZ id)
    "us-west-2": [
        ("p5-4x-usw2", "ml.p5.48xlarge", 4, "us-west-2a", "usw2-az2"),
        ("p5en-2x-usw2", "ml.p5en.48xlarge", 2, "us-west-2c", "usw2-az3"),
    ],
    "us-east-1": [
        ("p5-4x-use1", "ml.p5.48xlarge", 4, "us-east-1a", "use1-az6"),
        ("p5en-2x-use1", "ml.p5en.48xlarge", 2, "us-east-1c", "use1-az2"),
    ],
    "us-east-2": [
        ("p5-4x-use2", "ml.p5.48xlarge", 4, "us-east-2b", "use2-az2"),
        ("p5en-2x-use2", "ml.p5en.48xlarge", 2, "us-east-2b", "use2-az2"),
    ],
    "eu-west-2": [
        ("p5-4x-euw2", "ml.p5.48xlarge", 4, "eu-west-2b", "euw2-az3"),
        ("p4d-2x-euw2", "ml.p4d.24xlarge", 2, "eu-west-2a", "euw2-az2"),
    ],
    "ap-northeast-1": [
        ("p5-4x-apne1", "ml.p5.48xlarge", 4, "ap-northeast-1c", "apne1-az1"),
        ("p5en-2x-apne1", "ml.p5en.48xlarge", 2, "ap-northeast-1a", "apne1-az4"),
    ],
}
_CLUSTER_FIELDS = (
    "Orchestrator",
    "NodeRecovery",
    "NodeProvisioningMode",
    "AutoScaling",
    "ClusterRole",
    "TieredStorageConfig",
    "RestrictedInstanceGroups",
)


def _errors() -> Any:
    from moto.sagemaker import exceptions

    return exceptions


def _validation(message: str) -> Exception:
    return _errors().ValidationError(message=message)


def _not_found(message: str) -> Exception:
    return _errors().ResourceNotFound(message=message)


def _limit(message: str) -> Exception:
    class ResourceLimitExceeded(_errors().SagemakerClientError):  # type: ignore[name-defined,misc]
        code = "ResourceLimitExceeded"

    return ResourceLimitExceeded(message)  # type: ignore[no-any-return]


def _conflict(message: str) -> Exception:
    return _errors().ConflictException(message)  # type: ignore[no-any-return]


@lru_cache(maxsize=1)
def cluster_instance_types() -> frozenset[str]:
    from sandbox.aws.quotas import cluster_instance_types as types

    return frozenset(types())


@dataclass
class HyperPodCluster:
    region: str
    name: str
    arn: str
    spec: dict[str, Any]  # every top-level request field but InstanceGroups
    groups: dict[str, dict[str, Any]]  # InstanceGroupName -> ClusterInstanceGroupDetails
    status: str = "Creating"
    failure_message: str = ""
    creation_time: dt.datetime = field(default_factory=now)
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)

    def describe(self) -> dict[str, Any]:
        groups = []
        for g in self.groups.values():
            detail = copy.deepcopy(g)
            detail["CurrentCount"] = sum(
                1
                for n in self.nodes.values()
                if n["InstanceGroupName"] == g["InstanceGroupName"]
                and n["InstanceStatus"]["Status"] == "Running"
            )
            groups.append(detail)
        out = {
            "ClusterArn": self.arn,
            "ClusterName": self.name,
            "ClusterStatus": self.status,
            "CreationTime": self.creation_time,
            "InstanceGroups": groups,
            **copy.deepcopy(self.spec),
        }
        if self.failure_message:
            out["FailureMessage"] = self.failure_message
        return out

    def summary(self) -> dict[str, Any]:
        plans = sorted({g["TrainingPlanArn"] for g in self.groups.values() if g.get("TrainingPlanArn")})
        out = {
            "ClusterArn": self.arn,
            "ClusterName": self.name,
            "CreationTime": self.creation_time,
            "ClusterStatus": self.status,
        }
        if plans:
            out["TrainingPlanArns"] = plans
        return out


class HyperPodStore:
    def __init__(self, region: str) -> None:
        self.region = region
        self.clusters: dict[str, HyperPodCluster] = {}
        self.plans: dict[str, dict[str, Any]] = {}

    def get(self, name_or_arn: str) -> HyperPodCluster:
        for c in self.clusters.values():
            if name_or_arn in (c.name, c.arn):
                return c
        raise _not_found(f"Resource Not Found: Cluster '{name_or_arn}' does not exist.")


_STORES: dict[str, HyperPodStore] = {}


def store(region: str) -> HyperPodStore:
    with RUNTIME.lock:
        if region not in _STORES:
            _STORES[region] = HyperPodStore(region)
        return _STORES[region]


# --- transitions ---------------------------------------------------------------------------


def _event(
    c: HyperPodCluster, resource: str, description: str, group: str | None = None, node: str | None = None
) -> None:
    event: dict[str, Any] = {
        "EventId": str(uuid.uuid4()),
        "ClusterArn": c.arn,
        "ClusterName": c.name,
        "ResourceType": resource,
        "EventTime": now(),
        "Description": description,
    }
    if group:
        event["InstanceGroupName"] = group
    if node:
        event["InstanceId"] = node
    c.events.append(event)


def _set_status(c: HyperPodCluster, status: str) -> None:
    if c.status == status:
        return
    c.status = status
    _event(c, "Cluster", f"Cluster {c.name} status changed to {status}")
    RUNTIME.put_event(
        c.region,
        "aws.sagemaker",
        "SageMaker HyperPod Cluster State Change",
        {"ClusterArn": c.arn, "ClusterName": c.name, "ClusterStatus": status},
        [c.arn],
    )


def _node_status(c: HyperPodCluster, node_id: str, status: str, message: str = "") -> None:
    node = c.nodes.get(node_id)
    if node is None:
        return
    node["InstanceStatus"] = {"Status": status, "Message": message or status}
    _event(
        c, "Instance", f"Instance {node_id} status changed to {status}", node["InstanceGroupName"], node_id
    )


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


def _add_nodes(c: HyperPodCluster, group: dict[str, Any], count: int, ready_s: float) -> None:
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
        _event(c, "Instance", f"Instance {node_id} launched", group["InstanceGroupName"], node_id)
        if deep:
            RUNTIME.after(ready_s * 0.6, _step(c, node_id, "Pending", "DeepHealthCheckInProgress"))
            RUNTIME.after(ready_s * 0.95, _step(c, node_id, "DeepHealthCheckInProgress", "Running"))
        else:
            RUNTIME.after(ready_s * 0.9, _step(c, node_id, "Pending", "Running"))


def _step(c: HyperPodCluster, node_id: str, from_status: str, to_status: str) -> Callable[[], None]:
    def run() -> None:
        node = c.nodes.get(node_id)
        if node and node["InstanceStatus"]["Status"] == from_status:
            _node_status(c, node_id, to_status)

    return run


def _remove_node(c: HyperPodCluster, node_id: str, after_s: float) -> None:
    _node_status(c, node_id, "ShuttingDown")

    def gone() -> None:
        if c.nodes.pop(node_id, None) is not None:
            _event(c, "Instance", f"Instance {node_id} terminated", None, node_id)

    RUNTIME.after(after_s, gone)


def _settle(c: HyperPodCluster, from_status: str, after_s: float) -> None:
    def run() -> None:
        if c.status != from_status or store(c.region).clusters.get(c.name) is not c:
            return
        for g in c.groups.values():
            if g["Status"] in ("Creating", "Updating"):
                g["Status"] = "InService"
                _event(
                    c,
                    "InstanceGroup",
                    f"Instance group {g['InstanceGroupName']} is InService",
                    g["InstanceGroupName"],
                )
        _set_status(c, "InService")

    RUNTIME.after(after_s, run)


def fail_cluster(region: str, name: str, message: str = "Simulated failure") -> None:
    """Test/sandbox helper: put a cluster into Failed with a FailureMessage."""
    with RUNTIME.lock:
        c = store(region).get(name)
        c.failure_message = message
        _set_status(c, "Failed")


# --- request handling -----------------------------------------------------------------------


def _group_detail(spec: dict[str, Any], status: str) -> dict[str, Any]:
    if spec.get("InstanceType") not in cluster_instance_types():
        raise _validation(
            f"1 validation error detected: Value '{spec.get('InstanceType')}' at "
            "'instanceGroups.member.instanceType' failed to satisfy constraint: "
            "Member must satisfy enum value set"
        )
    detail = copy.deepcopy(spec)
    detail["TargetCount"] = detail.pop("InstanceCount", 0)
    detail.setdefault("ThreadsPerCore", 2)
    detail.setdefault("InstanceStorageConfigs", [])
    detail["Status"] = status
    if "KubernetesConfig" in detail:  # request {Labels, Taints} -> details {Current*, Desired*}
        k8s = detail["KubernetesConfig"]
        detail["KubernetesConfig"] = {
            "CurrentLabels": k8s.get("Labels", {}),
            "DesiredLabels": k8s.get("Labels", {}),
            "CurrentTaints": k8s.get("Taints", []),
            "DesiredTaints": k8s.get("Taints", []),
        }
    if detail.get("TrainingPlanArn"):
        detail["TrainingPlanStatus"] = "Active"
    return detail


def _check_capacity(s: HyperPodStore, groups: list[dict[str, Any]], exclude: HyperPodCluster | None) -> None:
    """Training plans must exist and match; on-demand counts must fit the cluster-usage quotas."""
    from sandbox.aws.quotas import sagemaker_quotas

    quotas = {q["QuotaName"]: q["Value"] for q in sagemaker_quotas(s.region)}
    for g in groups:
        plan_arn = g.get("TrainingPlanArn")
        if plan_arn:
            plan = s.plans.get(plan_arn)
            if plan is None:
                raise _validation(f"Training plan {plan_arn} does not exist.")
            if plan["ReservedCapacitySummaries"][0]["InstanceType"] != g["InstanceType"]:
                raise _validation(
                    f"Instance type {g['InstanceType']} does not match training plan {plan_arn}."
                )
            continue
        used = sum(
            other["TargetCount"]
            for c in s.clusters.values()
            if c is not exclude
            for other in c.groups.values()
            if other["InstanceType"] == g["InstanceType"] and not other.get("TrainingPlanArn")
        ) + sum(
            x["TargetCount"]
            for x in groups
            if x["InstanceType"] == g["InstanceType"] and not x.get("TrainingPlanArn")
        )
        limit = quotas.get(f"{g['InstanceType']} for cluster usage", 0)
        if used > limit:
            raise _limit(
                f"The account-level service limit '{g['InstanceType']} for cluster usage' is "
                f"{int(limit)} Instances, with current utilization of {used - g['TargetCount']} "
                f"Instances and a request delta of {g['TargetCount']} Instances. Please use AWS "
                "Service Quotas to request an increase for this quota."
            )


def _check_orchestrator(region: str, spec: dict[str, Any]) -> None:
    arn = (spec.get("Orchestrator") or {}).get("Eks", {}).get("ClusterArn")
    if not arn:
        return
    from moto.eks.models import eks_backends

    name = arn.rsplit("/", 1)[-1]
    eks_region = arn.split(":")[3]
    if name not in eks_backends[ACCOUNT_ID][eks_region].clusters:
        raise _validation(f"Amazon EKS cluster {arn} does not exist.")


def create_cluster(self: Any) -> Any:
    from moto.core.responses import ActionResult

    params = dict(self._get_params())
    name = params.pop("ClusterName")
    with RUNTIME.lock:
        s = store(self.region)
        if name in s.clusters:
            raise _errors().ResourceInUseException(
                message=f"Resource Already Exists: Cluster with name {name} already exists. "
                "Choose a different name."
            )
        specs = params.pop("InstanceGroups", [])
        groups = [_group_detail(g, "Creating") for g in specs]
        _check_orchestrator(self.region, params)
        _check_capacity(s, groups, None)
        cluster_id = "".join(secrets.choice(string.ascii_lowercase + string.digits) for _ in range(12))
        c = HyperPodCluster(
            region=self.region,
            name=name,
            arn=f"arn:aws:sagemaker:{self.region}:{ACCOUNT_ID}:cluster/{cluster_id}",
            spec={k: v for k, v in params.items() if k not in ("ClientToken",)},
            groups={g["InstanceGroupName"]: g for g in groups},
        )
        c.spec.setdefault("NodeRecovery", "Automatic")
        s.clusters[name] = c
        _event(c, "Cluster", f"Cluster {name} creation started")
        RUNTIME.put_event(
            c.region,
            "aws.sagemaker",
            "SageMaker HyperPod Cluster State Change",
            {"ClusterArn": c.arn, "ClusterName": c.name, "ClusterStatus": c.status},
            [c.arn],
        )
        for g in groups:
            _add_nodes(c, g, g["TargetCount"], CREATE_S)
        _settle(c, "Creating", CREATE_S)
        return ActionResult({"ClusterArn": c.arn})


def describe_cluster(self: Any) -> Any:
    from moto.core.responses import ActionResult

    with RUNTIME.lock:
        return ActionResult(store(self.region).get(self._get_param("ClusterName")).describe())


def list_clusters(self: Any) -> Any:
    from moto.core.responses import ActionResult

    with RUNTIME.lock:
        clusters = list(store(self.region).clusters.values())
    contains = self._get_param("NameContains")
    if contains:
        clusters = [c for c in clusters if contains in c.name]
    reverse = self._get_param("SortOrder") == "Descending"
    key: Callable[[HyperPodCluster], Any] = (
        (lambda c: c.name) if self._get_param("SortBy") == "Name" else (lambda c: c.creation_time)
    )
    clusters.sort(key=key, reverse=reverse)
    page, token = _page(clusters, self._get_param("MaxResults"), self._get_param("NextToken"))
    return ActionResult({"ClusterSummaries": [c.summary() for c in page], "NextToken": token})


def _page(items: list[Any], max_results: Any, next_token: Any) -> tuple[list[Any], str | None]:
    start = int(next_token or 0)
    end = start + int(max_results or 100)
    return items[start:end], (str(end) if end < len(items) else None)


def delete_cluster(self: Any) -> Any:
    from moto.core.responses import ActionResult

    with RUNTIME.lock:
        s = store(self.region)
        c = s.get(self._get_param("ClusterName"))
        if c.status != "Deleting":
            _set_status(c, "Deleting")
            for g in c.groups.values():
                g["Status"] = "Deleting"
            for node_id in list(c.nodes):
                _node_status(c, node_id, "ShuttingDown")

            def gone() -> None:
                if s.clusters.get(c.name) is c:
                    del s.clusters[c.name]

            RUNTIME.after(DELETE_S, gone)
        return ActionResult({"ClusterArn": c.arn})


def _in_service(c: HyperPodCluster, operation: str) -> None:
    if c.status != "InService":
        raise _conflict(f"Cluster {c.name} is in {c.status} status; {operation} needs InService.")


def update_cluster(self: Any) -> Any:
    from moto.core.responses import ActionResult

    params = self._get_params()
    with RUNTIME.lock:
        s = store(self.region)
        c = s.get(params["ClusterName"])
        _in_service(c, "UpdateCluster")
        for key in _CLUSTER_FIELDS:
            if key in params:
                c.spec[key] = params[key]
        to_delete = params.get("InstanceGroupsToDelete") or []
        for name in to_delete:
            if name not in c.groups:
                raise _validation(f"Instance group {name} does not exist in cluster {c.name}.")
        changes = [_group_detail(g, "Updating") for g in params.get("InstanceGroups") or []]
        _check_capacity(
            s,
            [
                *changes,
                *(
                    g
                    for n, g in c.groups.items()
                    if n not in to_delete and n not in {x["InstanceGroupName"] for x in changes}
                ),
            ],
            c,
        )
        _set_status(c, "Updating")
        for new in changes:
            name = new["InstanceGroupName"]
            old = c.groups.get(name)
            if old is None:
                new["Status"] = "Creating"
            c.groups[name] = new
            nodes = [
                n
                for n in c.nodes.values()
                if n["InstanceGroupName"] == name and n["InstanceStatus"]["Status"] != "ShuttingDown"
            ]
            delta = new["TargetCount"] - len(nodes)
            if delta > 0:
                _add_nodes(c, new, delta, UPDATE_S)
            for node in sorted(nodes, key=lambda n: n["LaunchTime"], reverse=True)[: max(-delta, 0)]:
                _remove_node(c, node["InstanceId"], NODE_DELETE_S)
        for name in to_delete:
            c.groups[name]["Status"] = "Deleting"
            for node in [n for n in c.nodes.values() if n["InstanceGroupName"] == name]:
                _remove_node(c, node["InstanceId"], NODE_DELETE_S)

            def drop(group: str = name) -> None:
                c.groups.pop(group, None)

            RUNTIME.after(NODE_DELETE_S, drop)
        _settle(c, "Updating", UPDATE_S)
        return ActionResult({"ClusterArn": c.arn})


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
            _remove_node(c, node_id, NODE_DELETE_S)
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
        _in_service(c, action)
        found, missing, missing_logical = _resolve_nodes(c, params)
        for node_id in found:
            node = c.nodes[node_id]
            if action == "BatchRebootClusterNodes":
                _node_status(c, node_id, "Pending", "Rebooting")
                RUNTIME.after(REBOOT_S, _step(c, node_id, "Pending", "Running"))
            else:
                group = c.groups[node["InstanceGroupName"]]
                _remove_node(c, node_id, NODE_DELETE_S)
                _add_nodes(c, group, 1, REPLACE_S)
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
        nodes = [n for n in nodes if n["LaunchTime"].timestamp() > _ts(after)]
    if before:
        nodes = [n for n in nodes if n["LaunchTime"].timestamp() < _ts(before)]
    by_name = self._get_param("SortBy") == "Name"
    nodes.sort(
        key=lambda n: (
            (n["InstanceGroupName"], n["InstanceId"]) if by_name else (n["LaunchTime"], n["InstanceId"])
        ),
        reverse=self._get_param("SortOrder") == "Descending",
    )
    page, token = _page(nodes, self._get_param("MaxResults"), self._get_param("NextToken"))
    return ActionResult(
        {"ClusterNodeSummaries": [{k: n[k] for k in _SUMMARY_KEYS} for n in page], "NextToken": token}
    )


def _ts(value: Any) -> float:
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, dt.datetime):
        return value.timestamp()
    return dt.datetime.fromisoformat(str(value)).timestamp()


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
            raise _not_found(
                f"Resource Not Found: Node '{params.get('NodeId') or params.get('NodeLogicalId')}' "
                f"does not exist in cluster '{c.name}'."
            )
        return ActionResult({"NodeDetails": copy.deepcopy(c.nodes[found[0]])})


def list_cluster_events(self: Any) -> Any:
    from moto.core.responses import ActionResult

    params = self._get_params()
    with RUNTIME.lock:
        events = list(store(self.region).get(params["ClusterName"]).events)
    for key, field_name in (
        ("InstanceGroupName", "InstanceGroupName"),
        ("NodeId", "InstanceId"),
        ("ResourceType", "ResourceType"),
    ):
        if params.get(key):
            events = [e for e in events if e.get(field_name) == params[key]]
    if params.get("EventTimeAfter"):
        events = [e for e in events if e["EventTime"].timestamp() > _ts(params["EventTimeAfter"])]
    if params.get("EventTimeBefore"):
        events = [e for e in events if e["EventTime"].timestamp() < _ts(params["EventTimeBefore"])]
    if params.get("SortOrder") == "Descending":
        events.reverse()
    page, token = _page(events, params.get("MaxResults"), params.get("NextToken"))
    return ActionResult({"Events": page, "NextToken": token})


def describe_cluster_event(self: Any) -> Any:
    from moto.core.responses import ActionResult

    params = self._get_params()
    with RUNTIME.lock:
        for e in store(self.region).get(params["ClusterName"]).events:
            if e["EventId"] == params["EventId"]:
                return ActionResult({"EventDetails": dict(e)})
    raise _not_found(f"Resource Not Found: Event '{params['EventId']}' does not exist.")


# --- training plans --------------------------------------------------------------------------


def seed_training_plans(region: str) -> None:
    s = store(region)
    start = now().replace(minute=0, second=0, microsecond=0) - dt.timedelta(days=1)
    hours = 24 * 30
    for name, instance_type, count, az, az_id in SEED_PLANS.get(region, []):
        arn = f"arn:aws:sagemaker:{region}:{ACCOUNT_ID}:training-plan/{name}"
        s.plans[arn] = {
            "TrainingPlanArn": arn,
            "TrainingPlanName": name,
            "Status": "Active",
            "StatusMessage": "Training plan is active",
            "DurationHours": hours,
            "DurationMinutes": 0,
            "StartTime": start,
            "EndTime": start + dt.timedelta(hours=hours),
            "UpfrontFee": f"{count * 31.46 * hours:.2f}",
            "CurrencyCode": "USD",
            "TotalInstanceCount": count,
            "TargetResources": ["hyperpod-cluster"],
            "ReservedCapacitySummaries": [
                {
                    "ReservedCapacityArn": f"arn:aws:sagemaker:{region}:{ACCOUNT_ID}:reserved-capacity/"
                    f"{name}-{secrets.token_hex(4)}",
                    "InstanceType": instance_type,
                    "TotalInstanceCount": count,
                    "Status": "Active",
                    "AvailabilityZone": az,
                    "AvailabilityZoneId": az_id,
                    "DurationHours": hours,
                    "DurationMinutes": 0,
                    "StartTime": start,
                    "EndTime": start + dt.timedelta(hours=hours),
                }
            ],
        }


def _plan_view(s: HyperPodStore, plan: dict[str, Any]) -> dict[str, Any]:
    used = sum(
        g["TargetCount"]
        for c in s.clusters.values()
        for g in c.groups.values()
        if g.get("TrainingPlanArn") == plan["TrainingPlanArn"]
    )
    view = copy.deepcopy(plan)
    view["InUseInstanceCount"] = used
    view["AvailableInstanceCount"] = max(plan["TotalInstanceCount"] - used, 0)
    return view


def list_training_plans(self: Any) -> Any:
    from moto.core.responses import ActionResult

    params = self._get_params()
    with RUNTIME.lock:
        s = store(self.region)
        plans = [_plan_view(s, p) for p in s.plans.values()]
    for f in params.get("Filters") or []:
        if f.get("Name") == "Status":
            plans = [p for p in plans if p["Status"] == f.get("Value")]
    page, token = _page(plans, params.get("MaxResults"), params.get("NextToken"))
    return ActionResult({"TrainingPlanSummaries": page, "NextToken": token})


def describe_training_plan(self: Any) -> Any:
    from moto.core.responses import ActionResult

    wanted = self._get_param("TrainingPlanName")
    with RUNTIME.lock:
        s = store(self.region)
        for p in s.plans.values():
            if wanted in (p["TrainingPlanName"], p["TrainingPlanArn"]):
                return ActionResult(_plan_view(s, p))
    raise _not_found(f"Resource Not Found: Training plan '{wanted}' does not exist.")


_OPERATIONS: tuple[Callable[[Any], Any], ...] = (
    create_cluster,
    describe_cluster,
    list_clusters,
    delete_cluster,
    update_cluster,
    batch_delete_cluster_nodes,
    batch_reboot_cluster_nodes,
    batch_replace_cluster_nodes,
    list_cluster_nodes,
    describe_cluster_node,
    list_cluster_events,
    describe_cluster_event,
    list_training_plans,
    describe_training_plan,
)


def patch() -> None:
    """Route SageMakerResponse's HyperPod operations to this module's store."""
    from moto.sagemaker.responses import SageMakerResponse

    for op in _OPERATIONS:
        setattr(SageMakerResponse, op.__name__, op)
