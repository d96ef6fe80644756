"""HyperPod instances as Kubernetes Nodes of the cluster's EKS API, as on a real HyperPod EKS cluster.

An instance joins its EKS cluster once it boots (DeepHealthCheckInProgress or Running) as
`hyperpod-<instance id>` with HyperPod's labels (`sagemaker.amazonaws.com/instance-group-name`,
`sagemaker.amazonaws.com/node-health-status`, ...), the instance group's Kubernetes labels and taints,
capacity and allocatable from the instance type (`nvidia.com/gpu` or `aws.amazon.com/neuroncore`,
`vpc.amazonaws.com/efa` from the EFA device plugin), and a `Ready` condition plus the health
monitoring agent's conditions. It leaves when the instance terminates; pods bound to it go with it
(Kubernetes' pod garbage collector).

Health (`node-health-status`) follows the instance and any simulated fault:
  Running, no fault            -> Schedulable
  DeepHealthCheckInProgress    -> Unschedulable (deep health checks run before work is accepted)
  SystemUpdating               -> Unschedulable, Ready=False (restarting onto new platform software)
  Pending (a reboot)           -> UnschedulablePendingReboot, Ready=False
  ShuttingDown after a replace -> UnschedulablePendingReplacement, Ready=False
  Failure                      -> UnschedulablePendingReplacement, Ready=False
  a fault                      -> the fault's status (see `faults.py`); a latent fault shows nothing
                                  until a deep health check finds it
  a failed deep health check   -> UnschedulablePendingReplacement (see `health_checks.py`)
`sagemaker.amazonaws.com/deep-health-check-status` is InProgress while deep health checks run, then Passed
or Failed (with `sagemaker.amazonaws.com/fault-type` and `fault-reason` on a failure).
Anything but Schedulable carries the NoSchedule taint `sagemaker.amazonaws.com/node-health-status`.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from typing import Any

from sandbox.aws.sagemaker.store import HyperPodCluster

HEALTH_LABEL = "sagemaker.amazonaws.com/node-health-status"
GROUP_LABEL = "sagemaker.amazonaws.com/instance-group-name"
TYPE_LABEL = "node.kubernetes.io/instance-type"
ZONE_LABEL = "topology.kubernetes.io/zone"
HEALTH_TAINT = HEALTH_LABEL
DEEP_CHECK_LABEL = "sagemaker.amazonaws.com/deep-health-check-status"
FAULT_TYPE_LABEL = "sagemaker.amazonaws.com/fault-type"
FAULT_REASON_LABEL = "sagemaker.amazonaws.com/fault-reason"
SCHEDULABLE = "Schedulable"
UNSCHEDULABLE = "Unschedulable"
PENDING_REBOOT = "UnschedulablePendingReboot"
PENDING_REPLACEMENT = "UnschedulablePendingReplacement"
HEALTH_STATUSES = (SCHEDULABLE, UNSCHEDULABLE, PENDING_REBOOT, PENDING_REPLACEMENT)
# Conditions HyperPod's health monitoring agent reports on a node (besides the kubelet's Ready).
AGENT_CONDITIONS = ("AcceleratedHardwareReady", "NetworkingReady", "StorageReady", "KernelReady")
JOINED = ("DeepHealthCheckInProgress", "Running", "SystemUpdating", "Pending", "ShuttingDown", "Failure")


def node_name(instance_id: str) -> str:
    return f"hyperpod-{instance_id}"


def instance_id_of(name: str) -> str:
    return name.removeprefix("hyperpod-")


def eks_name(c: HyperPodCluster) -> str | None:
    arn = ((c.spec.get("Orchestrator") or {}).get("Eks") or {}).get("ClusterArn") or ""
    return arn.rsplit("/", 1)[-1] or None


@lru_cache(maxsize=256)
def resources(instance_type: str) -> dict[str, str]:
    """Capacity of an instance type as the kubelet and device plugins advertise it."""
    from moto.ec2.models.instance_types import INSTANCE_TYPES

    info = INSTANCE_TYPES.get(instance_type.removeprefix("ml."), {})
    vcpus = int((info.get("VCpuInfo") or {}).get("DefaultVCpus") or 2)
    mem_mib = int((info.get("MemoryInfo") or {}).get("SizeInMiB") or 4096)
    out = {
        "cpu": str(vcpus),
        "memory": f"{mem_mib * 1024}Ki",
        "pods": "110" if vcpus < 32 else "737",
        "ephemeral-storage": "524275692Ki",
    }
    gpus = sum(int(g.get("Count", 0)) for g in (info.get("GpuInfo") or {}).get("Gpus") or [])
    if gpus:
        out["nvidia.com/gpu"] = str(gpus)
    neuron = (info.get("NeuronInfo") or {}).get("NeuronDevices") or []
    if neuron:
        devices = sum(int(n.get("Count", 0)) for n in neuron)
        cores = sum(int(n.get("Count", 0)) * int((n.get("CoreInfo") or {}).get("Count", 1)) for n in neuron)
        out["aws.amazon.com/neuron"] = str(devices)
        out["aws.amazon.com/neuroncore"] = str(cores)
    net = info.get("NetworkInfo") or {}
    if net.get("EfaSupported"):
        out["vpc.amazonaws.com/efa"] = str(int((net.get("EfaInfo") or {}).get("MaximumEfaInterfaces") or 1))
    return out


def allocatable(capacity: dict[str, str]) -> dict[str, str]:
    """Allocatable: capacity less the kubelet's system reservation (cpu, memory); devices are whole."""
    out = dict(capacity)
    cpu = int(capacity["cpu"])
    out["cpu"] = f"{cpu * 1000 - (70 if cpu <= 2 else 110)}m"
    mem_ki = int(capacity["memory"].removesuffix("Ki"))
    out["memory"] = f"{max(mem_ki - 600 * 1024, mem_ki // 2)}Ki"
    return out


