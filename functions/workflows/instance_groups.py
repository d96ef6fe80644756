"""instance_group.add and instance_group.scale: one UpdateCluster each, through the same
compute-subnet allocator and group spec as cluster creation."""

from __future__ import annotations

from typing import Any

from functions.domain.clusters.groups import DRAIN_TIMEOUT_DEFAULT_S
from functions.domain.clusters.network import RESERVED_TAG_PREFIX, subnet_from_ec2
from functions.domain.clusters.record import ClusterRecord, ClusterRecords, GroupRecord
from functions.domain.errors import PermanentStepError
from functions.domain.operations import Operation, OperationStatus, now_iso
from functions.domain.ports import StateStore
from functions.domain.workflow import Done, Outcome, Wait
from functions.workflows import aws_ensure as ens
from functions.workflows import hyperpod
from functions.workflows.context import StepContext, Workflow


def subnet(ctx: StepContext) -> Outcome:
    """Capacity type, EFA-only mode and placement resolved together: the zone's compute subnet."""
    name, g = ctx.request["cluster"], ctx.request["group"]
    ec2 = ctx.aws("ec2")
    cluster = hyperpod.require(ctx, name)
    hyperpod.raise_if_failed(cluster)
    vpc_sg = cluster.get("VpcConfig", {}).get("SecurityGroupIds", [])
    subnets = cluster.get("VpcConfig", {}).get("Subnets", [])
    if not subnets:
        raise PermanentStepError("NoVpcConfig", f"HyperPod cluster {name} has no VPC configuration")
    vpc_id = ec2.describe_subnets(SubnetIds=subnets[:1])["Subnets"][0]["VpcId"]
    alloc = ens.ensure_compute_subnet(ec2, name, vpc_id, g["availability_zone"], group=g["name"],
                                      needed_addresses=int(g.get("addresses_needed") or 0))
    return Done(message=f"{'reused' if alloc.reused else 'carved'} compute subnet {alloc.cidr} in "
                        f"{g['availability_zone']}",
                outputs={"subnet_id": alloc.subnet_id, "security_group_ids": vpc_sg, "vpc_id": vpc_id})


def add_group(ctx: StepContext) -> Outcome:
    name, g = ctx.request["cluster"], ctx.request["group"]
    cluster = hyperpod.require(ctx, name)
    groups = {x["InstanceGroupName"]: x for x in cluster.get("InstanceGroups", [])}
    if g["name"] not in groups:
        busy = hyperpod.wait_until_updatable(cluster)
        if busy is not None:
            return busy
        role_arn, uri = hyperpod.ensure_execution_role(ctx, name)
        out = ctx.outputs
        spec = hyperpod.group_spec(g, role_arn, uri, out["subnet_id"], (out["security_group_ids"] or [""])[0])
        ctx.aws("sagemaker").update_cluster(ClusterName=name, InstanceGroups=[spec])
        ctx.record(update_requested=True)
        cluster = hyperpod.require(ctx, name)
    waiting = hyperpod.watch(cluster, f"adding {g['name']}", None, hyperpod.UPDATE_SECONDS)
    if waiting is not None:
        return waiting
    live = {x["InstanceGroupName"]: x for x in cluster.get("InstanceGroups", [])}[g["name"]]
    return Done(message=f"instance group {g['name']} InService ({live.get('CurrentCount', 0)}/"
                        f"{live.get('TargetCount', 0)})",
                outputs={"current_count": live.get("CurrentCount"), "target_count": live.get("TargetCount")})


def scale(ctx: StepContext) -> Outcome:
    name, gname, count = ctx.request["cluster"], ctx.request["group"], ctx.request["instance_count"]
    cluster = hyperpod.require(ctx, name)
    live = {x["InstanceGroupName"]: x for x in cluster.get("InstanceGroups", [])}
    if gname not in live:
        raise PermanentStepError("InstanceGroupNotFound", f"{name} has no instance group {gname}")
    if live[gname].get("TargetCount") != count:
        busy = hyperpod.wait_until_updatable(cluster)
        if busy is not None:
            return busy
        ctx.aws("sagemaker").update_cluster(ClusterName=name,
                                            InstanceGroups=[hyperpod.spec_from_detail(live[gname], count)])
        _reserve(ctx, live[gname], int(ctx.request.get("addresses_needed") or 0))
        cluster = hyperpod.require(ctx, name)
    waiting = hyperpod.watch(cluster, f"scaling {gname} to {count}", None, hyperpod.UPDATE_SECONDS)
    if waiting is not None:
        return waiting
    g = {x["InstanceGroupName"]: x for x in cluster.get("InstanceGroups", [])}[gname]
    return Done(message=f"{gname} at {g.get('CurrentCount', 0)}/{g.get('TargetCount', 0)}",
                outputs={"current_count": g.get("CurrentCount"), "target_count": g.get("TargetCount")})


