"""cluster.create: the EKS control plane with its network, the caller's active cluster, HyperPod's
dependencies, the HyperPod cluster, shared storage. Each step is an idempotent ensure."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from functions.adapters.kube import KubeCluster
from functions.domain import iam as iamdoc
from functions.domain import manifests
from functions.domain.clusters.network import control_plane_zones, plan_base_subnets
from functions.domain.clusters.record import ClusterRecords, ClusterStatus
from functions.domain.errors import PermanentStepError
from functions.domain.namespaces import models as namespaces
from functions.domain.operations import Operation, OperationStatus, now_iso
from functions.domain.ports import StateStore
from functions.domain.preferences import ClusterRef, Preferences, prefs_key
from functions.domain.storage.volumes import STORAGE_TAG
from functions.domain.tenancy import is_managed
from functions.domain.workflow import Done, Outcome, Skip, Wait
from functions.workflows import aws_ensure as ens
from functions.workflows import eks_access, hyperpod
from functions.workflows.context import StepContext, Workflow

EKS_CREATE_SECONDS = 600.0  # realistic durations: the first look waits most of it
ADDON_SECONDS = 60.0
NAT_SECONDS = 90.0
FSX_CREATE_SECONDS = 900.0
OIDC_THUMBPRINT = "9e99a48a9960b14926bb7f3b02e22da2b0ab7280"
ADDON_FAILED = ("CREATE_FAILED", "UPDATE_FAILED", "DEGRADED", "DELETE_FAILED")


def _eks_health(cluster: dict[str, Any]) -> str:
    issues = "; ".join(i.get("message", "") for i in (cluster.get("health") or {}).get("issues", []))
    return f": {issues}" if issues else ""


def _names(ctx: StepContext) -> tuple[str, str]:
    return ctx.request["name"], ctx.request["region"]


def _eks_name(ctx: StepContext) -> str:
    """The EKS cluster's name: PodStart's name for clusters it created; an imported cluster's own name
    (cluster.reconcile runs the dependencies and storage steps on imported clusters too)."""
    return str(ctx.request.get("eks_cluster_name") or ctx.request["name"])


def base_zones(ctx: StepContext) -> list[str]:
    """Two zones for the EKS control plane: the instance groups' zones first."""
    region_zones = [z["ZoneName"] for z in ctx.aws("ec2").describe_availability_zones(
        Filters=[{"Name": "zone-type", "Values": ["availability-zone"]}])["AvailabilityZones"]]
    return control_plane_zones(ctx.request["instance_groups"], region_zones)


