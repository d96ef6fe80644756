"""Training jobs: the submit request (validated here once, for every face), AWS's elastic-training
exclusions, the GPU arithmetic, the HyperPodPyTorchJob / RayJob renderers, and the job views.

A secret is referenced by name only (`envFrom.secretRef`): its value never appears in a manifest.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from functions.domain.identifiers import JOB_NAME
from functions.domain.manifests import DATA_VOLUME, MANAGED_LABELS
from functions.domain.namespaces.api import models as namespaces
from functions.domain.storage.api import DataMap, data
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


# --- rendering ------------------------------------------------------------------------------------

def labels(job: str, recipe: str) -> dict[str, str]:
    return {**MANAGED_LABELS, LABEL_JOB: job, LABEL_RECIPE: recipe}


def _env(job: JobSubmit, kind: str, where: DataMap) -> list[dict[str, Any]]:
    paths = recipes.pod_paths(job.name, job.output, where)
    out = [{"name": "PODSTART_JOB", "value": job.name}, {"name": "DATA_DIR", "value": recipes.DATASETS_DIR},
           {"name": "OUTPUT_DIR", "value": paths.outputs}, {"name": "CHECKPOINT_DIR", "value": paths.checkpoints}]
    if kind == "pytorch" and job.recipe == "llama-factory":
        out.append({"name": "FORCE_TORCHRUN", "value": "1"})
    if job.mlflow is not None:
        out += mlf.env(job.mlflow, job.name)
    out += [{"name": k, "value": v} for k, v in sorted(job.env.items())]
    return out


def _resources(gpus: int) -> dict[str, Any]:
    if not gpus:
        return {"requests": {"cpu": "1"}}
    return {"requests": {GPU: gpus}, "limits": {GPU: gpus}}


def _container(name: str, job: JobSubmit, kind: str, gpus: int, where: DataMap, **extra: Any) -> dict[str, Any]:
    _, mounted = data.pod_volumes(where.mounts)
    c: dict[str, Any] = {"name": name, "image": job.image, "imagePullPolicy": "IfNotPresent",
                         "env": _env(job, kind, where), "resources": _resources(gpus),
                         "volumeMounts": [{"name": "data", "mountPath": recipes.DATA_MOUNT}, *mounted], **extra}
    if job.secrets:
        c["envFrom"] = [{"secretRef": {"name": s}} for s in job.secrets]
    return c


def _pod_spec(job: JobSubmit, containers: list[dict[str, Any]], service_account: str | None,
              where: DataMap) -> dict[str, Any]:
    """The pods' spec: the shared bucket at /data and each registered volume the job uses at /s3/<bucket>/<prefix>.
    A registered volume mounts with the pod's credentials (Mountpoint `authenticationSource: pod`): the pods run as
    the volume's ServiceAccount, or as the job's MLflow ServiceAccount, whose role the mlflow_access step grants the
    same bucket access."""
    volumes, _ = data.pod_volumes(where.mounts)
    spec: dict[str, Any] = {
        "containers": containers,
        "nodeSelector": {INSTANCE_TYPE_LABEL: job.instance_type},
        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": DATA_VOLUME}}, *volumes],
    }
    service_account = service_account or (mlf.service_account(job.name) if job.mlflow else None) \
        or data.service_account(where.mounts)
    if service_account:
        spec["serviceAccountName"] = service_account
    return spec


def pytorch_job(job: JobSubmit, params: Any, where: DataMap = data.DEFAULT_MAP) -> dict[str, Any]:
    nodes = job.elastic.max_nodes if job.elastic else job.nodes
    cmd = recipes.command(job.recipe, params, job.name, nodes, job.gpus_per_node, mlflow=job.mlflow is not None,
                          where=where, output=job.output)
    meta_labels = labels(job.name, job.recipe)
    run_policy: dict[str, Any] = {
        "jobMaxRetryCount": job.max_retries,
        "cleanPodPolicy": "None",
        "ttlSecondsAfterFinished": 86400,
        "restartPolicy": {"evalPeriodSeconds": 3600, "numRestartBeforeFullJobRestart": 3,
                          "maxFullJobRestarts": max(job.max_retries, 1)},
    }
    if job.log_monitoring:
        run_policy["logMonitoringConfiguration"] = [
            {"name": r.name, "logPattern": r.log_pattern,
             **({"expectedRecurringFrequencyInSeconds": r.expected_recurring_frequency_s}
                if r.expected_recurring_frequency_s else {}),
             **({"expectedStartCutOffInSeconds": r.expected_start_cutoff_s} if r.expected_start_cutoff_s else {})}
            for r in job.log_monitoring]
    spec: dict[str, Any] = {
        "nprocPerNode": str(job.gpus_per_node) if job.gpus_per_node else "1",
        "replicaSpecs": [{
            "name": "pod", "replicas": job.elastic.min_nodes if job.elastic else job.nodes,
            **({"maxReplicas": job.elastic.max_nodes} if job.elastic else {}),
            "template": {"metadata": {"labels": meta_labels},
                         "spec": _pod_spec(job, [_container("pytorch", job, "pytorch", job.gpus_per_node, where,
                                                            command=cmd)], None, where)},
        }],
        "runPolicy": run_policy,
    }
    if job.elastic:
        spec["elasticPolicy"] = {"minReplicas": job.elastic.min_nodes, "maxReplicas": job.elastic.max_nodes}
    return {"apiVersion": API_VERSIONS["pytorch"][0], "kind": API_VERSIONS["pytorch"][1],
            "metadata": {"name": job.name, "namespace": job.namespace, "labels": meta_labels,
                         "annotations": _annotations(job)},
            "spec": spec}


RAY_VERSION = "2.46.0"


def ray_job(job: JobSubmit, params: Any, where: DataMap = data.DEFAULT_MAP) -> dict[str, Any]:
    entry = recipes.ray_entrypoint(params, job.name, job.nodes, job.gpus_per_node,
                                   mlflow=mlf.experiment_of(job.mlflow, job.name) if job.mlflow else None,
                                   where=where, output=job.output)
    meta_labels = labels(job.name, job.recipe)
    head = _container("ray-head", job, "ray", 0, where, ports=[{"containerPort": 6379, "name": "gcs"},
                                                               {"containerPort": 8265, "name": "dashboard"},
                                                               {"containerPort": 10001, "name": "client"}])
    head["resources"] = {"requests": {"cpu": "2", "memory": "8Gi"}}
    worker = _container("ray-worker", job, "ray", job.gpus_per_node, where)
    return {
        "apiVersion": API_VERSIONS["ray"][0], "kind": API_VERSIONS["ray"][1],
        "metadata": {"name": job.name, "namespace": job.namespace, "labels": meta_labels,
                     "annotations": _annotations(job)},
        "spec": {
            "entrypoint": entry,
            "backoffLimit": job.max_retries,
            "shutdownAfterJobFinishes": True,
            "ttlSecondsAfterFinished": 3600,
            "rayClusterSpec": {
                "rayVersion": RAY_VERSION,
                "headGroupSpec": {
                    "rayStartParams": {"dashboard-host": "0.0.0.0"},
                    "template": {"metadata": {"labels": meta_labels},
                                 "spec": {**_pod_spec(job, [head], None, where), "nodeSelector": {}}},
                },
                "workerGroupSpecs": [{
                    "groupName": "workers", "replicas": job.nodes, "minReplicas": job.nodes,
                    "maxReplicas": job.nodes, "rayStartParams": {},
                    "template": {"metadata": {"labels": meta_labels},
                                 "spec": _pod_spec(job, [worker], None, where)},
                }],
            },
        },
    }


def _annotations(job: JobSubmit) -> dict[str, str]:
    out = {"podstart.dev/recipe-version": job.recipe_version, "podstart.dev/instance-type": job.instance_type,
           "podstart.dev/nodes": str(job.nodes), "podstart.dev/gpus-per-node": str(job.gpus_per_node)}
    if job.mlflow is not None:
        out[mlf.ANNOTATION_SERVER] = job.mlflow.tracking_server_arn
    out[SUBMITTED_ANNOTATION] = submitted(job)
    return out


# The request the job was submitted with (secrets by name, as JobSubmit holds them), on the live object: a spec
# plan compares a TrainingJob document with it and an export writes it back (functions/logic/specs/apply.py).
SUBMITTED_ANNOTATION = "podstart.dev/submitted"


def submitted(job: JobSubmit) -> str:
    import json

    return json.dumps(job.model_dump(mode="json", exclude={"name", "namespace"}, exclude_none=True),
                      sort_keys=True, separators=(",", ":"))


def render(job: JobSubmit, params: Any, where: DataMap = data.DEFAULT_MAP) -> dict[str, Any]:
    """The job's object; `where` is what its pods see (the data bucket, the registered volumes it uses): a job naming
    an S3 URI renders only with the volume that mounts it (ValueError otherwise)."""
    return ray_job(job, params, where) if job_kind(job) == "ray" else pytorch_job(job, params, where)


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


def submit_objects(job: JobSubmit, params: Any, *, data_volume_exists: bool, bucket: str,
                   region: str, where: DataMap | None = None) -> list[dict[str, Any]]:
    """What the submit step applies, in order, in a PodStart namespace (an admin made it; it is never made here):
    the data contract (a PV on the shared bucket bound to a PVC of the same name) in a namespace other than default
    that lacks it (namespace.create makes it; an older namespace may not have it), the job's MLflow ServiceAccount
    when it reports to MLflow (its Pod Identity role is the mlflow_access step's), the job."""
    out: list[dict[str, Any]] = []
    if job.namespace != "default" and not data_volume_exists:
        out += namespaces.data_volume(bucket, region, job.namespace)
    if job.mlflow is not None:
        out.append(mlf.service_account_object(job.name, job.namespace, labels(job.name, job.recipe),
                                              job.mlflow.tracking_server_arn))
    return [*out, render(job, params, where or DataMap(data_bucket=bucket))]


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


# --- views ----------------------------------------------------------------------------------------

JobStatus = Literal["Pending", "Running", "Restarting", "Hanging", "Succeeded", "Failed", "Unknown"]


class PodView(BaseModel):
    name: str
    node: str | None = None
    phase: str
    restarts: int = 0
    reason: str | None = None


class Detection(BaseModel):
    """A stuck/anomaly detection the operator reported (log monitoring: HANGING, SLOW)."""

    type: str
    rule: str | None = None
    message: str
    at: str | None = None


class Budget(BaseModel):
    used: int = Field(description="Recoveries used (restarts the operator made)")
    max: int = Field(description="runPolicy.jobMaxRetryCount (RayJob: backoffLimit)")
    exhausted: bool


class JobSummary(BaseModel):
    name: str
    namespace: str
    kind: Literal["pytorch", "ray"]
    recipe: str | None = None
    status: JobStatus
    budget: Budget
    instance_type: str | None = None
    nodes: int | None = None
    gpus_per_node: int | None = None
    created_at: str | None = None


class JobList(BaseModel):
    items: list[JobSummary]
    next_token: str | None = None


class MetricPoint(BaseModel):
    step: int
    value: float


class MetricSeries(BaseModel):
    name: str = Field(description="loss, throughput (samples/s), ...")
    points: list[MetricPoint]


class JobMetrics(BaseModel):
    """What a job reports, step by step: from its MLflow run when it reports to MLflow, else parsed from the log of
    its first pod (lines with `step N` and `loss X`, `throughput Y`). No series when neither has any yet."""

    source: Literal["mlflow", "logs", "none"]
    series: list[MetricSeries] = Field(default_factory=list)
    pod: str | None = Field(default=None, description="The pod whose log was parsed (source logs)")
    run: str | None = Field(default=None, description="The MLflow run read (source mlflow)")
    note: str | None = None


MAX_METRIC_POINTS = 500  # per series: the newest steps
_STEP = re.compile(r"\bstep[\s:=]+(\d+)", re.IGNORECASE)
_METRICS = {  # a series name -> the pattern of its value in a log line that also says the step
    "loss": re.compile(r"(?:\bloss|/pg_loss)[\s:=]+(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"),
    "throughput (samples/s)": re.compile(r"(?:\bthroughput[\s:=]+|\()(\d+(?:\.\d+)?) samples/s"),
    "learning rate": re.compile(r"\b(?:lr|learning_rate)[\s:=]+(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"),
}


def metrics_from_logs(lines: list[str]) -> dict[str, list[tuple[int, float]]]:
    """Step-by-step values from training log lines ("step 12 loss 1.83 throughput 41.5 samples/s", "step:3 - actor/
    pg_loss:0.41 ... (24.5 samples/s)"): one point per step and series (the last value a step printed wins: a
    multi-rank log prints each step once per rank), the newest MAX_METRIC_POINTS steps."""
    out: dict[str, dict[int, float]] = {}
    for line in lines:
        m = _STEP.search(line)
        if not m:
            continue
        step = int(m.group(1))
        for name, pat in _METRICS.items():
            v = pat.search(line)
            if v:
                out.setdefault(name, {})[step] = float(v.group(1))
    return {name: sorted(points.items())[-MAX_METRIC_POINTS:] for name, points in out.items() if points}


class ClusterJob(JobSummary):
    """A job in a list across clusters: where it runs."""

    cluster: str
    region: str


class Unreachable(BaseModel):
    """A cluster a list across clusters could not read (its jobs or endpoints are missing from the page)."""

    cluster: str
    region: str
    reason: str


class ClusterJobList(BaseModel):
    items: list[ClusterJob]
    next_token: str | None = None
    unreachable: list[Unreachable] = Field(default_factory=list, description="Clusters not read, and why")


class Condition(BaseModel):
    type: str
    status: str
    reason: str | None = None
    message: str | None = None
    at: str | None = None


class JobDetail(JobSummary):
    waiting: str | None = Field(default=None, description="Why its pods wait, as the scheduler says (e.g. 0/2 nodes "
                                                          "are available: 2 Insufficient nvidia.com/gpu)")
    conditions: list[Condition]
    pods: list[PodView]
    detections: list[Detection]
    started_at: str | None = None
    ended_at: str | None = None
    image: str | None = None
    data: recipes.DataPaths
    mlflow: mlf.JobMlflow | None = Field(None, description="The MLflow tracking server and experiment it reports to")


class JobLogs(BaseModel):
    pod: str
    container: str | None = None
    lines: list[str]
    truncated: bool = Field(description="True when older lines or bytes were cut to stay within the bounds")


def _submitted(obj: dict[str, Any]) -> dict[str, Any]:
    """The request the job was submitted with (its annotation), {} when absent or unreadable."""
    import json

    raw = ((obj.get("metadata") or {}).get("annotations") or {}).get(SUBMITTED_ANNOTATION)
    try:
        out = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return out if isinstance(out, dict) else {}


def _conditions(obj: dict[str, Any], kind: str = "pytorch") -> list[Condition]:
    """The job's conditions. A RayJob has none in KubeRay v1: its `jobDeploymentStatus` is shown as one, with the
    Ray job's `jobStatus`, the reason and the message."""
    st = obj.get("status") or {}
    if kind == "ray":
        dep = st.get("jobDeploymentStatus")
        if not dep:
            return []
        return [Condition(type=str(dep), status="True",
                          reason=st.get("reason") or (f"jobStatus {st['jobStatus']}" if st.get("jobStatus") else None),
                          message=st.get("message"), at=st.get("endTime") or st.get("startTime"))]
    return [Condition(type=c.get("type", ""), status=c.get("status", ""), reason=c.get("reason"),
                      message=c.get("message"), at=c.get("lastTransitionTime"))
            for c in (obj.get("status") or {}).get("conditions") or []]


def status_of(kind: str, obj: dict[str, Any]) -> JobStatus:
    st = obj.get("status") or {}
    if kind == "ray":
        dep = st.get("jobDeploymentStatus") or ""
        js = st.get("jobStatus") or ""
        if dep == "Failed" or js == "FAILED":
            return "Failed"
        if dep == "Complete" or js == "SUCCEEDED":
            return "Succeeded"
        if dep == "Retrying":
            return "Restarting"
        if dep == "Running" and js in ("RUNNING", ""):
            return "Running"
        return "Pending"
    true = {c.type for c in _conditions(obj) if c.status == "True"}
    for t, s in (("Failed", "Failed"), ("Succeeded", "Succeeded"), ("Completed", "Succeeded"),
                 ("Hanging", "Hanging"), ("Restarting", "Restarting"), ("Running", "Running")):
        if t in true:
            return s  # type: ignore[return-value]
    return "Pending"


def budget_of(kind: str, obj: dict[str, Any]) -> Budget:
    st, spec = obj.get("status") or {}, obj.get("spec") or {}
    if kind == "ray":  # KubeRay: `failed` counts failed attempts; the last one of a Failed job was not retried
        failed, cap = int(st.get("failed") or 0), int(spec.get("backoffLimit") or 0)
        used = min(cap, failed - 1 if failed and status_of(kind, obj) == "Failed" else failed)
    else:
        used, cap = int(st.get("restartCount") or 0), int((spec.get("runPolicy") or {}).get("jobMaxRetryCount") or 0)
    return Budget(used=used, max=cap, exhausted=used >= cap and status_of(kind, obj) == "Failed")


def summary(kind: str, obj: dict[str, Any]) -> JobSummary:
    meta = obj.get("metadata") or {}
    ann = meta.get("annotations") or {}

    def _int(k: str) -> int | None:
        v = ann.get(k)
        return int(v) if v and v.isdigit() else None

    return JobSummary(name=meta.get("name", ""), namespace=meta.get("namespace", "default"), kind=kind,  # type: ignore[arg-type]
                      recipe=(meta.get("labels") or {}).get(LABEL_RECIPE), status=status_of(kind, obj),
                      budget=budget_of(kind, obj), instance_type=ann.get("podstart.dev/instance-type"),
                      nodes=_int("podstart.dev/nodes"), gpus_per_node=_int("podstart.dev/gpus-per-node"),
                      created_at=meta.get("creationTimestamp"))


def pod_view(pod: dict[str, Any]) -> PodView:
    st = pod.get("status") or {}
    cs = st.get("containerStatuses") or []
    reason = st.get("reason") or next((c.get("message") or c.get("reason") for c in st.get("conditions") or []
                                       if c.get("type") == "PodScheduled" and c.get("status") == "False"), None)
    return PodView(name=pod["metadata"]["name"], node=(pod.get("spec") or {}).get("nodeName"),
                   phase=st.get("phase", "Pending"), restarts=sum(int(c.get("restartCount") or 0) for c in cs),
                   reason=reason)


def detail(kind: str, obj: dict[str, Any], pods: list[dict[str, Any]]) -> JobDetail:
    s = summary(kind, obj)
    st = obj.get("status") or {}
    conds = _conditions(obj, kind)
    detections = [Detection(type=c.type, rule=(c.reason or None), message=c.message or c.type, at=c.at)
                  for c in conds if c.type in ("Hanging", "Slow", "Degraded") and c.status == "True"]
    containers = [c for rs in (obj.get("spec") or {}).get("replicaSpecs") or []
                  for c in ((rs.get("template") or {}).get("spec") or {}).get("containers") or []]
    if kind == "ray":
        head = ((((obj.get("spec") or {}).get("rayClusterSpec") or {}).get("headGroupSpec") or {})
                .get("template") or {}).get("spec") or {}
        containers = head.get("containers") or []
    reports = mlf.from_containers(containers)
    from functions.domain.capacity.api import unscheduled

    return JobDetail(**s.model_dump(), conditions=conds, pods=[pod_view(p) for p in pods], detections=detections,
                     waiting=unscheduled(pods) if s.status in ("Pending", "Restarting") else None,
                     started_at=st.get("startTime"), ended_at=st.get("completionTime") or st.get("endTime"),
                     image=containers[0].get("image") if containers else None,
                     data=recipes.data_paths(s.name, _submitted(obj).get("output")),
                     mlflow=mlf.JobMlflow(tracking_server_arn=reports[0], experiment=reports[1], url=None)
                     if reports else None)


MAX_LOG_BYTES = 64 * 1024
MAX_TAIL = 5000


def bound_lines(text: str, tail: int, limit_bytes: int, cut: bool) -> JobLogs:
    """The last `tail` lines within `limit_bytes` (whole lines; `cut` says the source was cut already)."""
    lines = text.splitlines()
    truncated = cut or len(lines) > tail
    lines = lines[-tail:] if tail else []
    size, keep = 0, []
    for line in reversed(lines):
        size += len(line.encode()) + 1
        if size > limit_bytes:
            truncated = True
            break
        keep.append(line)
    return JobLogs(pod="", lines=list(reversed(keep)), truncated=truncated)
