"""Inference: a simulated HyperPod inference operator and the pods of serving Deployments.

- InferenceEndpointConfig / JumpStartModel -> status.state DeploymentPending -> DeploymentInProgress
  (a Deployment and a Service named after the CR, owned by it) -> DeploymentComplete once its pods are
  Ready, or DeploymentFailed with the pull error in a condition.
- Deployments PodStart or the operator made (labelled `podstart.dev/endpoint` or `podstart.dev/pool`) get
  pods (a ReplicaSet's job, simplified): pods matching the selector are kept at spec.replicas.
- Knob: an image under `sandbox.invalid/` cannot be pulled: its pods stay Pending in ErrImagePull.
- The CRDs of the operator are registered in every cluster (until the features issue installs them).
"""

from __future__ import annotations

import copy
from typing import Any

from sandbox.kube.errors import ApiError
from sandbox.kube.operators.base import ReconcileContext, Reconciler, condition, update_status
from sandbox.kube.store import Obj, random_suffix

GROUP, VERSION = "inference.sagemaker.aws.amazon.com", "v1"
API = f"{GROUP}/{VERSION}"
KINDS = (("InferenceEndpointConfig", "inferenceendpointconfigs", "iec"), ("JumpStartModel", "jumpstartmodels", "jsm"))
ENDPOINT_LABEL, POOL_LABEL, ROLE_LABEL = "podstart.dev/endpoint", "podstart.dev/pool", "podstart.dev/role"
PULL_FAIL_PREFIX = "sandbox.invalid/"
JUMPSTART_IMAGE = "763104351884.dkr.ecr.us-west-2.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128"


def crd(kind: str, plural: str, short: str) -> Obj:
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {"group": GROUP, "scope": "Namespaced",
                 "names": {"kind": kind, "plural": plural, "singular": kind.lower(), "listKind": f"{kind}List",
                           "shortNames": [short]},
                 "versions": [{"name": VERSION, "served": True, "storage": True,
                               "subresources": {"status": {}},
                               "schema": {"openAPIV3Schema": {"type": "object",
                                                              "x-kubernetes-preserve-unknown-fields": True}}}]},
    }


def ensure_crds(ctx: ReconcileContext) -> None:
    for kind, plural, short in KINDS:
        if ctx.store.registry.by_kind(API, kind) is None:
            try:
                ctx.store.create(crd(kind, plural, short))
            except ApiError:
                pass


def _owner(obj: Obj) -> dict[str, Any]:
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": obj["metadata"]["name"],
            "uid": obj["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}


def _worker_for(cr: Obj) -> tuple[Obj, Obj]:
    """The Deployment and Service the operator makes for a CR."""
    name, ns, spec = cr["metadata"]["name"], cr["metadata"].get("namespace", "default"), cr.get("spec") or {}
    labels = {ENDPOINT_LABEL: name, ROLE_LABEL: "worker", "app": name}
    worker = spec.get("worker") or {}
    port = int((worker.get("modelInvocationPort") or {}).get("containerPort") or 8080)
    model = ((spec.get("modelSourceConfig") or {}).get("huggingFaceModel") or {}).get("modelId") \
        or (spec.get("model") or {}).get("modelId") or spec.get("modelName") or name
    image = worker.get("image") or JUMPSTART_IMAGE
    resources = worker.get("resources") or {"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}}
    deploy = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns, "labels": labels, "ownerReferences": [_owner(cr)]},
        "spec": {"replicas": int(spec.get("replicas", 1)), "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels, "annotations": {"podstart.dev/model-name": model}},
                              "spec": {"containers": [{"name": "worker", "image": image, "resources": resources,
                                                       "ports": [{"name": "http", "containerPort": port}]}]}}},
    }
    svc = {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name, "namespace": ns, "labels": {ENDPOINT_LABEL: name}, "ownerReferences": [_owner(cr)]},
        "spec": {"type": "ClusterIP", "selector": labels,
                 "ports": [{"name": "http", "port": 80, "targetPort": port, "protocol": "TCP"}]},
    }
    return deploy, svc


def _pods_of(ctx: ReconcileContext, dep: Obj) -> list[Obj]:
    sel = (dep.get("spec") or {}).get("selector", {}).get("matchLabels") or {}
    if not sel:
        return []
    return ctx.store.list("v1", "Pod", dep["metadata"].get("namespace"),
                          label_selector=",".join(f"{k}={v}" for k, v in sel.items()))


def _pull_error(pods: list[Obj]) -> str | None:
    for p in pods:
        for cs in (p.get("status") or {}).get("containerStatuses") or []:
            w = (cs.get("state") or {}).get("waiting") or {}
            if w.get("reason") == "ErrImagePull":
                return f"{w['reason']}: {w.get('message', '')}"
    return None


def _ready(p: Obj) -> bool:
    st = p.get("status") or {}
    return st.get("phase") == "Running" and any(c.get("type") == "Ready" and c.get("status") == "True"
                                                for c in st.get("conditions") or [])


