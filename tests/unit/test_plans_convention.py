"""Conventions of plans: every mutating route answers a plan with ?dry_run=true, and every operation kind has
a planner (the recipe is in functions/domain/plans/registry.py)."""

from __future__ import annotations

from functions.domain.kinds import KINDS
from functions.domain.plans.registry import PLANNERS

MUTATING = ("post", "put", "patch", "delete")

# Mutations that have no plan yet (they came after the mechanism): a `?dry_run=true` sent to one of them is
# refused with 422 naming query.dry_run (functions/api/edge.py), never run for real. Plug each in (recipe in
# functions/domain/plans/registry.py) and remove it here; this list may only shrink.
NO_PLAN_YET_ROUTES = {
    # Not a mutation of state: a chat sent through the endpoint's own Service; it changes nothing to plan.
    "POST /v1/clusters/{cluster}/endpoints/{endpoint}/invoke",
}
NO_PLAN_YET_KINDS: set[str] = set()


def test_every_mutating_route_takes_dry_run_and_documents_the_plan() -> None:
    from functions.api.handler import openapi_document

    missing, undocumented = [], []
    for path, ops in openapi_document()["paths"].items():
        for method, op in ops.items():
            if method not in MUTATING or op.get("x-podstart-read-only"):  # a POST that only reads (advice)
                continue
            params = {p["name"]: p for p in op.get("parameters", []) if p.get("in") == "query"}
            if f"{method.upper()} {path}" in NO_PLAN_YET_ROUTES:
                assert "dry_run" not in params, f"{method.upper()} {path} has a plan now: drop it from the list"
            elif "dry_run" not in params:
                missing.append(f"{method.upper()} {path}")
            elif "200" not in op["responses"]:
                undocumented.append(f"{method.upper()} {path}")
    assert not missing, f"mutating routes without ?dry_run (see functions/domain/plans/registry.py): {missing}"
    assert not undocumented, f"mutating routes whose 200 (the plan) is not documented: {undocumented}"


def test_every_operation_kind_has_a_planner() -> None:
    assert set(KINDS) - set(PLANNERS) - NO_PLAN_YET_KINDS == set(), \
        "register the kind's planner in functions/domain/plans/registry.py"
    assert NO_PLAN_YET_KINDS & set(PLANNERS) == set(), "a kind with a planner now: drop it from NO_PLAN_YET_KINDS"
    assert set(PLANNERS) - set(KINDS) == set()
