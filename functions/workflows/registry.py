"""kind -> step name -> implementation. The steps Lambda dispatches through this table."""

from __future__ import annotations

from functions.workflows.context import StepFn

STEPS: dict[str, dict[str, StepFn]] = {}


def register(kind: str, steps: dict[str, StepFn]) -> None:
    STEPS[kind] = dict(steps)


def lookup(kind: str, step: str) -> StepFn | None:
    _load_builtin()
    return STEPS.get(kind, {}).get(step)


_loaded = False


def _load_builtin() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    try:
        import functions.workflows.cluster_create  # noqa: F401 - registers itself
    except ImportError:  # not built yet
        pass
