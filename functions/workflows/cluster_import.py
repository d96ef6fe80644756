"""cluster.import: adopt an existing EKS cluster (and its HyperPod cluster, if any). PodStart adds
only its access entry; everything else is detected and recorded, not changed."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from functions.adapters.kube import KubeCluster
from functions.domain import manifests, rbac
from functions.domain.clusters.record import ClusterRecords, ClusterStatus, GroupRecord
from functions.domain.errors import PermanentStepError
from functions.domain.operations import Operation, OperationStatus, now_iso
from functions.domain.ports import StateStore
from functions.domain.preferences import ClusterRef, Preferences, prefs_key
from functions.domain.workflow import Done, Outcome, Wait
from functions.workflows import aws_ensure as ens
from functions.workflows import eks_access
from functions.workflows.context import StepContext, Workflow

IMPORTED = "imported"  # the podstart:managed tag value on an EKS cluster PodStart adopted (never deletes)


def discover(ctx: StepContext) -> Outcome:
    eks_name, region = ctx.request["eks_cluster_name"], ctx.request["region"]
    try:
        cluster = ctx.aws("eks").describe_cluster(name=eks_name)["cluster"]
    except ClientError as err:
        if ens.error_code(err) == "ResourceNotFoundException":
            raise PermanentStepError("EksClusterNotFound", f"no EKS cluster {eks_name} in {region}") from None
        raise
    status = cluster.get("status")
    if status in ("FAILED", "DELETING"):
        issues = "; ".join(i.get("message", "") for i in (cluster.get("health") or {}).get("issues", []))
        raise PermanentStepError("EksClusterNotActive",
                                 f"EKS cluster {eks_name} is {status}" + (f": {issues}" if issues else ""))
    if status != "ACTIVE":
        return Wait(message=f"EKS cluster is {status}", expected_seconds=120)
    sm = ctx.aws("sagemaker")
    found: dict[str, Any] | None = None
    for page in sm.get_paginator("list_clusters").paginate():
        for c in page.get("ClusterSummaries", []):
            desc = sm.describe_cluster(ClusterName=c["ClusterName"])
            if (desc.get("Orchestrator") or {}).get("Eks", {}).get("ClusterArn") == cluster["arn"]:
                found = desc
                break
        if found:
            break
    groups = _groups(ctx, found) if found else []
    return Done(message=f"EKS {cluster.get('version')} ACTIVE; "
                        + (f"HyperPod cluster {found['ClusterName']} ({found['ClusterStatus']})" if found
                           else "no HyperPod cluster on it"),
                outputs={"eks_cluster_arn": cluster["arn"], "kubernetes_version": cluster.get("version"),
                         "hyperpod_cluster_name": found["ClusterName"] if found else None,
                         "node_recovery": (found or {}).get("NodeRecovery"), "instance_groups": groups})


def _groups(ctx: StepContext, cluster: dict[str, Any]) -> list[dict[str, Any]]:
    """The HyperPod cluster's groups as PodStart records them; each group's zone from its subnets."""
    default_subnets = (cluster.get("VpcConfig") or {}).get("Subnets") or []
    wanted = {s for g in cluster.get("InstanceGroups", [])
              for s in ((g.get("OverrideVpcConfig") or {}).get("Subnets") or default_subnets)[:1]}
    zones: dict[str, tuple[str, str]] = {}
    if wanted:
        for sub in ctx.aws("ec2").describe_subnets(SubnetIds=sorted(wanted))["Subnets"]:
            zones[sub["SubnetId"]] = (sub["AvailabilityZone"], sub.get("AvailabilityZoneId", ""))
    out = []
    for g in cluster.get("InstanceGroups", []):
        subnet = ((g.get("OverrideVpcConfig") or {}).get("Subnets") or default_subnets or [""])[0]
        zone, zone_id = zones.get(subnet, ("", ""))
        out.append({
            "name": g["InstanceGroupName"], "instance_type": g["InstanceType"],
            "instance_count": g.get("TargetCount", 0), "availability_zone": zone, "availability_zone_id": zone_id,
            "capacity_type": "training-plan" if g.get("TrainingPlanArn") else
            ("spot" if "Spot" in (g.get("CapacityRequirements") or {}) else "on-demand"),
            "efa_only": (g.get("NetworkInterface") or {}).get("InterfaceType") == "efa-only",
            "training_plan_arn": g.get("TrainingPlanArn"), "current_count": g.get("CurrentCount"),
            "status": g.get("Status"), "counts_as_of": now_iso(),
        })
    return out


def access(ctx: StepContext) -> Outcome:
    eks_name = ctx.request["eks_cluster_name"]
    principal = ctx.settings.podstart_role_arn
    if not principal:
        return Done(message="no PodStart role to grant")
    eks = ctx.aws("eks")
    cluster = eks.describe_cluster(name=eks_name)["cluster"]
    auth = (cluster.get("accessConfig") or {}).get("authenticationMode")
    if auth == "CONFIG_MAP":
        raise PermanentStepError("AccessEntriesDisabled",
                                 f"{eks_name} uses aws-auth ConfigMap authentication only; switch it to "
                                 f"API_AND_CONFIG_MAP (aws eks update-cluster-config --access-config ...) and retry")
    if (cluster.get("tags") or {}).get(ens.MANAGED_TAG) != "true":
        # Marks the adoption; PodStart's role may create access entries only on clusters tagged so.
        eks.tag_resource(resourceArn=cluster["arn"], tags=eks_access.managed_tags(ctx.request["name"], IMPORTED))
    tags = eks_access.managed_tags(ctx.request["name"], IMPORTED)
    if eks_access.ensure_cluster_admin(eks, ctx.region, eks_name, principal, tags):
        ctx.record(access_entry_created=True)
    if eks_access.ensure_reader_access(eks, eks_name, ctx.settings.reader_roles, tags):
        ctx.record(api_access_entry_created=True)
    if not ctx.outputs.get("api_rbac_applied"):  # what the API function's group may do (reads, secrets, invoke)
        kube = KubeCluster.for_eks(eks_name, ctx.region)
        for m in rbac.manifests(manifests.MANAGED_LABELS):
            kube.apply(m)
        ctx.record(api_rbac_applied=True)
    hyperpod_name = ctx.outputs.get("hyperpod_cluster_name")
    if hyperpod_name:  # PodStart may scale an adopted HyperPod cluster's groups, never delete it
        sm = ctx.aws("sagemaker")
        hp = sm.describe_cluster(ClusterName=hyperpod_name)
        tags = {t["Key"]: t["Value"] for t in sm.list_tags(ResourceArn=hp["ClusterArn"]).get("Tags", [])}
        if tags.get(ens.MANAGED_TAG) not in ("true", IMPORTED):
            sm.add_tags(ResourceArn=hp["ClusterArn"],
                        Tags=[{"Key": k, "Value": v} for k, v in
                              eks_access.managed_tags(ctx.request["name"], IMPORTED).items()])
    return Done(message="PodStart's access entries are in place (workflows: cluster admin; API: the podstart-api "
                        "group)", outputs={"access_entry": principal})


def activate(ctx: StepContext) -> Outcome:
    name, region, eks_name = ctx.request["name"], ctx.request["region"], ctx.request["eks_cluster_name"]
    key = prefs_key(ctx.operation.principal.sub)
    prefs = Preferences.model_validate(ctx.state.get(*key) or {})
    ctx.state.put(*key, prefs.model_copy(update={"active_cluster": ClusterRef(name=name, region=region)})
                  .model_dump(mode="json"))
    version = KubeCluster.for_eks(eks_name, region).version()
    return Done(message=f"active cluster; Kubernetes {version['git_version']} answers")


def inventory(ctx: StepContext) -> Outcome:
    eks_name, region = ctx.request["eks_cluster_name"], ctx.request["region"]
    addons = ctx.aws("eks").list_addons(clusterName=eks_name).get("addons", [])
    kube = KubeCluster.for_eks(eks_name, region)
    components = [f"{m['kind']}/{m['metadata']['name']}" for m in manifests.dependency_components(region)
                  if m["kind"] == "DaemonSet"
                  and kube.get("apps/v1", "DaemonSet", m["metadata"]["name"], m["metadata"]["namespace"])]
    missing = sorted(set(manifests.ADDONS) - set(addons))
    return Done(message=f"{len(addons)} add-ons, {len(components)} HyperPod components found"
                        + (f"; missing: {', '.join(missing)}" if missing else ""),
                outputs={"addons": addons, "components_found": components, "addons_missing": missing})


def import_status(op: Operation, state: StateStore) -> None:
    req = op.request
    records = ClusterRecords(state)
    rec = records.load(req["region"], req["name"])
    if rec is None:
        return
    if op.status is OperationStatus.SUCCEEDED:
        out = op.outputs()
        groups = [GroupRecord(**g) for g in out.get("instance_groups", [])]
        records.save(rec.model_copy(update={
            "status": ClusterStatus.ACTIVE, "operation_id": op.id, "instance_groups": groups,
            "hyperpod_cluster_name": out.get("hyperpod_cluster_name"),
            "kubernetes_version": out.get("kubernetes_version"), "node_recovery": out.get("node_recovery")}))
    elif op.status.terminal:
        records.save(rec.model_copy(update={"status": ClusterStatus.FAILED, "operation_id": op.id}))


WORKFLOW = Workflow(
    kind="cluster.import",
    steps={"discover": discover, "access": access, "activate": activate, "inventory": inventory},
    on_status=import_status,
)
