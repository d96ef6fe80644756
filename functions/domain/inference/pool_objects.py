"""Kubernetes objects of a worker pool: its supervisor script's ConfigMap and its Deployment of workers that load
an assigned model on demand, and how a relabel picks the workers it moves."""

from __future__ import annotations

from typing import Any

from functions.domain.inference.download_objects import SCRIPT_DIR
from functions.domain.inference.endpoint_objects import (
    MODEL_LABEL,
    POOL_LABEL,
    UNASSIGNED,
    _meta,
    _model_arg,
    _served,
    engine_command,
    pool_deployment,
    worker_pod_spec,
)
from functions.domain.manifests import MANAGED_LABELS

# ------------------------------------------------------------------------------------------- pools

POOL_WORKER = "podstart-pool-worker"  # the supervisor script's ConfigMap
POOL_SCRIPT_KEY = "podstart_pool_worker.py"  # the file name the worker runs (the sandbox looks for it)
POOL_HEALTH_PORT = 8081
# what pool.assign writes on a worker (and pool.release removes): the supervisor starts the engine on it
MODEL_PATH_ANNOTATION = "podstart.dev/model-path"
MODEL_NAME_ANNOTATION = "podstart.dev/model-name"


def pool_script_configmap(script: str) -> dict[str, Any]:
    """The constant pool-worker supervisor, mounted read-only into every pool worker."""
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta(POOL_WORKER), "data": {POOL_SCRIPT_KEY: script}}


def assigned_model(model: dict[str, Any]) -> dict[str, str]:
    """The annotations pool.assign writes for a model: the path the engine loads, the name it is served as."""
    return {MODEL_PATH_ANNOTATION: _model_arg(model), MODEL_NAME_ANNOTATION: _served(model)}


def pool_objects(pool: dict[str, Any], script: str) -> list[dict[str, Any]]:
    """A warm pool: the supervisor script's ConfigMap and a Deployment of workers with no model bound
    (`podstart.dev/model=unassigned`). Each worker runs the supervisor, which reads the pod's own annotations
    (downward API) and starts the engine on the model pool.assign names, stops it on release.

    The Deployment selects by pool only, so relabelling a pod's model keeps it in the pool; an endpoint's
    Service selects pool + model and routes only to the workers bound to it (Ready only once the engine
    serves: the probes read the supervisor)."""
    name = pool["name"]
    sel = {POOL_LABEL: name}
    pod = worker_pod_spec(engine=pool["engine"], image=pool["image"], gpus=int(pool["gpus_per_worker"]),
                          instance_type=pool["instance_type"], model=None, served_name=name,
                          args=[], spread_labels=sel)
    [c] = pod["containers"]
    c["command"] = ["python3", f"{SCRIPT_DIR}/{POOL_SCRIPT_KEY}", "--",
                    *engine_command(pool["engine"], "{model}", "{name}", [])]
    c["ports"] = [*c["ports"], {"name": "health", "containerPort": POOL_HEALTH_PORT}]
    # readiness follows the engine (Ready while warm, or once it serves the assigned model); startup and liveness
    # only the supervisor, which restarts an engine that exits: a model loading for minutes is not a dead pod
    for probe, path in (("startupProbe", "/live"), ("readinessProbe", "/health"), ("livenessProbe", "/live")):
        c[probe] = {**c[probe], "httpGet": {"path": path, "port": "health"}}
    c["volumeMounts"] = [*c["volumeMounts"], {"name": "script", "mountPath": SCRIPT_DIR, "readOnly": True},
                         {"name": "podinfo", "mountPath": "/etc/podinfo", "readOnly": True}]
    pod["volumes"] = [*pod["volumes"], {"name": "script", "configMap": {"name": POOL_WORKER}},
                      {"name": "podinfo", "downwardAPI": {"items": [
                          {"path": "annotations", "fieldRef": {"fieldPath": "metadata.annotations"}}]}}]
    return [pool_script_configmap(script), {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta(pool_deployment(name), **sel),
        "spec": {"replicas": int(pool["workers"]), "selector": {"matchLabels": sel},
                 "template": {"metadata": {"labels": {**MANAGED_LABELS, **sel, MODEL_LABEL: UNASSIGNED}},
                              "spec": pod}},
    }]


def pick_workers(pods: list[dict[str, Any]], n: int | None, done: list[str]) -> tuple[list[str], int]:
    """The pool workers a relabel moves, by name order: (names, how many it needs). `pods` are the workers still
    labelled with the source model, `done` those an earlier attempt moved; n None moves all of them. The
    relabel step and a dry run pick the same way."""
    left = sorted(p["metadata"]["name"] for p in pods if p["metadata"]["name"] not in done)
    need = (int(n) if n else len(left) + len(done)) - len(done)
    return left[:max(0, need)], need