def reconcile_operator(ctx: ReconcileContext) -> None:
    ensure_crds(ctx)
    live: set[tuple[str, str]] = set()
    for kind, _, _ in KINDS:
        if ctx.store.registry.by_kind(API, kind) is None:
            continue
        for cr in ctx.store.list(API, kind):
            meta = cr["metadata"]
            ns = meta.get("namespace", "default")
            live.add((ns, meta["name"]))
            if meta.get("deletionTimestamp"):
                continue
            status = dict(cr.get("status") or {})
            state = status.get("state")
            if state is None:
                update_status(ctx, cr, {"state": "DeploymentPending", "observedGeneration": meta.get("generation", 1),
                                        "conditions": [condition("DeploymentPending", "True", "Accepted",
                                                                 "waiting for the operator to reconcile")]})
                continue
            if state == "DeploymentPending" and not ctx.waited(cr, 10, "pending"):
                continue
            deploy, svc = _worker_for(cr)
            cur = ctx.store.get("apps/v1", "Deployment", meta["name"], ns)
            if cur is None:
                ctx.store.create(deploy)
                ctx.store.create(svc)
                ctx.store.record_event(cr, "Normal", "DeploymentCreated",
                                       f"Created Deployment and Service {ns}/{meta['name']}",
                                       "hyperpod-inference-operator")
                cur = ctx.store.get("apps/v1", "Deployment", meta["name"], ns)
            elif int(cur["spec"].get("replicas", 1)) != deploy["spec"]["replicas"]:
                body = copy.deepcopy(cur)
                body["spec"]["replicas"] = deploy["spec"]["replicas"]
                ctx.store.put(body)
            assert cur is not None
            pods = _pods_of(ctx, cur)
            want = int(deploy["spec"]["replicas"])
            ready = sum(1 for p in pods if _ready(p))
            dep_status = {"name": meta["name"], "status": {"replicas": want, "readyReplicas": ready,
                                                           "availableReplicas": ready}}
            pull = _pull_error(pods)
            if pull:
                msg = f"Deployment {meta['name']}: {pull}"
                update_status(ctx, cr, {**status, "state": "DeploymentFailed", "deploymentStatus": {
                    **dep_status, "deploymentObjectOverallState": "DeploymentFailed", "message": msg},
                    "conditions": [condition("DeploymentFailed", "True", "ImagePullError", msg)]})
            elif ready >= want:
                update_status(ctx, cr, {**status, "state": "DeploymentComplete", "replicas": ready,
                                        "selector": f"{ENDPOINT_LABEL}={meta['name']}",
                                        "deploymentStatus": {**dep_status,
                                                             "deploymentObjectOverallState": "DeploymentComplete"},
                                        "conditions": [condition("DeploymentComplete", "True", "Ready",
                                                                 f"{ready}/{want} replicas ready")]})
            else:
                update_status(ctx, cr, {**status, "state": "DeploymentInProgress", "deploymentStatus": {
                    **dep_status, "deploymentObjectOverallState": "DeploymentInProgress"},
                    "conditions": [condition("DeploymentInProgress", "True", "Deploying",
                                             f"{ready}/{want} replicas ready")]})
    for kind, av in (("Deployment", "apps/v1"), ("Service", "v1")):
        for obj in ctx.store.list(av, kind):
            refs = obj["metadata"].get("ownerReferences") or []
            if any(r.get("apiVersion") == API for r in refs) and \
                    (obj["metadata"].get("namespace", "default"), refs[0]["name"]) not in live:
                ctx.store.delete(av, kind, obj["metadata"]["name"], obj["metadata"].get("namespace"))


def reconcile_serving_pods(ctx: ReconcileContext) -> None:
    """Keep spec.replicas pods for serving Deployments (a ReplicaSet's job, simplified)."""
    for dep in ctx.store.list("apps/v1", "Deployment"):
        labels = dep["metadata"].get("labels") or {}
        if ENDPOINT_LABEL not in labels and POOL_LABEL not in labels:
            continue
        if dep["metadata"].get("deletionTimestamp"):
            continue
        want = int((dep.get("spec") or {}).get("replicas", 1))
        pods = [p for p in _pods_of(ctx, dep) if not p["metadata"].get("deletionTimestamp")]
        template = copy.deepcopy((dep.get("spec") or {}).get("template") or {})
        tmeta = template.get("metadata") or {}
        for _ in range(want - len(pods)):
            pod: Obj = {"apiVersion": "v1", "kind": "Pod",
                   "metadata": {**tmeta, "name": f"{dep['metadata']['name']}-{random_suffix(5)}",
                                "namespace": dep["metadata"].get("namespace", "default"),
                                "labels": dict(tmeta.get("labels") or {}),
                                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment",
                                                     "name": dep["metadata"]["name"], "uid": dep["metadata"]["uid"],
                                                     "controller": True, "blockOwnerDeletion": True}]},
                   "spec": template.get("spec") or {"containers": []}}
            containers: list[Obj] = list((template.get("spec") or {}).get("containers") or [])
            images = [c.get("image", "") for c in containers]
            bad = next((i for i in images if i.startswith(PULL_FAIL_PREFIX)), None)
            if bad:
                pod["status"] = {"phase": "Pending", "conditions": [condition("PodScheduled", "True", "")],
                                 "containerStatuses": [{
                                     "name": c.get("name", ""), "image": c.get("image", ""), "imageID": "",
                                     "ready": False, "started": False, "restartCount": 0,
                                     "state": {"waiting": {"reason": "ErrImagePull", "message": (
                                         f'failed to pull image "{c.get("image", "")}": not found')}}}
                                     for c in containers]}
            try:
                ctx.store.create(pod)
            except ApiError:
                pass
        if len(pods) > want:
            for p in sorted(pods, key=lambda x: x["metadata"]["name"])[want:]:
                ctx.store.delete("v1", "Pod", p["metadata"]["name"], p["metadata"].get("namespace"))


RECONCILERS: tuple[Reconciler, ...] = (reconcile_operator, reconcile_serving_pods)
