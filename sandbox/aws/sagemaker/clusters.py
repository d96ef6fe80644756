"""Clusters: Create/Describe/List/Update/DeleteCluster and their lifecycle (Creating -> InService,
Updating, Deleting, Failed) on the time scale, with capacity and orchestrator checks."""

from __future__ import annotations

import copy
import secrets
import string
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from sandbox.aws.runtime import ACCOUNT_ID, RUNTIME, ResourceMissing
from sandbox.aws.sagemaker import kube_nodes
from sandbox.aws.sagemaker.common import errors, limit_exceeded, paginate, validation
from sandbox.aws.sagemaker.events import record_event, set_status
from sandbox.aws.sagemaker.nodes import IMAGE_KEYS, NODE_DELETE_S, add_nodes, remove_node, set_node_status
from sandbox.aws.sagemaker.software_update import initial_image
from sandbox.aws.sagemaker.store import HyperPodCluster, HyperPodStore, require_in_service, store

CREATE_S = 1200.0  # HyperPod cluster creation: ~20 min
UPDATE_S = 600.0
DELETE_S = 300.0
FAIL_AT = 0.5  # an armed creation failure happens this far into CREATE_S
_CLUSTER_FIELDS = (
    "Orchestrator",
    "NodeRecovery",
    "NodeProvisioningMode",
    "AutoScaling",
    "ClusterRole",
    "TieredStorageConfig",
    "RestrictedInstanceGroups",
)


@lru_cache(maxsize=1)
def cluster_instance_types() -> frozenset[str]:
    from sandbox.aws.quotas import cluster_instance_types as types

    return frozenset(types())


def _settle(c: HyperPodCluster, from_status: str, after_s: float) -> None:
    def run() -> None:
        if c.status != from_status or store(c.region).clusters.get(c.name) is not c:
            return
        for g in c.groups.values():
            if g["Status"] in ("Creating", "Updating"):
                g["Status"] = "InService"
                record_event(
                    c,
                    "InstanceGroup",
                    f"Instance group {g['InstanceGroupName']} is InService",
                    g["InstanceGroupName"],
                )
        set_status(c, "InService")

    RUNTIME.after(after_s, run)


def fail_cluster(region: str, name: str, message: str = "Simulated failure") -> None:
    """Test/sandbox helper: put a cluster into Failed with a FailureMessage."""
    from moto.sagemaker.exceptions import ResourceNotFound

    with RUNTIME.lock:
        try:
            c = store(region).get(name)
        except ResourceNotFound as exc:
            raise ResourceMissing(f"HyperPod cluster {name} does not exist in {region}") from exc
        c.failure_message = message
        set_status(c, "Failed")


def _fail_creation(c: HyperPodCluster, message: str, after_s: float) -> None:
    """An armed creation failure: part-way through, nodes not yet running fail and so does the cluster."""

    def run() -> None:
        if store(c.region).clusters.get(c.name) is not c or c.status != "Creating":
            return
        for node_id, node in c.nodes.items():
            if node["InstanceStatus"]["Status"] != "Running":
                set_node_status(c, node_id, "Failure", message)
        for g in c.groups.values():
            g["Status"] = "Failed"
        c.failure_message = message
        set_status(c, "Failed")

    RUNTIME.after(after_s, run)


