"""Training rules: the job submit request (validated here once, for every face), AWS's elastic-training
exclusions and the GPU arithmetic. A job's objects are `manifests`'s, its views `status`'s.

A secret is referenced by name only (`envFrom.secretRef`): its value never appears in a manifest.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from functions.domain.identifiers import JOB_NAME
from functions.domain.storage.api import data
from functions.domain.tenancy import Namespace
from functions.domain.training import mlflow as mlf
from functions.domain.training import recipes

NAME = JOB_NAME  # a job's name (functions.domain.identifiers)
NAMESPACE = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"
SECRET_NAME = r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$"
ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]{0,127}$"
# Env names that carry credentials: those go in a Secret (`secrets`), never a literal in the manifest.
SECRET_LIKE_ENV = re.compile(r"(TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIAL)", re.I)
IMAGE = re.compile(
    r"^(?P<repo>[a-z0-9]+(?:[._-][a-z0-9]+)*(?::\d+)?(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)+|[a-z0-9]+(?:[._-][a-z0-9]+)*)"
    r"(?::(?P<tag>[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}))?(?:@(?P<digest>sha256:[a-f0-9]{64}))?$")

API_VERSIONS = {"pytorch": ("sagemaker.amazonaws.com/v1", "HyperPodPyTorchJob"), "ray": ("ray.io/v1", "RayJob")}
LABEL_JOB = "podstart.dev/job"
LABEL_RECIPE = "podstart.dev/recipe"
GPU = "nvidia.com/gpu"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"


def check_image(image: str) -> str:
    """An image pinned by tag or digest; `:latest` or no tag at all would change under a running job."""
    m = IMAGE.match(image)
    if m is None:
        raise ValueError("not an image reference: <registry>/<repository>:<tag> or @sha256:<digest>")
    if not m.group("tag") and not m.group("digest"):
        raise ValueError("pin the image with a tag or a digest (no tag means :latest, which moves under a job)")
    if m.group("tag") == "latest" and not m.group("digest"):
        raise ValueError(":latest moves under a running job: pin a version tag or a digest")
    return image


class LogMonitoringRule(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[a-z][-a-z0-9]{0,62}$", description="Rule name, e.g. hang")
    log_pattern: str = Field(min_length=1, max_length=256,
                             description="Regex a healthy log matches regularly")
    expected_recurring_frequency_s: int | None = Field(
        None, ge=10, le=86400, description="Longer gap between matches: HANGING")
    expected_start_cutoff_s: int | None = Field(
        None, ge=10, le=86400, description="No first match by then: HANGING")

    @field_validator("log_pattern")
    @classmethod
    def _regex(cls, v: str) -> str:
        try:
            re.compile(v)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from None
        return v


class ElasticSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    min_nodes: int = Field(ge=1, le=256, description="Fewest nodes")
    max_nodes: int = Field(ge=1, le=256, description="Most nodes")

    @model_validator(mode="after")
    def _order(self) -> ElasticSpec:
        if self.min_nodes > self.max_nodes:
            raise ValueError("min_nodes must not exceed max_nodes")
        return self


class JobSubmit(BaseModel):
    """POST /v1/clusters/{cluster}/jobs: a training job from a recipe."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=NAME, description="Job name")
    namespace: Namespace = Field("default", description="A PodStart namespace (default or one an admin created)")
    recipe: str = Field(pattern=r"^[a-z][-a-z0-9]{0,31}$", description="Recipe name (GET /v1/recipes)")
    recipe_version: str = Field("1", pattern=r"^[0-9]{1,4}$", description="Recipe version")
    parameters: dict[str, Any] = Field(default_factory=dict, description="The recipe's parameters")
    image: str = Field(max_length=512, description="Image with a tag or digest, not :latest")
    instance_type: str = Field(pattern=r"^ml\.[a-z0-9-]+\.[a-z0-9]+$", max_length=40,
                               description="A group's instance type")
    nodes: int = Field(1, ge=1, le=256, description="Pods, one per node")
    gpus_per_node: int = Field(0, ge=0, le=16, description="GPUs per pod (0: CPU only)")
    max_retries: int = Field(3, ge=0, le=100, description="Restarts allowed")
    log_monitoring: list[LogMonitoringRule] = Field(default_factory=list, max_length=8,
                                                    description="Stuck-job rules")
    elastic: ElasticSpec | None = Field(None, description="Elastic node bounds")
    mlflow: mlf.MlflowSpec | None = Field(None, description="Report to a SageMaker managed MLflow tracking server")
    env: dict[str, str] = Field(default_factory=dict, max_length=64,
                                description="Env vars (no credentials)")
    secrets: list[str] = Field(default_factory=list, max_length=16,
                               description="Secrets to load as env vars")
    output: str | None = Field(None, max_length=1024,
                               description="Where the job writes (checkpoints under <output>checkpoints/): a folder "
                                           "under /data or s3://bucket/prefix/ on a registered bucket mounted "
                                           "read-write in the namespace; default /data/jobs/<name>/ and "
                                           "/data/checkpoints/<name>/")

    @field_validator("output")
    @classmethod
    def _output(cls, v: str | None) -> str | None:
        if v is None:
            return v
        data.parse(v)
        return v if v.endswith("/") else v + "/"

    @field_validator("image")
    @classmethod
    def _image(cls, v: str) -> str:
        return check_image(v)

    @field_validator("env")
    @classmethod
    def _env(cls, v: dict[str, str], info: ValidationInfo) -> dict[str, str]:
        for k, val in v.items():
            if k in (mlf.ENV_URI, mlf.ENV_EXPERIMENT) and info.data.get("mlflow") is not None:
                raise ValueError(f"{k} is set from mlflow (tracking_server_arn, experiment): drop it from env")
            if not re.match(ENV_NAME, k):
                raise ValueError(f"{k!r} is not an environment variable name")
            if SECRET_LIKE_ENV.findall(k):  # findall, not search: the IAM scan reads that name as sagemaker:Search
                raise ValueError(f"{k} looks like a credential: create a secret (POST .../secrets) and list it "
                                 f"in secrets instead of a literal value")
            if len(val) > 4096:
                raise ValueError(f"{k}: value longer than 4096 characters")
        return v

    @field_validator("secrets")
    @classmethod
    def _secrets(cls, v: list[str]) -> list[str]:
        for s in v:
            if not re.match(SECRET_NAME, s):
                raise ValueError(f"{s!r} is not a Secret name")
        if len(set(v)) != len(v):
            raise ValueError("a secret is listed twice")
        return v


