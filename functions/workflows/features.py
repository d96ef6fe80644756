"""features.update, and the step helper other workflows use to make sure a feature is on.

Each feature has an idempotent `enable` and `disable` (functions of a StepContext and a `Names`):
look first, act once, record what was made, return `Wait` until AWS/Kubernetes say the feature is
ACTIVE (or gone), `Done` then. A retry after a failure adopts whatever the failed attempt made.

Using a feature from another workflow (job.submit, endpoint.deploy, ...)::

    from functions.workflows.features import ensure_feature

    def training_operator(ctx: StepContext) -> Outcome:          # a step of your kind, listed in kinds.py
        return ensure_feature(ctx, ctx.request["cluster"], "training_operator")

`ensure_feature` enables the feature's missing prerequisites first (cert-manager and the Pod
Identity agent for the training operator), each watched to ACTIVE, then the feature; it answers
`Wait` while anything is still coming up and `Done` once all of it is ACTIVE (at once when it
already was: a few Describe calls, no mutation). It reads the cluster's region from the operation's
target (`ctx.region`) and the EKS/HyperPod names from PodStart's cluster record. Give the step a
budget in `kinds.STEP_BUDGETS` of ~0.5 h (add-ons take about a minute each in AWS).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from functions.adapters.kube import KubeCluster
from functions.domain import iam as iamdoc
from functions.domain import manifests
from functions.domain.clusters.record import ClusterRecords
from functions.domain.errors import PermanentStepError
from functions.domain.features import changes as fchg
from functions.domain.features import document as fdom
from functions.domain.features import kuberay
from functions.domain.workflow import Done, Outcome, Wait
from functions.workflows import aws_ensure as ens
from functions.workflows import eks_access, hyperpod
from functions.workflows.context import StepContext, Workflow

ADDON_SECONDS = 60.0  # an EKS add-on reaches ACTIVE in about a minute
UPDATE_SECONDS = 600.0  # HyperPod UpdateCluster takes about ten minutes
ADDON_FAILED = ("CREATE_FAILED", "UPDATE_FAILED", "DELETE_FAILED", "DEGRADED")
CHECKPOINT_PREFIX = fdom.CHECKPOINT_PREFIX
TLS_PREFIX = fdom.TLS_PREFIX


@dataclass(frozen=True)
class Names:
    """The cluster a feature step acts on: PodStart's name, its EKS and HyperPod names, the region."""

    cluster: str
    region: str
    eks: str
    hyperpod: str | None


def names_for(ctx: StepContext, cluster: str) -> Names:
    """Resolve from the request when it carries the names (features.update), else from the record."""
    req = ctx.request
    region = str(req.get("region") or ctx.region)
    if req.get("eks_cluster") and req.get("cluster") == cluster and "hyperpod_cluster" in req:
        return Names(cluster, region, req["eks_cluster"], req.get("hyperpod_cluster"))
    rec = ClusterRecords(ctx.state).load(region, cluster)
    if rec is None:
        raise PermanentStepError("ClusterNotFound", f"PodStart has no cluster {cluster} in {region}")
    return Names(cluster, region, rec.eks_cluster_name, rec.hyperpod_cluster_name)


# -- building blocks -----------------------------------------------------------------------------
def _describe_addon(eks: Any, n: Names, addon: str) -> dict[str, Any] | None:
    try:
        return eks.describe_addon(clusterName=n.eks, addonName=addon)["addon"]  # type: ignore[no-any-return]
    except ClientError as err:
        if ens.error_code(err) == "ResourceNotFoundException":
            return None
        raise


def _addon_issues(a: dict[str, Any]) -> str:
    return "; ".join(i.get("message", "") for i in (a.get("health") or {}).get("issues", [])) or "no detail"


