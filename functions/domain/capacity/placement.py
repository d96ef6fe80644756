"""Placement inside a cluster: GPUs free and used per instance group, and where a job or endpoint would run now.

Counted from the cluster's Kubernetes Nodes and Pods, as the scheduler sees them: a Node's allocatable GPUs
(`nvidia.com/gpu`, or `aws.amazon.com/neuroncore` on Trainium) minus what the non-terminated pods bound to it
request. A Node takes new pods only when Ready and not cordoned. The instance group is the Node's HyperPod label.

A job's pods go one per node (its `nodes` are distinct machines, `gpus_per_node` on each); an endpoint's replicas
may share a node when its free GPUs hold several. Pods wait when no such set of nodes exists now: the placement
says for what (GPUs held by running pods, nodes not Ready, or a group too small).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from functions.domain.nodes.api import GPU_RESOURCES, GROUP_LABEL, int_quantity

INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
SHOWN_NODES = 20


class NodeGpus(BaseModel):
    model_config = ConfigDict(frozen=True)

    node: str
    group: str
    instance_type: str
    schedulable: bool
    gpus: int
    used: int

    @property
    def free(self) -> int:
        return max(0, self.gpus - self.used)


class GroupGpus(BaseModel):
    model_config = ConfigDict(frozen=True)

    group: str
    instance_type: str
    nodes: int
    schedulable_nodes: int = Field(description="Ready and not cordoned")
    gpus_per_node: int
    gpus_total: int
    gpus_used: int = Field(description="Requested by pods bound to the group's nodes")
    gpus_free: int = Field(description="On schedulable nodes")
    largest_free: int = Field(description="The most free GPUs on one schedulable node")


class ClusterGpus(BaseModel):
    """GET /v1/clusters/{cluster}/gpus."""

    model_config = ConfigDict(frozen=True)

    cluster: str
    region: str
    groups: list[GroupGpus]
    gpus_total: int
    gpus_used: int
    gpus_free: int


class Placement(BaseModel):
    """Where a job's or endpoint's pods would run now, or what they would wait for (a dry run's answer)."""

    model_config = ConfigDict(frozen=True)

    fits_now: bool
    instance_type: str
    pods: int
    gpus_per_pod: int
    groups: list[str] = Field(default_factory=list, description="The groups whose nodes would take the pods")
    nodes: list[str] = Field(default_factory=list, description="The nodes that would take the pods (first 20)")
    nodes_with_room: int = Field(description="Schedulable nodes with the GPUs for one pod free now")
    gpus_free: int
    summary: str
    waits_for: str | None = None


def unscheduled(pods: list[dict[str, Any]]) -> str | None:
    """Why a workload's pods wait: the first pod the scheduler could not place, with its message (e.g. `0/2 nodes
    are available: 2 Insufficient nvidia.com/gpu`), and how many wait; None when every pod is placed."""
    waiting = [(p, c) for p in pods for c in (p.get("status") or {}).get("conditions") or []
               if c.get("type") == "PodScheduled" and c.get("status") == "False"]
    if not waiting:
        return None
    pod, cond = waiting[0]
    more = f" (and {len(waiting) - 1} more)" if len(waiting) > 1 else ""
    why = cond.get("message") or cond.get("reason") or "Unschedulable"
    return f"pod {(pod.get('metadata') or {}).get('name')}{more} Pending: {why}"


def requested(pod: dict[str, Any]) -> int:
    """The GPUs (or Neuron cores) a pod requests: its containers' requests, a limit alone counting as the request."""
    return _requested(pod)


def _requested(pod: dict[str, Any]) -> int:
    spec = pod.get("spec") or {}
    total = 0
    for c in spec.get("containers") or []:
        res = c.get("resources") or {}
        asked = {**(res.get("limits") or {}), **(res.get("requests") or {})}
        total += sum(int_quantity(asked.get(r)) or 0 for r in GPU_RESOURCES)
    return total


def _schedulable(node: dict[str, Any]) -> bool:
    if (node.get("spec") or {}).get("unschedulable"):
        return False
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (node.get("status") or {}).get("conditions") or [])


