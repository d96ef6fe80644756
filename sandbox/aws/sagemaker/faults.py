"""Simulated node faults (the sandbox knob `POST /v1/sandbox/nodes/{node_id}/fault`) and the node
recovery HyperPod does for them.

A fault on a Running instance is what HyperPod's health monitoring agent would find: the Node's
`sagemaker.amazonaws.com/node-health-status` label and a condition change, a cluster event and an
EventBridge `SageMaker HyperPod Cluster Node Health Event` say so. With the cluster's `NodeRecovery`
`Automatic`, HyperPod then reboots (UnschedulablePendingReboot) or replaces
(UnschedulablePendingReplacement) the instance after `DETECT_S`; with `None` the node stays as it is
until someone reboots or replaces it (a reboot clears the fault, a replacement gives a new instance).

A `latent` fault is one the health monitoring agent has not seen: the node stays Schedulable, no event, no
recovery, until a deep health check (StartClusterHealthCheck, `health_checks.py`) finds it: gpu_xid and
nccl_hang fail InstanceStress, efa_down InstanceConnectivity, unreachable both.
"""

from __future__ import annotations

from typing import Any

from sandbox.aws.runtime import RUNTIME, ResourceMissing
from sandbox.aws.sagemaker.events import record_event
from sandbox.aws.sagemaker.kube_nodes import PENDING_REBOOT, PENDING_REPLACEMENT
from sandbox.aws.sagemaker.nodes import announce, reboot_node, replace_node
from sandbox.aws.sagemaker.store import HyperPodCluster, all_stores

DETECT_S = 60.0  # from the fault to HyperPod's repair action (AWS seconds)

FAULTS: dict[str, dict[str, str]] = {
    "gpu_xid": {
        "health": PENDING_REBOOT, "condition": "AcceleratedHardwareReady", "reason": "NvidiaXID48Error",
        "message": "GPU 0 (PCI 0000:53:00.0) reported Xid 48: double-bit ECC error; reboot required",
    },
    "nccl_hang": {
        "health": PENDING_REBOOT, "condition": "NetworkingReady", "reason": "NCCLCollectiveTimeout",
        "message": "NCCL collective operation timed out after 1800000 ms (watchdog); reboot required",
    },
    "efa_down": {
        "health": PENDING_REPLACEMENT, "condition": "NetworkingReady", "reason": "EFADeviceDown",
        "message": "EFA device rdmap0s6 is down (link state DOWN); replacement required",
    },
    "unreachable": {
        "health": PENDING_REPLACEMENT, "condition": "Ready", "reason": "NodeStatusUnknown",
        "message": "Instance is unreachable: kubelet stopped posting node status; replacement required",
    },
}


class FaultRefused(ValueError):
    """The node is not in a state a fault can hit (not Running)."""


def find(node_id: str) -> HyperPodCluster:
    for s in all_stores():
        for c in s.clusters.values():
            if node_id in c.nodes:
                return c
    raise ResourceMissing(f"No HyperPod instance {node_id} in any region")


def inject(node_id: str, kind: str, latent: bool = False) -> dict[str, Any]:
    """Put a fault on a Running instance; returns what changed and what HyperPod will do."""
    spec = FAULTS[kind]
    with RUNTIME.lock:
        c = find(node_id)
        node = c.nodes[node_id]
        status = node["InstanceStatus"]["Status"]
        if status != "Running":
            raise FaultRefused(f"instance {node_id} is {status}; a fault needs a Running instance")
        c.faults[node_id] = {"kind": kind, **spec, "latent": latent}
        if latent:
            return {"node_id": node_id, "cluster": c.name, "region": c.region, "kind": kind, "latent": True,
                    "health": "Schedulable", "recovery": "none until a deep health check finds it"}
        record_event(c, "Instance", f"Instance {node_id}: {spec['message']}", node["InstanceGroupName"], node_id,
                     level="Error")
        announce(c, node_id)
        recovery = c.spec.get("NodeRecovery", "Automatic")
        if recovery == "Automatic":
            RUNTIME.after(DETECT_S, lambda: _recover(c, node_id, kind))
        return {
            "node_id": node_id, "cluster": c.name, "region": c.region, "kind": kind,
            "health": spec["health"], "condition": spec["condition"], "reason": spec["reason"],
            "node_recovery": recovery,
            "recovery": ({PENDING_REBOOT: "reboot", PENDING_REPLACEMENT: "replace"}[spec["health"]]
                         if recovery == "Automatic" else "none: waits for a reboot or replacement"),
        }


def _recover(c: HyperPodCluster, node_id: str, kind: str) -> None:
    fault = c.faults.get(node_id)
    node = c.nodes.get(node_id)
    if fault is None or fault["kind"] != kind or node is None or node["InstanceStatus"]["Status"] != "Running":
        return  # already repaired (a user's reboot or replacement got there first)
    if fault["health"] == PENDING_REPLACEMENT:
        record_event(c, "Instance", f"Node recovery: replacing instance {node_id} ({fault['reason']})",
                     node["InstanceGroupName"], node_id, level="Warn")
        replace_node(c, node_id)
    else:
        record_event(c, "Instance", f"Node recovery: rebooting instance {node_id} ({fault['reason']})",
                     node["InstanceGroupName"], node_id, level="Warn")
        reboot_node(c, node_id, "Rebooting (automatic node recovery)")
