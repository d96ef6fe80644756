"""cluster.delete: tear down in reverse, each step watched; only what PodStart created is removed.

Resources are found by their `podstart:cluster` / `podstart:managed` tags (and PodStart's role
names), so a delete works even when the create failed half way, and an imported cluster only
loses what PodStart added to it (its access entry).
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from functions.adapters.kube import KubeCluster
from functions.domain import iam as iamdoc
from functions.domain import manifests, rbac
from functions.domain.clusters.record import ClusterRecords, ClusterStatus
from functions.domain.errors import PermanentStepError
from functions.domain.namespaces import models as namespaces
from functions.domain.operations import Operation, OperationStatus
from functions.domain.ports import StateStore
from functions.domain.tenancy import is_managed
from functions.domain.workflow import Done, Outcome, Skip, Wait
from functions.workflows import aws_ensure as ens
from functions.workflows import eks_access, hyperpod
from functions.workflows import storage as added  # volumes added after create (storage.add)
from functions.workflows.context import StepContext, Workflow

DELETE_SECONDS = {"hyperpod": 300.0, "eks": 300.0, "addon": 60.0, "nat": 60.0, "fsx": 300.0}


def _target(ctx: StepContext) -> tuple[str, str, bool]:
    """(name, region, created by PodStart). Imported clusters lose only what PodStart added."""
    origin = ctx.request.get("origin") or ("created" if ctx.request.get("managed", True) else "imported")
    return ctx.request["name"], ctx.request["region"], origin == "created"


def _eks(ctx: StepContext, name: str) -> dict[str, Any] | None:
    try:
        return ctx.aws("eks").describe_cluster(name=name)["cluster"]  # type: ignore[no-any-return]
    except ClientError as err:
        if ens.error_code(err) == "ResourceNotFoundException":
            return None
        raise


def storage(ctx: StepContext) -> Outcome:
    name, region, managed = _target(ctx)
    waiting = added.release_added(ctx, name, region, ctx.request.get("eks_cluster_name") or name)
    if waiting:
        return Wait(message=f"deleting {waiting}", expected_seconds=DELETE_SECONDS["fsx"])
    if not managed:
        return Skip(message="imported cluster: its storage was not made by PodStart")
    eks, iam = ctx.aws("eks"), ctx.aws("iam")
    cluster = _eks(ctx, name)
    if cluster and cluster.get("status") == "ACTIVE":
        kube = KubeCluster.for_eks(name, region)
        for vol in (manifests.DATA_VOLUME, manifests.FSX_VOLUME):
            kube.delete("v1", "PersistentVolumeClaim", vol, "default")
            kube.delete("v1", "PersistentVolume", vol)
        for a in eks.list_pod_identity_associations(clusterName=name).get("associations", []):
            eks.delete_pod_identity_association(clusterName=name, associationId=a["associationId"])
    ens.delete_role(iam, iamdoc.role_name(name, region, "s3-csi"))
    ens.delete_role(iam, iamdoc.role_name(name, region, "models"))  # model.download's downloader, if one ran
    fsx = ctx.aws("fsx")
    for fs in fsx.describe_file_systems().get("FileSystems", []):
        t = {x["Key"]: x["Value"] for x in fs.get("Tags", [])}
        if t.get(ens.CLUSTER_TAG) == name and t.get(ens.MANAGED_TAG) == "true":
            if fs.get("Lifecycle") != "DELETING":
                fsx.delete_file_system(FileSystemId=fs["FileSystemId"])
            return Wait(message=f"deleting FSx {fs['FileSystemId']}", expected_seconds=DELETE_SECONDS["fsx"])
    return Done(message="volumes, pod identity and the S3 CSI role removed")


def hyperpod_cluster(ctx: StepContext) -> Outcome:
    name, _, managed = _target(ctx)
    if not managed:
        return Skip(message="imported cluster: its HyperPod cluster is left alone")
    sm = ctx.aws("sagemaker")
    cluster = hyperpod.describe(sm, name)
    if cluster is not None:
        if cluster.get("ClusterStatus") != "Deleting":
            if not hyperpod.is_podstart_managed(sm, cluster):
                raise PermanentStepError(
                    "NotManagedByPodStart",
                    f"HyperPod cluster {name} does not carry the {ens.MANAGED_TAG}=true tag: PodStart did not "
                    f"create it and will not delete it")
            sm.delete_cluster(ClusterName=name)
        return Wait(message="HyperPod cluster is Deleting", expected_seconds=DELETE_SECONDS["hyperpod"])
    ens.delete_role(ctx.aws("iam"), iamdoc.role_name(name, ctx.region, "hyperpod"))
    return Done(message="HyperPod cluster and its execution role deleted")


def dependencies(ctx: StepContext) -> Outcome:
    name, _, managed = _target(ctx)
    if not managed or _eks(ctx, name) is None:
        return Skip(message="nothing PodStart installed remains" if managed else "imported cluster: add-ons kept")
    eks = ctx.aws("eks")
    pending = []
    for addon in eks.list_addons(clusterName=name).get("addons", []):
        a = eks.describe_addon(clusterName=name, addonName=addon)["addon"]
        if (a.get("tags") or {}).get(ens.MANAGED_TAG) != "true":
            continue
        if a["status"] != "DELETING":
            eks.delete_addon(clusterName=name, addonName=addon)
        pending.append(addon)
    if pending:
        return Wait(message=f"deleting add-ons {', '.join(pending)}", expected_seconds=DELETE_SECONDS["addon"])
    return Done(message="add-ons PodStart installed are deleted")


def eks_control_plane(ctx: StepContext) -> Outcome:
    name, region, managed = _target(ctx)
    eks, iam = ctx.aws("eks"), ctx.aws("iam")
    if not managed:
        principal = ctx.settings.podstart_role_arn
        eks_name = ctx.request.get("eks_cluster_name") or name
        cluster = _eks(ctx, eks_name)
        if cluster:
            if set(ctx.settings.reader_roles) & set(eks.list_access_entries(clusterName=eks_name).get(
                    "accessEntries", [])):  # the API group's RBAC goes with its entries (while PodStart is admin)
                kube = KubeCluster.for_eks(eks_name, ctx.region)
                grants = list(rbac.manifests())
                for ns in kube.list("v1", "Namespace"):  # its Secrets Role in each of PodStart's namespaces
                    if is_managed(ns) and ns["metadata"]["name"] != "default":
                        grants += namespaces.access_objects(ns["metadata"]["name"])
                for m in reversed(grants):
                    kube.delete(m["apiVersion"], m["kind"], m["metadata"]["name"], m["metadata"].get("namespace"))
            eks_access.remove_access(eks, eks_name, [principal, *ctx.settings.reader_roles])
        if cluster and (cluster.get("tags") or {}).get(ens.MANAGED_TAG) == "imported":
            eks.untag_resource(resourceArn=cluster["arn"], tagKeys=[ens.MANAGED_TAG, ens.CLUSTER_TAG])
        sm = ctx.aws("sagemaker")
        hp = hyperpod.describe(sm, str(ctx.request.get("hyperpod_cluster_name") or name))
        if hp is not None and any(t.get("Key") == ens.MANAGED_TAG and t.get("Value") == "imported"
                                  for t in sm.list_tags(ResourceArn=hp["ClusterArn"]).get("Tags", [])):
            sm.delete_tags(ResourceArn=hp["ClusterArn"], TagKeys=[ens.MANAGED_TAG, ens.CLUSTER_TAG])
        return Done(message="PodStart's access entries and adoption tags removed; the EKS cluster is left alone")
    cluster = _eks(ctx, name)
    if cluster is not None:
        if (cluster.get("tags") or {}).get(ens.MANAGED_TAG) != "true":
            return Skip(message=f"EKS cluster {name} was not created by PodStart")
        ctx.record(oidc_issuer=cluster["identity"]["oidc"]["issuer"])
        if cluster.get("status") != "DELETING":
            eks.delete_cluster(name=name)
        return Wait(message="EKS control plane is DELETING", expected_seconds=DELETE_SECONDS["eks"])
    issuer = str(ctx.outputs.get("oidc_issuer") or "")
    if issuer:
        host = issuer.removeprefix("https://")
        for p in iam.list_open_id_connect_providers()["OpenIDConnectProviderList"]:
            if p["Arn"].endswith(host):
                iam.delete_open_id_connect_provider(OpenIDConnectProviderArn=p["Arn"])
    ens.delete_role(iam, iamdoc.role_name(name, region, "eks"))
    return Done(message="EKS cluster, its OIDC provider and role deleted")


def network(ctx: StepContext) -> Outcome:
    name, _, managed = _target(ctx)
    if not managed:
        return Skip(message="imported cluster: its network is left alone")
    ec2 = ctx.aws("ec2")
    vpcs = ec2.describe_vpcs(Filters=ens.cluster_filter(name, **{ens.MANAGED_TAG: "true"}))["Vpcs"]
    if not vpcs:
        return Done(message="no PodStart network left")
    vpc_id = vpcs[0]["VpcId"]
    in_vpc = [{"Name": "vpc-id", "Values": [vpc_id]}]
    nats = ec2.describe_nat_gateways(Filters=in_vpc)["NatGateways"]
    live = [n for n in nats if n["State"] in ("pending", "available", "deleting")]
    for n in live:
        if n["State"] != "deleting":
            ec2.delete_nat_gateway(NatGatewayId=n["NatGatewayId"])
    if any(n["State"] != "deleted" for n in live) and live:
        refreshed = ec2.describe_nat_gateways(NatGatewayIds=[n["NatGatewayId"] for n in live])["NatGateways"]
        if any(n["State"] != "deleted" for n in refreshed):
            return Wait(message="deleting the NAT gateway", expected_seconds=DELETE_SECONDS["nat"])
    for a in ec2.describe_addresses(Filters=ens.cluster_filter(name))["Addresses"]:
        if not a.get("AssociationId"):
            ec2.release_address(AllocationId=a["AllocationId"])
    endpoints = ec2.describe_vpc_endpoints(Filters=in_vpc)["VpcEndpoints"]
    if endpoints:
        ec2.delete_vpc_endpoints(VpcEndpointIds=[e["VpcEndpointId"] for e in endpoints])
    for rt in ec2.describe_route_tables(Filters=in_vpc)["RouteTables"]:
        if any(a.get("Main") for a in rt.get("Associations", [])):
            continue
        for a in rt.get("Associations", []):
            ec2.disassociate_route_table(AssociationId=a["RouteTableAssociationId"])
        ec2.delete_route_table(RouteTableId=rt["RouteTableId"])
    for s in ec2.describe_subnets(Filters=in_vpc)["Subnets"]:
        ec2.delete_subnet(SubnetId=s["SubnetId"])
    for igw in ec2.describe_internet_gateways(Filters=[{"Name": "attachment.vpc-id", "Values": [vpc_id]}])[
            "InternetGateways"]:
        ec2.detach_internet_gateway(InternetGatewayId=igw["InternetGatewayId"], VpcId=vpc_id)
        ec2.delete_internet_gateway(InternetGatewayId=igw["InternetGatewayId"])
    for sg in ec2.describe_security_groups(Filters=in_vpc)["SecurityGroups"]:
        if sg["GroupName"] != "default":
            ec2.delete_security_group(GroupId=sg["GroupId"])
    ec2.delete_vpc(VpcId=vpc_id)
    return Done(message=f"VPC {vpc_id} and everything PodStart made in it deleted")


def delete_status(op: Operation, state: StateStore) -> None:
    name, region = op.target.cluster or "", op.target.region or ""
    records = ClusterRecords(state)
    if op.status is OperationStatus.SUCCEEDED:
        records.delete(region, name)
    elif op.status.terminal:
        records.set_status(region, name, ClusterStatus.DELETE_FAILED, operation_id=op.id)
    else:
        records.set_status(region, name, ClusterStatus.DELETING, operation_id=op.id)


WORKFLOW = Workflow(
    kind="cluster.delete",
    steps={
        "storage": storage,
        "hyperpod_cluster": hyperpod_cluster,
        "dependencies": dependencies,
        "eks_control_plane": eks_control_plane,
        "network": network,
    },
    on_status=delete_status,
)