# -- cluster.create --------------------------------------------------------------------------------
def eks_control_plane(ctx: StepContext) -> Outcome:
    name, region = _names(ctx)
    ec2, iam, eks = ctx.aws("ec2"), ctx.aws("iam"), ctx.aws("eks")
    out = ctx.outputs
    vpc_id = out.get("vpc_id") or ens.ensure_vpc(ec2, name, ctx.request["vpc_cidr"])
    ctx.record(vpc_id=vpc_id)
    zones = out.get("base_zones") or base_zones(ctx)
    existing = ens.subnets_of(ec2, vpc_id)
    ids: dict[str, list[str]] = {"public": [], "private": []}
    for p in plan_base_subnets(ctx.request["vpc_cidr"], zones):
        sid = ens.ensure_subnet(ec2, name, vpc_id, p.cidr, p.availability_zone, p.role, existing,
                                {"kubernetes.io/role/elb": "1"} if p.role == "public"
                                else {"kubernetes.io/role/internal-elb": "1"})
        ids[p.role].append(sid)
    ctx.record(base_zones=zones, public_subnet_ids=ids["public"], private_subnet_ids=ids["private"])
    igw = ens.ensure_igw(ec2, name, vpc_id)
    public_rt = ens.ensure_route_table(ec2, name, vpc_id, "public", ids["public"])
    ens.ensure_default_route(ec2, public_rt, GatewayId=igw)
    nat_id, nat_state = ens.ensure_nat(ec2, name, vpc_id, ids["public"][0])
    private_rt = ens.ensure_route_table(ec2, name, vpc_id, "private", ids["private"])
    ctx.record(internet_gateway_id=igw, nat_gateway_id=nat_id, route_table_ids=[public_rt, private_rt])
    if nat_state == "pending":
        return Wait(message=f"NAT gateway {nat_id} is starting", expected_seconds=NAT_SECONDS)
    ens.ensure_default_route(ec2, private_rt, NatGatewayId=nat_id)
    ctx.record(s3_endpoint_id=ens.ensure_s3_endpoint(ec2, name, vpc_id, region, [public_rt, private_rt]))
    sg = ens.ensure_efa_security_group(ec2, name, vpc_id)
    role_arn = ens.ensure_role(iam, iamdoc.role_name(name, region, "eks"), iamdoc.trust("eks.amazonaws.com"),
                               [iamdoc.eks_cluster_policy(region)], {}, name,
                               boundary=ctx.settings.permissions_boundary_arn)
    ctx.record(security_group_id=sg, eks_role_arn=role_arn)

    try:
        cluster = eks.describe_cluster(name=name)["cluster"]
    except ClientError as err:
        if ens.error_code(err) != "ResourceNotFoundException":
            raise
        cluster = eks.create_cluster(
            name=name, version=ctx.request["kubernetes_version"], roleArn=role_arn,
            resourcesVpcConfig={"subnetIds": ids["private"] + ids["public"], "securityGroupIds": [sg],
                                "endpointPublicAccess": True, "endpointPrivateAccess": True},
            accessConfig={"authenticationMode": "API_AND_CONFIG_MAP",
                          "bootstrapClusterCreatorAdminPermissions": False},
            tags={ens.CLUSTER_TAG: name, ens.MANAGED_TAG: "true"},
        )["cluster"]
    ctx.record(eks_cluster_arn=cluster["arn"])
    status = cluster.get("status")
    if status == "CREATING":
        # EKS announces no end: the first look waits until ~10 min after createdAt (AWS time), then backs off
        remaining = EKS_CREATE_SECONDS - hyperpod.elapsed(cluster.get("createdAt")) * ctx.settings.time_scale
        return Wait(message="EKS control plane is CREATING (about 10 minutes in AWS)", expected_seconds=remaining,
                    from_start=True)
    if status != "ACTIVE":
        raise PermanentStepError("EksClusterNotActive", f"EKS cluster {name} is {status}"
                                 + _eks_health(cluster))

    issuer = cluster["identity"]["oidc"]["issuer"]
    host = issuer.removeprefix("https://")
    providers = iam.list_open_id_connect_providers()["OpenIDConnectProviderList"]
    oidc_arn = next((p["Arn"] for p in providers if p["Arn"].endswith(host)), None)
    if oidc_arn is None:
        oidc_arn = iam.create_open_id_connect_provider(Url=issuer, ClientIDList=["sts.amazonaws.com"],
                                                       ThumbprintList=[OIDC_THUMBPRINT],
                                                       Tags=ens.tags(name))["OpenIDConnectProviderArn"]
    ctx.record(oidc_provider_arn=oidc_arn)
    principal = ctx.settings.podstart_role_arn
    if principal:
        eks_access.ensure_cluster_admin(eks, region, name, principal, eks_access.managed_tags(name))
    eks_access.ensure_reader_access(eks, name, ctx.settings.reader_roles, eks_access.managed_tags(name))
    return Done(message=f"EKS {cluster.get('version')} ACTIVE in {vpc_id}", outputs={"access_entry": principal})