class SecretCreate(BaseModel):
    """POST /v1/clusters/{cluster}/secrets: write-only; values are never returned or logged."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=SECRET_NAME, max_length=253, description="Secret name")
    namespace: Namespace = Field("default", description="A PodStart namespace (default or one an admin created)")
    data: dict[str, str] = Field(min_length=1, max_length=16, json_schema_extra={"writeOnly": True},
                                 description="Names and values (write-only)")

    @field_validator("data")
    @classmethod
    def _keys(cls, v: dict[str, str]) -> dict[str, str]:
        for k, val in v.items():
            if not re.match(ENV_NAME, k):
                raise ValueError(f"{k!r} is not an environment variable name")
            if len(val) > 16384:
                raise ValueError(f"{k}: value longer than 16 KiB")
        return v

    def __repr__(self) -> str:  # never print the values
        return f"SecretCreate(name={self.name!r}, namespace={self.namespace!r}, keys={sorted(self.data)})"

    __str__ = __repr__


class SecretNames(BaseModel):
    """GET /v1/clusters/{cluster}/secrets: names only (values are never read)."""

    namespace: str
    names: list[str] = Field(description="Secret names, at most 500")


class SecretWritten(BaseModel):
    name: str
    namespace: str
    keys: list[str] = Field(description="The keys written (values are never returned)")


# --- refusals -------------------------------------------------------------------------------------

def elastic_refusal(job: JobSubmit, capacity_types: set[str], tiered_checkpointing: bool,
                    checkpointless: bool = False) -> str | None:
    """AWS's current exclusions for elastic training, as the reason to show; None when elastic is allowed."""
    if job.elastic is None:
        return None
    if job_kind(job) == "ray":
        return "elastic training applies to HyperPodPyTorchJob only; a RayJob scales with its worker group"
    if "spot" in capacity_types:
        return (f"elastic training does not run on Spot capacity: the {job.instance_type} group is Spot; "
                f"use an On-Demand or training-plan group, or submit without elastic")
    if tiered_checkpointing:
        return ("elastic training is not supported while managed tiered checkpointing is enabled on the "
                "cluster; disable it or submit without elastic")
    if checkpointless:
        return "elastic training cannot be combined with checkpointless training"
    return None


