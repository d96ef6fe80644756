"""Plans for job.submit and job.delete, step by step as their workflows run.

job.submit: the operator step of the job's kind (while the API server does not serve the kind, the training
operator feature and its missing prerequisites, or the KubeRay operator feature, as the step enables them; `none`
once it is served), then every
object the submit step applies
(`training.submit_objects`, the same function the step calls: the namespace and data volume when missing, then the
rendered HyperPodPyTorchJob or RayJob). The job runs on nodes that are already there: its cost line is that
capacity, already paid. When the live GPU count (`training.live_capacity`, as the validate step counts) cannot
hold the job, a warning says the validate step will refuse it.

job.delete: the job object, and each of its pods (the operator deletes them with it).

Facts (read by the dry run, never written): `operator_served`, `feature_inputs` (only when not served),
`namespace_exists`, `data_volume_exists`, `bucket`,
`live` (a GroupCapacity or None) for a submit; `pods` ([{name, node}]) for a delete.
"""

from __future__ import annotations

from typing import Any

from functions.domain import kuberay, recipes, training
from functions.domain.planners.base import PlanInput
from functions.domain.planners.features import ensure_changes
from functions.domain.plans import Capacity, Change, Draft, create, delete, none

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


def plan_job_submit(p: PlanInput) -> Draft:
    r, f = p.request, p.facts
    job = training.JobSubmit.model_validate(r["job"])
    params = recipes.parse_parameters(job.recipe, job.recipe_version, job.parameters)
    changes, warnings = operator_changes(p)
    objs = training.submit_objects(job, params, namespace_exists=bool(f.get("namespace_exists", True)),
                                   data_volume_exists=bool(f.get("data_volume_exists", True)),
                                   bucket=str(f.get("bucket") or ""), region=r["region"])
    for m in objs:
        details: dict[str, Any] = {}
        if m["metadata"].get("namespace"):
            details["namespace"] = m["metadata"]["namespace"]
        if m is objs[-1]:
            details |= {"api_version": m["apiVersion"], "recipe": f"{job.recipe} v{job.recipe_version}",
                        "image": job.image, "instance_type": job.instance_type, "nodes": job.nodes,
                        "gpus_per_node": job.gpus_per_node, "max_retries": job.max_retries,
                        "secrets": list(job.secrets)}
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
    return Draft(changes=_skip(changes, p.skip_steps),
                 warnings=[f"the job stops: its {len(pods)} pod(s) are deleted; what it wrote under /data stays. "
                           "The nodes keep running (and costing): only their GPUs are freed"])


def _skip(changes: list[Change], done: frozenset[str]) -> list[Change]:
    return [c.model_copy(update={"action": "none"}) if c.step in done else c for c in changes]