def activate(ctx: StepContext) -> Outcome:
    name, region = _names(ctx)
    key = prefs_key(ctx.operation.principal.sub)
    prefs = Preferences.model_validate(ctx.state.get(*key) or {})
    wanted = ClusterRef(name=name, region=region)
    if prefs.active_cluster != wanted:
        ctx.state.put(*key, prefs.model_copy(update={"active_cluster": wanted}).model_dump(mode="json"))
    if ctx.settings.podstart_role_arn:
        entry = ctx.aws("eks").describe_access_entry(clusterName=name, principalArn=ctx.settings.podstart_role_arn)
        ctx.record(access_entry_arn=entry["accessEntry"].get("accessEntryArn"))
    version = KubeCluster.for_eks(name, region).version()
    return Done(message=f"active cluster for {ctx.operation.principal.name}; Kubernetes {version['git_version']} "
                        f"answers through the access entry", outputs={"kubernetes_api": version["git_version"]})


def _addons_wanted(ctx: StepContext) -> list[str]:
    return manifests.wanted_addons(ctx.request.get("storage"), bool(ctx.request.get("fsx_csi")))


def dependencies(ctx: StepContext) -> Outcome:
    name, region = _names(ctx)
    eks_name = _eks_name(ctx)
    eks = ctx.aws("eks")
    pending: list[str] = []
    for addon in _addons_wanted(ctx):
        try:
            a = eks.describe_addon(clusterName=eks_name, addonName=addon)["addon"]
        except ClientError as err:
            if ens.error_code(err) != "ResourceNotFoundException":
                raise
            a = eks.create_addon(clusterName=eks_name, addonName=addon, resolveConflicts="OVERWRITE",
                                 tags={ens.CLUSTER_TAG: name, ens.MANAGED_TAG: "true"})["addon"]
        if a["status"] in ADDON_FAILED:
            issues = "; ".join(i.get("message", "") for i in (a.get("health") or {}).get("issues", []))
            raise PermanentStepError("AddonFailed", f"add-on {addon} is {a['status']}: {issues or 'no detail'}")
        if a["status"] != "ACTIVE":
            pending.append(addon)
    ctx.record(addons=_addons_wanted(ctx))
    kube = KubeCluster.for_eks(eks_name, region)
    components = manifests.dependency_components(region)
    if not ctx.outputs.get("components_applied"):
        for m in components:
            kube.apply(m)
        # the API function's Secrets Role in each PodStart namespace (default's is a component): a namespace made
        # before PodStart granted Secrets per namespace gets it on reconcile
        for ns in kube.list("v1", "Namespace"):
            if is_managed(ns) and ns["metadata"]["name"] != "default":
                for m in namespaces.access_objects(ns["metadata"]["name"]):
                    kube.apply(m)
        ctx.record(components_applied=[f"{m['kind']}/{m['metadata']['name']}" for m in components])
    for m in components:
        if m["kind"] == "DaemonSet":
            ds = kube.get("apps/v1", "DaemonSet", m["metadata"]["name"], m["metadata"]["namespace"])
            if not manifests.daemonset_ready(ds):
                pending.append(m["metadata"]["name"])
    if pending:
        return Wait(message=f"waiting for {', '.join(pending)}", expected_seconds=ADDON_SECONDS)
    return Done(message=f"{len(_addons_wanted(ctx))} add-ons ACTIVE, {len(components)} components ready")