def _ensure_addon(ctx: StepContext, n: Names, f: fdom.Feature, config: dict[str, Any] | None = None) -> Outcome:
    eks = ctx.aws("eks", n.region)
    addon = str(f.addon)
    a = _describe_addon(eks, n, addon)
    if a is not None and a["status"] == "DELETING":
        return Wait(message=f"add-on {addon} is still DELETING; it is recreated once gone",
                    expected_seconds=ADDON_SECONDS)
    action = fchg.addon_action(a, config)
    if action == "create":
        args: dict[str, Any] = {"clusterName": n.eks, "addonName": addon, "resolveConflicts": "OVERWRITE",
                                "tags": {ens.CLUSTER_TAG: n.cluster, ens.MANAGED_TAG: "true"}}
        if config:
            args["configurationValues"] = json.dumps(config, sort_keys=True)
        a = eks.create_addon(**args)["addon"]
    elif action == "update" and a is not None:
        eks.update_addon(clusterName=n.eks, addonName=addon, resolveConflicts="OVERWRITE",
                         configurationValues=json.dumps(config, sort_keys=True))
        a = {**a, "status": "UPDATING"}
    assert a is not None  # addon_action creates a missing add-on
    ctx.record(**{f"{f.name}_addon_version": a.get("addonVersion")})
    if a["status"] in ADDON_FAILED:
        raise PermanentStepError("AddonFailed", f"add-on {addon} is {a['status']}: {_addon_issues(a)}")
    if a["status"] != "ACTIVE":
        return Wait(message=f"add-on {addon} is {a['status']}", expected_seconds=ADDON_SECONDS)
    return Done(message=f"add-on {addon} {a.get('addonVersion')} ACTIVE")


def _remove_addon(ctx: StepContext, n: Names, f: fdom.Feature) -> Outcome | None:
    """None once the add-on is gone; Wait while EKS deletes it."""
    eks = ctx.aws("eks", n.region)
    a = _describe_addon(eks, n, str(f.addon))
    if a is None:
        return None
    if a["status"] != "DELETING":
        eks.delete_addon(clusterName=n.eks, addonName=str(f.addon))
    return Wait(message=f"add-on {f.addon} is DELETING", expected_seconds=ADDON_SECONDS)


def _role_name(n: Names, f: fdom.Feature) -> str:
    return iamdoc.role_name(n.cluster, n.region, str(f.role))


def _ensure_pod_identity(ctx: StepContext, n: Names, sa: fdom.ServiceAccountRef, role_arn: str) -> str:
    eks = ctx.aws("eks", n.region)
    found = eks.list_pod_identity_associations(clusterName=n.eks, namespace=sa.namespace,
                                               serviceAccount=sa.name)["associations"]
    if found:
        return str(found[0]["associationId"])
    made = eks.create_pod_identity_association(clusterName=n.eks, namespace=sa.namespace, serviceAccount=sa.name,
                                               roleArn=role_arn, tags=eks_access.managed_tags(n.cluster))
    return str(made["association"]["associationId"])


def _remove_pod_identity(ctx: StepContext, n: Names, sa: fdom.ServiceAccountRef) -> None:
    eks = ctx.aws("eks", n.region)
    for a in eks.list_pod_identity_associations(clusterName=n.eks, namespace=sa.namespace,
                                                serviceAccount=sa.name)["associations"]:
        try:
            eks.delete_pod_identity_association(clusterName=n.eks, associationId=a["associationId"])
        except ClientError as err:
            if ens.error_code(err) != "ResourceNotFoundException":
                raise


def _hyperpod(ctx: StepContext, n: Names) -> dict[str, Any]:
    if not n.hyperpod:
        raise PermanentStepError("NoHyperPodCluster", f"{n.cluster} has no HyperPod cluster")
    return hyperpod.require(ctx, n.hyperpod)


def _pod_role_policy(ctx: StepContext, n: Names, f: fdom.Feature) -> dict[str, str]:
    if f.name == "s3_csi":
        return {"data-bucket": iamdoc.data_bucket_policy(n.region, ctx.settings.data_bucket)}
    cluster_arn = str(_hyperpod(ctx, n)["ClusterArn"])
    if f.name == "training_operator":
        return {"training-operator": iamdoc.training_operator_policy(cluster_arn)}
    if f.name == "inference_operator":
        return {"inference-operator": iamdoc.inference_operator_policy(
            n.region, cluster_arn, ctx.settings.data_bucket, TLS_PREFIX.format(cluster=n.cluster))}
    if f.name == "observability":
        return {"observability": iamdoc.observability_policy(cluster_arn, str(n.hyperpod))}
    raise PermanentStepError("UnknownFeatureRole", f"{f.name} has no role policy")


