"""The table of workflows the steps and events functions run: listed explicitly, each module imported when
its first operation needs it.

A kind's module is imported on first use (an invocation pays for its own workflow, not for all of them: the
steps function's cold start); a module that fails to import fails that lookup loudly, and a test imports every
entry, so no workflow silently disappears. The API does not import this (it would pull in the Kubernetes
client); it starts operations by the step names in `functions.domain.kinds`, and a test keeps the two, and the
state machines, equal.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from functions.workflows.context import Workflow

# kind -> (module under functions.workflows, attribute)
WHERE: dict[str, tuple[str, str]] = {
    "cluster.create": ("cluster_create", "WORKFLOW"),
    "cluster.delete": ("cluster_delete", "WORKFLOW"),
    "cluster.import": ("cluster_import", "WORKFLOW"),
    "instance_group.add": ("instance_groups", "ADD"),
    "instance_group.scale": ("instance_groups", "SCALE"),
    "instance_group.delete": ("instance_groups", "DELETE"),
    "job.submit": ("jobs", "SUBMIT"),
    "job.delete": ("jobs", "DELETE"),
    "cluster.reconcile": ("storage", "RECONCILE"),
    "storage.add": ("storage", "ADD"),
    "storage.remove": ("storage", "REMOVE"),
    "endpoint.deploy": ("inference", "DEPLOY"),
    "endpoint.update": ("inference", "UPDATE"),
    "endpoint.delete": ("inference", "DELETE"),
    "pool.create": ("inference", "POOL_CREATE"),
    "pool.assign": ("inference", "POOL_ASSIGN"),
    "pool.release": ("inference", "POOL_RELEASE"),
    "model.download": ("inference", "DOWNLOAD"),
    "features.update": ("features", "WORKFLOW"),
    "nodes.reboot": ("nodes", "REBOOT"),
    "nodes.replace": ("nodes", "REPLACE"),
    "nodes.delete": ("nodes", "DELETE"),
    "nodes.health_check": ("health_checks", "WORKFLOW"),
    "cluster.software_update": ("software_update", "WORKFLOW"),
    "spec.apply": ("specs", "WORKFLOW"),
    "training_plan.purchase": ("training_plans", "PURCHASE"),
    "namespace.create": ("namespaces", "CREATE"),
    "namespace.delete": ("namespaces", "DELETE"),
}


class LazyWorkflows(Mapping[str, "Workflow"]):
    """kind -> Workflow; a kind's module is imported on its first lookup (once, under a lock)."""

    def __init__(self, where: Mapping[str, tuple[str, str]]):
        self._where = dict(where)
        self._loaded: dict[str, Workflow] = {}
        self._lock = threading.Lock()

    def __getitem__(self, kind: str) -> Workflow:
        found = self._loaded.get(kind)
        if found is not None:
            return found
        module, attr = self._where[kind]  # KeyError: not a workflow kind
        with self._lock:
            workflow: Workflow = getattr(import_module(f"functions.workflows.{module}"), attr)
            if workflow.kind != kind:
                raise ValueError(f"functions.workflows.{module}.{attr} is {workflow.kind}, listed as {kind}")
            self._loaded[kind] = workflow
        return workflow

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)


WORKFLOWS: Mapping[str, Workflow] = LazyWorkflows(WHERE)
