"""kind -> step name -> implementation. The steps Lambda dispatches through this table."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from functions.domain.operations import Operation
from functions.workflows.context import StepFn

StatusHook = Callable[[Operation, Any], None]  # (the operation as it is about to be saved, state store)

STEPS: dict[str, dict[str, StepFn]] = {}
ON_STATUS: dict[str, StatusHook] = {}


def register(kind: str, steps: dict[str, StepFn], on_status: StatusHook | None = None) -> None:
    STEPS[kind] = dict(steps)
    if on_status is not None:
        ON_STATUS[kind] = on_status


def lookup(kind: str, step: str) -> StepFn | None:
    _load_builtin()
    return STEPS.get(kind, {}).get(step)


def status_hook(kind: str) -> StatusHook | None:
    _load_builtin()
    return ON_STATUS.get(kind)


_loaded = False


def _load_builtin() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    with contextlib.suppress(ImportError):
        import functions.workflows.cluster_delete
        import functions.workflows.cluster_import
        import functions.workflows.clusters
        import functions.workflows.instance_groups  # noqa: F401
