"""Planners: for each operation kind, the changes its workflow's steps will make, computed purely.

A dry run (`?dry_run=true`) runs the same admission as the real request, then the kind's planner on the
normalized request and on the facts admission read (`PlanInput.facts`: quotas, the VPC view, the live
group...). Planners never read AWS themselves: a dry run reads at most what admission reads, and the
placement/allocation functions they call are the ones the workflows call (one code path).

To add a plan for a new kind (e.g. `node.reboot`):

1. write `plan_<kind>(p: PlanInput) -> Draft` in the planner module of its area (or a new
   `functions/domain/<capability>/plan.py`): one `plans.create|update|delete|none(kind, name, step, **details)`
   per object each workflow step makes, `Capacity(...)` for what costs by the hour, `quota_requests` for
   instances added, `warnings` for what the user should know;
2. register it in `PLANNERS` below under the kind's name (a test fails for a kind in `kinds.KINDS` without one);
3. in the use case, call `functions.logic.plans.start_or_plan(deps, dry_run=dry_run, kind=..., ...)` where it
   called `deps.operations.start(...)` (same arguments; put what admission read in `admission.facts`), and
   in the route take `dry_run: DryRun = False` (from `functions.api.context`) and return `respond(result)`.
   A mutation that starts no operation (a record write) builds its Plan directly: see routes/preferences.py.

`tests/unit/test_plans_convention.py` fails for any mutating route of the OpenAPI document without `dry_run`.
"""

from __future__ import annotations

from collections.abc import Callable

from functions.domain.capacity.plan import plan_training_plan_purchase
from functions.domain.clusters.plan import plan_cluster_create, plan_cluster_delete, plan_cluster_import
from functions.domain.clusters.plan_groups import plan_group_add, plan_group_delete, plan_group_scale
from functions.domain.clusters.plan_software_update import plan_software_update
from functions.domain.features.plan import plan_features_update
from functions.domain.inference.plan import (
    plan_endpoint_delete,
    plan_endpoint_deploy,
    plan_endpoint_update,
    plan_model_download,
    plan_pool_assign,
    plan_pool_create,
    plan_pool_release,
)
from functions.domain.namespaces.plan import plan_namespace_create, plan_namespace_delete
from functions.domain.nodes.plan import (
    plan_nodes_delete,
    plan_nodes_health_check,
    plan_nodes_reboot,
    plan_nodes_replace,
)
from functions.domain.plans import Draft
from functions.domain.plans.base import PlanInput
from functions.domain.specs.plan import plan_spec_apply
from functions.domain.storage.plan import plan_cluster_reconcile, plan_storage_add, plan_storage_remove
from functions.domain.training.plan import plan_job_delete, plan_job_submit

Planner = Callable[[PlanInput], Draft]

PLANNERS: dict[str, Planner] = {
    "cluster.create": plan_cluster_create,
    "cluster.delete": plan_cluster_delete,
    "cluster.import": plan_cluster_import,
    "cluster.software_update": plan_software_update,
    "instance_group.add": plan_group_add,
    "instance_group.scale": plan_group_scale,
    "instance_group.delete": plan_group_delete,
    "nodes.reboot": plan_nodes_reboot,
    "nodes.replace": plan_nodes_replace,
    "nodes.delete": plan_nodes_delete,
    "nodes.health_check": plan_nodes_health_check,
    "features.update": plan_features_update,
    "storage.add": plan_storage_add,
    "storage.remove": plan_storage_remove,
    "cluster.reconcile": plan_cluster_reconcile,
    "job.submit": plan_job_submit,
    "job.delete": plan_job_delete,
    "endpoint.deploy": plan_endpoint_deploy,
    "endpoint.update": plan_endpoint_update,
    "endpoint.delete": plan_endpoint_delete,
    "pool.create": plan_pool_create,
    "pool.assign": plan_pool_assign,
    "pool.release": plan_pool_release,
    "model.download": plan_model_download,
    "spec.apply": plan_spec_apply,
    "training_plan.purchase": plan_training_plan_purchase,
    "namespace.create": plan_namespace_create,
    "namespace.delete": plan_namespace_delete,
}

__all__ = ["PLANNERS", "PlanInput", "Planner"]
