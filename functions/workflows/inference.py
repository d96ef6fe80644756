"""Inference workflows: endpoint.deploy / endpoint.update / endpoint.delete, pool.create / pool.assign /
pool.release, model.download. Each step applies once, records what it made, and watches to a terminal
state (the operator's CR state, the Deployment's ready pods, the Job's conditions)."""

from __future__ import annotations

import json
from typing import Any

from functions.adapters.kube import KubeCluster
from functions.assets import download_script, gate_script, pool_worker_script
from functions.domain import iam as iamdoc
from functions.domain.capacity import placement
from functions.domain.errors import PermanentStepError
from functions.domain.features.document import ServiceAccountRef
from functions.domain.inference import manifests as im
from functions.domain.inference.record import EndpointRecords, EndpointStatus, PoolRecord, PoolRecords
from functions.domain.operations import Operation, OperationStatus
from functions.domain.ports import StateStore
from functions.domain.storage.data import DataMap
from functions.domain.workflow import Done, Outcome, Skip, Wait
from functions.workflows.context import StepContext, Workflow

PULL_ERRORS = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName")
READY_SECONDS = 300.0  # pulling a serving image and loading weights: minutes
KEDA_VERSION = "2.17.1"


def kube(ctx: StepContext) -> KubeCluster:
    return KubeCluster.for_eks(ctx.request["eks_cluster_name"], ctx.region)


def _bucket(ctx: StepContext) -> str:
    return ctx.settings.data_bucket or "podstart-data"


