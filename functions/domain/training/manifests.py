"""The objects a job submit applies: the HyperPodPyTorchJob or RayJob its recipe renders, and what goes with it
(the data volume, the MLflow ServiceAccount)."""

from __future__ import annotations

from typing import Any

from functions.domain.manifests import DATA_VOLUME, MANAGED_LABELS
from functions.domain.namespaces.api import models as namespaces
from functions.domain.storage.api import DataMap, data
from functions.domain.training import mlflow as mlf
from functions.domain.training import recipes
from functions.domain.training.rules import (
    API_VERSIONS,
    GPU,
    INSTANCE_TYPE_LABEL,
    LABEL_JOB,
    LABEL_RECIPE,
    JobSubmit,
    job_kind,
)

# --- rendering ------------------------------------------------------------------------------------

def labels(job: str, recipe: str) -> dict[str, str]:
    return {**MANAGED_LABELS, LABEL_JOB: job, LABEL_RECIPE: recipe}


def _env(job: JobSubmit, kind: str, paths: recipes.DataPaths) -> list[dict[str, Any]]:
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


def _container(name: str, job: JobSubmit, kind: str, gpus: int, where: DataMap, paths: recipes.DataPaths,
               **extra: Any) -> dict[str, Any]:
    _, mounted = data.pod_volumes(where.mounts)
    c: dict[str, Any] = {"name": name, "image": job.image, "imagePullPolicy": "IfNotPresent",
                         "env": _env(job, kind, paths), "resources": _resources(gpus),
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
    paths = recipes.pod_paths(job.name, job.output, where)
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
                         "spec": _pod_spec(job, [_container("pytorch", job, "pytorch", job.gpus_per_node, where, paths,
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
    paths = recipes.pod_paths(job.name, job.output, where)
    meta_labels = labels(job.name, job.recipe)
    head = _container("ray-head", job, "ray", 0, where, paths, ports=[{"containerPort": 6379, "name": "gcs"},
                                                                      {"containerPort": 8265, "name": "dashboard"},
                                                                      {"containerPort": 10001, "name": "client"}])
    head["resources"] = {"requests": {"cpu": "2", "memory": "8Gi"}}
    worker = _container("ray-worker", job, "ray", job.gpus_per_node, where, paths)
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
