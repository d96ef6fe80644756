"""Start an operation, or answer its plan: one entry point for every use case that mutates.

`start_or_plan` takes exactly what `deps.operations.start` takes. Without `dry_run` it starts the operation
(same idempotency, same admission). With `dry_run` it runs the same admission (`normalize`, reads only:
never `claim`), refuses a busy target with the same 409, and hands the normalized request plus what
admission read (`admission.facts`) to the kind's planner (`functions.domain.plans.registry.PLANNERS`). It then
adds quota lines (from the quotas admission read) and cost lines (the AWS Price List, via `deps.prices`).
A dry run makes no write: no idempotency record, no claim, no lock, no audit record.

How to plug a new mutation into plans and audit (features, nodes, training, inference)
--------------------------------------------------------------------------------------
Plans (`?dry_run=true` on REST, `dry_run` on the MCP tool, which comes from the OpenAPI document):

1. Planner, pure, in `functions/domain/<capability>/plan.py`: `plan_<kind>(p: PlanInput) -> Draft` listing one
   `plans.create|update|delete|none(kind, name, step, **details)` per object each workflow step makes (use the
   same "what is missing" functions the steps use), `Capacity(item, price=(family, what), count)` for what costs
   by the hour (families in `functions/adapters/prices.py`; `paid=True` for training-plan capacity),
   `quota_requests` for instances added, `warnings`. Register it in `PLANNERS` (plans/registry.py).
2. Use case: replace `deps.operations.start(...)` with `start_or_plan(deps, dry_run=dry_run, ...)` (same
   arguments). Put what admission read into `admission.facts` (or pass `facts=`): quotas, VPC view, live state.
3. Route: add `dry_run: DryRun = False` (functions.api.context), return `respond(result)`; OPERATION_RESPONSES
   already documents the 200 plan. A record write with no operation builds a `Plan` itself (routes/preferences.py).
4. Remove the route and kind from NO_PLAN_YET_* in tests/unit/test_plans_convention.py (until then a dry run
   on the route is refused with 422 naming query.dry_run, by functions/api/edge.py, never run for real).

Audit: nothing to call. `functions.api.edge.audit` records every POST/PUT/PATCH/DELETE that passes
authentication (dry runs aside) once, after the answer: principal, face (`X-PodStart-Face`: the UI and the MCP
gateway send it), source IP, user agent, action = the route function's name, target (path args `cluster`,
`group`, `operation_id`, else the started operation's target), the request with secret-looking keys redacted
(functions.domain.redaction: writeOnly fields, credential-looking values, keys naming secrets), Idempotency-Key,
and the result (status, operation id; replays marked). Records are built in functions/api/audit_trail.py.
"""

from __future__ import annotations

from typing import Any

from functions.domain.capacity.placement import Placement
from functions.domain.errors import NotFound
from functions.domain.kinds import check_role
from functions.domain.operations import Actor, Operation, Target
from functions.domain.plans import HOURS_PER_MONTH, Capacity, Cost, CostLine, Draft, Plan, QuotaLine
from functions.domain.plans.registry import PLANNERS, PlanInput
from functions.domain.service import Admission
from functions.logic.deps import Deps
from functions.logic.started import Started


def start_or_plan(deps: Deps, *, dry_run: bool, kind: str, target: Target, request: dict[str, Any],
                  principal: Actor, idempotency_key: str | None, admission: Admission | None = None,
                  facts: dict[str, Any] | None = None, warnings: list[str] | None = None,
                  steps: tuple[str, ...] | None = None) -> Started | Plan:
    if not dry_run:
        more: dict[str, Any] = {"steps": steps} if steps is not None else {}
        op, created = deps.operations.start(kind=kind, target=target, request=request, principal=principal,
                                            idempotency_key=idempotency_key, admission=admission, **more)
        return Started(op, replayed=not created)
    if not deps.operations.deployed(kind):
        raise NotFound(f"no workflow is deployed for operation kind {kind!r}")
    normalized = admission.normalize() if admission else request
    check_role(principal.role, kind, normalized)  # the plan of an action the caller may not take is refused alike
    deps.operations.check_free(target)
    seen = {**(facts or {}), **(getattr(admission, "facts", None) or {})}
    return plan(deps, kind, target, normalized, seen, warnings=warnings)