def active_fault(c: HyperPodCluster, instance_id: str) -> dict[str, Any] | None:
    """The instance's fault as the health monitoring agent sees it (a latent fault: not yet)."""
    fault = c.faults.get(instance_id)
    return fault if fault and not fault.get("latent") else None


def health_of(c: HyperPodCluster, node: dict[str, Any]) -> str:
    status = node["InstanceStatus"]["Status"]
    fault = active_fault(c, node["InstanceId"])
    if status == "Running":
        if (c.deep_checks.get(node["InstanceId"]) or {}).get("status") == "Failed":
            return PENDING_REPLACEMENT
        return str(fault["health"]) if fault else SCHEDULABLE
    if status in ("DeepHealthCheckInProgress", "SystemUpdating"):
        return UNSCHEDULABLE
    if status == "Pending":
        return PENDING_REBOOT
    if status == "ShuttingDown":
        return PENDING_REPLACEMENT if node["InstanceId"] in c.replacing else UNSCHEDULABLE
    return PENDING_REPLACEMENT  # Failure


def _condition(ctype: str, status: str, reason: str, message: str, since: str) -> dict[str, Any]:
    return {"type": ctype, "status": status, "reason": reason, "message": message,
            "lastHeartbeatTime": since, "lastTransitionTime": since}


def _conditions(c: HyperPodCluster, node: dict[str, Any], old: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from sandbox.kube.store import now_rfc3339

    status = node["InstanceStatus"]["Status"]
    fault = active_fault(c, node["InstanceId"]) if status == "Running" else None
    if status in ("Running", "DeepHealthCheckInProgress"):
        ready = ("True", "KubeletReady", "kubelet is posting ready status")
    elif status == "SystemUpdating":
        ready = ("False", "KubeletNotReady", "node is restarting for a platform software update")
    elif status == "Pending":
        ready = ("False", "KubeletNotReady", "node is rebooting")
    elif status == "ShuttingDown":
        ready = ("False", "KubeletNotReady", "node is shutting down")
    else:
        ready = ("Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.")
    if fault and fault["condition"] == "Ready":
        ready = ("Unknown", fault["reason"], fault["message"])
    wanted = [("Ready", *ready)]
    for ctype in AGENT_CONDITIONS:
        if fault and fault["condition"] == ctype:
            wanted.append((ctype, "False", fault["reason"], fault["message"]))
        else:
            wanted.append((ctype, "True", f"{ctype.removesuffix('Ready')}IsReady", "Monitoring agent reports healthy"))
    before = {o.get("type"): o for o in old}
    now = now_rfc3339()
    out = []
    for ctype, st, reason, message in wanted:
        prev = before.get(ctype)
        since = prev["lastTransitionTime"] if prev and prev.get("status") == st else now
        out.append(_condition(ctype, st, reason, message, since))
    return out


def render(c: HyperPodCluster, node: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
    """The Node object for a HyperPod instance (old: the Node as stored, for transition times)."""
    from sandbox.aws.runtime import RUNTIME
    from sandbox.kube.server import DEFAULT_MINOR_VERSION, kubelet_version

    instance_id = node["InstanceId"]
    name = node_name(instance_id)
    health = health_of(c, node)
    eks = eks_name(c)
    kubelet = kubelet_version(RUNTIME.kube.version_of(eks) if RUNTIME.kube is not None and eks
                              else DEFAULT_MINOR_VERSION)
    k8s = node.get("KubernetesConfig") or c.groups.get(node["InstanceGroupName"], {}).get("KubernetesConfig") or {}
    labels = {
        **(k8s.get("CurrentLabels") or k8s.get("Labels") or {}),
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "arm64" if node["InstanceType"].split(".")[1].endswith("g") else "amd64",
        "node.kubernetes.io/instance-type": node["InstanceType"],
        "topology.kubernetes.io/region": c.region,
        ZONE_LABEL: (node.get("Placement") or {}).get("AvailabilityZone", ""),
        "topology.k8s.aws/zone-id": (node.get("Placement") or {}).get("AvailabilityZoneId", ""),
        GROUP_LABEL: node["InstanceGroupName"],
        "sagemaker.amazonaws.com/compute-type": "hyperpod",
        "sagemaker.amazonaws.com/cluster-name": c.name,
        "sagemaker.amazonaws.com/node-logical-id": node["NodeLogicalId"],
        HEALTH_LABEL: health,
    }
    if node.get("CapacityType") == "Spot":
        labels["karpenter.sh/capacity-type"] = "spot"
    deep = c.deep_checks.get(instance_id)
    if node["InstanceStatus"]["Status"] == "DeepHealthCheckInProgress":
        labels[DEEP_CHECK_LABEL] = "InProgress"
    elif deep:
        labels[DEEP_CHECK_LABEL] = deep["status"]
        failed = [r for r in (deep.get("results") or {}).values() if not r["passed"]]
        if failed:
            labels[FAULT_TYPE_LABEL] = str(failed[0]["fault_type"])
            labels[FAULT_REASON_LABEL] = str(failed[0]["fault_reason"])
    taints = [dict(t) for t in (k8s.get("CurrentTaints") or k8s.get("Taints") or [])]
    if health != SCHEDULABLE:
        taints.append({"key": HEALTH_TAINT, "value": health, "effect": "NoSchedule"})
    capacity = resources(node["InstanceType"])
    old_status = (old or {}).get("status") or {}
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            **({k: v for k, v in (old or {}).get("metadata", {}).items()
                if k in ("uid", "creationTimestamp", "resourceVersion")}),
            "name": name,
            "labels": labels,
            "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                            "alpha.kubernetes.io/provided-node-ip": node.get("PrivatePrimaryIp", "")},
        },
        "spec": {
            "providerID": f"aws:///{(node.get('Placement') or {}).get('AvailabilityZone', '')}/{instance_id}",
            **({"taints": taints} if taints else {}),
        },
        "status": {
            "capacity": capacity,
            "allocatable": allocatable(capacity),
            "conditions": _conditions(c, node, old_status.get("conditions") or []),
            "addresses": [
                {"type": "InternalIP", "address": node.get("PrivatePrimaryIp", "")},
                {"type": "Hostname", "address": node.get("PrivateDnsHostname", "")},
                {"type": "InternalDNS", "address": node.get("PrivateDnsHostname", "")},
            ],
            "nodeInfo": {
                "architecture": labels["kubernetes.io/arch"], "operatingSystem": "linux",
                "kubeletVersion": kubelet, "kubeProxyVersion": kubelet,
                "containerRuntimeVersion": "containerd://1.7.27", "osImage": "Amazon Linux 2023",
                "kernelVersion": "6.1.134-152.225.amzn2023.x86_64",
                "machineID": instance_id, "systemUUID": instance_id,
                "bootID": str(node.get("LastSoftwareUpdateTime") or node["LaunchTime"]),
            },
        },
    }
    return body