def _reserve(ctx: StepContext, detail: dict[str, Any], needed: int) -> None:
    """Keep the group's address reservation on its PodStart compute subnet in step with its count."""
    subnets = (detail.get("OverrideVpcConfig") or {}).get("Subnets") or []
    if not needed or not subnets:
        return
    ec2 = ctx.aws("ec2")
    sub = ec2.describe_subnets(SubnetIds=subnets[:1])["Subnets"][0]
    if subnet_from_ec2(sub).role == "compute":
        ec2.create_tags(Resources=[sub["SubnetId"]], Tags=[{"Key": RESERVED_TAG_PREFIX + detail["InstanceGroupName"],
                                                            "Value": str(needed)}])


def _observed(op: Operation) -> dict[str, Any]:
    out = op.outputs()
    return {"current_count": out.get("current_count"), "counts_as_of": op.updated_at or now_iso(),
            **({"instance_count": out["target_count"]} if out.get("target_count") is not None else {})}


def add_status(op: Operation, state: StateStore) -> None:
    if op.status is not OperationStatus.SUCCEEDED:
        return
    req = op.request
    fields = {k: req["group"][k] for k in GroupRecord.model_fields if k in req["group"]}
    group = GroupRecord(**{**fields, **_observed(op)})

    def add(rec: ClusterRecord) -> ClusterRecord | None:
        if rec.group(group.name) is not None:
            return None
        return rec.model_copy(update={"instance_groups": [*rec.instance_groups, group], "operation_id": op.id})

    ClusterRecords(state).mutate(req["region"], req["cluster"], add)


def scale_status(op: Operation, state: StateStore) -> None:
    if op.status is not OperationStatus.SUCCEEDED:
        return
    req = op.request

    def scale(rec: ClusterRecord) -> ClusterRecord:
        groups = [x.model_copy(update={"instance_count": req["instance_count"], **_observed(op)})
                  if x.name == req["group"] else x for x in rec.instance_groups]
        return rec.model_copy(update={"instance_groups": groups, "operation_id": op.id})

    ClusterRecords(state).mutate(req["region"], req["cluster"], scale)


ADD = Workflow(kind="instance_group.add", steps={"subnet": subnet, "instance_group": add_group},
               on_status=add_status)
SCALE = Workflow(kind="instance_group.scale", steps={"instance_group": scale}, on_status=scale_status)


# --- instance_group.delete: drain (cordon, evict), UpdateCluster(InstanceGroupsToDelete), watch gone ---


def _kube(ctx: StepContext) -> Any:
    from functions.adapters.kube import KubeCluster  # the steps function's only

    return KubeCluster.for_eks(ctx.request["eks_cluster_name"], ctx.region)


def _daemonset_pod(pod: dict[str, Any]) -> bool:
    owners = (pod.get("metadata") or {}).get("ownerReferences") or []
    return any(o.get("kind") == "DaemonSet" for o in owners)


