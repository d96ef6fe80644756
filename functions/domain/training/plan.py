"""Plans for job.submit and job.delete, step by step as their workflows run.

job.submit: the operator step of the job's kind (while the API server does not serve the kind, the training
operator feature and its missing prerequisites, or the KubeRay operator feature, as the step enables them; `none`
once it is served), then every
object the submit step applies
(`job_manifests.submit_objects`, the same function the step calls: the namespace and data volume when missing, then the
rendered HyperPodPyTorchJob or RayJob). The job runs on nodes that are already there: its cost line is that
capacity, already paid. When the live GPU count (`training.live_capacity`, as the validate step counts) cannot
hold the job, a warning says the validate step will refuse it.

mlflow_access (a job with `mlflow`): the Pod Identity agent when it is off and the operator step does not enable
it, the job's IAM role with its one-statement policy (`sagemaker-mlflow:*` on the tracking server ARN) and the
Pod Identity association of its ServiceAccount; the ServiceAccount itself is the submit step's.

job.delete: the job object, and each of its pods (the operator deletes them with it); for a job that reported to
MLflow, its association, role and ServiceAccount (mlflow_access).

Facts (read by the dry run, never written): `operator_served`, `feature_inputs` (only when not served),
`namespace_exists`, `data_volume_exists`, `bucket`,
`live` (a GroupCapacity or None) for a submit; `pods` ([{name, node}]) for a delete.
"""

from __future__ import annotations

from typing import Any

from functions.domain.features.api import ASSOCIATION, ROLE, ensure_changes, kuberay
from functions.domain.plans import Capacity, Change, Draft, create, delete, none, update
from functions.domain.plans.base import PlanInput
from functions.domain.storage.api import DataMap
from functions.domain.training import manifests as job_manifests
from functions.domain.training import mlflow as mlf
from functions.domain.training import recipes
from functions.domain.training import rules as training

EXISTING = "existing nodes: already running, the job adds no cost"


def operator_changes(p: PlanInput) -> tuple[list[Change], list[str]]:
    """The operator step's lines: `none` when the API server serves the job's kind; else what ensure_feature
    enables, as PATCH .../features would (`features.ensure_changes`): the training operator with its missing
    prerequisites first, or the KubeRay operator's CRDs, RBAC and Deployment."""
    kind, cluster = p.request["kind"], p.request["cluster"]
    api_version, k8s_kind, step, addon = training.OPERATORS[kind]
    if p.facts.get("operator_served"):
        what, name = (("eks-addon", addon) if kind == "pytorch"
                      else ("Kubernetes Deployment", f"{kuberay.NAMESPACE}/{kuberay.NAME}"))
        return [none(what, name, step, serves=f"{api_version} {k8s_kind}")], []
    feature = training.FEATURES[kind]
    title = "the training operator" if kind == "pytorch" else "the KubeRay operator"
    return (ensure_changes(p, feature, step),
            [f"{cluster} does not serve {k8s_kind} yet: the {step} step enables {title} ({feature}, as PATCH "
             f".../features would; prerequisites first) and waits for it before the job is submitted"])


def mlflow_changes(p: PlanInput, job: training.JobSubmit) -> list[Change]:
    """The mlflow_access step's lines (none for a job without `mlflow`)."""
    if job.mlflow is None:
        return []
    r, f = p.request, p.facts
    step, arn = "mlflow_access", job.mlflow.tracking_server_arn
    out: list[Change] = []
    if r["kind"] != "pytorch" or f.get("operator_served"):  # else the operator step enables the agent first
        out += ensure_changes(p, "pod_identity_agent", step)
    role = mlf.role_name(r["cluster"], r["region"], job.namespace, job.name)
    sa = f"{job.namespace}/{mlf.service_account(job.name)}"
    mounts = DataMap.model_validate(r["data"]).mounts if r.get("data") else []
    out.append(create(ROLE, role, step, trust="pods.eks.amazonaws.com",
                      policy={mlf.POLICY_NAME: {"Action": "sagemaker-mlflow:*", "Resource": arn},
                              **({"PodStartData": [
                                  f"s3://{m.bucket}/{m.prefix} ({'read' if m.read_only else 'read/write'})"
                                  for m in mounts]} if mounts else {})},
                      note="put back as planned when an earlier attempt left it"))
    out.append(update(ASSOCIATION, sa, step, role=role, note="in place (an earlier job of that name): pointed at "
                                                                "this job's role if it names another")
               if f.get("mlflow_association") else create(ASSOCIATION, sa, step, role=role))
    return out


def data_paths_of(job: training.JobSubmit) -> list[str]:
    paths = recipes.data_paths(job.name, job.output)
    return [paths.outputs, paths.checkpoints]


