"""storage.add, storage.remove and cluster.reconcile: volumes after create, and the create's
dependencies and storage steps run again (idempotently) on a created or imported cluster.

storage.add: `backing` (S3: the volume's role scoped to its bucket/prefix, its service account and
the Pod Identity association; FSx: the file system, watched CREATING -> AVAILABLE), then `volume`
(the static PersistentVolume and its claim, watched to Bound). storage.remove goes back: the claim
and volume first (a claim a pod still uses waits), then the role or the file system. A bucket is
never deleted.
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from functions.adapters.kube import KubeCluster
from functions.domain import iam as iamdoc
from functions.domain.clusters.record import ClusterRecords
from functions.domain.errors import PermanentStepError
from functions.domain.operations import Operation, OperationStatus, now_iso
from functions.domain.ports import StateStore
from functions.domain.storage import volumes as st
from functions.domain.tenancy import unmanaged_reason
from functions.domain.workflow import Done, Outcome, Wait
from functions.workflows import aws_ensure as ens
from functions.workflows import cluster_create, eks_access, hyperpod
from functions.workflows.context import StepContext, Workflow

FSX_CREATE_SECONDS = 720.0
FSX_DELETE_SECONDS = 300.0
ADDON_SECONDS = 60.0
BIND_SECONDS = 15.0


def _where(ctx: StepContext) -> tuple[str, str, str]:
    """(PodStart's cluster name, region, the EKS cluster's name)."""
    r = ctx.request
    return r["cluster"], r["region"], r.get("eks_cluster_name") or r["cluster"]


def ensure_addons(ctx: StepContext, eks_name: str, cluster: str, names: list[str]) -> list[str]:
    """Create the EKS add-ons that are missing; the ones not ACTIVE yet."""
    eks = ctx.aws("eks")
    pending = []
    for addon in names:
        try:
            a = eks.describe_addon(clusterName=eks_name, addonName=addon)["addon"]
        except ClientError as err:
            if ens.error_code(err) != "ResourceNotFoundException":
                raise
            a = eks.create_addon(clusterName=eks_name, addonName=addon, resolveConflicts="OVERWRITE",
                                 tags=eks_access.managed_tags(cluster))["addon"]
        if a["status"] in cluster_create.ADDON_FAILED:
            raise PermanentStepError("AddonFailed", f"add-on {addon} is {a['status']}")
        if a["status"] != "ACTIVE":
            pending.append(addon)
    return pending


def _own_or_absent(kube: KubeCluster, obj: dict[str, Any]) -> None:
    meta = obj["metadata"]
    found = kube.get(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace"))
    if found is not None and not st.is_podstarts(found):
        where = f" in namespace {meta['namespace']}" if meta.get("namespace") else ""
        raise PermanentStepError("NotPodStarts", f"{obj['kind']} {meta['name']}{where} exists and was not made by "
                                                 f"PodStart; choose another name")


def _ensure_namespace(kube: KubeCluster, namespace: str) -> None:
    """The claim's namespace is a PodStart namespace (the API checked): it may have gone since; never made here."""
    why = unmanaged_reason(namespace, kube.get("v1", "Namespace", namespace))
    if why:
        raise PermanentStepError("NotAPodStartNamespace", why)


def _find_fsx(ctx: StepContext, cluster: str, name: str) -> dict[str, Any] | None:
    for fs in ctx.aws("fsx").describe_file_systems().get("FileSystems", []):
        t = {x["Key"]: x["Value"] for x in fs.get("Tags", [])}
        if t.get(ens.CLUSTER_TAG) == cluster and t.get(st.STORAGE_TAG) == name and fs.get("Lifecycle") != "DELETING":
            return fs  # type: ignore[no-any-return]
    return None


def _describe_fsx(ctx: StepContext, fs_id: str) -> dict[str, Any] | None:
    try:
        found = ctx.aws("fsx").describe_file_systems(FileSystemIds=[fs_id]).get("FileSystems") or []
    except ClientError as err:
        if ens.error_code(err) == "FileSystemNotFound":
            return None
        raise
    return found[0] if found else None


