"""HyperPod helpers every workflow that touches a HyperPod cluster shares: describe, watch to a
terminal state, the instance-group spec, the execution role, and the PodStart ownership check."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from botocore.exceptions import ClientError

from functions.domain import iam as iamdoc
from functions.domain import wakes
from functions.domain.errors import PermanentStepError
from functions.domain.workflow import Outcome, Wait, WakeOn
from functions.workflows import aws_ensure as ens
from functions.workflows.context import StepContext

CREATE_SECONDS = 1200.0  # realistic durations: the first look waits most of it
UPDATE_SECONDS = 600.0
FAILED_STATES = ("Failed", "RollingBack")


def elapsed(since: Any) -> float:
    if not since:
        return 0.0
    if isinstance(since, str):
        since = datetime.fromisoformat(since.replace("Z", "+00:00"))
    return max(0.0, (datetime.now(UTC) - since).total_seconds())


def describe(sm: Any, name: str) -> dict[str, Any] | None:
    try:
        return sm.describe_cluster(ClusterName=name)  # type: ignore[no-any-return]
    except ClientError as err:
        if ens.error_code(err) in ("ResourceNotFound", "ResourceNotFoundException", "ValidationException"):
            return None
        raise


def require(ctx: StepContext, name: str) -> dict[str, Any]:
    cluster = describe(ctx.aws("sagemaker"), name)
    if cluster is None:
        raise PermanentStepError("HyperPodClusterNotFound", f"no HyperPod cluster {name} in {ctx.region}")
    return cluster


def raise_if_failed(cluster: dict[str, Any]) -> None:
    """A HyperPod cluster in a terminal failed state ends the step with AWS's reason."""
    status = cluster.get("ClusterStatus")
    if status in FAILED_STATES:
        raise PermanentStepError("HyperPodClusterFailed",
                                 f"HyperPod cluster {cluster.get('ClusterName', '')} is {status}: "
                                 f"{cluster.get('FailureMessage') or 'AWS gave no reason'}")


def watch(cluster: dict[str, Any], doing: str, since: Any, expected: float = CREATE_SECONDS) -> Outcome | None:
    """None when InService; a Wait while it moves (ended by the cluster's next state change event); an error when
    it failed."""
    raise_if_failed(cluster)
    status = cluster.get("ClusterStatus")
    if status == "InService":
        return None
    return Wait(message=f"HyperPod cluster is {status} ({doing})", expected_seconds=expected - elapsed(since),
                wake_on=wake_on(cluster))


def wake_on(cluster: dict[str, Any]) -> WakeOn | None:
    """The cluster's state change events end a wait on it (region from its ARN: events name their region)."""
    arn, name = str(cluster.get("ClusterArn") or ""), cluster.get("ClusterName")
    parts = arn.split(":")
    if len(parts) < 6 or not parts[3] or not name:
        return None
    return WakeOn(kind=wakes.HYPERPOD, resource=wakes.hyperpod_resource(parts[3], str(name)),
                  status=str(cluster.get("ClusterStatus")))


def wait_until_updatable(cluster: dict[str, Any]) -> Outcome | None:
    """UpdateCluster needs InService: Wait while it is busy, fail when it failed."""
    raise_if_failed(cluster)
    if cluster.get("ClusterStatus") != "InService":
        return Wait(message=f"HyperPod cluster is {cluster.get('ClusterStatus')}; waiting to update",
                    expected_seconds=60)
    return None


def is_podstart_managed(sm: Any, cluster: dict[str, Any]) -> bool:
    """The HyperPod cluster carries PodStart's `podstart:managed=true` tag (PodStart created it)."""
    arn = cluster.get("ClusterArn")
    if not arn:
        return False
    tags = sm.list_tags(ResourceArn=arn).get("Tags", [])
    return any(t.get("Key") == ens.MANAGED_TAG and t.get("Value") == "true" for t in tags)


def group_spec(g: dict[str, Any], role_arn: str, uri: str, subnet_id: str, sg: str) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "InstanceGroupName": g["name"],
        "InstanceType": g["instance_type"],
        "InstanceCount": g["instance_count"],
        "LifeCycleConfig": {"SourceS3Uri": uri, "OnCreate": "on_create.sh"},
        "ExecutionRole": role_arn,
        "ThreadsPerCore": 1 if g.get("accelerated") else 2,
        "InstanceStorageConfigs": [{"EbsVolumeConfig": {"VolumeSizeInGB": g["volume_size_gb"]}}],
        "OverrideVpcConfig": {"SecurityGroupIds": [sg], "Subnets": [subnet_id]},
        "KubernetesConfig": {"Labels": {"podstart.dev/instance-group": g["name"]}},
    }
    if g.get("deep_health_checks"):
        spec["OnStartDeepHealthChecks"] = list(g["deep_health_checks"])
    if g["capacity_type"] == "training-plan":
        spec["TrainingPlanArn"] = g["training_plan_arn"]
    else:
        spec["CapacityRequirements"] = {"Spot": {}} if g["capacity_type"] == "spot" else {"OnDemand": {}}
    if g.get("efa_only"):
        spec["NetworkInterface"] = {"InterfaceType": "efa-only"}
    return spec


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


def ensure_execution_role(ctx: StepContext, name: str) -> tuple[str, str]:
    """The HyperPod instances' role (reads only the lifecycle scripts) and the scripts' S3 URI."""
    bucket = ctx.settings.assets_bucket
    uri = ens.ensure_lifecycle_scripts(ctx.aws("s3"), bucket)
    prefix = uri.removeprefix(f"s3://{bucket}/")
    role_arn = ens.ensure_role(
        ctx.aws("iam"), iamdoc.role_name(name, ctx.region, "hyperpod"), iamdoc.trust("sagemaker.amazonaws.com"),
        [iamdoc.hyperpod_instance_policy(ctx.region)],
        {"lifecycle-scripts": iamdoc.lifecycle_read_policy(ctx.region, bucket, prefix)}, name,
        boundary=ctx.settings.permissions_boundary_arn)
    return role_arn, uri