def drain(ctx: StepContext) -> Outcome:
    """Cordon every node of the group, then evict its pods (DaemonSet pods and finished pods skipped).
    An eviction a PodDisruptionBudget refuses is retried until the drain timeout, then fails naming it."""
    from functions.domain.nodes.models import GROUP_LABEL

    gname = ctx.request["group"]
    kube = _kube(ctx)
    nodes = kube.list("v1", "Node", label_selector=f"{GROUP_LABEL}={gname}")
    names = sorted(n["metadata"]["name"] for n in nodes)
    # the drain timeout counts from this attempt's start: a retry (after the user relaxed a PDB) drains afresh
    attempt = ctx.operation.attempt
    started = (ctx.outputs.get("drain_started") if ctx.outputs.get("drain_attempt") == attempt else None) or now_iso()
    for n in nodes:
        if not (n.get("spec") or {}).get("unschedulable"):
            kube.patch("v1", "Node", n["metadata"]["name"], None, {"spec": {"unschedulable": True}})
    evicted: list[str] = list(ctx.outputs.get("evicted") or [])
    blocked: dict[str, str] = {}
    on_group = set(names)
    for pod in kube.list("v1", "Pod"):
        if (pod.get("spec") or {}).get("nodeName") not in on_group or _daemonset_pod(pod):
            continue
        if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        meta = pod["metadata"]
        ref = f"{meta.get('namespace', 'default')}/{meta['name']}"
        why = kube.evict(meta["name"], meta.get("namespace", "default"))
        if why is None:
            if ref not in evicted:
                evicted.append(ref)
        else:
            blocked[ref] = why
    ctx.record(cordoned=names, evicted=evicted, drain_started=started, drain_attempt=attempt)
    if blocked:
        # requests from before the timeout was a parameter carry none: they had the default
        timeout = float(ctx.request.get("drain_timeout_s", DRAIN_TIMEOUT_DEFAULT_S))
        if hyperpod.elapsed(started) > timeout / max(ctx.settings.time_scale, 1e-6):
            detail = "; ".join(f"pod {k}: {v}" for k, v in sorted(blocked.items())[:5])
            raise PermanentStepError("DrainBlocked", f"could not evict {len(blocked)} pod(s) from {gname} within "
                                                     f"{timeout:.0f} s: {detail}")
        return Wait(message=f"{len(blocked)} pod(s) of {gname} wait on a PodDisruptionBudget: "
                            + ", ".join(sorted(blocked)[:5]), outputs={"blocked": sorted(blocked)},
                    expected_seconds=30.0)
    return Done(message=f"drained {len(names)} node(s) of {gname}: {len(evicted)} pod(s) evicted",
                outputs={"cordoned": names, "evicted": evicted, "drain_started": started, "drain_attempt": attempt})


def delete_group(ctx: StepContext) -> Outcome:
    name, gname = ctx.request["cluster"], ctx.request["group"]
    cluster = hyperpod.require(ctx, name)
    live = {x["InstanceGroupName"] for x in cluster.get("InstanceGroups", [])}
    if gname in live and not ctx.outputs.get("update_requested"):
        busy = hyperpod.wait_until_updatable(cluster)
        if busy is not None:
            return busy
        ctx.aws("sagemaker").update_cluster(ClusterName=name, InstanceGroupsToDelete=[gname])
        ctx.record(update_requested=True)
        cluster = hyperpod.require(ctx, name)
    waiting = hyperpod.watch(cluster, f"deleting {gname}", None, hyperpod.UPDATE_SECONDS)
    if waiting is not None:
        return waiting
    if gname in {x["InstanceGroupName"] for x in cluster.get("InstanceGroups", [])}:
        return Wait(message=f"HyperPod still lists {gname}", expected_seconds=60.0)
    return Done(message=f"instance group {gname} deleted from {name}", outputs={"update_requested": True})


def gone(ctx: StepContext) -> Outcome:
    from functions.domain.nodes.models import GROUP_LABEL

    gname = ctx.request["group"]
    left = _kube(ctx).list("v1", "Node", label_selector=f"{GROUP_LABEL}={gname}")
    if left:
        return Wait(message=f"{len(left)} Kubernetes node(s) of {gname} not gone yet", expected_seconds=60.0)
    return Done(message=f"no Kubernetes node of {gname} is left")


def delete_status(op: Operation, state: StateStore) -> None:
    if op.status is not OperationStatus.SUCCEEDED:
        return
    req = op.request

    def drop(rec: ClusterRecord) -> ClusterRecord | None:
        if rec.group(req["group"]) is None:
            return None
        return rec.model_copy(update={"instance_groups": [x for x in rec.instance_groups if x.name != req["group"]],
                                      "operation_id": op.id})

    ClusterRecords(state).mutate(req["region"], req["cluster"], drop)


DELETE = Workflow(kind="instance_group.delete", steps={"drain": drain, "instance_group": delete_group, "gone": gone},
                  on_status=delete_status)