def _placement(ctx: StepContext, eks_name: str) -> tuple[str, list[str]]:
    """A subnet next to the cluster's instances and the security group they share (FSx in the cluster's VPC)."""
    hp_name = ctx.request.get("hyperpod_cluster_name")
    hp = hyperpod.describe(ctx.aws("sagemaker"), hp_name) if hp_name else None
    if hp:
        vpc = hp.get("VpcConfig") or {}
        groups = hp.get("InstanceGroups") or []
        override = ((groups[0].get("OverrideVpcConfig") or {}).get("Subnets") or []) if groups else []
        subnets = override or vpc.get("Subnets") or []
        if subnets and vpc.get("SecurityGroupIds"):
            return subnets[0], list(vpc["SecurityGroupIds"])
    eks = ctx.aws("eks").describe_cluster(name=eks_name)["cluster"]
    cfg = eks.get("resourcesVpcConfig") or {}
    sgs = list(cfg.get("securityGroupIds") or []) + ([cfg["clusterSecurityGroupId"]]
                                                     if cfg.get("clusterSecurityGroupId") else [])
    if not cfg.get("subnetIds") or not sgs:
        raise PermanentStepError("NoPlacement", f"cannot tell which subnet and security group {eks_name} uses")
    return cfg["subnetIds"][0], sgs[:1]


def _check_fsx(fs: dict[str, Any]) -> str:
    lifecycle = str(fs.get("Lifecycle", "AVAILABLE"))
    if lifecycle in ("FAILED", "MISCONFIGURED"):
        raise PermanentStepError("FsxFailed", f"FSx file system {fs['FileSystemId']} is {lifecycle}: "
                                 f"{(fs.get('FailureDetails') or {}).get('Message') or 'AWS gave no reason'}")
    return lifecycle


# -- storage.add -----------------------------------------------------------------------------------
def add_backing(ctx: StepContext) -> Outcome:
    cluster, region, eks_name = _where(ctx)
    r = ctx.request
    name, ns = r["name"], r["namespace"]
    if r["kind"] == "s3":
        pending = ensure_addons(ctx, eks_name, cluster, st.backing_addons("s3"))
        role_arn = ens.ensure_role(
            ctx.aws("iam"), st.role_name(cluster, region, name),
            iamdoc.trust("pods.eks.amazonaws.com", tag_session=True), [],
            {"mounted-bucket": st.bucket_policy(region, r["bucket"], r["prefix"], r["read_only"])}, cluster,
            boundary=ctx.settings.permissions_boundary_arn)
        ctx.record(role_arn=role_arn)
        kube = KubeCluster.for_eks(eks_name, region)
        sa_obj = st.s3_service_account(name, ns)
        _own_or_absent(kube, sa_obj)
        _ensure_namespace(kube, ns)
        kube.apply(sa_obj)
        sa = sa_obj["metadata"]["name"]
        eks = ctx.aws("eks")
        found = eks.list_pod_identity_associations(clusterName=eks_name, namespace=ns,
                                                   serviceAccount=sa)["associations"]
        if found:
            assoc_id = found[0]["associationId"]
        else:
            assoc_id = eks.create_pod_identity_association(
                clusterName=eks_name, namespace=ns, serviceAccount=sa, roleArn=role_arn,
                tags=eks_access.managed_tags(cluster))["association"]["associationId"]
        ctx.record(service_account=sa, association_id=assoc_id)
        if pending:
            return Wait(message=f"waiting for add-ons {', '.join(pending)}", expected_seconds=ADDON_SECONDS)
        prefix = f"s3://{r['bucket']}/{r['prefix']}"
        return Done(message=f"role scoped to {prefix} bound to service account {ns}/{sa}")
    pending = ensure_addons(ctx, eks_name, cluster, st.backing_addons("fsx_lustre"))
    fs = _find_fsx(ctx, cluster, name)
    if fs is None:
        subnet, sgs = _placement(ctx, eks_name)
        fs = ctx.aws("fsx").create_file_system(
            FileSystemType="LUSTRE", StorageCapacity=r["storage_capacity_gib"], SubnetIds=[subnet],
            SecurityGroupIds=sgs,
            LustreConfiguration={"DeploymentType": "PERSISTENT_2",
                                 "PerUnitStorageThroughput": r["throughput_mb_per_tib"]},
            Tags=ens.tags(cluster, **{st.STORAGE_TAG: name}), ClientRequestToken=ctx.operation.id[:63],
        )["FileSystem"]
    ctx.record(file_system_id=fs["FileSystemId"])
    lifecycle = _check_fsx(fs)
    if lifecycle != "AVAILABLE":
        remaining = FSX_CREATE_SECONDS - hyperpod.elapsed(fs.get("CreationTime"))
        return Wait(message=f"FSx {fs['FileSystemId']} is {lifecycle} (about 12 minutes in AWS)",
                    expected_seconds=max(remaining, 30.0))
    if pending:
        return Wait(message=f"waiting for add-on {', '.join(pending)}", expected_seconds=ADDON_SECONDS)
    return Done(message=f"FSx {fs['FileSystemId']} AVAILABLE ({r['storage_capacity_gib']} GiB)")