def objects(ctx: StepContext, req: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The endpoint's objects; its model's registered volume (admission found it) when the model is on one."""
    req = req or ctx.request["endpoint"]
    raw = ctx.request.get("data")
    return im.endpoint_objects(req, region=ctx.region, bucket=_bucket(ctx), tls_bucket=_bucket(ctx),
                               gate_script=gate_script() if req.get("api_key_secret") else "",
                               where=DataMap.model_validate(raw) if raw else None)


# ------------------------------------------------------------------------------------ endpoint.deploy

def inference_operator(ctx: StepContext) -> Outcome:
    """Managed: the HyperPod inference operator must serve its kinds before a CR is applied."""
    req = ctx.request["endpoint"]
    if req["mode"] != "managed":
        return Skip(message="self-managed: no operator needed")
    k = kube(ctx)
    kind = "JumpStartModel" if req["model"]["source"] == "jumpstart" else "InferenceEndpointConfig"
    if k.has_kind(im.INFERENCE_API, kind):
        if ctx.outputs.get("enabled_feature") == "inference_operator":  # an earlier poll of this step enabled it
            return Done(message=f"enabled inference_operator for this endpoint; the operator serves {kind}",
                        outputs={"enabled_feature": "inference_operator"})
        return Done(message=f"inference operator serves {kind}")
    from functions.workflows.features import ensure_feature  # prerequisites first, each watched to ACTIVE

    ctx.record(enabled_feature="inference_operator")
    out = ensure_feature(ctx, ctx.request["cluster"], "inference_operator")
    if isinstance(out, Done) and not k.has_kind(im.INFERENCE_API, kind):
        return Wait(message=f"{out.message}; waiting for the API server to serve {kind}", expected_seconds=30)
    if isinstance(out, Done):
        return Done(message=f"enabled inference_operator for this endpoint: {out.message}; the operator serves {kind}",
                    outputs={"enabled_feature": "inference_operator"})
    return out


def keda(ctx: StepContext) -> Outcome:
    """KEDA once per cluster, pinned; an existing installation is kept as it is."""
    req = ctx.request["endpoint"]
    if not (req.get("autoscaling") or {}).get("keda"):
        return Skip(message="no KEDA autoscaling asked")
    k = kube(ctx)
    if k.has_kind(im.KEDA_API, "ScaledObject"):
        return Done(message="KEDA already installed: kept as it is", outputs={"keda": "existing"})
    from functions.assets import keda as keda_assets

    for m in keda_assets.install_objects():
        k.apply(m)
    ctx.record(keda=KEDA_VERSION)
    if not k.has_kind(im.KEDA_API, "ScaledObject"):
        return Wait(message="waiting for the ScaledObject kind to be served", expected_seconds=20)
    return Done(message=f"installed KEDA {KEDA_VERSION}", outputs={"keda": KEDA_VERSION})


def apply_objects(ctx: StepContext) -> Outcome:
    k = kube(ctx)
    objs = objects(ctx)
    for m in objs:
        k.apply(m)
    refs = im.object_refs(objs)
    ctx.record(objects=refs)
    return Done(message="applied " + ", ".join(f"{r['kind']}/{r['name']}" for r in refs), outputs={"objects": refs})


def _pods(k: KubeCluster, selector: str) -> list[dict[str, Any]]:
    return k.list("v1", "Pod", im.NAMESPACE, selector)


def pull_failure(pods: list[dict[str, Any]]) -> str | None:
    for p in pods:
        for cs in (p.get("status") or {}).get("container_statuses") or (p.get("status") or {}).get(
                "containerStatuses") or []:
            waiting = (cs.get("state") or {}).get("waiting") or {}
            if waiting.get("reason") in PULL_ERRORS:
                return f"pod {p['metadata']['name']}: {waiting['reason']}: {waiting.get('message') or cs.get('image')}"
    return None


def ready_pods(pods: list[dict[str, Any]]) -> int:
    n = 0
    for p in pods:
        st = p.get("status") or {}
        if st.get("phase") == "Running" and any(c.get("type") == "Ready" and c.get("status") == "True"
                                                for c in st.get("conditions") or []):
            n += 1
    return n


def pending_reason(pods: list[dict[str, Any]]) -> str | None:
    return placement.unscheduled(pods)


def managed_state(cr: dict[str, Any] | None) -> tuple[str, str]:
    """(state, message) of an InferenceEndpointConfig/JumpStartModel."""
    st = (cr or {}).get("status") or {}
    msg = next((c.get("message") for c in reversed(st.get("conditions") or []) if c.get("message")), "") or ""
    return str(st.get("state") or "DeploymentPending"), msg


def ready(ctx: StepContext) -> Outcome:
    req = ctx.request["endpoint"]
    name, k = req["name"], kube(ctx)
    if req["mode"] == "managed":
        kind = "JumpStartModel" if req["model"]["source"] == "jumpstart" else "InferenceEndpointConfig"
        state, msg = managed_state(k.get(im.INFERENCE_API, kind, name, im.NAMESPACE))
        if state == "DeploymentFailed":
            raise PermanentStepError("DeploymentFailed", f"{kind}/{name}: {msg or 'the operator reports failure'}")
        if state != "DeploymentComplete":
            return Wait(message=f"{kind}/{name} {state}" + (f": {msg}" if msg else ""), expected_seconds=READY_SECONDS)
        return Done(message=f"{kind}/{name} DeploymentComplete", outputs={"state": state})
    if req.get("service") == "model_pool":
        return Done(message=f"Service {name} routes to pool {req['pool']} workers labelled {im.MODEL_LABEL}={name}; "
                            f"assign workers with POST .../pools/{req['pool']}/assign")
    pods = _pods(k, f"{im.ENDPOINT_LABEL}={name},{im.ROLE_LABEL}=worker")
    failure = pull_failure(pods)
    if failure:
        raise PermanentStepError("ImagePullFailed", failure)
    want, n = int(req.get("replicas", 1)), ready_pods(pods)
    if (req.get("autoscaling") or {}).get("keda"):
        want = max(1, int(req["autoscaling"]["keda"].get("min", 1)))
    if n < want:
        why = pending_reason(pods)
        if why and "Insufficient" in why:
            # No node has the GPUs now: the Deployment stays and its pods run once GPUs free up (or the group grows).
            # The deploy ends here rather than hold the cluster (other operations, such as deleting the endpoint
            # that holds the GPUs, wait for a running one); the endpoint's status says why it waits.
            return Done(message=f"{n}/{want} workers ready; waiting for capacity: {why}",
                        outputs={"ready_replicas": n, "waiting": why})
        return Wait(message=f"{n}/{want} workers ready" + (f"; {why}" if why else ""), expected_seconds=READY_SECONDS)
    if (req.get("router") or {}).get("enabled"):
        routers = _pods(k, f"{im.ENDPOINT_LABEL}={name},{im.ROLE_LABEL}=router")
        if not ready_pods(routers):
            return Wait(message=f"{n}/{want} workers ready; router starting", expected_seconds=60)
    url = endpoint_url(k, req)
    if url is None:  # an external endpoint answers once its Network Load Balancer exists
        return Wait(message=f"{n}/{want} workers ready; waiting for the load balancer's address",
                    expected_seconds=NLB_SECONDS)
    return Done(message=f"{n}/{want} workers ready at {url}", outputs={"ready_replicas": n, "url": url})


NLB_SECONDS = 150.0


def endpoint_url(k: KubeCluster, req: dict[str, Any]) -> str | None:
    """Where the endpoint answers: its Service's in-cluster name, or (external) the NLB's DNS name the AWS Load
    Balancer Controller writes in the Service's status (None until then)."""
    svc_name = im.service_name(req["name"])
    port = "" if im.SERVICE_PORT == 80 else f":{im.SERVICE_PORT}"
    if req.get("service") != "external":
        return f"http://{svc_name}.{im.NAMESPACE}.svc.cluster.local{port}"
    svc = k.get("v1", "Service", svc_name, im.NAMESPACE) or {}
    ingress = ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    host = next((i.get("hostname") or i.get("ip") for i in ingress if i.get("hostname") or i.get("ip")), None)
    return f"http://{host}{port}" if host else None


def deploy_status(op: Operation, state: StateStore) -> None:
    if op.status not in (OperationStatus.SUCCEEDED, OperationStatus.FAILED):
        return
    req = op.request
    failed = op.status is OperationStatus.FAILED
    msg = next((s.error.get("message") if isinstance(s.error, dict) else None
                for s in op.steps if s.error), None) if failed else None
    EndpointRecords(state).update(req["region"], req["cluster"], req["endpoint"]["name"],
                                  status=EndpointStatus.FAILED if failed else EndpointStatus.READY, message=msg,
                                  objects=op.outputs().get("objects") or [], operation_id=op.id)


# ------------------------------------------------------------------------------------ endpoint.update

def scale(ctx: StepContext) -> Outcome:
    req, change = ctx.request["endpoint"], ctx.request["change"]
    name, k = req["name"], kube(ctx)
    if not ctx.outputs.get("patched"):
        if req["mode"] == "managed":
            kind = "JumpStartModel" if req["model"]["source"] == "jumpstart" else "InferenceEndpointConfig"
            spec: dict[str, Any] = {}
            if "replicas" in change:
                spec["replicas"] = change["replicas"]
            auto = {k2: v for k2, v in (("minReplicaCount", change.get("autoscaling_min")),
                                        ("maxReplicaCount", change.get("autoscaling_max"))) if v is not None}
            if auto:
                spec["autoScalingSpec"] = auto
            if k.patch(im.INFERENCE_API, kind, name, im.NAMESPACE, {"spec": spec}) is None:
                raise PermanentStepError("EndpointGone", f"{kind}/{name} no longer exists")
        else:
            if "replicas" in change and k.patch("apps/v1", "Deployment", im.worker_name(name), im.NAMESPACE,
                                                {"spec": {"replicas": change["replicas"]}}) is None:
                raise PermanentStepError("EndpointGone", f"Deployment/{name} no longer exists")
            auto = {k2: v for k2, v in (("minReplicaCount", change.get("autoscaling_min")),
                                        ("maxReplicaCount", change.get("autoscaling_max"))) if v is not None}
            if auto:
                k.patch(im.KEDA_API, "ScaledObject", f"{name}-workers", im.NAMESPACE, {"spec": auto})
        ctx.record(patched=True)
    if "replicas" not in change:
        return Done(message="autoscaling bounds set")
    return ready(_with(ctx, {**req, "replicas": change["replicas"]}))


def _with(ctx: StepContext, endpoint: dict[str, Any]) -> StepContext:
    op = ctx.operation.model_copy(update={"request": {**ctx.request, "endpoint": endpoint}})
    return StepContext(operation=op, step=ctx.step, settings=ctx.settings, clients=ctx.clients, state=ctx.state,
                       made=ctx.made)


def update_status(op: Operation, state: StateStore) -> None:
    if op.status is not OperationStatus.SUCCEEDED:
        return
    req = op.request
    records = EndpointRecords(state)
    rec = records.load(req["region"], req["cluster"], req["endpoint"]["name"])
    if rec is None:
        return
    change, body = req["change"], dict(rec.request)
    if "replicas" in change:
        body["replicas"] = change["replicas"]
    if change.get("autoscaling_min") is not None or change.get("autoscaling_max") is not None:
        auto = dict(body.get("autoscaling") or {})
        target: dict[str, Any] = dict(auto["keda"] if auto.get("keda") is not None else auto)
        for src, dst in (("autoscaling_min", "min"), ("autoscaling_max", "max")):
            if change.get(src) is not None:
                target[dst] = change[src]
        auto = {**auto, "keda": target} if auto.get("keda") is not None else target
        body["autoscaling"] = auto
    records.save(rec.model_copy(update={"request": body, "status": EndpointStatus.READY, "operation_id": op.id}))


# ------------------------------------------------------------------------------------ endpoint.delete

def delete_objects(ctx: StepContext) -> Outcome:
    req, k = ctx.request["endpoint"], kube(ctx)
    objs = list(reversed(objects(ctx)))
    for m in objs:
        meta = m["metadata"]
        k.delete(m["apiVersion"], m["kind"], meta["name"], meta.get("namespace"))
    if req["mode"] != "managed":
        pods = [p for p in _pods(k, f"{im.ENDPOINT_LABEL}={req['name']}")
                if not p["metadata"].get("deletion_timestamp") and not p["metadata"].get("deletionTimestamp")]
        if pods:
            return Wait(message=f"{len(pods)} pods terminating", expected_seconds=30)
    return Done(message="deleted " + ", ".join(f"{m['kind']}/{m['metadata']['name']}" for m in objs))


def delete_status(op: Operation, state: StateStore) -> None:
    req = op.request
    records = EndpointRecords(state)
    if op.status is OperationStatus.SUCCEEDED:
        records.delete(req["region"], req["cluster"], req["endpoint"]["name"])
    elif op.status is OperationStatus.FAILED:
        records.update(req["region"], req["cluster"], req["endpoint"]["name"], status=EndpointStatus.FAILED,
                       message="delete failed: see operation " + op.id, operation_id=op.id)


# ------------------------------------------------------------------------------------------- pools

def pool_workers(ctx: StepContext) -> Outcome:
    pool, k = ctx.request["pool"], kube(ctx)
    if not ctx.outputs.get("applied"):
        for m in im.pool_objects(pool, pool_worker_script()):
            k.apply(m)
        ctx.record(applied=True, objects=im.object_refs(im.pool_objects(pool, "")))
    pods = _pods(k, f"{im.POOL_LABEL}={pool['name']}")
    failure = pull_failure(pods)
    if failure:
        raise PermanentStepError("ImagePullFailed", failure)
    n, want = ready_pods(pods), int(pool["workers"])
    if n < want:
        why = pending_reason(pods)
        return Wait(message=f"{n}/{want} pool workers warm" + (f"; {why}" if why else ""), expected_seconds=120)
    return Done(message=f"{n}/{want} pool workers warm",
                outputs={"objects": im.object_refs(im.pool_objects(pool, ""))})


def pool_create_status(op: Operation, state: StateStore) -> None:
    if op.status is OperationStatus.FAILED:
        req = op.request
        PoolRecords(state).delete(req["region"], req["cluster"], req["pool"]["name"])


def relabel(ctx: StepContext) -> Outcome:
    """Bind (or release) pool workers to an endpoint by changing their model label: seconds, no new deployment."""
    r, k = ctx.request, kube(ctx)
    pool, endpoint, n = r["pool"], r["endpoint"], r.get("workers")
    assign = ctx.operation.kind == "pool.assign"
    src = im.UNASSIGNED if assign else endpoint
    dst = endpoint if assign else im.UNASSIGNED
    done = ctx.outputs.get("moved") or []
    chosen, need = im.pick_workers(_pods(k, f"{im.POOL_LABEL}={pool},{im.MODEL_LABEL}={src}"), n, done)
    if assign and len(chosen) < need:
        raise PermanentStepError("NotEnoughWorkers", f"pool {pool} has {len(chosen)} unassigned workers; "
                                                     f"{need} asked")
    moved = list(done)
    # the worker's supervisor starts the engine on these (and stops it when release removes them)
    assigned = im.assigned_model(r.get("model") or {}) if assign else {}
    for pod in chosen:
        ann: dict[str, str | None] = {im.MODEL_PATH_ANNOTATION: assigned.get(im.MODEL_PATH_ANNOTATION),
                                      im.MODEL_NAME_ANNOTATION: assigned.get(im.MODEL_NAME_ANNOTATION)}
        k.patch("v1", "Pod", pod, im.NAMESPACE, {"metadata": {"labels": {im.MODEL_LABEL: dst}, "annotations": ann}})
        moved.append(pod)
        ctx.record(moved=moved)
    verb = f"bound to {endpoint}" if assign else "returned to the pool"
    return Done(message=f"{len(moved)} workers of {pool} {verb}", outputs={"moved": moved})


# ---------------------------------------------------------------------------------------- download
# The downloader's ServiceAccount, role (models/* of the data bucket only), its Pod Identity association and the
# script's ConfigMap are per cluster, shared by every download of it: kept when a download ends (the next one
# reuses them) and removed with the cluster (cluster.delete deletes the EKS cluster, its associations and the
# podstart-<cluster>-* roles).

def downloader_role(ctx: StepContext) -> str:
    return iamdoc.role_name(ctx.request["cluster"], ctx.region, "models")


def identity(ctx: StepContext) -> Outcome:
    """The download Job's identity: a role that may write only models/* of the shared bucket, the ServiceAccount
    the Job runs as, the EKS Pod Identity association between them, and the script's ConfigMap. Idempotent."""
    from functions.workflows import aws_ensure as ens
    from functions.workflows.features import _ensure_pod_identity, names_for

    r, k = ctx.request, kube(ctx)
    bucket = r.get("bucket") or _bucket(ctx)
    n = names_for(ctx, r["cluster"])
    role = downloader_role(ctx)
    trust = iamdoc.trust("pods.eks.amazonaws.com", tag_session=True)
    policy = {"model-download": iamdoc.model_download_policy(ctx.region, bucket)}
    role_arn = ens.ensure_role(ctx.aws("iam", ctx.region), role, trust, [], policy, n.cluster,
                               boundary=ctx.settings.permissions_boundary_arn)
    ctx.record(role_arn=role_arn)
    k.apply(im.downloader_service_account())
    association = _ensure_pod_identity(ctx, n, ServiceAccountRef(im.NAMESPACE, im.DOWNLOADER), role_arn)
    k.apply(im.download_script_configmap(download_script()))
    return Done(message=f"{im.NAMESPACE}/{im.DOWNLOADER} runs as {role} (models/* of {bucket} only)",
                outputs={"role": role, "association_id": association, "service_account": im.DOWNLOADER})


def _manifest(ctx: StepContext, bucket: str, prefix: str) -> dict[str, Any] | None:
    from botocore.exceptions import ClientError

    try:
        body = ctx.aws("s3").get_object(Bucket=bucket, Key=prefix + im.MANIFEST)["Body"].read()
    except ClientError as err:
        if err.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
            return None
        raise
    try:
        out = json.loads(body)
    except ValueError:
        return None
    return out if isinstance(out, dict) else None


def _bucket_state(ctx: StepContext, bucket: str, prefix: str) -> tuple[int, bool]:
    """(files under the prefix without the markers, whether `_COMPLETE` is there): one ListObjectsV2 page."""
    out = ctx.aws("s3").list_objects_v2(Bucket=bucket, Prefix=prefix, MaxKeys=1000)
    names = [o["Key"][len(prefix):] for o in out.get("Contents") or []]
    return len([x for x in names if x not in im.MARKERS]), im.COMPLETE in names


def _failure(k: KubeCluster, name: str) -> str:
    pods = k.list("v1", "Pod", im.NAMESPACE, label_selector=f"job-name={name}")
    why = im.pod_failure(pods) or ""
    latest = sorted(pods, key=lambda p: str(p["metadata"].get("creationTimestamp") or ""))[-1:] if pods else []
    tail = k.logs(latest[0]["metadata"]["name"], im.NAMESPACE, tail_lines=5) if latest else ""
    lines = [x for x in tail.strip().splitlines() if x and x.strip() not in why][-5:]
    return "; ".join([x for x in (why, *lines) if x]) or "failed"


def download(ctx: StepContext) -> Outcome:
    """Apply the download Job once and watch it, progress read from the bucket (the script's manifest); a
    finished Job of an earlier download is kept when `_COMPLETE` and all files are there (nothing to do), else
    removed so a new Job resumes (the script skips the files already there)."""
    r, k = ctx.request, kube(ctx)
    name, bucket, prefix = r["job_name"], r.get("bucket") or _bucket(ctx), r["prefix"]
    job = k.get("batch/v1", "Job", name, im.NAMESPACE)
    attempt = ctx.operation.attempt
    # the Job this attempt made or adopted; on a retry (a new attempt) the failed attempt's Job is an earlier one
    mine = ctx.outputs.get("job_uid") if ctx.outputs.get("job_attempt", attempt) == attempt else None
    uid = ((job or {}).get("metadata") or {}).get("uid")
    if job is not None and mine is None:  # a Job of an earlier download of this (model, revision)
        finished = im.job_finished(job)
        files, complete = _bucket_state(ctx, bucket, prefix)
        manifest = _manifest(ctx, bucket, prefix)
        if finished == "Complete" and im.download_present(manifest, complete, files):
            return Done(message=f"all files already in s3://{bucket}/{prefix}: nothing to download",
                        outputs={"job_name": name, **im.download_counts(manifest)})
        if finished:
            k.delete("batch/v1", "Job", name, im.NAMESPACE)
            return Wait(message=f"earlier Job {name} ({finished}) removed: a new one resumes", expected_seconds=5)
        ctx.record(job_name=name, job_uid=uid, job_attempt=attempt)  # running already: watch it
        mine = uid
    if job is None:
        made = k.apply(im.download_job(name=name, model_id=r["model_id"], revision=r["revision"], bucket=bucket,
                                       prefix=prefix, region=ctx.region, token_secret=r.get("token_secret"),
                                       image=r["image"]))
        made_uid = (made.get("metadata") or {}).get("uid")
        ctx.record(job_name=name, job_uid=made_uid, job_attempt=attempt)
        return Wait(message=f"Job {name} started", expected_seconds=60,
                    outputs={"job_name": name, "job_uid": made_uid, "job_attempt": attempt})
    if uid != mine:
        return Wait(message=f"Job {name}: an earlier Job is still going away", expected_seconds=5)
    manifest = _manifest(ctx, bucket, prefix)
    counts = im.download_counts(manifest)
    progress = _progress(counts)
    finished = im.job_finished(job)
    if finished == "Failed":
        raise PermanentStepError("DownloadFailed", f"Job {name}: {_failure(k, name)} ({progress})")
    if finished == "Complete":
        files, complete = _bucket_state(ctx, bucket, prefix)
        if not im.download_present(manifest, complete, files):
            raise PermanentStepError("DownloadIncomplete", f"Job {name} completed but s3://{bucket}/{prefix} has "
                                                           f"{files} files and no {im.COMPLETE} marker ({progress})")
        return Done(message=f"Job {name} complete: {progress}", outputs={"job_name": name, **counts})
    stuck = im.pod_failure(k.list("v1", "Pod", im.NAMESPACE, label_selector=f"job-name={name}"))
    if stuck and stuck.startswith("CreateContainerConfigError"):  # the token Secret went away: it never starts
        raise PermanentStepError("DownloadFailed", f"Job {name}: {stuck}")
    return Wait(message=f"Job {name} running: {progress}", expected_seconds=60, outputs={"job_name": name, **counts})


def _progress(c: dict[str, int]) -> str:
    if not c:
        return "starting"
    return (f"{c.get('files_done', 0)}/{c.get('files_total', '?')} files, {c.get('bytes_done', 0)}/"
            f"{c.get('bytes_total', '?')} bytes" + (f", {c['files_skipped']} already there"
                                                    if c.get("files_skipped") else ""))


DEPLOY = Workflow(kind="endpoint.deploy", steps={"inference_operator": inference_operator, "keda": keda,
                                                 "objects": apply_objects, "ready": ready},
                  on_status=deploy_status)
UPDATE = Workflow(kind="endpoint.update", steps={"scale": scale}, on_status=update_status)
DELETE = Workflow(kind="endpoint.delete", steps={"objects": delete_objects}, on_status=delete_status)
POOL_CREATE = Workflow(kind="pool.create", steps={"workers": pool_workers}, on_status=pool_create_status)
POOL_ASSIGN = Workflow(kind="pool.assign", steps={"labels": relabel})
POOL_RELEASE = Workflow(kind="pool.release", steps={"labels": relabel})
DOWNLOAD = Workflow(kind="model.download", steps={"identity": identity, "download": download})

_ = PoolRecord  # records written by the API (admission), read here
