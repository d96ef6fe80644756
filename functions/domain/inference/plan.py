"""Plans for endpoint.deploy / endpoint.update / endpoint.delete and pool.create / pool.assign / pool.release.

The objects are the ones the workflow steps apply or delete, from the same renderers
(`inference_manifests.endpoint_objects`, `pool_objects`, the KEDA install objects) and, for a relabel, the
same pick of pool workers (`inference_manifests.pick_workers`). Serving runs on nodes that are already there:
cost lines show that capacity as already paid; a warning says when the GPUs asked for are not free now.

Facts (read by the dry run): `operator_served` (managed), `keda_served` (KEDA autoscaling), `bucket`,
`live` (a GroupCapacity of the instance type, or None), `pods` (the pool workers a relabel chooses from).
"""

from __future__ import annotations

import math
from typing import Any

from functions.assets import keda as keda_assets
from functions.domain.features.api import ensure_changes
from functions.domain.inference import manifests as im
from functions.domain.plans import Capacity, Change, Draft, create, delete, none, update
from functions.domain.plans.base import PlanInput
from functions.domain.storage.api import DataMap

INFERENCE_ADDON = "amazon-sagemaker-hyperpod-inference"
EXISTING = "existing nodes: already running, serving adds no cost"
RECORD = "PodStart endpoint record"


def managed_kind(req: dict[str, Any]) -> str:
    return "JumpStartModel" if req["model"]["source"] == "jumpstart" else "InferenceEndpointConfig"