def node_gpus(nodes: list[dict[str, Any]], pods: list[dict[str, Any]]) -> list[NodeGpus]:
    used: dict[str, int] = {}
    for p in pods:
        spec = p.get("spec") or {}
        name = spec.get("nodeName") or spec.get("node_name")
        if not name or (p.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        used[name] = used.get(name, 0) + _requested(p)
    out = []
    for n in nodes:
        meta = n.get("metadata") or {}
        labels = meta.get("labels") or {}
        alloc = (n.get("status") or {}).get("allocatable") or {}
        gpus = sum(int_quantity(alloc.get(r)) or 0 for r in GPU_RESOURCES)
        out.append(NodeGpus(node=str(meta.get("name", "")), group=str(labels.get(GROUP_LABEL, "")),
                            instance_type=str(labels.get(INSTANCE_TYPE_LABEL, "")), schedulable=_schedulable(n),
                            gpus=gpus, used=used.get(str(meta.get("name", "")), 0)))
    return sorted(out, key=lambda x: (x.group, x.node))


def by_group(rows: list[NodeGpus]) -> list[GroupGpus]:
    groups: dict[str, list[NodeGpus]] = {}
    for r in rows:
        groups.setdefault(r.group, []).append(r)
    out = []
    for name, mine in sorted(groups.items()):
        ready = [r for r in mine if r.schedulable]
        out.append(GroupGpus(group=name, instance_type=mine[0].instance_type, nodes=len(mine),
                             schedulable_nodes=len(ready), gpus_per_node=max(r.gpus for r in mine),
                             gpus_total=sum(r.gpus for r in mine), gpus_used=sum(r.used for r in mine),
                             gpus_free=sum(r.free for r in ready),
                             largest_free=max((r.free for r in ready), default=0)))
    return out


def cluster_gpus(cluster: str, region: str, nodes: list[dict[str, Any]], pods: list[dict[str, Any]]) -> ClusterGpus:
    groups = by_group(node_gpus(nodes, pods))
    return ClusterGpus(cluster=cluster, region=region, groups=groups, gpus_total=sum(g.gpus_total for g in groups),
                       gpus_used=sum(g.gpus_used for g in groups), gpus_free=sum(g.gpus_free for g in groups))


def place(rows: list[NodeGpus], instance_type: str, pods: int, gpus_per_pod: int, *, one_per_node: bool) -> Placement:
    """Where `pods` pods of `gpus_per_pod` GPUs each would go now on the nodes of `instance_type` (first fit, the
    nodes with the most free GPUs first), or what they wait for."""
    mine = [r for r in rows if r.instance_type == instance_type]
    ready = sorted((r for r in mine if r.schedulable), key=lambda r: (-r.free, r.group, r.node))
    free = sum(r.free for r in ready)
    per_node = [(r, (1 if one_per_node else max(1, r.free // gpus_per_pod)) if r.free >= gpus_per_pod else 0)
                if gpus_per_pod else (r, 1 if one_per_node else pods) for r in ready]
    room = [r for r, n in per_node if n > 0]
    chosen: list[NodeGpus] = []
    left = pods
    for r, n in per_node:
        take = min(n, left)
        chosen += [r] * take
        left -= take
        if left <= 0:
            break
    what = f"{pods} pod(s) x {gpus_per_pod} GPU(s) on {instance_type}"
    base: dict[str, Any] = {"instance_type": instance_type, "pods": pods, "gpus_per_pod": gpus_per_pod,
                            "nodes_with_room": len(room), "gpus_free": free}
    if left <= 0:
        names = list(dict.fromkeys(r.node for r in chosen))
        groups = sorted({r.group for r in chosen})
        return Placement(fits_now=True, groups=groups, nodes=names[:SHOWN_NODES],
                         summary=f"{what} fit now on {len(names)} node(s) of {', '.join(groups)} "
                                 f"({free} GPU(s) free)", **base)
    if not mine:
        why = f"the cluster has no {instance_type} nodes"
    elif gpus_per_pod and mine[0].gpus and gpus_per_pod > max(r.gpus for r in mine):
        why = f"{instance_type} nodes have {max(r.gpus for r in mine)} GPUs; a pod asks for {gpus_per_pod}"
    elif len(mine) < pods and one_per_node:
        why = f"{pods} nodes are needed and the cluster has {len(mine)} {instance_type} node(s): the group must grow"
    elif len(ready) < len(mine) and len(room) + (len(mine) - len(ready)) >= (pods if one_per_node else 1):
        why = (f"{len(mine) - len(ready)} {instance_type} node(s) are not Ready or cordoned; {len(room)} node(s) "
               f"have room now")
    else:
        held = sum(r.used for r in mine)
        why = (f"GPUs held by running pods: {held} of {sum(r.gpus for r in mine)} in use, {len(room)} node(s) "
               f"with {gpus_per_pod} free; the pods stay Pending until enough free up")
    return Placement(fits_now=False, summary=f"{what} would wait: {why}", waits_for=why, **base)