class GroupCapacity(BaseModel):
    """One instance group of the requested type, as admission and the validate step see it."""

    name: str
    instance_type: str
    instances: int
    gpus_per_instance: int
    free_gpus: int | None = None  # None: unknown (no node inventory); treated as all free
    autoscaling_max: int | None = None


def gpu_refusal(job: JobSubmit, groups: list[GroupCapacity]) -> str | None:
    """The GPU arithmetic: the request must fit the cluster's groups of that instance type, with numbers."""
    nodes = job.elastic.min_nodes if job.elastic else job.nodes
    mine = [g for g in groups if g.instance_type == job.instance_type]
    if not mine:
        have = sorted({g.instance_type for g in groups}) or ["none"]
        return f"the cluster has no {job.instance_type} instances (it has: {', '.join(have)})"
    per = mine[0].gpus_per_instance
    if job.gpus_per_node > per:
        return f"{job.instance_type} has {per} GPUs per instance; gpus_per_node {job.gpus_per_node} cannot fit one pod"
    need = nodes * job.gpus_per_node
    instances = sum(g.instances for g in mine)
    reachable = sum(max(g.instances, g.autoscaling_max or 0) for g in mine)
    names = ", ".join(g.name for g in mine)
    if job.gpus_per_node == 0:
        if nodes > reachable:
            return (f"needs {nodes} {job.instance_type} nodes; the cluster has {instances} in {names}"
                    + (f" (at most {reachable} with autoscaling)" if reachable > instances else ""))
        return None
    total = instances * per
    free = sum(g.instances * per if g.free_gpus is None else g.free_gpus for g in mine)
    growth = (reachable - instances) * per
    # Whole pods: each pod needs gpus_per_node on one instance.
    pods_fit = sum(_pods_on(g, job.gpus_per_node) for g in mine) + (reachable - instances) * (per // job.gpus_per_node)
    if need > free + growth or nodes > pods_fit:
        return (f"needs {nodes} x {job.gpus_per_node} = {need} GPUs on {job.instance_type}; the cluster has "
                f"{instances} instance{'s' if instances != 1 else ''} x {per} = {total} GPUs in {names}, "
                f"{free} free" + (f", and can grow by {growth} with autoscaling" if growth else ""))
    return None


def _pods_on(g: GroupCapacity, gpus_per_pod: int) -> int:
    """Pods of gpus_per_pod that fit the group's free GPUs (free GPUs are spread per instance; assume packed)."""
    per = g.gpus_per_instance
    free = g.instances * per if g.free_gpus is None else g.free_gpus
    whole, rest = divmod(free, per)
    return whole * (per // gpus_per_pod) + rest // gpus_per_pod


def job_kind(job: JobSubmit) -> str:
    r = recipes.RECIPES.get((job.recipe, job.recipe_version))
    return r.kind if r else "pytorch"


# What serves each kind: (apiVersion, kind) the API server must serve, the step that checks it, what to enable.
OPERATORS: dict[str, tuple[str, str, str, str]] = {
    "pytorch": ("sagemaker.amazonaws.com/v1", "HyperPodPyTorchJob", "training_operator",
                "amazon-sagemaker-hyperpod-training-operator"),
    "ray": ("ray.io/v1", "RayJob", "kuberay_operator", "kuberay-operator"),
}


# The managed feature that serves each kind (job.submit's operator step enables it through the features workflow).
FEATURES: dict[str, str] = {"pytorch": "training_operator", "ray": "kuberay_operator"}

def live_capacity(nodes: list[dict[str, Any]], pods: list[dict[str, Any]],
                  instance_type: str) -> GroupCapacity | None:
    """Free GPUs on the Nodes of that instance type: allocatable minus what scheduled pods request (None: no such
    Node yet), counted as the capacity advisor and the scheduler count (placement.node_gpus). The validate step and
    a dry run both count this way."""
    from functions.domain.capacity.api import node_gpus

    mine = [r for r in node_gpus(nodes, pods) if r.instance_type == instance_type]
    if not mine:
        return None
    return GroupCapacity(name=mine[0].group or "nodes", instance_type=instance_type, instances=len(mine),
                         gpus_per_instance=max(r.gpus for r in mine),
                         free_gpus=max(0, sum(r.gpus for r in mine) - sum(r.used for r in mine)))