def _volume_objects(ctx: StepContext) -> list[dict[str, Any]]:
    cluster, region, _ = _where(ctx)
    r = ctx.request
    if r["kind"] == "s3":
        return st.s3_volume(cluster, r["name"], r["namespace"], r["bucket"], r["prefix"], region, r["read_only"])
    fs_id = ctx.outputs["file_system_id"]
    fs = _describe_fsx(ctx, fs_id)
    if fs is None:
        raise PermanentStepError("FsxGone", f"FSx file system {fs_id} no longer exists")
    mount = (fs.get("LustreConfiguration") or {}).get("MountName", "fsx")
    return st.fsx_volume(cluster, r["name"], r["namespace"], fs_id, fs.get("DNSName", ""), mount,
                         r["storage_capacity_gib"])


def pvc_phase(kube: KubeCluster, name: str, namespace: str) -> str:
    pvc = kube.get("v1", "PersistentVolumeClaim", name, namespace)
    return str(((pvc or {}).get("status") or {}).get("phase") or ("Pending" if pvc else "Missing"))


def add_volume(ctx: StepContext) -> Outcome:
    _, region, eks_name = _where(ctx)
    r = ctx.request
    kube = KubeCluster.for_eks(eks_name, region)
    if not ctx.outputs.get("volume_applied"):
        objs = _volume_objects(ctx)
        for m in objs:
            _own_or_absent(kube, m)
        _ensure_namespace(kube, r["namespace"])
        for m in objs:
            kube.apply(m)
        ctx.record(volume_applied=True, pv=objs[0]["metadata"]["name"])
    phase = pvc_phase(kube, r["name"], r["namespace"])
    ctx.record(pvc_phase=phase, checked_at=now_iso())
    if phase != "Bound":
        return Wait(message=f"PVC {r['namespace']}/{r['name']} is {phase}", expected_seconds=BIND_SECONDS)
    return Done(message=f"PVC {r['namespace']}/{r['name']} Bound to {ctx.outputs.get('pv')}")


def add_status(op: Operation, state: StateStore) -> None:
    r = op.request
    records = st.StorageRecords(state)
    out = op.outputs()
    found = {k: out[k] for k in ("role_arn", "service_account", "file_system_id", "pvc_phase", "checked_at")
             if out.get(k)}
    if op.status is OperationStatus.SUCCEEDED:
        records.update(r["region"], r["cluster"], r["name"], status="AVAILABLE", message=None, **found)
    elif op.status.terminal:
        records.update(r["region"], r["cluster"], r["name"], status="FAILED",
                       message=op.error.message if op.error else "the operation ended", **found)
    else:
        records.update(r["region"], r["cluster"], r["name"], status="CREATING", operation_id=op.id, **found)


# -- storage.remove --------------------------------------------------------------------------------
def remove_volume(ctx: StepContext) -> Outcome:
    _, region, eks_name = _where(ctx)
    r = ctx.request
    eks = ctx.aws("eks")
    try:
        if eks.describe_cluster(name=eks_name)["cluster"].get("status") != "ACTIVE":
            return Done(message="the EKS cluster is not ACTIVE: no volume objects to remove")
    except ClientError as err:
        if ens.error_code(err) == "ResourceNotFoundException":
            return Done(message="the EKS cluster is gone")
        raise
    kube = KubeCluster.for_eks(eks_name, region)
    left = []
    for api, kind, name, ns in (("v1", "PersistentVolumeClaim", r["name"], r["namespace"]),
                                ("v1", "PersistentVolume", r["pv"], None)):
        obj = kube.get(api, kind, name, ns)
        if obj is None or not st.is_podstarts(obj):
            continue
        if not obj["metadata"].get("deletionTimestamp"):
            kube.delete(api, kind, name, ns)
        if kube.get(api, kind, name, ns) is not None:
            left.append(f"{kind} {name}")
    if left:
        return Wait(message=f"waiting for {', '.join(left)} to go (a pod still mounting the claim keeps it)",
                    expected_seconds=BIND_SECONDS)
    return Done(message=f"PVC {r['namespace']}/{r['name']} and its volume removed")