# -- add-on features (with an optional Pod Identity role) ----------------------------------------
def _enable_addon_feature(ctx: StepContext, n: Names, f: fdom.Feature, settings: dict[str, Any]) -> Outcome:
    config: dict[str, Any] | None = None
    if f.role and f.pod_identity:
        role_arn = ens.ensure_role(ctx.aws("iam", n.region), _role_name(n, f),
                                   iamdoc.trust("pods.eks.amazonaws.com", tag_session=True), [],
                                   _pod_role_policy(ctx, n, f), n.cluster,
                                   boundary=ctx.settings.permissions_boundary_arn)
        ctx.record(**{f"{f.name}_role_arn": role_arn})
        ctx.record(**{f"{f.name}_association_id": _ensure_pod_identity(ctx, n, f.pod_identity, role_arn)})
        if f.name == "inference_operator":
            config = _inference_config(ctx, n, role_arn)
    return _ensure_addon(ctx, n, f, config)


def _inference_config(ctx: StepContext, n: Names, role_arn: str) -> dict[str, Any]:
    """The inference add-on's settings: execution role, TLS bucket prefix, KEDA and the ALB controller on;
    the VPC's subnets tagged for load balancers (public: internet-facing, private: internal)."""
    _tag_lb_subnets(ctx, n)
    return {"executionRoleArn": role_arn, "tlsCertificateS3Bucket": ctx.settings.data_bucket,
            "tlsCertificateS3Prefix": TLS_PREFIX.format(cluster=n.cluster),
            "alb": {"enabled": True}, "keda": {"enabled": True}}


def _tag_lb_subnets(ctx: StepContext, n: Names) -> None:
    eks = ctx.aws("eks", n.region)
    ec2 = ctx.aws("ec2", n.region)
    subnet_ids = eks.describe_cluster(name=n.eks)["cluster"].get("resourcesVpcConfig", {}).get("subnetIds", [])
    if not subnet_ids:
        return
    for s in ec2.describe_subnets(SubnetIds=subnet_ids)["Subnets"]:
        tags = {t["Key"]: t["Value"] for t in s.get("Tags", [])}
        key = "kubernetes.io/role/elb" if s.get("MapPublicIpOnLaunch") else "kubernetes.io/role/internal-elb"
        if tags.get(key) != "1":
            ec2.create_tags(Resources=[s["SubnetId"]], Tags=[{"Key": key, "Value": "1"}])


def _disable_addon_feature(ctx: StepContext, n: Names, f: fdom.Feature, settings: dict[str, Any]) -> Outcome:
    waiting = _remove_addon(ctx, n, f)
    if waiting is not None:
        return waiting
    if f.pod_identity and f.role:
        _remove_pod_identity(ctx, n, f.pod_identity)
        ens.delete_role(ctx.aws("iam", n.region), _role_name(n, f))
    return Done(message=f"add-on {f.addon} removed" + (" with its role and Pod Identity association"
                                                      if f.role else ""))


# -- tiered checkpointing: TieredStorageConfig + the identity chain, as one unit --------------------
def _oidc_provider(ctx: StepContext, n: Names) -> tuple[str, str]:
    """(provider ARN, issuer URL) of the EKS cluster, creating the IAM OIDC provider when missing."""
    issuer = ctx.aws("eks", n.region).describe_cluster(name=n.eks)["cluster"]["identity"]["oidc"]["issuer"]
    iam = ctx.aws("iam", n.region)
    host = issuer.removeprefix("https://")
    found = next((p["Arn"] for p in iam.list_open_id_connect_providers()["OpenIDConnectProviderList"]
                  if p["Arn"].endswith("/" + host)), None)
    if found is None:
        from functions.workflows.cluster_create import OIDC_THUMBPRINT

        found = iam.create_open_id_connect_provider(Url=issuer, ClientIDList=["sts.amazonaws.com"],
                                                    ThumbprintList=[OIDC_THUMBPRINT],
                                                    Tags=ens.tags(n.cluster))["OpenIDConnectProviderArn"]
    return str(found), str(issuer)


def _update_cluster(ctx: StepContext, n: Names, hp: dict[str, Any], **fields: Any) -> Outcome | None:
    """UpdateCluster with `fields` unless HyperPod already has them; Wait while it updates, None when done."""
    busy = hyperpod.wait_until_updatable(hp)
    current = {k: hp.get(k) for k in fields}
    wanted = {k: v for k, v in fields.items()}
    if all(fchg.same(current[k], wanted[k]) for k in fields):
        return busy  # already so (Wait while a previous update is still running)
    if busy is not None:
        return busy
    ctx.aws("sagemaker", n.region).update_cluster(ClusterName=n.hyperpod, **fields)
    return Wait(message=f"HyperPod cluster is Updating ({', '.join(fields)})", expected_seconds=UPDATE_SECONDS)


