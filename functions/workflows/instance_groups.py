"""instance_group.add and instance_group.scale: one UpdateCluster each, through the same
compute-subnet allocator and group spec as cluster creation."""

from __future__ import annotations

from typing import Any

from functions.domain.cluster_record import GroupRecord
from functions.domain.errors import PermanentStepError
from functions.domain.operations import Operation, OperationStatus
from functions.domain.workflow import Done, Outcome, Wait
from functions.workflows import aws_ensure as ens
from functions.workflows import records, registry
from functions.workflows.clusters import _group_spec, describe_hyperpod, ensure_execution_role, hyperpod_watch
from functions.workflows.context import StepContext

UPDATE_SECONDS = 600.0


def _cluster(ctx: StepContext) -> dict[str, Any]:
    cluster = describe_hyperpod(ctx.aws("sagemaker"), ctx.request["cluster"])
    if cluster is None:
        raise PermanentStepError("HyperPodClusterNotFound", f"no HyperPod cluster {ctx.request['cluster']}")
    return cluster


def subnet(ctx: StepContext) -> Outcome:
    """Capacity type, EFA-only mode and placement resolved together: the zone's compute subnet."""
    name, g = ctx.request["cluster"], ctx.request["group"]
    ec2 = ctx.aws("ec2")
    cluster = _cluster(ctx)
    vpc_sg = cluster.get("VpcConfig", {}).get("SecurityGroupIds", [])
    subnets = cluster.get("VpcConfig", {}).get("Subnets", [])
    if not subnets:
        raise PermanentStepError("NoVpcConfig", f"HyperPod cluster {name} has no VPC configuration")
    vpc_id = ec2.describe_subnets(SubnetIds=subnets[:1])["Subnets"][0]["VpcId"]
    alloc = ens.ensure_compute_subnet(ec2, name, vpc_id, g["availability_zone"])
    return Done(message=f"{'reused' if alloc.reused else 'carved'} compute subnet {alloc.cidr} in "
                        f"{g['availability_zone']}",
                outputs={"subnet_id": alloc.subnet_id, "security_group_ids": vpc_sg, "vpc_id": vpc_id})


def add_group(ctx: StepContext) -> Outcome:
    name, g = ctx.request["cluster"], ctx.request["group"]
    sm = ctx.aws("sagemaker")
    cluster = _cluster(ctx)
    groups = {x["InstanceGroupName"]: x for x in cluster.get("InstanceGroups", [])}
    if g["name"] not in groups:
        if cluster.get("ClusterStatus") != "InService":
            return Wait(message=f"HyperPod cluster is {cluster.get('ClusterStatus')}; waiting to update",
                        expected_seconds=60)
        role_arn, uri = ensure_execution_role(ctx, name)
        out = ctx.outputs
        spec = _group_spec(g, role_arn, uri, out["subnet_id"], (out["security_group_ids"] or [""])[0])
        sm.update_cluster(ClusterName=name, InstanceGroups=[spec])
        ctx.record(update_requested=True)
        cluster = _cluster(ctx)
    waiting = hyperpod_watch(cluster, f"adding {g['name']}", None)
    if waiting is not None:
        return waiting.model_copy(update={"expected_seconds": UPDATE_SECONDS})
    live = {x["InstanceGroupName"]: x for x in cluster.get("InstanceGroups", [])}[g["name"]]
    return Done(message=f"instance group {g['name']} InService ({live.get('CurrentCount', 0)}/"
                        f"{live.get('TargetCount', 0)})")


_SPEC_FIELDS = ("InstanceGroupName", "InstanceType", "LifeCycleConfig", "ExecutionRole", "ThreadsPerCore",
                "InstanceStorageConfigs", "OnStartDeepHealthChecks", "TrainingPlanArn", "OverrideVpcConfig",
                "CapacityRequirements", "NetworkInterface")


def spec_from_detail(detail: dict[str, Any], count: int) -> dict[str, Any]:
    """DescribeCluster's group detail -> the UpdateCluster spec that keeps everything but the count."""
    spec = {k: detail[k] for k in _SPEC_FIELDS if detail.get(k) not in (None, [], {})}
    spec["InstanceCount"] = count
    labels = (detail.get("KubernetesConfig") or {}).get("DesiredLabels")
    if labels:
        spec["KubernetesConfig"] = {"Labels": labels}
    return spec


def scale(ctx: StepContext) -> Outcome:
    name, gname, count = ctx.request["cluster"], ctx.request["group"], ctx.request["instance_count"]
    cluster = _cluster(ctx)
    live = {x["InstanceGroupName"]: x for x in cluster.get("InstanceGroups", [])}
    if gname not in live:
        raise PermanentStepError("InstanceGroupNotFound", f"{name} has no instance group {gname}")
    if live[gname].get("TargetCount") != count:
        if cluster.get("ClusterStatus") != "InService":
            return Wait(message=f"HyperPod cluster is {cluster.get('ClusterStatus')}; waiting to update",
                        expected_seconds=60)
        ctx.aws("sagemaker").update_cluster(ClusterName=name, InstanceGroups=[spec_from_detail(live[gname], count)])
        cluster = _cluster(ctx)
    waiting = hyperpod_watch(cluster, f"scaling {gname} to {count}", None)
    if waiting is not None:
        return waiting.model_copy(update={"expected_seconds": UPDATE_SECONDS})
    g = {x["InstanceGroupName"]: x for x in cluster.get("InstanceGroups", [])}[gname]
    return Done(message=f"{gname} at {g.get('CurrentCount', 0)}/{g.get('TargetCount', 0)}")


def add_status(op: Operation, state: Any) -> None:
    if op.status is not OperationStatus.SUCCEEDED:
        return
    req = op.request
    rec = records.load(state, req["region"], req["cluster"])
    if rec is not None and all(x.name != req["group"]["name"] for x in rec.instance_groups):
        group = GroupRecord(**{k: req["group"][k] for k in GroupRecord.model_fields if k in req["group"]})
        records.save(state, rec.model_copy(update={"instance_groups": [*rec.instance_groups, group],
                                                   "operation_id": op.id}))


def scale_status(op: Operation, state: Any) -> None:
    if op.status is not OperationStatus.SUCCEEDED:
        return
    req = op.request
    rec = records.load(state, req["region"], req["cluster"])
    if rec is not None:
        groups = [x.model_copy(update={"instance_count": req["instance_count"]}) if x.name == req["group"] else x
                  for x in rec.instance_groups]
        records.save(state, rec.model_copy(update={"instance_groups": groups, "operation_id": op.id}))


registry.register("instance_group.add", {"subnet": subnet, "instance_group": add_group}, on_status=add_status)
registry.register("instance_group.scale", {"instance_group": scale}, on_status=scale_status)