def remove_backing(ctx: StepContext) -> Outcome:
    _, region, eks_name = _where(ctx)
    r = ctx.request
    if r["kind"] == "s3":
        sa = r.get("service_account")
        if sa and _eks_active(ctx, eks_name):
            eks = ctx.aws("eks")
            for a in eks.list_pod_identity_associations(clusterName=eks_name, namespace=r["namespace"],
                                                        serviceAccount=sa)["associations"]:
                eks.delete_pod_identity_association(clusterName=eks_name, associationId=a["associationId"])
            kube = KubeCluster.for_eks(eks_name, region)
            obj = kube.get("v1", "ServiceAccount", sa, r["namespace"])
            if obj is not None and st.is_podstarts(obj):
                kube.delete("v1", "ServiceAccount", sa, r["namespace"])
        if r.get("role_name"):
            ens.delete_role(ctx.aws("iam"), r["role_name"])
        return Done(message=f"role and service account removed; bucket {r.get('bucket')} kept")
    fs_id = r.get("file_system_id")
    fs = _describe_fsx(ctx, fs_id) if fs_id else None
    if fs is None:
        return Done(message=f"FSx {fs_id or '(none)'} deleted")
    if fs.get("Lifecycle") != "DELETING":
        ctx.aws("fsx").delete_file_system(FileSystemId=fs_id)
    return Wait(message=f"FSx {fs_id} is DELETING", expected_seconds=FSX_DELETE_SECONDS)


def _eks_active(ctx: StepContext, eks_name: str) -> bool:
    try:
        return bool(ctx.aws("eks").describe_cluster(name=eks_name)["cluster"].get("status") == "ACTIVE")
    except ClientError as err:
        if ens.error_code(err) == "ResourceNotFoundException":
            return False
        raise


def remove_status(op: Operation, state: StateStore) -> None:
    r = op.request
    records = st.StorageRecords(state)
    if r.get("origin") == "cluster":
        if op.status is OperationStatus.SUCCEEDED:
            ClusterRecords(state).mutate(r["region"], r["cluster"], lambda rec: rec.model_copy(
                update={"storage": {**rec.storage, "fsx_removed": True}}))
        return
    if op.status is OperationStatus.SUCCEEDED:
        records.delete(r["region"], r["cluster"], r["name"])
    elif op.status.terminal:
        records.update(r["region"], r["cluster"], r["name"], status="DELETE_FAILED",
                       message=op.error.message if op.error else "the operation ended")
    else:
        records.update(r["region"], r["cluster"], r["name"], status="DELETING", operation_id=op.id)


# -- cluster.reconcile -----------------------------------------------------------------------------
def reconcile_dependencies(ctx: StepContext) -> Outcome:
    """The create's dependencies, and the API function's access entry a cluster made before it existed lacks
    (its ClusterRole is one of the dependencies)."""
    cluster, _, eks_name = _where(ctx)
    if not ctx.outputs.get("api_access_checked"):
        eks = ctx.aws("eks")
        tags = (eks.describe_cluster(name=eks_name)["cluster"].get("tags") or {})
        eks_access.ensure_reader_access(eks, eks_name, ctx.settings.reader_roles,
                                     eks_access.managed_tags(cluster, tags.get(ens.MANAGED_TAG) or "true"))
        ctx.record(api_access_checked=True)
    return cluster_create.dependencies(ctx)


def _added_volume(ctx: StepContext, rec: st.StorageRecord, kube: KubeCluster) -> str | None:
    """Converge one added volume (role, service account, association, PV/PVC); what it still waits for."""
    cluster, region, eks_name = _where(ctx)
    objs: list[dict[str, Any]]
    if rec.kind == "s3":
        role_arn = ens.ensure_role(
            ctx.aws("iam"), st.role_name(cluster, region, rec.name),
            iamdoc.trust("pods.eks.amazonaws.com", tag_session=True), [],
            {"mounted-bucket": st.bucket_policy(region, rec.bucket or "", rec.prefix, rec.read_only)}, cluster,
            boundary=ctx.settings.permissions_boundary_arn)
        _ensure_namespace(kube, rec.namespace)
        sa_obj = st.s3_service_account(rec.name, rec.namespace)
        _own_or_absent(kube, sa_obj)
        kube.apply(sa_obj)
        eks = ctx.aws("eks")
        sa = sa_obj["metadata"]["name"]
        if not eks.list_pod_identity_associations(clusterName=eks_name, namespace=rec.namespace,
                                                  serviceAccount=sa)["associations"]:
            eks.create_pod_identity_association(clusterName=eks_name, namespace=rec.namespace, serviceAccount=sa,
                                                roleArn=role_arn, tags=eks_access.managed_tags(cluster))
        objs = st.s3_volume(cluster, rec.name, rec.namespace, rec.bucket or "", rec.prefix, region, rec.read_only)
    else:
        fs = _describe_fsx(ctx, rec.file_system_id) if rec.file_system_id else None
        if fs is None:
            raise PermanentStepError("FsxGone", f"FSx file system {rec.file_system_id} of volume {rec.name} no longer "
                                                f"exists; remove the volume and add it again")
        if _check_fsx(fs) != "AVAILABLE":
            return f"FSx {rec.file_system_id} ({fs.get('Lifecycle')})"
        mount = (fs.get("LustreConfiguration") or {}).get("MountName", "fsx")
        objs = st.fsx_volume(cluster, rec.name, rec.namespace, fs["FileSystemId"], fs.get("DNSName", ""), mount,
                             rec.storage_capacity_gib or st.FSX_MIN_GIB)
    for m in objs:
        _own_or_absent(kube, m)
        meta = m["metadata"]
        if kube.get(m["apiVersion"], m["kind"], meta["name"], meta.get("namespace")) is None:
            kube.apply(m)  # a volume already there keeps its binding; a missing one is put back
    phase = pvc_phase(kube, rec.name, rec.namespace)
    st.StorageRecords(ctx.state).update(rec.region, rec.cluster, rec.name, pvc_phase=phase, checked_at=now_iso())
    return None if phase == "Bound" else f"PVC {rec.namespace}/{rec.name} ({phase})"