def _group_detail(spec: dict[str, Any], status: str) -> dict[str, Any]:
    if spec.get("InstanceType") not in cluster_instance_types():
        raise validation(
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
    detail.update(initial_image())
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
                raise validation(f"Training plan {plan_arn} does not exist.")
            if plan["ReservedCapacitySummaries"][0]["InstanceType"] != g["InstanceType"]:
                raise validation(
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
            raise limit_exceeded(
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
        raise validation(f"Amazon EKS cluster {arn} does not exist.")


def create_cluster(self: Any) -> Any:
    from moto.core.responses import ActionResult

    params = dict(self._get_params())
    name = params.pop("ClusterName")
    with RUNTIME.lock:
        s = store(self.region)
        if name in s.clusters:
            raise errors().ResourceInUseException(
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
        record_event(c, "Cluster", f"Cluster {name} creation started")
        RUNTIME.put_event(
            c.region,
            "aws.sagemaker",
            "SageMaker HyperPod Cluster State Change",
            {"ClusterArn": c.arn, "ClusterName": c.name, "ClusterStatus": c.status},
            [c.arn],
        )
        for g in groups:
            add_nodes(c, g, g["TargetCount"], CREATE_S)
        armed = RUNTIME.take_armed("sagemaker", "cluster", self.region, "next_create", cluster=name)
        if armed is not None:
            _fail_creation(c, armed.reason, CREATE_S * FAIL_AT)
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
    page, token = paginate(clusters, self._get_param("MaxResults"), self._get_param("NextToken"))
    return ActionResult({"ClusterSummaries": [c.summary() for c in page], "NextToken": token})


def delete_cluster(self: Any) -> Any:
    from moto.core.responses import ActionResult

    with RUNTIME.lock:
        s = store(self.region)
        c = s.get(self._get_param("ClusterName"))
        if c.status != "Deleting":
            set_status(c, "Deleting")
            for g in c.groups.values():
                g["Status"] = "Deleting"
            for node_id in list(c.nodes):
                set_node_status(c, node_id, "ShuttingDown")

            def gone() -> None:
                if s.clusters.get(c.name) is c:
                    del s.clusters[c.name]
                    kube_nodes.remove_all(c)

            RUNTIME.after(DELETE_S, gone)
        return ActionResult({"ClusterArn": c.arn})


def update_cluster(self: Any) -> Any:
    from moto.core.responses import ActionResult

    params = self._get_params()
    with RUNTIME.lock:
        s = store(self.region)
        c = s.get(params["ClusterName"])
        require_in_service(c, "UpdateCluster")
        for key in _CLUSTER_FIELDS:
            if key in params:
                c.spec[key] = params[key]
        to_delete = params.get("InstanceGroupsToDelete") or []
        for name in to_delete:
            if name not in c.groups:
                raise validation(f"Instance group {name} does not exist in cluster {c.name}.")
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
        set_status(c, "Updating")
        for new in changes:
            name = new["InstanceGroupName"]
            old = c.groups.get(name)
            if old is None:
                new["Status"] = "Creating"
            else:  # an update changes the count or spec, not the software the group runs
                new.update({k: old[k] for k in (*IMAGE_KEYS, "SoftwareUpdateStatus") if k in old})
            c.groups[name] = new
            nodes = [
                n
                for n in c.nodes.values()
                if n["InstanceGroupName"] == name and n["InstanceStatus"]["Status"] != "ShuttingDown"
            ]
            delta = new["TargetCount"] - len(nodes)
            if delta > 0:
                add_nodes(c, new, delta, UPDATE_S)
            for node in sorted(nodes, key=lambda n: n["LaunchTime"], reverse=True)[: max(-delta, 0)]:
                remove_node(c, node["InstanceId"], NODE_DELETE_S)
        for name in to_delete:
            c.groups[name]["Status"] = "Deleting"
            for node in [n for n in c.nodes.values() if n["InstanceGroupName"] == name]:
                remove_node(c, node["InstanceId"], NODE_DELETE_S)

            def drop(group: str = name) -> None:
                c.groups.pop(group, None)

            RUNTIME.after(NODE_DELETE_S, drop)
        if "AutoScaling" in params:
            _autoscaling(c, params["AutoScaling"])
        _settle(c, "Updating", UPDATE_S)
        return ActionResult({"ClusterArn": c.arn})


def _autoscaling(c: HyperPodCluster, config: dict[str, Any]) -> None:
    """Managed Karpenter: Creating -> InService with the update; its CRDs appear in the EKS cluster."""
    enable = config.get("Mode") == "Enable"
    c.spec["AutoScaling"] = {**config, "Status": "Creating" if enable else "Deleting"}
    eks_name = str(((c.spec.get("Orchestrator") or {}).get("Eks") or {}).get("ClusterArn", "")).rsplit("/", 1)[-1]

    def settle() -> None:
        current = c.spec.get("AutoScaling") or {}
        if current.get("Mode") != config.get("Mode"):
            return
        if enable:
            find = getattr(RUNTIME.kube, "store_or_none", None)
            kube = find(eks_name) if find else None
            if kube is not None:
                from sandbox.kube.addons import install_karpenter

                install_karpenter(kube)
            c.spec["AutoScaling"] = {**current, "Status": "InService"}
        else:
            c.spec["AutoScaling"] = {k: v for k, v in current.items() if k != "Status"}

    RUNTIME.after(UPDATE_S * 0.9, settle)
