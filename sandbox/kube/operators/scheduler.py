"""The scheduler: binds Pending pods to Nodes, as kube-scheduler does (the parts PodStart relies on).

Nodes come from HyperPod: each instance of the cluster is a Node (`sandbox/aws/sagemaker/kube_nodes.py`)
labelled with its instance group, instance type, zone and `sagemaker.amazonaws.com/node-health-status`,
with allocatable `nvidia.com/gpu` / `aws.amazon.com/neuroncore` / `vpc.amazonaws.com/efa` from its type.

How other simulated operators get their pods placed: they only create Pods (the inference operator a
Deployment's pods, the Job controller in `workloads.py` a Job's pod) with `spec.nodeSelector` and/or
`spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution` (e.g. on
`node.kubernetes.io/instance-type` or `sagemaker.amazonaws.com/instance-group-name`), `tolerations`,
and container `resources.requests`/`limits` for `nvidia.com/gpu`, `aws.amazon.com/neuroncore`,
`aws.amazon.com/neuron` or `vpc.amazonaws.com/efa` (a limit alone counts as the request, as for
extended resources in Kubernetes). They never set `spec.nodeName` themselves, except the training
operator (`training.py`), which names its own `schedulerName` and places a job's pods one per node with
GPUs counted (it uses `admits` below for everything but resources). On each tick this scheduler, oldest
default-scheduler pod first:
  - binds a pod to the first Node (by name) that is Ready, not cordoned, whose NoSchedule/NoExecute
    taints the pod tolerates (unhealthy HyperPod nodes carry one), whose labels satisfy the pod's
    selector and required affinity, and whose allocatable covers the pod's requests plus what the pods already
    bound there request (as kube-scheduler counts extended resources: nvidia.com/gpu and the Neuron devices and
    cores are whole, never shared): it sets `spec.nodeName` and a `PodScheduled=True` condition;
    `workloads.reconcile_pods` then runs the pod (Pending -> Running);
  - else leaves it Pending with `PodScheduled=False`, reason `Unschedulable`, and kube-scheduler's
    message, e.g. `0/4 nodes are available: 2 Insufficient nvidia.com/gpu, 2 node(s) didn't match
    Pod's node affinity/selector.`
cpu and memory requests are not checked (the sandbox runs no real processes); pods of a cluster that
has no Nodes at all (an EKS cluster with no HyperPod cluster yet) are left to run unbound, as before
nodes were simulated. When a Node goes away its pods are deleted (pod garbage collection), so an
owner recreates them and they are scheduled again.
"""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any

from sandbox.kube.operators.base import ReconcileContext, Reconciler, condition
from sandbox.kube.store import Obj

EXTENDED = ("nvidia.com/gpu", "aws.amazon.com/neuroncore", "aws.amazon.com/neuron", "vpc.amazonaws.com/efa")
HEALTH_LABEL = "sagemaker.amazonaws.com/node-health-status"
DEFAULT = "default-scheduler"  # pods that name another schedulerName are that scheduler's (as in Kubernetes)
# Extended resources are counted as kube-scheduler counts them: a pod fits a node whose allocatable covers its
# request plus what the pods already bound there request. (True: count only the pod's own request, the sandbox's
# old shortcut; never on by default: an overcommitted GPU is what issue 26 found.)
OVERCOMMIT = False


def requests(pod: Obj) -> dict[str, int]:
    """The pod's requests of the extended resources the scheduler counts (init containers: the max)."""

    def of(container: dict[str, Any]) -> dict[str, int]:
        res = container.get("resources") or {}
        limits, reqs = res.get("limits") or {}, res.get("requests") or {}
        out = {}
        for name in EXTENDED:
            value = reqs.get(name, limits.get(name))
            if value is not None:
                try:
                    out[name] = int(str(value))
                except ValueError:
                    continue
        return out

    spec = pod.get("spec") or {}
    total: Counter[str] = Counter()
    for c in spec.get("containers") or []:
        total.update(of(c))
    for c in spec.get("initContainers") or []:
        for name, value in of(c).items():
            total[name] = max(total[name], value)
    return {k: v for k, v in total.items() if v}


def _expr_matches(expr: dict[str, Any], labels: dict[str, str]) -> bool:
    key, op, values = expr.get("key", ""), expr.get("operator", ""), expr.get("values") or []
    if op == "In":
        return labels.get(key) in values
    if op == "NotIn":
        return labels.get(key) not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    if op in ("Gt", "Lt") and key in labels and values:
        try:
            a, b = int(labels[key]), int(values[0])
        except ValueError:
            return False
        return a > b if op == "Gt" else a < b
    return False


def selects(pod: Obj, node: Obj) -> bool:
    """nodeSelector and required node affinity (terms ORed, expressions ANDed)."""
    spec = pod.get("spec") or {}
    labels = node["metadata"].get("labels") or {}
    if any(labels.get(k) != v for k, v in (spec.get("nodeSelector") or {}).items()):
        return False
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms = required.get("nodeSelectorTerms") or []
    if not terms:
        return True
    return any(all(_expr_matches(e, labels) for e in t.get("matchExpressions") or []) for t in terms)


def tolerates(pod: Obj, taint: dict[str, Any]) -> bool:
    for t in (pod.get("spec") or {}).get("tolerations") or []:
        if t.get("effect") and t["effect"] != taint.get("effect"):
            continue
        if t.get("operator") == "Exists" and (not t.get("key") or t["key"] == taint.get("key")):
            return True
        if t.get("key") == taint.get("key") and t.get("value", "") == taint.get("value", ""):
            return True
    return False


