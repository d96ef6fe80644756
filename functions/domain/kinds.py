"""Operation kinds: their steps in order (part of the public contract), the role each needs (to
start, retry or cancel it), and how long each step may take at real AWS speed."""

from __future__ import annotations

from typing import Any

from functions.domain.errors import Forbidden
from functions.domain.feature_graph import STEPS as FEATURE_STEPS
from functions.domain.principal import Role

KINDS: dict[str, tuple[str, ...]] = {
    "cluster.create": ("eks_control_plane", "activate", "dependencies", "hyperpod_cluster", "storage"),
    "cluster.delete": ("storage", "hyperpod_cluster", "dependencies", "eks_control_plane", "network"),
    "cluster.import": ("discover", "access", "activate", "inventory"),
    "cluster.software_update": ("update", "watch"),
    "instance_group.add": ("subnet", "instance_group"),
    "instance_group.scale": ("instance_group",),
    "instance_group.delete": ("drain", "instance_group", "gone"),
    # The operator step is training_operator for a HyperPodPyTorchJob, kuberay_operator for a RayJob: the
    # other one is skipped (one state machine for both kinds).
    # mlflow_access (a role scoped to the job's MLflow tracking server, its Pod Identity association) is skipped
    # for a job without `mlflow`; job.delete's removes what that job alone made.
    "job.submit": ("training_operator", "kuberay_operator", "mlflow_access", "validate", "submit", "watch"),
    "job.delete": ("delete", "mlflow_access"),
    # Every feature's disable (dependants first), then every enable (prerequisites first); an operation
    # lists only the steps its PATCH needs (functions.domain.features.changes.plan_changes).
    "features.update": FEATURE_STEPS,
    "cluster.reconcile": ("dependencies", "storage"),
    "storage.add": ("backing", "volume"),
    "storage.remove": ("volume", "backing"),
    "endpoint.deploy": ("inference_operator", "keda", "objects", "ready"),
    "endpoint.update": ("scale",),
    "endpoint.delete": ("objects",),
    "pool.create": ("workers",),
    "pool.assign": ("labels",),
    "pool.release": ("labels",),
    "model.download": ("identity", "download"),
    "nodes.reboot": ("reboot", "ready"),
    "nodes.replace": ("replace", "ready"),
    "nodes.delete": ("delete", "gone"),
    "nodes.health_check": ("start", "results"),
    "training_plan.purchase": ("purchase", "ready"),
    "namespace.create": ("namespace", "data_volume"),
    "namespace.delete": ("namespace", "gone"),
    # A spec's phases (functions.domain.specs.document.PHASES); each step starts and watches that phase's child
    # operations; an apply lists only the phases it needs.
    "spec.apply": ("cluster", "instance_groups", "storage", "features", "jobs", "endpoints", "prune"),
}

# Deleting a cluster, and importing one (it grants PodStart cluster-admin on the EKS cluster), are
# admin actions; so is whatever destroys data or reaches the internet; the rest needs an operator. A retry or
# cancel needs what the operation needs (its kind, and for some kinds its request: `required_role`).
REQUIRED_ROLE: dict[str, Role] = {
    "cluster.delete": Role.admin,
    "cluster.import": Role.admin,
    "nodes.delete": Role.admin,  # terminates instances and shrinks their groups
    "instance_group.delete": Role.admin,  # terminates every instance of the group (as nodes.delete does)
    "training_plan.purchase": Role.admin,  # pays an upfront fee, not refundable
    "namespace.create": Role.admin,  # a new place where operators may act (and a Role for PodStart's API there)
    "namespace.delete": Role.admin,  # everything in it goes: jobs, Secrets, claims
}


def _admin_for(kind: str, request: dict[str, Any]) -> str | None:
    """Why this operation needs an admin when its kind alone would not: it destroys data or reaches the internet."""
    if kind == "storage.remove" and request.get("kind") == "fsx_lustre":
        return "it deletes an FSx file system and every file on it"
    if kind == "storage.add" and request.get("kind") == "s3" and request.get("registered"):
        return f"it mounts {request.get('bucket')}, a registered bucket PodStart does not own"
    if kind == "spec.apply" and request.get("required_role") == "admin":  # functions.logic.specs.apply.action_role
        return "a child operation it starts needs an admin (a group or an FSx file system it prunes, ...)"
    endpoint = request.get("endpoint") if kind == "endpoint.deploy" else None
    if isinstance(endpoint, dict) and endpoint.get("public"):
        return "it puts an endpoint on the internet with no source range (public: true)"
    return None

