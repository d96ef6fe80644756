"""Training jobs: submit (admission: recipe parameters, elastic exclusions, GPU arithmetic, name taken),
list, inspect, delete, bounded logs, and write-only secrets."""

from __future__ import annotations

import base64
from typing import Any

from functions.domain.clusters.record import ClusterRecord
from functions.domain.errors import Conflict, InvalidInput, NotFound
from functions.domain.features import kuberay
from functions.domain.manifests import DATA_VOLUME
from functions.domain.operations import Actor, Operation, Target
from functions.domain.plans import Change, Plan
from functions.domain.ports import ClusterKube
from functions.domain.training import manifests as job_manifests
from functions.domain.training import mlflow as mlf
from functions.domain.training import recipes
from functions.domain.training import rules as training
from functions.domain.training import status as job_status
from functions.logic import live_reads
from functions.logic.clusters.group_add import require_active
from functions.logic.clusters.views import find_record
from functions.logic.deps import Deps
from functions.logic.namespaces import podstart_secrets, require_managed, require_podstart_secrets
from functions.logic.plans import Started, start_or_plan
from functions.logic.storage import data as data_logic

KINDS = {"pytorch": training.API_VERSIONS["pytorch"], "ray": training.API_VERSIONS["ray"]}


def job_target(rec: ClusterRecord, namespace: str, name: str) -> Target:
    return Target(cluster=rec.name, region=rec.region, resource=f"jobs/{namespace}/{name}")


def capacity(deps: Deps, rec: ClusterRecord) -> list[training.GroupCapacity]:
    """The cluster's groups with GPUs per instance (from the instance-type catalog of each group's zone)."""
    out = []
    for g in rec.instance_groups:
        info = deps.reader.offered(rec.region, g.availability_zone).get(g.instance_type)
        acc = getattr(info, "accelerator", None)
        gpus = acc.count if acc is not None and acc.kind == "gpu" else 0
        count = g.current_count if g.current_count is not None else g.instance_count
        out.append(training.GroupCapacity(name=g.name, instance_type=g.instance_type, instances=count,
                                          gpus_per_instance=gpus))
    return out


def _tiered_checkpointing(hp: dict[str, Any] | None) -> bool:
    return str(((hp or {}).get("TieredStorageConfig") or {}).get("Mode", "")).lower() == "enable"


def _submit_facts(deps: Deps, rec: ClusterRecord, body: training.JobSubmit, kind: str,
                  inputs: list[dict[str, Any]]) -> dict[str, Any]:
    """What a dry run reads to plan the steps: does the API server serve the job's kind (the operator step's
    check), the namespace's data volume (the submit step's), the free GPUs (the validate step's count), and each
    input as admission found it."""
    kube = _kube(deps, rec)
    api_version, k8s_kind, _, _ = training.OPERATORS[kind]
    pvc = kube.get(f"/api/v1/namespaces/{body.namespace}/persistentvolumeclaims/{DATA_VOLUME}") is not None
    served = live_reads.serves(kube, api_version, k8s_kind)
    if served and kind == "ray":  # the ray.io CRDs outlive a disabled KubeRay operator: its Deployment must exist
        served = kube.get(f"/apis/apps/v1/namespaces/{kuberay.NAMESPACE}/deployments/{kuberay.NAME}") is not None
    return {"operator_served": served, "data_volume_exists": pvc, "bucket": live_reads.bucket(deps), "inputs": inputs,
            **live_reads.gpu_facts(kube, body.instance_type, body.elastic.min_nodes if body.elastic else body.nodes,
                                   body.gpus_per_node, one_per_node=True),
            "feature_inputs": None if served else live_reads.feature_inputs(deps, rec),
            **(_mlflow_facts(deps, rec, body) if body.mlflow else {})}