def _kube_store(c: HyperPodCluster) -> Any:
    from sandbox.aws.runtime import RUNTIME

    name = eks_name(c)
    if RUNTIME.kube is None or not name:
        return None
    return RUNTIME.kube.store_or_none(name)


def sync(c: HyperPodCluster, instance_id: str) -> None:
    """Make the Kubernetes Node of one instance match it: create, update, or remove it."""
    store = _kube_store(c)
    if store is None:
        return
    name = node_name(instance_id)
    node = c.nodes.get(instance_id)
    old = store.get("v1", "Node", name)
    if node is None or node["InstanceStatus"]["Status"] not in JOINED or (
        old is None and node["InstanceStatus"]["Status"] in ("Pending", "ShuttingDown", "Failure")
    ):
        # Not booted yet (Pending on launch), or gone: no Node. A node that never joined does not join to leave.
        if old is not None and node is None:
            remove(c, instance_id)
        return
    body = render(c, node, old)
    if old is not None:
        body["spec"] = {**{k: v for k, v in (old.get("spec") or {}).items() if k not in ("taints",)}, **body["spec"]}
        if old.get("metadata", {}).get("labels") == body["metadata"]["labels"] and old.get("spec") == body["spec"] \
                and old.get("status") == body["status"]:
            return
        merged_meta = copy.deepcopy(old["metadata"])
        merged_meta["labels"] = body["metadata"]["labels"]
        merged_meta["annotations"] = {**(merged_meta.get("annotations") or {}), **body["metadata"]["annotations"]}
        body["metadata"] = merged_meta
    store.put(body)


def remove(c: HyperPodCluster, instance_id: str) -> None:
    """The instance is gone: its Node leaves, and the pods bound to it are deleted (pod GC)."""
    store = _kube_store(c)
    if store is None:
        return
    name = node_name(instance_id)
    store.delete("v1", "Node", name)
    for pod in store.list("v1", "Pod", field_selector=f"spec.nodeName={name}"):
        meta = pod["metadata"]
        store.delete("v1", "Pod", meta["name"], meta.get("namespace"))


def remove_all(c: HyperPodCluster) -> None:
    for instance_id in list(c.nodes):
        remove(c, instance_id)