def _ready(node: Obj) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (node.get("status") or {}).get("conditions") or [])


def _taint_blocks(pod: Obj, node: Obj) -> dict[str, Any] | None:
    for taint in (node.get("spec") or {}).get("taints") or []:
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not tolerates(pod, taint):
            return taint
    return None


def admits(pod_spec: dict[str, Any], node: Obj) -> bool:
    """The node could run a pod of this spec, resources aside: Ready, not cordoned, selector and required
    affinity hold, taints tolerated (an operator that places its own pods, as the training operator does)."""
    pod = {"spec": pod_spec}
    return _ready(node) and not (node.get("spec") or {}).get("unschedulable") and selects(pod, node) \
        and _taint_blocks(pod, node) is None


def bound_requests(store: Any) -> dict[str, Counter[str]]:
    """What the live pods bound to each node request (the extended resources the scheduler counts)."""
    used: dict[str, Counter[str]] = {}
    for pod in store.list("v1", "Pod"):
        bound = (pod.get("spec") or {}).get("nodeName")
        if bound and _active(pod):
            used.setdefault(bound, Counter()).update(requests(pod))
    return used


def reason(pod: Obj, node: Obj, used: dict[str, Counter[str]]) -> str | None:
    """Why the pod does not fit the node now (kube-scheduler's words), or None: it fits."""
    return _reason(pod, node, used)


def message(total: int, reasons: Counter[str]) -> str:
    return _message(total, reasons)


def _reason(pod: Obj, node: Obj, used: dict[str, Counter[str]]) -> str | None:
    """None when the pod fits the node, else kube-scheduler's reason text for the summary."""
    if not _ready(node):
        return "node(s) were not ready"
    if (node.get("spec") or {}).get("unschedulable"):
        return "node(s) were unschedulable"
    if not selects(pod, node):
        return "node(s) didn't match Pod's node affinity/selector"
    taint = _taint_blocks(pod, node)
    if taint is not None:
        return f"node(s) had untolerated taint {{{taint.get('key')}: {taint.get('value', '')}}}"
    allocatable = (node.get("status") or {}).get("allocatable") or {}
    taken = Counter() if OVERCOMMIT else used.get(node["metadata"]["name"], Counter())
    for name, want in requests(pod).items():
        try:
            have = int(str(allocatable.get(name, "0")))
        except ValueError:
            have = 0
        if taken[name] + want > have:
            return f"Insufficient {name}"
    return None


def _message(total: int, reasons: Counter[str]) -> str:
    parts = ", ".join(f"{n} {r}" for r, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])))
    return (f"0/{total} nodes are available: {parts}. preemption: 0/{total} nodes are available: "
            f"{total} Preemption is not helpful for scheduling.")


def _active(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed") \
        and not pod["metadata"].get("deletionTimestamp")


def reconcile_scheduling(ctx: ReconcileContext) -> None:
    store = ctx.store
    if not store.count("v1", "Node"):
        return
    pods = store.list("v1", "Pod", field_selector="status.phase=Pending")
    waiting = [p for p in pods if not (p.get("spec") or {}).get("nodeName") and _active(p)
               and (p.get("spec") or {}).get("schedulerName", DEFAULT) == DEFAULT]
    if not waiting:
        return
    nodes = sorted(store.list("v1", "Node"), key=lambda n: n["metadata"]["name"])
    used = bound_requests(store)
    waiting.sort(key=lambda p: (p["metadata"].get("creationTimestamp", ""), p["metadata"]["name"]))
    for pod in waiting:
        reasons: Counter[str] = Counter()
        chosen = None
        for node in nodes:
            why = _reason(pod, node, used)
            if why is None:
                chosen = node
                break
            reasons[why] += 1
        if chosen is None:
            status = dict(pod.get("status") or {})
            status["phase"] = "Pending"
            status["conditions"] = [condition("PodScheduled", "False", "Unschedulable",
                                              _message(len(nodes), reasons))]
            old = (pod.get("status") or {}).get("conditions") or []
            if [(c.get("type"), c.get("status"), c.get("message")) for c in old] != \
                    [(c["type"], c["status"], c["message"]) for c in status["conditions"]]:
                ctx.set_status(pod, status)
                store.record_event(pod, "Warning", "FailedScheduling", status["conditions"][0]["message"], DEFAULT)
            continue
        name = chosen["metadata"]["name"]
        body = copy.deepcopy(pod)
        body["spec"]["nodeName"] = name
        bound = store.put(body)
        ctx.set_status(bound, {**(pod.get("status") or {}), "phase": "Pending",
                               "conditions": [condition("PodScheduled", "True", "Scheduled")]})
        store.record_event(bound, "Normal", "Scheduled",
                           f"Successfully assigned {pod['metadata'].get('namespace')}/{pod['metadata']['name']} "
                           f"to {name}", DEFAULT)
        used.setdefault(name, Counter()).update(requests(pod))


def node_ip(store: Any, name: str) -> str | None:
    node = store.get("v1", "Node", name)
    for address in ((node or {}).get("status") or {}).get("addresses") or []:
        if address.get("type") == "InternalIP":
            return str(address.get("address"))
    return None


RECONCILERS: tuple[Reconciler, ...] = (reconcile_scheduling,)
