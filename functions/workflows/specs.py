"""spec.apply: one step per phase (cluster, instance groups, storage, features, jobs, endpoints, prune); each
starts that phase's child operations through the use cases the REST routes call and watches them to their end.
The step bodies live in functions.workflows.spec_children, loaded when a spec.apply step first runs."""

from __future__ import annotations

from typing import Any

from functions.domain.specs.document import PHASES
from functions.domain.workflow import Outcome
from functions.workflows.context import StepContext, Workflow


def _phase(name: str) -> Any:
    def step(ctx: StepContext) -> Outcome:
        from functions.workflows import spec_children

        return spec_children.run(ctx, name)

    step.__name__ = f"apply_{name}"
    return step


WORKFLOW = Workflow(kind="spec.apply", steps={p: _phase(p) for p in PHASES})