def checkpoint_chain(n: Names, bucket: str) -> dict[str, Any]:
    """The four links of the chain, by name (what enable makes and disable removes)."""
    sa = fdom.CHECKPOINT_SA
    return {"service_account": f"{sa.namespace}/{sa.name}", "role": iamdoc.role_name(n.cluster, n.region, "checkpoint"),
            "policy": "checkpoints", "bucket": bucket, "prefix": CHECKPOINT_PREFIX.format(cluster=n.cluster)}


def _enable_checkpointing(ctx: StepContext, n: Names, settings: dict[str, Any]) -> Outcome:
    hp = _hyperpod(ctx, n)
    chain = checkpoint_chain(n, ctx.settings.data_bucket)
    provider_arn, issuer = _oidc_provider(ctx, n)
    sa = fdom.CHECKPOINT_SA
    role_arn = ens.ensure_role(
        ctx.aws("iam", n.region), chain["role"], iamdoc.oidc_trust(provider_arn, issuer, sa.namespace, sa.name), [],
        {chain["policy"]: iamdoc.checkpoint_policy(n.region, chain["bucket"], chain["prefix"])}, n.cluster,
        boundary=ctx.settings.permissions_boundary_arn)
    ctx.record(tiered_checkpointing_role_arn=role_arn, oidc_provider_arn=provider_arn)
    KubeCluster.for_eks(n.eks, n.region).apply(manifests.checkpoint_service_account(sa.namespace, sa.name, role_arn))
    percent = fchg.checkpoint_percent(settings, hp.get("TieredStorageConfig") or {})
    waiting = _update_cluster(ctx, n, hp, TieredStorageConfig={"Mode": "Enable",
                                                              "InstanceMemoryAllocationPercentage": int(percent)})
    if waiting is not None:
        return waiting
    return Done(message=f"tiered checkpointing on ({percent}% of instance memory); {chain['service_account']} "
                        f"assumes {chain['role']} for s3://{chain['bucket']}/{chain['prefix']}")


def _disable_checkpointing(ctx: StepContext, n: Names, settings: dict[str, Any]) -> Outcome:
    hp = _hyperpod(ctx, n)
    if fchg.same((hp.get("TieredStorageConfig") or {}).get("Mode"), "Enable") or hp.get("ClusterStatus") != "InService":
        waiting = _update_cluster(ctx, n, hp, TieredStorageConfig={"Mode": "Disable"})
        if waiting is not None:
            return waiting
    sa = fdom.CHECKPOINT_SA
    KubeCluster.for_eks(n.eks, n.region).delete("v1", "ServiceAccount", sa.name, sa.namespace)
    ens.delete_role(ctx.aws("iam", n.region), iamdoc.role_name(n.cluster, n.region, "checkpoint"))
    return Done(message="tiered checkpointing off; service account, role, policy and trust removed")


# -- autoscaling: HyperPod-managed Karpenter, a NodeClass + NodePool per group -----------------------
def _enable_autoscaling(ctx: StepContext, n: Names, settings: dict[str, Any]) -> Outcome:
    hp = _hyperpod(ctx, n)
    groups_live = {g["InstanceGroupName"] for g in hp.get("InstanceGroups", [])}
    kube = KubeCluster.for_eks(n.eks, n.region)
    current_groups = sorted(p["metadata"]["labels"].get(manifests.POOL_GROUP_LABEL, "")
                            for p in _podstart_pools(kube))
    groups = fchg.autoscaling_groups(current_groups, settings)
    unknown = [g for g in groups if g not in groups_live]
    if unknown:
        raise PermanentStepError("NotAHyperPodGroup", f"Karpenter manages HyperPod instance groups only; "
                                 f"{', '.join(unknown)} is not an instance group of {n.hyperpod}")
    role_arn = ens.ensure_role(ctx.aws("iam", n.region), iamdoc.role_name(n.cluster, n.region, "autoscale"),
                               iamdoc.trust("hyperpod.sagemaker.amazonaws.com"), [],
                               {"autoscaling": iamdoc.autoscaling_policy(str(hp["ClusterArn"]))}, n.cluster,
                               boundary=ctx.settings.permissions_boundary_arn)
    ctx.record(autoscaling_role_arn=role_arn)
    waiting = _update_cluster(ctx, n, hp, AutoScaling={"Mode": "Enable", "AutoScalerType": "Karpenter"},
                              ClusterRole=role_arn)
    if waiting is not None:
        return waiting
    status = (hp.get("AutoScaling") or {}).get("Status", "InService")
    if status == "Failed":
        raise PermanentStepError("AutoScalingFailed", (hp.get("AutoScaling") or {}).get("FailureMessage")
                                 or "HyperPod could not start managed Karpenter")
    if status != "InService" or not kube.has_kind(*manifests.KARPENTER_NODEPOOL):
        return Wait(message=f"managed Karpenter is {status}", expected_seconds=120)
    pool = fchg.pool_settings(settings)
    for g in groups:
        kube.apply(manifests.hyperpod_node_class(g))
        kube.apply(manifests.node_pool(g, cpu_limit=pool["cpu_limit"], consolidate_after=pool["consolidate_after"],
                                       budget=pool["disruption_budget"]))
    for gone in set(current_groups) - set(groups):
        _delete_pool(kube, gone)
    ctx.record(autoscaling_groups=groups)
    return Done(message=f"managed Karpenter on; node pools for {', '.join(groups) or 'no group yet'}")