H = 3600.0
# Generous multiples of the expected durations (EKS ~10 min, HyperPod create ~20 min, FSx ~15 min,
# large scale-outs longer): a step still waiting past its budget fails with StepTimedOut.
STEP_BUDGETS: dict[str, dict[str, float]] = {
    "cluster.create": {"eks_control_plane": 1 * H, "activate": 0.25 * H, "dependencies": 1 * H,
                       "hyperpod_cluster": 4 * H, "storage": 1 * H},
    "cluster.delete": {"storage": 1 * H, "hyperpod_cluster": 3 * H, "dependencies": 0.5 * H,
                       "eks_control_plane": 1 * H, "network": 1 * H},
    "cluster.import": {"discover": 1 * H, "access": 0.25 * H, "activate": 0.25 * H, "inventory": 0.25 * H},
    # every batch restarts its instances (~15 min each at AWS speed): 4 h covers ~15 batches (a retry resumes
    # the watch; a bigger percent, fewer batches)
    "cluster.software_update": {"update": 1 * H, "watch": 4 * H},
    "instance_group.add": {"subnet": 0.25 * H, "instance_group": 4 * H},
    "instance_group.scale": {"instance_group": 4 * H},
    "instance_group.delete": {"drain": 1 * H, "instance_group": 2 * H, "gone": 1 * H},
    # Enabling an operator add-on ~5 min; a job reaches Running after image pulls (large images: 20+ min).
    "job.submit": {"training_operator": 0.5 * H, "kuberay_operator": 0.5 * H, "mlflow_access": 0.5 * H,
                   "validate": 0.25 * H, "submit": 0.25 * H, "watch": 2 * H},
    "job.delete": {"delete": 0.5 * H, "mlflow_access": 0.25 * H},
    "features.update": {s: (1 * H if s.removeprefix("disable_") in ("tiered_checkpointing", "autoscaling")
                            else 0.5 * H) for s in FEATURE_STEPS},
    "cluster.reconcile": {"dependencies": 1 * H, "storage": 1 * H},
    "storage.add": {"backing": 1 * H, "volume": 0.5 * H},
    "storage.remove": {"volume": 0.5 * H, "backing": 1 * H},
    "endpoint.deploy": {"inference_operator": 1 * H, "keda": 0.25 * H, "objects": 0.25 * H, "ready": 2 * H},
    "endpoint.update": {"scale": 2 * H},
    "endpoint.delete": {"objects": 0.5 * H},
    "pool.create": {"workers": 2 * H},
    "pool.assign": {"labels": 0.25 * H},
    "pool.release": {"labels": 0.25 * H},
    "model.download": {"identity": 0.25 * H, "download": 4 * H},
    "nodes.reboot": {"reboot": 0.25 * H, "ready": 1 * H},
    "nodes.replace": {"replace": 0.25 * H, "ready": 1 * H},
    "nodes.delete": {"delete": 0.25 * H, "gone": 1 * H},
    # An on-demand deep health check runs tens of minutes (InstanceStress longest).
    "nodes.health_check": {"start": 0.25 * H, "results": 3 * H},
    # CreateTrainingPlan answers at once; the plan is Pending for minutes until Scheduled (or Active)
    "training_plan.purchase": {"purchase": 0.25 * H, "ready": 1 * H},
    "namespace.create": {"namespace": 0.25 * H, "data_volume": 0.25 * H},
    # a namespace goes once every object in it has (pods stop gracefully, finalizers run)
    "namespace.delete": {"namespace": 0.25 * H, "gone": 1 * H},
    # each phase watches its children one after the other: their budgets, with room for several
    # (a step stops watching after 4 h: a retry of the apply watches the same child again)
    "spec.apply": {"cluster": 4 * H, "instance_groups": 4 * H, "storage": 2 * H, "features": 2 * H, "jobs": 2 * H,
                   "endpoints": 2 * H, "prune": 2 * H},
}
DEFAULT_STEP_BUDGET = 1 * H


def required_role(kind: str, request: dict[str, Any] | None = None) -> Role:
    """The role that may start, retry or cancel an operation of `kind` with this (normalized) request."""
    if request is not None and _admin_for(kind, request):
        return Role.admin
    return REQUIRED_ROLE.get(kind, Role.operator)


def check_role(role: str | None, kind: str, request: dict[str, Any]) -> None:
    """Refuse (403) an actor whose role is below what this operation needs: at start, in its dry run, on retry
    and cancel. `role` is the actor's role name (viewer | operator | admin); an actor with no role is PodStart's
    own (a test, the sweep): every face's request carries its caller's role (functions.api.context.actor)."""
    if role is None:
        return
    need = required_role(kind, request)
    have = Role[role] if role in Role.__members__ else Role.viewer
    if have < need:
        why = role_reason(kind, request)
        raise Forbidden(f"this action needs the {need.name} role" + (f" ({why})" if why else "")
                        + f"; you are {have.name}")


def role_reason(kind: str, request: dict[str, Any] | None = None) -> str | None:
    """Why `required_role` is admin for this request (None when the kind alone says so, or it needs less)."""
    return _admin_for(kind, request) if request is not None else None


def step_budget(kind: str, step: str) -> float:
    return STEP_BUDGETS.get(kind, {}).get(step, DEFAULT_STEP_BUDGET)


def execution_timeout(kind: str) -> int:
    """The state machine's own bound: every step's budget plus an hour of slack."""
    return int(sum(step_budget(kind, s) for s in KINDS.get(kind, ())) + H)


def state_machine_file(kind: str) -> str:
    """`cluster.create` -> `cluster.create.asl.json` (the file CDK and the sandbox both load)."""
    return kind + ".asl.json"


def kind_of_file(filename: str) -> str:
    return filename.removesuffix(".asl.json")