def reconcile_storage(ctx: StepContext) -> Outcome:
    """The create's storage (shared data volume, its FSx unless removed), then every volume added since."""
    base = cluster_create.storage(ctx)
    cluster, region, eks_name = _where(ctx)
    recs = [r for r in st.StorageRecords(ctx.state).of_cluster(region, cluster) if r.status == "AVAILABLE"]
    waiting = [base.message] if isinstance(base, Wait) else []
    if recs:
        kube = KubeCluster.for_eks(eks_name, region)
        for rec in recs:
            if (why := _added_volume(ctx, rec, kube)) is not None:
                waiting.append(why)
    if waiting:
        expected = base.expected_seconds if isinstance(base, Wait) else BIND_SECONDS
        return Wait(message="; ".join(w for w in waiting if w), expected_seconds=expected)
    return Done(message=(base.message or "") + (f"; {len(recs)} added volume(s) in place" if recs else ""))


ADD = Workflow(kind="storage.add", steps={"backing": add_backing, "volume": add_volume}, on_status=add_status)
REMOVE = Workflow(kind="storage.remove", steps={"volume": remove_volume, "backing": remove_backing},
                  on_status=remove_status)
RECONCILE = Workflow(kind="cluster.reconcile",
                     steps={"dependencies": reconcile_dependencies, "storage": reconcile_storage})


# -- cluster.delete --------------------------------------------------------------------------------
def release_added(ctx: StepContext, cluster: str, region: str, eks_name: str) -> str | None:
    """Remove every volume added to the cluster (claims, volumes, service accounts, associations, roles,
    file systems; never a bucket); what it still waits for (a file system being deleted), else None."""
    records = st.StorageRecords(ctx.state)
    recs = records.of_cluster(region, cluster)
    if not recs:
        return None
    active = _eks_active(ctx, eks_name)
    kube = KubeCluster.for_eks(eks_name, region) if active else None
    eks, iam = ctx.aws("eks"), ctx.aws("iam")
    waiting = []
    for rec in recs:
        if kube is not None:
            for api, kind, name, ns in (("v1", "PersistentVolumeClaim", rec.name, rec.namespace),
                                        ("v1", "PersistentVolume", st.pv_name(cluster, rec.name, rec.namespace), None),
                                        ("v1", "ServiceAccount", st.service_account(rec.name), rec.namespace)):
                obj = kube.get(api, kind, name, ns)
                if obj is not None and st.is_podstarts(obj) and not obj["metadata"].get("deletionTimestamp"):
                    kube.delete(api, kind, name, ns)
        if rec.kind == "s3":
            if active:
                for a in eks.list_pod_identity_associations(clusterName=eks_name, namespace=rec.namespace,
                                                            serviceAccount=st.service_account(rec.name))["associations"]:
                    eks.delete_pod_identity_association(clusterName=eks_name, associationId=a["associationId"])
            ens.delete_role(iam, st.role_name(cluster, region, rec.name))
            records.delete(region, cluster, rec.name)
            continue
        fs = _describe_fsx(ctx, rec.file_system_id) if rec.file_system_id else _find_fsx(ctx, cluster, rec.name)
        if fs is None:
            records.delete(region, cluster, rec.name)
            continue
        if fs.get("Lifecycle") != "DELETING":
            ctx.aws("fsx").delete_file_system(FileSystemId=fs["FileSystemId"])
        waiting.append(f"FSx {fs['FileSystemId']} of volume {rec.name}")
    return ", ".join(waiting) or None