def _mlflow_facts(deps: Deps, rec: ClusterRecord, body: training.JobSubmit) -> dict[str, Any]:
    """What the mlflow_access step will find: a Pod Identity association of the job's ServiceAccount (an earlier
    job of that name left it) and whether the Pod Identity agent runs (a Ray job's step enables it)."""
    inputs = live_reads.feature_inputs(deps, rec)
    sa = mlf.service_account(body.name)
    assoc = getattr(inputs, "associations", None) or {}
    addons = getattr(inputs, "addons", None) or {}
    return {"mlflow_association": (body.namespace, sa) in assoc,
            "pod_identity_agent": "eks-pod-identity-agent" in addons,
            "feature_inputs": inputs}


MLFLOW_LOC = ("body", "mlflow", "tracking_server_arn")


def check_mlflow(deps: Deps, region: str, spec: mlf.MlflowSpec) -> dict[str, Any]:
    """The tracking server must be in the cluster's region (422 naming the field), exist in this account (422)
    and answer clients now (409 saying its status and what to do). Returns its description."""
    server_region, account, name = mlf.parts(spec.tracking_server_arn)
    if server_region != region:
        raise InvalidInput.field(MLFLOW_LOC, f"the tracking server is in {server_region}; the cluster is in "
                                             f"{region}: choose one in {region} (GET /v1/catalog/mlflow-tracking-"
                                             f"servers?region={region})")
    if deps.mlflow is None:
        raise InvalidInput.field(MLFLOW_LOC, "MLflow tracking servers cannot be read here")
    desc = deps.mlflow.describe(region, name)
    if desc is None or desc.get("TrackingServerArn") != spec.tracking_server_arn:
        raise InvalidInput.field(MLFLOW_LOC, f"no MLflow tracking server {name} in {region} of account {account} "
                                             f"(GET /v1/catalog/mlflow-tracking-servers?region={region})")
    why = mlf.refusal(desc)
    if why:
        raise Conflict(why)
    return desc


def submit_job(deps: Deps, cluster: str, region: str | None, body: training.JobSubmit, actor: Actor,
               key: str | None, dry_run: bool = False) -> Started | Plan:
    rec = find_record(deps, cluster, region)
    params = recipes.parse_parameters(body.recipe, body.recipe_version, body.parameters)
    r = recipes.RECIPES[(body.recipe, body.recipe_version)]
    kind = r.kind
    require_active(rec)
    kube = _kube(deps, rec)
    require_managed(kube, body.namespace, ["body", "namespace"])
    if body.elastic:
        types = {g.capacity_type for g in rec.instance_groups if g.instance_type == body.instance_type}
        hp = deps.reader.describe_hyperpod(rec.region, rec.hyperpod_cluster_name or rec.name)
        why = training.elastic_refusal(body, types, _tiered_checkpointing(hp))
        if why:
            raise InvalidInput.field(["body", "elastic"], why)
    why = training.gpu_refusal(body, capacity(deps, rec))
    if why:
        raise InvalidInput.field(["body", "gpus_per_node" if body.gpus_per_node else "nodes"], why)
    if body.mlflow is not None:
        check_mlflow(deps, rec.region, body.mlflow)
    require_podstart_secrets(kube, body.namespace, [(s, ["body", "secrets", i]) for i, s in enumerate(body.secrets)])
    # Every path it names: on a bucket PodStart may read, through a volume mounted in its namespace, and there
    where, parsed = data_logic.resolve(deps, rec, body.namespace, data_logic.job_needs(params, body.output),
                                       one_identity=body.mlflow is None)
    inputs = data_logic.check_exists(deps, rec, parsed, params)
    api_version, k8s_kind = KINDS[kind]
    target = job_target(rec, body.namespace, body.name)
    request = {"cluster": rec.name, "region": rec.region, "eks_cluster": rec.eks_cluster_name, "kind": kind,
               "job": body.model_dump(mode="json", exclude_none=True), "data": where.model_dump(mode="json")}
    job_manifests.render(body, params, where)  # renders, or raises: nothing starts for a job that cannot be rendered

    class _Admission:
        def normalize(self) -> dict[str, Any]:
            if _kube(deps, rec).get(_path(api_version, k8s_kind, body.namespace, body.name)) is not None:
                raise Conflict(f"a {k8s_kind} named {body.name} already exists in {body.namespace}; "
                               f"delete it first or choose another name")
            return request

        def claim(self, op: Operation) -> None:
            """Nothing to reserve: the job's name is taken on the cluster when the submit step applies it."""

        def unclaim(self, op: Operation) -> None:
            """Nothing was reserved."""

    return start_or_plan(deps, dry_run=dry_run, kind="job.submit", target=target, request=request, principal=actor,
                         idempotency_key=key, admission=_Admission(),
                         facts=_submit_facts(deps, rec, body, kind, inputs) if dry_run else None)


