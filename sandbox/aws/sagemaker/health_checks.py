"""On-demand deep health checks: StartClusterHealthCheck.

Each instance named (or every instance of the group when `InstanceIds` is absent) goes
DeepHealthCheckInProgress: its Node is labelled `deep-health-check-status: InProgress` and
`node-health-status: Unschedulable` (tainted NoSchedule), a cluster event says so. After `CHECK_S` (AWS
seconds, time-scaled) each check ends with one cluster event per check and instance:

    Deep health check InstanceStress passed on instance i-...
    Deep health check InstanceConnectivity failed on instance i-...: <reason>

and the instance is Running again: `deep-health-check-status: Passed`, or `Failed` with the fault-type and
fault-reason labels and `node-health-status: UnschedulablePendingReplacement` (HyperPod marks a node that
failed for replacement; with NodeRecovery Automatic it replaces it after `faults.DETECT_S`). A check fails
when the instance has a simulated fault it covers (a latent one included: finding those is what deep health
checks are for): gpu_xid and nccl_hang fail InstanceStress, efa_down InstanceConnectivity, unreachable both.
"""

from __future__ import annotations

from typing import Any

from sandbox.aws.runtime import RUNTIME
from sandbox.aws.sagemaker.common import validation
from sandbox.aws.sagemaker.events import record_event
from sandbox.aws.sagemaker.nodes import replace_node, set_node_status
from sandbox.aws.sagemaker.store import HyperPodCluster, require_in_service, store

CHECK_S = 600.0  # an on-demand deep health check, AWS seconds
RECOVERY_S = 60.0  # from a failed check to HyperPod's replacement (NodeRecovery Automatic)
CHECKS = ("InstanceStress", "InstanceConnectivity", "MultiNodeTrainingValidation")
# Which checks a simulated fault fails, and the fault-type label it sets.
FAILS: dict[str, tuple[tuple[str, ...], str]] = {
    "gpu_xid": (("InstanceStress", "MultiNodeTrainingValidation"), "AcceleratedHardware"),
    "nccl_hang": (("InstanceStress", "MultiNodeTrainingValidation"), "AcceleratedHardware"),
    "efa_down": (("InstanceConnectivity", "MultiNodeTrainingValidation"), "Network"),
    "unreachable": (CHECKS, "Node"),
}


def _targets(c: HyperPodCluster, configs: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    """(instance id, checks) for every configuration, validated as SageMaker does; nothing changes on an error."""
    out: list[tuple[str, list[str]]] = []
    for cfg in configs:
        group = cfg.get("InstanceGroupName")
        if group not in c.groups:
            raise validation(f"Instance group {group} does not exist in cluster {c.name}.")
        checks = list(cfg.get("DeepHealthChecks") or [])
        bad = [x for x in checks if x not in CHECKS]
        if not checks or bad:
            raise validation(f"DeepHealthChecks must be from {', '.join(CHECKS)}: {', '.join(bad)}")
        ids = cfg.get("InstanceIds") or [i for i, n in c.nodes.items() if n["InstanceGroupName"] == group]
        for node_id in ids:
            node = c.nodes.get(node_id)
            if node is None or node["InstanceGroupName"] != group:
                raise validation(f"Instance {node_id} is not in instance group {group} of cluster {c.name}.")
            status = node["InstanceStatus"]["Status"]
            if status != "Running":
                raise validation(f"Instance {node_id} is {status}; deep health checks need a Running instance.")
            out.append((node_id, checks))
    return out


def start_cluster_health_check(self: Any) -> Any:
    from moto.core.responses import ActionResult

    params = self._get_params()
    with RUNTIME.lock:
        c = store(self.region).get(params["ClusterName"])
        require_in_service(c, "StartClusterHealthCheck")
        for node_id, checks in _targets(c, params.get("DeepHealthCheckConfigurations") or []):
            start(c, node_id, checks)
        return ActionResult({"ClusterArn": c.arn})


def start(c: HyperPodCluster, node_id: str, checks: list[str]) -> None:
    node = c.nodes[node_id]
    c.deep_checks[node_id] = {"status": "InProgress", "checks": list(checks), "results": {}}
    record_event(c, "Instance", f"Deep health checks started on instance {node_id}: {', '.join(checks)}",
                 node["InstanceGroupName"], node_id)
    set_node_status(c, node_id, "DeepHealthCheckInProgress", f"Deep health checks in progress: {', '.join(checks)}")
    RUNTIME.after(CHECK_S, lambda: finish(c, node_id))


def finish(c: HyperPodCluster, node_id: str) -> None:
    with RUNTIME.lock:
        node, deep = c.nodes.get(node_id), c.deep_checks.get(node_id)
        if node is None or deep is None or node["InstanceStatus"]["Status"] != "DeepHealthCheckInProgress":
            return
        fault = c.faults.get(node_id)
        fails, fault_type = FAILS.get(str((fault or {}).get("kind")), ((), ""))
        for check in deep["checks"]:
            failed = fault is not None and check in fails
            result: dict[str, Any] = {"passed": not failed, "reason": str(fault["message"]) if fault and failed else ""}
            if failed and fault:
                result |= {"fault_type": fault_type, "fault_reason": fault["reason"]}
            deep["results"][check] = result
            record_event(
                c, "Instance",
                f"Deep health check {check} {'failed' if failed else 'passed'} on instance {node_id}"
                + (f": {result['reason']}" if failed else ""),
                node["InstanceGroupName"], node_id, level="Error" if failed else "Info")
        failed_checks = [k for k, r in deep["results"].items() if not r["passed"]]
        deep["status"] = "Failed" if failed_checks else "Passed"
        if fault:
            fault["latent"] = False  # found: the agent's conditions show it from now on
        message = (f"Deep health checks failed: {', '.join(failed_checks)}; marked for replacement"
                   if failed_checks else f"Deep health checks passed: {', '.join(deep['checks'])}")
        set_node_status(c, node_id, "Running", message)
        if failed_checks and c.spec.get("NodeRecovery", "Automatic") == "Automatic":
            RUNTIME.after(RECOVERY_S, lambda: _recover(c, node_id))


def _recover(c: HyperPodCluster, node_id: str) -> None:
    with RUNTIME.lock:
        node = c.nodes.get(node_id)
        if node is None or (c.deep_checks.get(node_id) or {}).get("status") != "Failed":
            return
        record_event(c, "Instance", f"Node recovery: replacing instance {node_id} (failed deep health checks)",
                     node["InstanceGroupName"], node_id, level="Warn")
        replace_node(c, node_id)
