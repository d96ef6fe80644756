"""job.submit and job.delete: the operator the job's kind needs, a server-side dry-run with the live GPU
arithmetic, server-side apply (field manager `podstart`), and a watch until the job runs."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from functions.adapters.kube import KubeCluster
from functions.domain import iam as iamdoc
from functions.domain import manifests
from functions.domain.errors import PermanentStepError
from functions.domain.features import kuberay
from functions.domain.storage import volumes as st
from functions.domain.storage.data import DataMap
from functions.domain.tenancy import unmanaged_reason
from functions.domain.training import manifests as job_manifests
from functions.domain.training import mlflow as mlf
from functions.domain.training import recipes
from functions.domain.training import rules as training
from functions.domain.training import status as job_status
from functions.domain.workflow import Done, Outcome, Skip, Wait
from functions.workflows import aws_ensure as ens
from functions.workflows import eks_access
from functions.workflows.context import StepContext, Workflow

START_SECONDS = 120.0  # image pull and rendezvous, at real speed
CRDS = {
    "pytorch": ("sagemaker.amazonaws.com", "v1", "HyperPodPyTorchJob", "hyperpodpytorchjobs"),
    "ray": ("ray.io", "v1", "RayJob", "rayjobs"),
}


def _kube(ctx: StepContext) -> KubeCluster:
    return KubeCluster.for_eks(ctx.request["eks_cluster"], ctx.request["region"])


def _job(ctx: StepContext) -> tuple[training.JobSubmit, Any]:
    job = training.JobSubmit.model_validate(ctx.request["job"])
    return job, recipes.parse_parameters(job.recipe, job.recipe_version, job.parameters)


def _where(ctx: StepContext) -> DataMap:
    """What the job's pods see, as admission resolved it (the data bucket and the registered volumes it uses); an
    operation from before that field: the data bucket only."""
    raw = ctx.request.get("data")
    return DataMap.model_validate(raw) if raw else DataMap(data_bucket=ctx.settings.data_bucket)


# What serves each kind: the feature that installs it (enabled here through the features workflow, prerequisites
# first).
FEATURE = training.FEATURES


def _ensure_operator(ctx: StepContext, kind: str, label: str) -> Outcome:
    """The job's operator must serve its kind. Its feature (the training operator, the KubeRay operator) is enabled
    here with what it needs (ensure_feature: prerequisites first), watched to ACTIVE and until the API server serves
    the kind; nothing is submitted before."""
    if ctx.request["kind"] != kind:
        return Skip(message=f"a {ctx.request['kind']} job does not need the {label}")
    api_version, k8s_kind, _, _ = training.OPERATORS[kind]  # what a dry run checks too
    feature = FEATURE[kind]
    if _kube(ctx).has_kind(api_version, k8s_kind) and (kind != "ray" or _kuberay_running(ctx)):
        if ctx.outputs.get("enabled_feature") == feature:  # an earlier poll of this step enabled it
            return Done(message=f"enabled {feature} for this job; {label} serves {k8s_kind}",
                        outputs={"enabled_feature": feature})
        return Done(message=f"{label} serves {k8s_kind}")
    from functions.workflows.features import ensure_feature

    ctx.record(enabled_feature=feature)
    out = ensure_feature(ctx, ctx.request["cluster"], feature)
    if isinstance(out, Done) and not _kube(ctx).has_kind(api_version, k8s_kind):
        return Wait(message=f"{out.message}; waiting for the API server to serve {k8s_kind}", expected_seconds=30)
    if isinstance(out, Done):
        return Done(message=f"enabled {feature} for this job: {out.message}; {label} serves {k8s_kind}",
                    outputs={"enabled_feature": feature})
    return out


def _kuberay_running(ctx: StepContext) -> bool:
    """The CRDs stay when the KubeRay feature is disabled: serving RayJob is not enough, its operator must run."""
    return _kube(ctx).get(*kuberay.DEPLOYMENT, kuberay.NAME, kuberay.NAMESPACE) is not None


def training_operator(ctx: StepContext) -> Outcome:
    return _ensure_operator(ctx, "pytorch", "HyperPod training operator")


def kuberay_operator(ctx: StepContext) -> Outcome:
    return _ensure_operator(ctx, "ray", "KubeRay operator")


def _server(ctx: StepContext, arn: str) -> dict[str, Any]:
    region, _, name = mlf.parts(arn)
    try:
        desc: dict[str, Any] = ctx.aws("sagemaker", region).describe_mlflow_tracking_server(TrackingServerName=name)
    except ClientError as err:
        if ens.error_code(err) in ("ResourceNotFound", "ResourceNotFoundException"):
            raise PermanentStepError("TrackingServerNotFound", f"MLflow tracking server {name} is gone") from None
        raise
    why = mlf.refusal(desc)
    if why:
        raise PermanentStepError("TrackingServerNotUsable", why)
    return desc


def mlflow_access(ctx: StepContext) -> Outcome:
    """The job's own way to its tracking server: an IAM role (under PodStart's boundary) allowed
    `sagemaker-mlflow:*` on that one server ARN, trusted by EKS Pod Identity, associated with the job's
    ServiceAccount `<job>-mlflow` (the submit step applies the ServiceAccount). The Pod Identity agent must run on
    the cluster (a HyperPodPyTorchJob's operator step enabled it; for a RayJob it is enabled here). Look first,
    act once: a retry adopts the role and association an earlier attempt made."""
    job = training.JobSubmit.model_validate(ctx.request["job"])
    if job.mlflow is None:
        return Skip(message="the job does not report to MLflow")
    arn = job.mlflow.tracking_server_arn
    _server(ctx, arn)
    from functions.workflows.features import ensure_feature

    agent = ensure_feature(ctx, ctx.request["cluster"], "pod_identity_agent")
    if isinstance(agent, Wait):
        return agent
    region, cluster, eks = ctx.request["region"], ctx.request["cluster"], ctx.request["eks_cluster"]
    role = mlf.role_name(cluster, region, job.namespace, job.name)
    # The job's pods run as this role's ServiceAccount: the registered volumes they mount (authenticated as the pod)
    # read with it too, so it gets each volume's own bucket access.
    policies = {mlf.POLICY_NAME: mlf.policy(arn), **{
        f"PodStartData{i}": st.bucket_policy(region, m.bucket, m.prefix, m.read_only)
        for i, m in enumerate(_where(ctx).mounts)}}
    role_arn = ens.ensure_role(ctx.aws("iam", region), role, iamdoc.trust("pods.eks.amazonaws.com", tag_session=True),
                               [], policies, cluster, boundary=ctx.settings.permissions_boundary_arn)
    ctx.record(mlflow_role_arn=role_arn)
    sa = mlf.service_account(job.name)
    client = ctx.aws("eks", region)
    found = client.list_pod_identity_associations(clusterName=eks, namespace=job.namespace,
                                                  serviceAccount=sa)["associations"]
    if found:
        assoc = str(found[0]["associationId"])
        if client.describe_pod_identity_association(clusterName=eks, associationId=assoc)["association"].get(
                "roleArn") != role_arn:
            client.update_pod_identity_association(clusterName=eks, associationId=assoc, roleArn=role_arn)
    else:
        assoc = str(client.create_pod_identity_association(
            clusterName=eks, namespace=job.namespace, serviceAccount=sa, roleArn=role_arn,
            tags=eks_access.managed_tags(cluster))["association"]["associationId"])
    ctx.record(mlflow_association_id=assoc, mlflow_service_account=sa)
    return Done(message=f"{job.namespace}/{sa} assumes {role} (sagemaker-mlflow:* on {mlf.parts(arn)[2]} only); "
                        f"experiment {mlf.experiment_of(job.mlflow, job.name)}",
                outputs={"mlflow_role_arn": role_arn, "mlflow_association_id": assoc, "mlflow_service_account": sa})


def remove_mlflow_access(ctx: StepContext) -> Outcome:
    """What the job's mlflow_access step and submit made for it alone: its Pod Identity association, role and
    ServiceAccount (per job, so nothing another job uses). Skipped for a job that did not report to MLflow."""
    if not ctx.request.get("mlflow_server"):
        return Skip(message="the job did not report to MLflow")
    region, eks, ns, name = ctx.request["region"], ctx.request["eks_cluster"], ctx.request["namespace"], \
        ctx.request["name"]
    sa = mlf.service_account(name)
    client = ctx.aws("eks", region)
    for a in client.list_pod_identity_associations(clusterName=eks, namespace=ns, serviceAccount=sa)["associations"]:
        try:
            client.delete_pod_identity_association(clusterName=eks, associationId=a["associationId"])
        except ClientError as err:
            if ens.error_code(err) != "ResourceNotFoundException":
                raise
    role = mlf.role_name(ctx.request["cluster"], region, ns, name)
    ens.delete_role(ctx.aws("iam", region), role)
    _kube(ctx).delete("v1", "ServiceAccount", sa, ns)
    return Done(message=f"removed {ns}/{sa}, its Pod Identity association and role {role}")


def live_capacity(kube: KubeCluster, instance_type: str) -> training.GroupCapacity | None:
    """Free GPUs on the Nodes of that instance type (training.live_capacity: the same count a dry run makes)."""
    return training.live_capacity(kube.list("v1", "Node"), kube.list("v1", "Pod"), instance_type)


def validate(ctx: StepContext) -> Outcome:
    job, params = _job(ctx)
    manifest = job_manifests.render(job, params, _where(ctx))
    kube = _kube(ctx)
    live = live_capacity(kube, job.instance_type)
    checked = "no node inventory yet: instance counts were checked at admission"
    if live is not None:
        why = training.gpu_refusal(job, [live])
        if why:
            raise PermanentStepError("NotEnoughGpus", why)
        checked = f"{live.free_gpus} GPUs free on {live.instances} {job.instance_type} nodes" if job.gpus_per_node \
            else f"{live.instances} {job.instance_type} nodes"
    _require_podstart_namespace(kube, job.namespace)
    kube.apply(manifest, dry_run=True)
    return Done(message=f"server-side dry-run accepted the {manifest['kind']}; {checked}")


def _require_podstart_namespace(kube: KubeCluster, namespace: str) -> None:
    """The API checked it; the namespace may have gone since (or lost PodStart's label): never create one here."""
    why = unmanaged_reason(namespace, kube.get("v1", "Namespace", namespace))
    if why:
        raise PermanentStepError("NotAPodStartNamespace", why)


def submit(ctx: StepContext) -> Outcome:
    job, params = _job(ctx)
    manifest = job_manifests.render(job, params, _where(ctx))
    kube = _kube(ctx)
    existing = kube.get(manifest["apiVersion"], manifest["kind"], job.name, job.namespace)
    if existing is not None and existing["metadata"].get("uid") != ctx.outputs.get("job_uid") and (
            ctx.outputs.get("job_uid") or (existing["metadata"].get("labels") or {}).get(training.LABEL_JOB) is None):
        raise PermanentStepError("JobExists", f"a {manifest['kind']} named {job.name} already exists in "
                                 f"{job.namespace} and is not this operation's")
    if existing is None:
        # job_manifests.submit_objects lists what a dry run plans: the data volume when missing, the job
        _require_podstart_namespace(kube, job.namespace)
        pvc = kube.get("v1", "PersistentVolumeClaim", manifests.DATA_VOLUME, job.namespace) is not None
        for m in job_manifests.submit_objects(job, params, data_volume_exists=pvc, bucket=ctx.settings.data_bucket,
                                         region=ctx.request["region"], where=_where(ctx)):
            existing = kube.apply(m)
    assert existing is not None
    ctx.record(job_uid=existing["metadata"]["uid"], job_kind=manifest["kind"])
    return Done(message=f"applied {manifest['kind']} {job.namespace}/{job.name} (field manager podstart)",
                outputs={"job_uid": existing["metadata"]["uid"]})


def watch(ctx: StepContext) -> Outcome:
    job = training.JobSubmit.model_validate(ctx.request["job"])
    kind = ctx.request["kind"]
    group, version, k8s_kind, _ = CRDS[kind]
    kube = _kube(ctx)
    obj = kube.get(f"{group}/{version}", k8s_kind, job.name, job.namespace)
    if obj is None:
        raise PermanentStepError("JobGone", f"{k8s_kind} {job.namespace}/{job.name} was deleted before it ran")
    status = job_status.status_of(kind, obj)
    pods = kube.list("v1", "Pod", job.namespace, label_selector=f"{training.LABEL_JOB}={job.name}")
    views = [job_status.pod_view(p) for p in pods]
    if status in ("Running", "Succeeded"):
        where = ", ".join(f"{p.name} on {p.node or '?'}" for p in views if p.phase == "Running")
        return Done(message=f"{k8s_kind} {job.name} is {status}" + (f": {where}" if where else ""),
                    outputs={"pods": len(views)})
    if status == "Failed":
        reason = next((c.get("message") or c.get("reason") for c in (obj.get("status") or {}).get("conditions") or []
                       if c.get("type") == "Failed"), None) or (obj.get("status") or {}).get("message") \
            or "the operator reported Failed"
        raise PermanentStepError("JobFailed", f"{job.name} failed before running: {reason}")
    pending = next((f"{p.name}: {p.reason}" for p in views if p.phase == "Pending" and p.reason), None)
    return Wait(message=f"{job.name} is {status} ({len(views)} pods)" + (f"; {pending}" if pending else ""),
                expected_seconds=START_SECONDS)


def delete(ctx: StepContext) -> Outcome:
    name, ns, kind = ctx.request["name"], ctx.request["namespace"], ctx.request["kind"]
    group, version, k8s_kind, _ = CRDS[kind]
    kube = _kube(ctx)
    if not ctx.outputs.get("delete_requested"):
        kube.delete(f"{group}/{version}", k8s_kind, name, ns)
        ctx.record(delete_requested=True)
    left = kube.list("v1", "Pod", ns, label_selector=f"{training.LABEL_JOB}={name}")
    if kube.get(f"{group}/{version}", k8s_kind, name, ns) is not None or left:
        return Wait(message=f"deleting {k8s_kind} {name}: {len(left)} pods left", expected_seconds=30)
    return Done(message=f"{k8s_kind} {ns}/{name} and its pods are gone")


SUBMIT = Workflow(kind="job.submit", steps={"training_operator": training_operator,
                                            "kuberay_operator": kuberay_operator, "mlflow_access": mlflow_access,
                                            "validate": validate, "submit": submit, "watch": watch})
DELETE = Workflow(kind="job.delete", steps={"delete": delete, "mlflow_access": remove_mlflow_access})