def plan_job_submit(p: PlanInput) -> Draft:
    r, f = p.request, p.facts
    job = training.JobSubmit.model_validate(r["job"])
    params = recipes.parse_parameters(job.recipe, job.recipe_version, job.parameters)
    changes, warnings = operator_changes(p)
    changes += mlflow_changes(p, job)
    where = DataMap.model_validate(r["data"]) if r.get("data") else DataMap(data_bucket=str(f.get("bucket") or ""))
    objs = job_manifests.submit_objects(job, params, data_volume_exists=bool(f.get("data_volume_exists", True)),
                                   bucket=str(f.get("bucket") or ""), region=r["region"], where=where)
    for m in objs:
        details: dict[str, Any] = {}
        if m["metadata"].get("namespace"):
            details["namespace"] = m["metadata"]["namespace"]
        if m is objs[-1]:
            details |= {"api_version": m["apiVersion"], "recipe": f"{job.recipe} v{job.recipe_version}",
                        "image": job.image, "instance_type": job.instance_type, "nodes": job.nodes,
                        "gpus_per_node": job.gpus_per_node, "max_retries": job.max_retries,
                        "secrets": list(job.secrets),
                        "reads": [f"{i['field']}: {i['uri']}" for i in f.get("inputs") or [] if not i.get("writes")],
                        "writes": data_paths_of(job), **({"volumes": [
                            f"{m.storage} (s3://{m.bucket}/{m.prefix} at {m.path}, as {m.service_account})"
                            for m in where.mounts]} if where.mounts else {})}
            if job.mlflow is not None:
                details["mlflow"] = {"MLFLOW_TRACKING_URI": job.mlflow.tracking_server_arn,
                                     "MLFLOW_EXPERIMENT_NAME": mlf.experiment_of(job.mlflow, job.name),
                                     "service_account": mlf.service_account(job.name)}
        if m["kind"] == "ServiceAccount":
            details["for"] = "the job's pods: EKS Pod Identity gives them the mlflow_access role"
        changes.append(create(f"Kubernetes {m['kind']}", m["metadata"]["name"], "submit", **details))
    nodes = job.elastic.min_nodes if job.elastic else job.nodes
    capacity = [Capacity(item=f"HyperPod {job.instance_type} (existing nodes)", price=("hyperpod", job.instance_type),
                         count=nodes, paid=True, source=EXISTING)]
    live = f.get("live")
    if live is not None:
        why = training.gpu_refusal(job, [training.GroupCapacity.model_validate(live)])
        if why:
            warnings.append(f"the requested GPUs do not fit now: {why}; the validate step refuses the job "
                            f"(NotEnoughGpus) unless capacity frees up first")
    placed = f.get("placement") or {}
    if placed and not placed.get("fits_now"):
        warnings.append(f"DOES NOT FIT NOW: {placed.get('waits_for') or placed.get('summary')}; its pods stay Pending "
                        f"(the job's status says why) until capacity frees up")
    if job.secrets:
        warnings.append(f"the job loads secret(s) {', '.join(job.secrets)} by name: they must exist in "
                        f"{job.namespace} (POST .../secrets)")
    return Draft(changes=_skip(changes, p.skip_steps), capacity=capacity, warnings=warnings)


def plan_job_delete(p: PlanInput) -> Draft:
    r = p.request
    _, k8s_kind, _, _ = training.OPERATORS[r["kind"]]
    pods: list[dict[str, Any]] = p.facts.get("pods") or []
    changes = [delete(f"Kubernetes {k8s_kind}", r["name"], "delete", namespace=r["namespace"])]
    changes += [delete("Kubernetes Pod", str(x["name"]), "delete", namespace=r["namespace"], node=x.get("node"),
                       by="the operator, with its job") for x in pods]
    if r.get("mlflow_server"):
        sa = mlf.service_account(r["name"])
        changes += [delete(ASSOCIATION, f"{r['namespace']}/{sa}", "mlflow_access"),
                    delete(ROLE, mlf.role_name(r["cluster"], r["region"], r["namespace"], r["name"]), "mlflow_access",
                           note="this job's alone (sagemaker-mlflow:* on its tracking server)"),
                    delete("Kubernetes ServiceAccount", sa, "mlflow_access", namespace=r["namespace"])]
    return Draft(changes=_skip(changes, p.skip_steps),
                 warnings=[f"the job stops: its {len(pods)} pod(s) are deleted; what it wrote under /data stays. "
                           "The nodes keep running (and costing): only their GPUs are freed"])


def _skip(changes: list[Change], done: frozenset[str]) -> list[Change]:
    return [c.model_copy(update={"action": "none"}) if c.step in done else c for c in changes]