def _kube(deps: Deps, rec: ClusterRecord) -> ClusterKube:
    require_active(rec)  # a cluster still creating (or deleting) has no Kubernetes API to ask: 409, not a 500
    return deps.kube(rec.eks_cluster_name, rec.region)


def _path(api_version: str, kind: str, namespace: str | None = None, name: str | None = None) -> str:
    plural = {"HyperPodPyTorchJob": "hyperpodpytorchjobs", "RayJob": "rayjobs", "Pod": "pods"}[kind]
    base = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
    return base + (f"/namespaces/{namespace}" if namespace else "") + f"/{plural}" + (f"/{name}" if name else "")


def _find(deps: Deps, rec: ClusterRecord, name: str, namespace: str) -> tuple[str, dict[str, Any]]:
    kube = _kube(deps, rec)
    for kind, (api_version, k8s_kind) in KINDS.items():
        obj = kube.get(_path(api_version, k8s_kind, namespace, name))
        if obj is not None and _managed(obj):  # a job PodStart did not submit is not one of its jobs
            return kind, obj
    raise NotFound(f"no job {name!r} in namespace {namespace} of {rec.name}")


def _managed(obj: dict[str, Any]) -> bool:
    return (obj.get("metadata", {}).get("labels") or {}).get(training.LABEL_JOB) is not None


def jobs_page(deps: Deps, cluster: str, region: str | None, status: str | None, limit: int,
              token: str | None) -> job_status.JobList:
    rec = find_record(deps, cluster, region)
    kube = _kube(deps, rec)
    rows: list[job_status.JobSummary] = []
    for kind, (api_version, k8s_kind) in KINDS.items():
        for obj in kube.list(_path(api_version, k8s_kind), label_selector=training.LABEL_JOB):
            s = job_status.summary(kind, obj)
            if status is None or s.status == status:
                rows.append(s)
    rows.sort(key=lambda s: (s.created_at or "", s.namespace, s.name), reverse=True)
    start = int(token or 0)
    return job_status.JobList(items=rows[start:start + limit],
                            next_token=str(start + limit) if start + limit < len(rows) else None)


def pods_of(deps: Deps, rec: ClusterRecord, name: str, namespace: str) -> list[dict[str, Any]]:
    pods = _kube(deps, rec).list(_path("v1", "Pod", namespace), label_selector=f"{training.LABEL_JOB}={name}")
    return sorted(pods, key=lambda p: p["metadata"]["name"])