class _Unchanged(Exception):
    """Nothing differs: no operation is stored (and the Idempotency-Key stays unused)."""


class _NothingToStart:
    """Admission for `replay_of`: a key not used before starts nothing."""

    def normalize(self) -> dict[str, Any]:
        raise _Unchanged

    def claim(self, op: Operation) -> None:
        return None

    def unclaim(self, op: Operation) -> None:
        return None


def replay_of(deps: Deps, *, kind: str, target: Target, request: dict[str, Any], principal: Actor,
              idempotency_key: str | None) -> Started | None:
    """For a PATCH that finds the live state already as asked (`changed: false`): if this Idempotency-Key
    started an operation for this very request (the change it made is why nothing differs now), that
    operation as a replay; else None (nothing is stored, the key stays unused). `request` must be what the
    first request passed to `start`, so the use case builds it from what was sent, not from live state."""
    if not idempotency_key:
        return None
    try:
        op, _ = deps.operations.start(kind=kind, target=target, request=request, principal=principal,
                                      idempotency_key=idempotency_key, admission=_NothingToStart())
    except _Unchanged:
        return None
    return Started(op, replayed=True)


def plan(deps: Deps, kind: str, target: Target, request: dict[str, Any], facts: dict[str, Any],
         skip_steps: frozenset[str] = frozenset(), warnings: list[str] | None = None) -> Plan:
    planner = PLANNERS.get(kind)
    if planner is None:
        raise NotFound(f"no planner for operation kind {kind!r}")
    draft = planner(PlanInput(kind=kind, target=target, request=request, facts=facts, skip_steps=skip_steps))
    return finish(deps, kind, target, draft, facts, warnings)


def price_lines(deps: Deps, region: str, capacity: list[Capacity]) -> tuple[list[CostLine], float, list[str]]:
    """Each capacity line priced from the Price List: (lines, the known hourly total, the items with no price)."""
    cost_lines: list[CostLine] = []
    total = 0.0
    missing: list[str] = []
    for c in capacity:
        price = deps.prices.hourly(region, c.price) if deps.prices is not None else None
        if c.paid:
            cost_lines.append(CostLine(item=c.item, count=c.count, unit_hourly=price[0] if price else None,
                                       hourly=0.0, paid=True,
                                       source=c.source or "training plan: reserved capacity, already paid"))
            continue
        if price is None:
            missing.append(c.item)
            cost_lines.append(CostLine(item=c.item, count=c.count, unit_hourly=None, hourly=None, source="unknown"))
            continue
        hourly = round(price[0] * c.count, 4)
        total += hourly
        cost_lines.append(CostLine(item=c.item, count=c.count, unit_hourly=price[0], hourly=hourly, source=price[1]))
    return cost_lines, total, missing


def finish(deps: Deps, kind: str, target: Target, draft: Draft, facts: dict[str, Any],
           warnings: list[str] | None = None) -> Plan:
    region = target.region or ""
    quotas: dict[str, Any] = facts.get("quotas") or {}
    lines = []
    for itype, n in sorted(draft.quota_requests.items()):
        q = quotas.get(itype)
        if q is not None and n:
            lines.append(QuotaLine(instance_type=itype, requested=n, in_use=q.in_use, limit=q.limit,
                                   ok=n <= q.available))
    notes = [*draft.warnings, *(warnings or [])]
    cost_lines, total, missing = price_lines(deps, region, draft.capacity)
    notes += [f"no price found for {item}: the cost leaves it out" for item in missing]
    notes += [f"quota: {q.requested} more {q.instance_type} exceed the {q.limit} allowed ({q.in_use} in use)"
              for q in lines if not q.ok]
    placed = facts.get("placement")
    return Plan(kind=kind, target=target.model_dump(exclude_none=True), changes=draft.changes, quota=lines,
                cost=Cost(hourly=round(total, 2), monthly_estimate=round(total * HOURS_PER_MONTH, 2),
                          lines=cost_lines, upfront=draft.upfront), warnings=notes,
                placement=Placement.model_validate(placed) if placed else None)