def hyperpod_cluster(ctx: StepContext) -> Outcome:
    name, _ = _names(ctx)
    ec2, sm = ctx.aws("ec2"), ctx.aws("sagemaker")
    out = ctx.outputs
    if "hyperpod_role_arn" in out and "lifecycle_uri" in out:
        role_arn, uri = out["hyperpod_role_arn"], out["lifecycle_uri"]
    else:
        role_arn, uri = hyperpod.ensure_execution_role(ctx, name)
    placed: dict[str, str] = dict(out.get("group_subnets") or {})
    subnets: dict[str, str] = dict(out.get("compute_subnets") or {})
    for g in ctx.request["instance_groups"]:
        if g["name"] not in placed:
            alloc = ens.ensure_compute_subnet(ec2, name, out["vpc_id"], g["availability_zone"], group=g["name"],
                                              needed_addresses=int(g.get("addresses_needed") or 0))
            placed[g["name"]] = str(alloc.subnet_id)
            ctx.record(group_subnets=placed)  # kept even if a later group fails
        subnets.setdefault(g["availability_zone"], placed[g["name"]])
    ctx.record(hyperpod_role_arn=role_arn, lifecycle_uri=uri, compute_subnets=subnets, group_subnets=placed)
    cluster = hyperpod.describe(sm, name)
    if cluster is None:
        sg = out["security_group_id"]
        sm.create_cluster(
            ClusterName=name,
            InstanceGroups=[hyperpod.group_spec(g, role_arn, uri, placed[g["name"]], sg)
                            for g in ctx.request["instance_groups"]],
            VpcConfig={"SecurityGroupIds": [sg], "Subnets": out["private_subnet_ids"]},
            Orchestrator={"Eks": {"ClusterArn": out["eks_cluster_arn"]}},
            NodeRecovery="Automatic" if ctx.request.get("node_recovery", "automatic") == "automatic" else "None",
            NodeProvisioningMode="Continuous",  # cluster events and EventBridge need it
            Tags=ens.tags(name),
        )
        cluster = hyperpod.describe(sm, name) or {"ClusterStatus": "Creating"}
    ctx.record(hyperpod_cluster_arn=cluster.get("ClusterArn"))
    waiting = hyperpod.watch(cluster, "creating", cluster.get("CreationTime"))
    if waiting is not None:
        return waiting
    groups = ", ".join(f"{g['InstanceGroupName']} {g.get('CurrentCount', 0)}/{g.get('TargetCount', 0)}"
                       for g in cluster.get("InstanceGroups", []))
    return Done(message=f"HyperPod cluster InService ({groups})")


S3_CSI_SA = ("kube-system", "s3-csi-driver-sa")


