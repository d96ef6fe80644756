"""The table of workflows the steps function runs: listed explicitly, built at import.

A module that fails to import fails this import too (loudly): no workflow silently disappears.
The API does not import this (it would pull in the Kubernetes client); it starts operations by the
step names in `functions.domain.kinds`, and a test keeps the two, and the state machines, equal.
"""

from __future__ import annotations

from collections.abc import Mapping

from functions.workflows import (
    cluster_create,
    cluster_delete,
    cluster_import,
    features,
    health_checks,
    inference,
    instance_groups,
    jobs,
    namespaces,
    nodes,
    software_update,
    specs,
    storage,
    training_plans,
)
from functions.workflows.context import Workflow


def table(*workflows: Workflow) -> dict[str, Workflow]:
    out: dict[str, Workflow] = {}
    for w in workflows:
        if w.kind in out:
            raise ValueError(f"workflow {w.kind} is listed twice")
        out[w.kind] = w
    return out


WORKFLOWS: Mapping[str, Workflow] = table(
    cluster_create.WORKFLOW,
    cluster_delete.WORKFLOW,
    cluster_import.WORKFLOW,
    instance_groups.ADD,
    instance_groups.SCALE,
    instance_groups.DELETE,
    jobs.SUBMIT,
    jobs.DELETE,
    storage.RECONCILE,
    storage.ADD,
    storage.REMOVE,
    inference.DEPLOY,
    inference.UPDATE,
    inference.DELETE,
    inference.POOL_CREATE,
    inference.POOL_ASSIGN,
    inference.POOL_RELEASE,
    inference.DOWNLOAD,
    features.WORKFLOW,
    nodes.REBOOT,
    nodes.REPLACE,
    nodes.DELETE,
    health_checks.WORKFLOW,
    software_update.WORKFLOW,
    specs.WORKFLOW,
    training_plans.PURCHASE,
    namespaces.CREATE,
    namespaces.DELETE,
)