def _ref(m: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    ns = m["metadata"].get("namespace")
    return f"Kubernetes {m['kind']}", m["metadata"]["name"], ({"namespace": ns} if ns else {})


def _objects(p: PlanInput, req: dict[str, Any]) -> list[dict[str, Any]]:
    bucket = str(p.facts.get("bucket") or "podstart-data")
    raw = p.request.get("data") or p.facts.get("data")
    return im.endpoint_objects(req, region=p.request["region"], bucket=bucket, tls_bucket=bucket,
                               where=DataMap.model_validate(raw) if raw else None)


def _fit(p: PlanInput, instance_type: str, pods: int, gpus: int, what: str) -> tuple[list[Capacity], list[str]]:
    """The existing capacity the pods take (already paid), and a warning when their GPUs are not free now."""
    live = p.facts.get("live") or {}
    per = int(live.get("gpus_per_instance") or 0)
    instances = math.ceil(pods * gpus / per) if per and gpus else pods
    capacity = [Capacity(item=f"HyperPod {instance_type} (existing nodes)", price=("hyperpod", instance_type),
                         count=instances, paid=True, source=EXISTING)] if pods else []
    placed = p.facts.get("placement") or {}
    if placed and not placed.get("fits_now"):  # where the scheduler would put them now (capacity.placement)
        return capacity, [f"DOES NOT FIT NOW: {what}: {placed.get('waits_for') or placed.get('summary')}; the pods "
                          f"stay Pending (the endpoint's status says why) until GPUs free up (or the group grows)"]
    need, free = pods * gpus, live.get("free_gpus")
    if need and free is not None and need > int(free):
        return capacity, [f"DOES NOT FIT NOW: {what} need {pods} x {gpus} = {need} GPUs on {instance_type}; {free} "
                          f"are free now: the pods stay Pending until GPUs free up (or the group grows)"]
    return capacity, []


def plan_endpoint_deploy(p: PlanInput) -> Draft:
    req, f = p.request["endpoint"], p.facts
    changes: list[Change] = []
    warnings: list[str] = []
    if req["mode"] == "managed":
        kind = managed_kind(req)
        if f.get("operator_served"):
            changes.append(none("eks-addon", INFERENCE_ADDON, "inference_operator", serves=kind))
        else:
            changes += ensure_changes(p, "inference_operator", "inference_operator")
            warnings.append(f"the cluster does not serve {kind} yet: the inference_operator step enables the "
                            f"inference operator with its prerequisites (as PATCH .../features would) and waits "
                            f"for it before the endpoint's objects are applied")
    if (req.get("autoscaling") or {}).get("keda"):
        if f.get("keda_served"):
            changes.append(none("Kubernetes Deployment", "keda-operator", "keda", note="KEDA installed: kept as it is"))
        else:
            for m in keda_assets.install_objects():
                kind_, name, details = _ref(m)
                changes.append(create(kind_, name, "keda", **details))
    for m in _objects(p, req):
        kind_, name, details = _ref(m)
        if m["kind"] in ("Deployment", "InferenceEndpointConfig", "JumpStartModel"):
            details["replicas"] = (m.get("spec") or {}).get("replicas", req.get("replicas"))
        if m["kind"] == "Service":
            details["type"] = (m.get("spec") or {}).get("type")
        changes.append(create(kind_, name, "objects", **details))
    changes.append(create(RECORD, req["name"], None, status="DEPLOYING"))
    if req.get("service") == "external":
        warnings.append("service external: the AWS Load Balancer Controller makes a Network Load Balancer, billed "
                        "by the hour (not in this cost)")
    warnings += exposure(req)
    capacity: list[Capacity] = []
    if req.get("service") != "model_pool":
        replicas = int(((req.get("autoscaling") or {}).get("keda") or {}).get("min", req.get("replicas", 1))
                       if (req.get("autoscaling") or {}).get("keda") else req.get("replicas", 1))
        capacity, more = _fit(p, req["instance_type"], replicas, int(req.get("gpus") or 0), f"{replicas} replica(s)")
        warnings += more
    else:
        warnings.append(f"a model_pool endpoint has no workers of its own: assign workers of pool {req.get('pool')} "
                        f"(POST .../pools/{req.get('pool')}/assign)")
    return Draft(changes=_skip(changes, p.skip_steps), capacity=capacity, warnings=warnings)


def exposure(req: dict[str, Any]) -> list[str]:
    """Who can reach a self-managed endpoint, said plainly (the UI and agents show it before the user confirms)."""
    if req.get("mode") != "self-managed" or req.get("service") == "model_pool":
        return []
    key = req.get("api_key_secret")
    guard = (f"callers must send the API key in Secret {key}" if key else
             "no API key: anyone who reaches it can use the model (set api_key_secret)")
    if req.get("public"):
        return [f"EXPOSURE: public: anyone on the internet can reach this endpoint's Network Load Balancer; {guard}"]
    if req.get("internet_facing"):
        return [f"EXPOSURE: internet-facing, reachable from {', '.join(req.get('source_ranges') or [])}; {guard}"]
    where = "the VPC (an internal Network Load Balancer)" if req.get("service") == "external" else "inside the cluster"
    return [f"exposure: reachable from {where}; {guard}"]


def plan_endpoint_update(p: PlanInput) -> Draft:
    req, change = p.request["endpoint"], p.request["change"]
    name = req["name"]
    auto = req.get("autoscaling") or {}
    bounds: dict[str, Any] = (auto.get("keda") if auto.get("keda") is not None else auto) or {}
    changes: list[Change] = []
    if req["mode"] == "managed":
        spec: dict[str, Any] = {}
        if "replicas" in change:
            spec["replicas"] = {"from": req.get("replicas", 1), "to": change["replicas"]}
        for src, dst, key in (("autoscaling_min", "minReplicaCount", "min"), ("autoscaling_max", "maxReplicaCount",
                                                                             "max")):
            if change.get(src) is not None:
                spec[dst] = {"from": bounds.get(key), "to": change[src]}
        changes.append(update(f"Kubernetes {managed_kind(req)}", name, "scale", namespace=im.NAMESPACE, **spec))
    else:
        if "replicas" in change:
            changes.append(update("Kubernetes Deployment", im.worker_name(name), "scale", namespace=im.NAMESPACE,
                                  replicas={"from": req.get("replicas", 1), "to": change["replicas"]}))
        spec = {dst: {"from": bounds.get(key), "to": change[src]}
                for src, dst, key in (("autoscaling_min", "minReplicaCount", "min"),
                                      ("autoscaling_max", "maxReplicaCount", "max")) if change.get(src) is not None}
        if spec:
            changes.append(update("Kubernetes ScaledObject", f"{name}-workers", "scale", namespace=im.NAMESPACE,
                                  **spec))
    changes.append(update(RECORD, name, None, **{k: v for k, v in change.items()}))
    capacity: list[Capacity] = []
    warnings: list[str] = []
    grow = int(change.get("replicas", req.get("replicas", 1))) - int(req.get("replicas", 1))
    if "replicas" in change and grow > 0:
        capacity, warnings = _fit(p, req["instance_type"], grow, int(req.get("gpus") or 0), f"{grow} more replica(s)")
    elif "replicas" in change and grow < 0:
        warnings.append(f"{-grow} replica(s) stop: requests in flight on them are cut")
    return Draft(changes=_skip(changes, p.skip_steps), capacity=capacity, warnings=warnings)


def plan_endpoint_delete(p: PlanInput) -> Draft:
    req = p.request["endpoint"]
    changes: list[Change] = []
    for m in reversed(_objects(p, req)):
        kind_, name, details = _ref(m)
        changes.append(delete(kind_, name, "objects", **details))
    changes.append(delete(RECORD, req["name"], None))
    warnings = [f"endpoint {req['name']} stops answering; its model files under /data stay"]
    if req.get("service") == "external":
        warnings.append("its Network Load Balancer is deleted with the Service")
    return Draft(changes=_skip(changes, p.skip_steps), warnings=warnings)


def plan_pool_create(p: PlanInput) -> Draft:
    pool = p.request["pool"]
    changes = []
    for m in im.pool_objects(pool, ""):
        kind_, name, details = _ref(m)
        if m["kind"] == "Deployment":
            details |= {"replicas": (m.get("spec") or {}).get("replicas"),
                        "labels": f"{im.POOL_LABEL}={pool['name']}, {im.MODEL_LABEL}={im.UNASSIGNED}"}
        changes.append(create(kind_, name, "workers", **details))
    changes.append(create("PodStart pool record", pool["name"], None))
    capacity, warnings = _fit(p, pool["instance_type"], int(pool["workers"]), int(pool["gpus_per_worker"]),
                              f"{pool['workers']} worker(s)")
    return Draft(changes=_skip(changes, p.skip_steps), capacity=capacity, warnings=warnings)


def _relabel(p: PlanInput, assign: bool) -> Draft:
    r = p.request
    pool, endpoint = r["pool"], r["endpoint"]
    src, dst = (im.UNASSIGNED, endpoint) if assign else (endpoint, im.UNASSIGNED)
    chosen, need = im.pick_workers(p.facts.get("pods") or [], r.get("workers"), [])
    changes: list[Change] = [update("Kubernetes Pod", pod, "labels", namespace=im.NAMESPACE,
                                    label={"key": im.MODEL_LABEL, "from": src, "to": dst}) for pod in chosen]
    warnings: list[str] = []
    if assign and len(chosen) < need:
        warnings.append(f"pool {pool} has {len(chosen)} unassigned workers; {need} asked: the labels step fails "
                        f"(NotEnoughWorkers) unless workers are released first")
    elif not chosen:
        changes.append(none("Kubernetes Pod", f"{pool} workers of {endpoint}", "labels",
                            note=f"no worker is labelled {im.MODEL_LABEL}={src}"))
    verb = f"serve {endpoint} in seconds (no new pods)" if assign else "return to the pool, unassigned"
    warnings.append(f"{len(chosen)} worker(s) of {pool} {verb}")
    return Draft(changes=_skip(changes, p.skip_steps), warnings=warnings)


def plan_pool_assign(p: PlanInput) -> Draft:
    return _relabel(p, True)


def plan_pool_release(p: PlanInput) -> Draft:
    return _relabel(p, False)


def _skip(changes: list[Change], done: frozenset[str]) -> list[Change]:
    return [c.model_copy(update={"action": "none"}) if c.step in done else c for c in changes]


def _identity_changes(r: dict[str, Any], f: dict[str, Any]) -> list[Change]:
    """The identity step: role (models/* of the bucket), ServiceAccount, Pod Identity association, script ConfigMap;
    per cluster, kept after the download for the next one."""
    step, sa = "identity", f"{im.NAMESPACE}/{im.DOWNLOADER}"
    policy = f"s3 Get/PutObject on {r['bucket']}/models/*, ListBucket prefix models/*"
    out = [none(ROLE, f["role"], step, note="in place (its policy is put back if it drifted)") if f.get("linked")
           else create(ROLE, f["role"], step, trust="pods.eks.amazonaws.com", policy=policy),
           none("Kubernetes ServiceAccount", im.DOWNLOADER, step, namespace=im.NAMESPACE) if f.get("service_account")
           else create("Kubernetes ServiceAccount", im.DOWNLOADER, step, namespace=im.NAMESPACE),
           none(ASSOCIATION, sa, step) if f.get("linked") else create(ASSOCIATION, sa, step, role=f["role"])]
    cm = ("Kubernetes ConfigMap", im.DOWNLOADER, step)
    out.append(none(*cm, namespace=im.NAMESPACE) if f.get("script_current")
               else create(*cm, namespace=im.NAMESPACE, holds="the downloader script (constant)"))
    return out


ROLE = "AWS::IAM::Role"
ASSOCIATION = "AWS::EKS::PodIdentityAssociation"


def plan_model_download(p: PlanInput) -> Draft:
    """The downloader's identity, then the download Job (none when an earlier Job completed and `_COMPLETE` and
    all its files are in the bucket) and the S3 prefix it writes; no capacity of its own (a small CPU pod on
    existing nodes): zero cost."""
    r, f = p.request, p.facts
    job, present = f.get("job"), int(f.get("files_in_bucket") or 0)
    target = f"s3://{r['bucket']}/{r['prefix']}"
    changes = _identity_changes(r, f)
    manifest = f.get("manifest")
    if im.job_finished(job) == "Complete" and im.download_present(manifest, bool(f.get("complete")), present):
        counts = im.download_counts(manifest)
        return Draft(changes=[*changes,
            none("Kubernetes Job", r["job_name"], "download", namespace=im.NAMESPACE,
                 reason=f"all {counts.get('files_total')} files are there already"),
            none("S3 prefix", target, "download", files=present)])
    if im.job_finished(job):
        changes.append(delete("Kubernetes Job", r["job_name"], "download", namespace=im.NAMESPACE,
                              reason=f"an earlier download Job ({im.job_finished(job)}) makes way for the retry"))
    elif job is not None:
        return Draft(changes=[*changes, none("Kubernetes Job", r["job_name"], "download", namespace=im.NAMESPACE,
                                             reason="a download of this model is running: the operation watches it"),
                              update("S3 prefix", target, "download", files_there=present)])
    changes.append(create("Kubernetes Job", r["job_name"], "download", namespace=im.NAMESPACE, image=r["image"],
                          model_id=r["model_id"], revision=r["revision"], token_secret=r.get("token_secret"),
                          service_account=im.DOWNLOADER))
    changes.append(update("S3 prefix", target, "download", files_there=present,
                          reason="writes the files not there yet, _podstart_manifest.json and _COMPLETE "
                                 "(a retry resumes)"))
    return Draft(changes=changes)