def get_job(deps: Deps, cluster: str, region: str | None, name: str, namespace: str,
            may_open_mlflow: bool = False, mlflow_link: bool = False) -> job_status.JobDetail:
    """The job as its operator reports it. A job that reports to MLflow shows its server and experiment, and when
    asked (`mlflow_link`) an operator gets a presigned link to the MLflow UI (made on this read, expiring in minutes,
    never stored): the link opens a session on the tracking server, so a viewer gets the server and experiment
    without it, and a page refreshing the job every few seconds makes no link (no SageMaker call) until a user
    opens it."""
    rec = find_record(deps, cluster, region)
    kind, obj = _find(deps, rec, name, namespace)
    out = job_status.detail(kind, obj, pods_of(deps, rec, name, namespace))
    if out.mlflow is None:
        return out
    if not may_open_mlflow:
        why = "the MLflow link is for operators: a presigned URL opens a session on the tracking server"
        return out.model_copy(update={"mlflow": out.mlflow.model_copy(update={"url_note": why})})
    if not mlflow_link:
        why = "read the job with mlflow_link=true for a presigned link to the MLflow UI"
        return out.model_copy(update={"mlflow": out.mlflow.model_copy(update={"url_note": why})})
    server_region, _, server = mlf.parts(out.mlflow.tracking_server_arn)
    url: str | None = None
    note: str | None = None
    if deps.mlflow is None:
        note = "MLflow tracking servers cannot be read here"
    else:
        desc = deps.mlflow.describe(server_region, server)
        if desc is None:
            note = f"tracking server {server} no longer exists"
        elif mlf.refusal(desc):
            note = mlf.refusal(desc)
        else:
            url = deps.mlflow.presigned_url(server_region, server)
            note = (f"expires {mlf.PRESIGNED_URL_SECONDS // 60} minutes after this read; read the job again for "
                    f"a new one")
    return out.model_copy(update={"mlflow": out.mlflow.model_copy(update={"url": url, "url_note": note})})


def job_metrics(deps: Deps, cluster: str, region: str | None, name: str, namespace: str) -> job_status.JobMetrics:
    """A job's metrics step by step: its MLflow run when it reports to MLflow (what it logged there), else the
    steps, loss and throughput its first pod's log prints (the newest lines within the log bound)."""
    rec = find_record(deps, cluster, region)
    kind, obj = _find(deps, rec, name, namespace)
    pods = pods_of(deps, rec, name, namespace)
    job = job_status.detail(kind, obj, pods)
    note: str | None = None
    if job.mlflow is not None:
        server_region, _, server = mlf.parts(job.mlflow.tracking_server_arn)
        if deps.mlflow is None:
            note = "MLflow tracking servers cannot be read here: the chart shows what the log prints"
        else:
            try:
                got = deps.mlflow.metric_history(server_region, server, job.mlflow.experiment, name)
            except Exception as err:  # the server stopped, a network error: the log still tells the steps
                got, note = None, f"MLflow could not be read ({err}): the chart shows what the log prints"
            if got and any(got[1].values()):
                run, series = got
                return job_status.JobMetrics(source="mlflow", run=run, series=[
                    job_status.MetricSeries(name=k, points=[job_status.MetricPoint(step=st, value=v)
                                                          for st, v in pts[-job_status.MAX_METRIC_POINTS:]])
                    for k, pts in sorted(series.items()) if pts])
            note = note or f"experiment {job.mlflow.experiment} has no metrics yet: the chart shows what the log prints"
    if not pods:
        return job_status.JobMetrics(source="none", note=note or "the job has no pods yet")
    pod = str(pods[0]["metadata"]["name"])
    text, _ = _kube(deps, rec).logs(namespace, pod, None, job_status.MAX_TAIL, None, job_status.MAX_LOG_BYTES)
    parsed = job_status.metrics_from_logs(text.splitlines())
    if not parsed:
        return job_status.JobMetrics(source="none", pod=pod,
                                   note=note or f"{pod}'s log prints no step with a loss or throughput yet")
    return job_status.JobMetrics(source="logs", pod=pod, note=note, series=[
        job_status.MetricSeries(name=k, points=[job_status.MetricPoint(step=st, value=v) for st, v in pts])
        for k, pts in parsed.items()])


def remove_job(deps: Deps, cluster: str, region: str | None, name: str, namespace: str, actor: Actor,
               key: str | None, dry_run: bool = False) -> Started | Plan:
    rec = find_record(deps, cluster, region)
    kind, obj = _find(deps, rec, name, namespace)
    facts = {"pods": [{"name": p["metadata"]["name"], "node": (p.get("spec") or {}).get("nodeName")}
                      for p in pods_of(deps, rec, name, namespace)]} if dry_run else None
    server = ((obj.get("metadata") or {}).get("annotations") or {}).get(mlf.ANNOTATION_SERVER)
    return start_or_plan(
        deps, dry_run=dry_run, kind="job.delete", target=job_target(rec, namespace, name),
        request={"cluster": rec.name, "region": rec.region, "eks_cluster": rec.eks_cluster_name, "kind": kind,
                 "name": name, "namespace": namespace, **({"mlflow_server": server} if server else {})},
        principal=actor, idempotency_key=key, facts=facts)