def _podstart_pools(kube: KubeCluster) -> list[dict[str, Any]]:
    return kube.list(*manifests.KARPENTER_NODEPOOL, label_selector="app.kubernetes.io/managed-by=podstart")


def _delete_pool(kube: KubeCluster, group: str) -> None:
    kube.delete(*manifests.KARPENTER_NODEPOOL, manifests.pool_name(group))
    kube.delete(*manifests.HYPERPOD_NODECLASS, manifests.pool_name(group))


def _disable_autoscaling(ctx: StepContext, n: Names, settings: dict[str, Any]) -> Outcome:
    hp = _hyperpod(ctx, n)
    kube = KubeCluster.for_eks(n.eks, n.region)
    for p in _podstart_pools(kube):
        _delete_pool(kube, p["metadata"]["labels"].get(manifests.POOL_GROUP_LABEL, ""))
    if fchg.same((hp.get("AutoScaling") or {}).get("Mode"), "Enable") or hp.get("ClusterStatus") != "InService":
        waiting = _update_cluster(ctx, n, hp, AutoScaling={"Mode": "Disable"})
        if waiting is not None:
            return waiting
    ens.delete_role(ctx.aws("iam", n.region), iamdoc.role_name(n.cluster, n.region, "autoscale"))
    return Done(message="managed Karpenter off; PodStart's node pools and node classes removed")


# -- the KubeRay operator: its CRDs and operator, server-side applied (no helm) ----------------------
OPERATOR_SECONDS = 30.0  # the operator's pod pulls its image and passes its readiness probe


def _enable_kuberay(ctx: StepContext, n: Names, settings: dict[str, Any]) -> Outcome:
    """Apply the CRDs and the operator (idempotent: server-side apply of the same objects is a no-op), then wait
    for the Deployment to be Available and the API server to serve RayJob."""
    kube = KubeCluster.for_eks(n.eks, n.region)
    dep = kube.get(*kuberay.DEPLOYMENT, kuberay.NAME, kuberay.NAMESPACE)
    if not ctx.outputs.get("kuberay_applied") or dep is None:  # once per attempt (the CRDs are ~1 MB), or if gone
        for obj in kuberay.objects():
            kube.apply(obj)
        ctx.record(kuberay_applied=kuberay.VERSION)
        dep = kube.get(*kuberay.DEPLOYMENT, kuberay.NAME, kuberay.NAMESPACE)
    if not kuberay.deployment_available(dep):
        return Wait(message=f"Deployment {kuberay.NAMESPACE}/{kuberay.NAME} is not Available yet",
                    expected_seconds=OPERATOR_SECONDS)
    if not kube.has_kind(*kuberay.RAYJOB):
        if ctx.outputs.get("kuberay_crds_reapplied"):
            return Wait(message="waiting for the API server to serve ray.io/v1 RayJob", expected_seconds=10)
        for obj in kuberay.crds():  # removed since the first apply (a retry, a user): put back once more
            kube.apply(obj)
        ctx.record(kuberay_crds_reapplied=True)
        return Wait(message="re-applied the ray.io CRDs; waiting for the API server to serve RayJob",
                    expected_seconds=10)
    return Done(message=f"KubeRay operator {kuberay.VERSION} Available in {kuberay.NAMESPACE}; ray.io/v1 RayJob, "
                        "RayCluster and RayService served")


