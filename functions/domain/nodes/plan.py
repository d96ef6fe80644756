"""Plans for nodes.reboot, nodes.replace, nodes.delete and nodes.health_check.

Each node is one change of the step that acts on it, in the batches of 25 the workflow sends. What admission
read about each node (`facts["nodes"]`: health label, instance group, instance type, from the one
label-selected Kubernetes list or DescribeClusterNode) says which group a delete shrinks and what it saves."""

from __future__ import annotations

from collections import Counter
from typing import Any

from functions.domain.plans import Capacity, Change, Draft, create, delete, update
from functions.domain.plans.base import PlanInput

NODE = "AWS::SageMaker::ClusterNode"


def _nodes(p: PlanInput) -> list[tuple[int, str, dict[str, Any]]]:
    seen: dict[str, dict[str, Any]] = p.facts.get("nodes") or {}
    size = int(p.request.get("batch_size") or 25)
    return [(i // size + 1, node_id, seen.get(node_id) or {}) for i, node_id in enumerate(p.request["node_ids"])]


def _skip(changes: list[Change], done: frozenset[str]) -> list[Change]:
    return [c.model_copy(update={"action": "none"}) if c.step in done else c for c in changes]


def plan_nodes_reboot(p: PlanInput) -> Draft:
    changes = [update(NODE, node_id, "reboot", call="BatchRebootClusterNodes", batch=batch,
                      group=info.get("group"), health=info.get("health"), then="watched back to Running and Ready")
               for batch, node_id, info in _nodes(p)]
    warnings = [f"{len(changes)} node(s) reboot: pods on them stop and are rescheduled; instance storage is kept"]
    return Draft(changes=_skip(changes, p.skip_steps), warnings=warnings)


def plan_nodes_replace(p: PlanInput) -> Draft:
    changes: list[Change] = []
    for batch, node_id, info in _nodes(p):
        changes += [delete(NODE, node_id, "replace", call="BatchReplaceClusterNodes", batch=batch,
                           group=info.get("group"), health=info.get("health"), instance_storage="wiped"),
                    create(NODE, f"replacement of {node_id}", "replace", group=info.get("group"),
                           instance_type=info.get("instance_type"), then="watched to Running and Ready")]
    warnings = [f"{len(changes) // 2} node(s) replaced with new instances (new ids): instance storage is wiped; "
                "the hourly cost does not change"]
    if p.request.get("force"):
        warnings.append(f"forced past the escalation ladder; the reason is recorded: {p.request.get('reason')}")
    return Draft(changes=_skip(changes, p.skip_steps), warnings=warnings)


def plan_nodes_delete(p: PlanInput) -> Draft:
    nodes = _nodes(p)
    changes: list[Change] = [delete(NODE, node_id, "delete", call="BatchDeleteClusterNodes", batch=batch,
                                    group=info.get("group"), instance_type=info.get("instance_type"))
                             for batch, node_id, info in nodes]
    shrink = Counter(str(info.get("group")) for _, _, info in nodes if info.get("group"))
    changes += [update("AWS::SageMaker::Cluster", p.request["cluster"], "delete", group=group,
                       instance_count=f"-{n}") for group, n in sorted(shrink.items())]
    types = Counter(str(info["instance_type"]) for _, _, info in nodes if info.get("instance_type"))
    capacity = [Capacity(item=f"HyperPod {t} (removed)", price=("hyperpod", t), count=-n)
                for t, n in sorted(types.items())]
    warnings = [f"{len(nodes)} instance(s) terminated: work on them stops, their storage is gone, and their groups "
                "shrink (a later scale-out adds new instances)"]
    return Draft(changes=_skip(changes, p.skip_steps), capacity=capacity, warnings=warnings)


def plan_nodes_health_check(p: PlanInput) -> Draft:
    """Each node gets an update (deep health check) in the one StartClusterHealthCheck call; zero cost (the
    checks run on instances already paid for), and the nodes take no new pods meanwhile."""
    from functions.domain.nodes.health_checks import CHECK_SECONDS

    checks = list(p.request.get("checks") or [])
    changes = [update(NODE, node_id, "start", call="StartClusterHealthCheck", update="deep health check",
                      checks=checks, group=info.get("group") or p.request.get("group"),
                      then="Unschedulable while checked, then a result per check")
               for _, node_id, info in _nodes(p)]
    minutes = int(CHECK_SECONDS // 60)
    warnings = [f"{len(changes)} node(s) are Unschedulable for about {minutes} minutes while the deep health checks "
                f"({', '.join(checks)}) run: no new pods are scheduled on them",
                "a node that fails a check is marked UnschedulablePendingReplacement (HyperPod replaces it when node "
                "recovery is Automatic)",
                "no cost: the checks run on instances already paid for"]
    return Draft(changes=_skip(changes, p.skip_steps), warnings=warnings)