def storage(ctx: StepContext) -> Outcome:
    name, region = _names(ctx)
    spec = ctx.request.get("storage") or {}
    if not spec.get("s3", True) and not spec.get("fsx_lustre"):
        return Skip(message="no storage requested")
    eks_name = _eks_name(ctx)
    kube = KubeCluster.for_eks(eks_name, region)
    waiting: list[str] = []
    if spec.get("s3", True):
        bucket = ctx.settings.data_bucket
        if not ctx.outputs.get("s3_volume_applied"):
            role_arn = ens.ensure_role(ctx.aws("iam"), iamdoc.role_name(name, region, "s3-csi"),
                                       iamdoc.trust("pods.eks.amazonaws.com", tag_session=True), [],
                                       {"data-bucket": iamdoc.data_bucket_policy(region, bucket)}, name,
                                       boundary=ctx.settings.permissions_boundary_arn)
            ctx.record(s3_csi_role_arn=role_arn, data_bucket=bucket)
            eks = ctx.aws("eks")
            ns, sa = S3_CSI_SA
            assoc = eks.list_pod_identity_associations(clusterName=eks_name, namespace=ns,
                                                       serviceAccount=sa)["associations"]
            if not assoc:
                eks.create_pod_identity_association(clusterName=eks_name, namespace=ns, serviceAccount=sa,
                                                    roleArn=role_arn, tags=eks_access.managed_tags(name))
            for m in manifests.s3_volume(bucket, region):
                kube.apply(m)
            ctx.record(s3_volume_applied=True)
        phase = _pvc_phase(kube, manifests.DATA_VOLUME)
        ctx.record(s3_pvc_phase=phase, storage_checked_at=now_iso())
        if phase != "Bound":
            waiting.append(f"PVC {manifests.DATA_VOLUME} ({phase})")
    fsx_spec = spec.get("fsx_lustre")
    if fsx_spec:
        fsx = ctx.aws("fsx")
        fs = _find_fsx(fsx, name)
        if fs is None:
            fs = fsx.create_file_system(
                FileSystemType="LUSTRE", StorageCapacity=fsx_spec["storage_capacity_gib"],
                SubnetIds=[next(iter((ctx.outputs.get("compute_subnets") or ctx.request["compute_subnets"]).values()))],
                SecurityGroupIds=[ctx.outputs.get("security_group_id") or ctx.request["security_group_id"]],
                LustreConfiguration={"DeploymentType": "PERSISTENT_2",
                                     "PerUnitStorageThroughput": fsx_spec["throughput_mb_per_tib"]},
                Tags=ens.tags(name), ClientRequestToken=ctx.operation.id[:63],
            )["FileSystem"]
        ctx.record(fsx_file_system_id=fs["FileSystemId"])
        lifecycle = fs.get("Lifecycle", "AVAILABLE")
        if lifecycle in ("FAILED", "MISCONFIGURED"):
            raise PermanentStepError("FsxFailed", f"FSx file system {fs['FileSystemId']} is {lifecycle}: "
                                     f"{(fs.get('FailureDetails') or {}).get('Message') or 'AWS gave no reason'}")
        if lifecycle != "AVAILABLE":
            waiting.append(f"FSx {fs['FileSystemId']} ({lifecycle})")
        else:
            mount = (fs.get("LustreConfiguration") or {}).get("MountName", "fsx")
            if not ctx.outputs.get("fsx_volume_applied"):
                for m in manifests.fsx_volume(fs["FileSystemId"], fs.get("DNSName", ""), mount,
                                              fsx_spec["storage_capacity_gib"]):
                    kube.apply(m)
                ctx.record(fsx_volume_applied=True)
            phase = _pvc_phase(kube, manifests.FSX_VOLUME)
            ctx.record(fsx_pvc_phase=phase, storage_checked_at=now_iso())
            if phase != "Bound":
                waiting.append(f"PVC {manifests.FSX_VOLUME} ({phase})")
    if waiting:
        expected = FSX_CREATE_SECONDS if any(w.startswith("FSx") for w in waiting) else 30
        return Wait(message=f"waiting for {', '.join(waiting)}", expected_seconds=expected)
    return Done(message="shared storage mounted: PVC " + manifests.DATA_VOLUME
                + (" and " + manifests.FSX_VOLUME if fsx_spec else ""))


def _pvc_phase(kube: KubeCluster, name: str) -> str:
    pvc = kube.get("v1", "PersistentVolumeClaim", name, "default")
    return str(((pvc or {}).get("status") or {}).get("phase") or ("Pending" if pvc else "Missing"))


def _find_fsx(fsx: Any, name: str) -> dict[str, Any] | None:
    for fs in fsx.describe_file_systems().get("FileSystems", []):
        t = {x["Key"]: x["Value"] for x in fs.get("Tags", [])}
        if STORAGE_TAG in t:
            continue  # a file system added after create (storage.add): not the create's
        if t.get(ens.CLUSTER_TAG) == name and fs.get("Lifecycle") != "DELETING":
            return fs  # type: ignore[no-any-return]
    return None


def create_status(op: Operation, state: StateStore) -> None:
    name, region = op.target.cluster or "", op.target.region or ""
    status = {OperationStatus.SUCCEEDED: ClusterStatus.ACTIVE, OperationStatus.FAILED: ClusterStatus.FAILED,
              OperationStatus.CANCELLED: ClusterStatus.FAILED}.get(op.status, ClusterStatus.CREATING)
    ClusterRecords(state).set_status(region, name, status, operation_id=op.id)


WORKFLOW = Workflow(
    kind="cluster.create",
    steps={
        "eks_control_plane": eks_control_plane,
        "activate": activate,
        "dependencies": dependencies,
        "hyperpod_cluster": hyperpod_cluster,
        "storage": storage,
    },
    on_status=create_status,
)