def job_pod(deps: Deps, rec: ClusterRecord, name: str, namespace: str, pod: str | None,
            where: tuple[str, ...] = ("query", "pod")) -> str:
    """The job's pod whose log is read: the one asked for (it must be the job's), else the first."""
    pods = pods_of(deps, rec, name, namespace)
    if not pods:
        _find(deps, rec, name, namespace)  # 404 for an unknown job
        raise NotFound(f"job {name} has no pods yet")
    names = [p["metadata"]["name"] for p in pods]
    if pod is None:
        return str(names[0])
    if pod not in names:
        raise InvalidInput.field(list(where), f"{pod} is not a pod of {name} (pods: {', '.join(names)})")
    return pod


def job_logs(deps: Deps, cluster: str, region: str | None, name: str, namespace: str, pod: str | None,
             container: str | None, tail: int, since_seconds: int | None, limit_bytes: int) -> job_status.JobLogs:
    rec = find_record(deps, cluster, region)
    pod = job_pod(deps, rec, name, namespace, pod)
    text, cut = _kube(deps, rec).logs(namespace, pod, container, tail, since_seconds, limit_bytes)
    out = job_status.bound_lines(text, tail, limit_bytes, cut)
    return out.model_copy(update={"pod": pod, "container": container})


def write_secret(deps: Deps, cluster: str, region: str | None, body: training.SecretCreate,
                 dry_run: bool = False) -> training.SecretWritten | Plan:
    """Server-side apply of an Opaque Secret. Write-only: not stored by PodStart, not returned, not logged.

    A dry run (no operation: the Plan is built here) reads only whether the namespace exists (the apply's 404);
    it never reads the Secret (that would fetch its values) and its plan names the keys, never a value."""
    rec = find_record(deps, cluster, region)
    require_managed(_kube(deps, rec), body.namespace, ["body", "namespace"])
    manifest = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                "metadata": {"name": body.name, "namespace": body.namespace,
                             "labels": {"app.kubernetes.io/managed-by": "podstart"}},
                # base64 `data`, as the API server stores it (a server that does not merge stringData, like an
                # older one or a double, still gives readers the values under `data`)
                "data": {k: base64.b64encode(v.encode()).decode() for k, v in body.data.items()}}
    kube = _kube(deps, rec)
    if dry_run:
        return Plan(kind="secret.write", target={"cluster": rec.name, "region": rec.region,
                                                 "resource": f"secrets/{body.namespace}/{body.name}"},
                    changes=[Change(action="create", kind="Kubernetes Secret", name=body.name,
                                    details={"namespace": body.namespace, "type": "Opaque",
                                             "keys": sorted(body.data),
                                             "apply": "server-side apply: an existing Secret of that name gets "
                                                      "these keys (its values are not read)"})],
                    warnings=["write-only: PodStart never returns or stores the values; jobs load them by name"])
    kube.apply(manifest)
    return training.SecretWritten(name=body.name, namespace=body.namespace, keys=sorted(body.data))


def secret_names(deps: Deps, cluster: str, region: str | None, namespace: str) -> training.SecretNames:
    """The Secrets' names in a namespace, read as a Table without the objects: their values never leave the
    cluster (the download and deploy forms pick a token Secret by name)."""
    rec = find_record(deps, cluster, region)
    kube = _kube(deps, rec)
    require_managed(kube, namespace, ["query", "namespace"])
    return training.SecretNames(namespace=namespace, names=sorted(podstart_secrets(kube, namespace)))