def _disable_kuberay(ctx: StepContext, n: Names, settings: dict[str, Any]) -> Outcome:
    """Delete the Deployment and the RBAC; the CRDs stay (deleting them would delete every Ray object). RayJobs
    created after admission checked stop the step rather than being orphaned."""
    kube = KubeCluster.for_eks(n.eks, n.region)
    jobs = [f"{j['metadata'].get('namespace')}/{j['metadata']['name']}" for j in kube.list(*kuberay.RAYJOB)]
    if jobs:
        raise PermanentStepError("RayJobsExist", f"RayJobs still exist ({', '.join(jobs[:10])}): delete them "
                                 "first, then retry this operation")
    for obj in kuberay.removed_on_disable():
        kube.delete(*kuberay.ref(obj))
    if kube.get(*kuberay.DEPLOYMENT, kuberay.NAME, kuberay.NAMESPACE) is not None:
        return Wait(message=f"Deployment {kuberay.NAMESPACE}/{kuberay.NAME} is being deleted", expected_seconds=10)
    return Done(message="KubeRay operator removed (Deployment, ServiceAccount, ClusterRole/Binding, leader-election "
                        "Role/Binding); the ray.io CRDs are kept")


# -- dispatch ------------------------------------------------------------------------------------
Action = Callable[[StepContext, Names, dict[str, Any]], Outcome]


def _action(feature: str, enable: bool) -> Action:
    f = fdom.FEATURES[feature]
    if feature == "tiered_checkpointing":
        return _enable_checkpointing if enable else _disable_checkpointing
    if feature == "autoscaling":
        return _enable_autoscaling if enable else _disable_autoscaling
    if feature == "kuberay_operator":
        return _enable_kuberay if enable else _disable_kuberay

    def run(ctx: StepContext, n: Names, settings: dict[str, Any]) -> Outcome:
        return (_enable_addon_feature if enable else _disable_addon_feature)(ctx, n, f, settings)

    return run


def enable(ctx: StepContext, n: Names, feature: str, settings: dict[str, Any] | None = None) -> Outcome:
    """Make one feature ACTIVE (its prerequisites must already be): idempotent, adopts what exists."""
    return _action(feature, True)(ctx, n, dict(settings or {}))


def disable(ctx: StepContext, n: Names, feature: str) -> Outcome:
    """Remove everything PodStart made for one feature: idempotent, Done once all of it is gone."""
    return _action(feature, False)(ctx, n, {})


def ensure_feature(ctx: StepContext, cluster: str, feature: str,
                   settings: dict[str, Any] | None = None) -> Outcome:
    """Make `feature` and every prerequisite it needs ACTIVE on `cluster`, prerequisites first.

    Idempotent and dependency-aware: features already ACTIVE are only looked at; a missing
    prerequisite is enabled (and watched to ACTIVE) before anything that needs it is touched.
    Returns Wait (naming what is coming up) until all are ACTIVE, then Done (listing what it enabled).
    """
    if feature not in fdom.FEATURES:
        raise PermanentStepError("UnknownFeature", f"no managed feature {feature!r}")
    n = names_for(ctx, cluster)
    chain = [*fdom.prerequisites(feature), feature]
    for name in chain:
        out = enable(ctx, n, name, settings if name == feature else None)
        if isinstance(out, Wait):
            why = "" if name == feature else f" (needed by {feature})"
            return Wait(message=f"{name}{why}: {out.message}", expected_seconds=out.expected_seconds)
    return Done(message=f"{feature} ACTIVE" + (f" with {', '.join(chain[:-1])}" if len(chain) > 1 else ""))


# -- features.update -------------------------------------------------------------------------------
def _step(feature: str, on: bool) -> Callable[[StepContext], Outcome]:
    def run(ctx: StepContext) -> Outcome:
        change = (ctx.request.get("changes") or {}).get(feature if on else fdom.disable_step(feature)) or {}
        n = names_for(ctx, ctx.request["cluster"])
        out = enable(ctx, n, feature, change.get("settings")) if on else disable(ctx, n, feature)
        reason = change.get("reason", "requested")
        if isinstance(out, Done) and reason != "requested":
            return Done(message=f"{out.message} (enabled as a prerequisite: {reason})", outputs=out.outputs)
        return out

    run.__name__ = feature if on else fdom.disable_step(feature)
    return run


WORKFLOW = Workflow(
    kind="features.update",
    steps={name: _step(name.removeprefix("disable_"), not name.startswith("disable_")) for name in fdom.STEPS},
)
