"""The capacity advisor: "I need 16 H100s for three days" answered with ranked options that fit now.

Pure: the use case reads the facts (functions.domain.capacity.facts) and hands them here. For every region asked
and every instance type that gives the accelerators asked for (`accelerators.candidates`), each capacity type
asked for is either an option or one near miss with the one reason it was left out.

What makes an option, per capacity type:

- on-demand: a zone offers the type (EC2 offerings) and the region's cluster-usage quota minus what PodStart's
  clusters use covers the instances; one option per (region, type), in the first zone offering it (zones the
  cluster already uses first, when adding to a cluster), the other zones listed.
- spot: the same, and EC2's spot placement score for that many instances in the zone is at least
  `SPOT_MIN_SCORE` (1-10); the best-scored zone. Its price is not in the Price List: shown as unknown.
- training-plan: a plan the account already owns (Active or Scheduled, of the type, enough instances available,
  lasting the whole duration) - nothing to pay; or a training plan offering (SearchTrainingPlanOfferings for the
  type, count and duration) - it starts when the offering starts and costs its upfront fee; the option says the
  purchase to make first (`POST /v1/capacity/training-plans`). Plans are sold by the day: hours round up to 24.

`same_zone: true` (the default, for distributed training) keeps every option in one zone; an answer that fits
only across zones is a near miss (`split_needed`) and becomes an option with `same_zone: false`.

Ranking (deterministic): the earliest start first; then the cheapest (for the whole duration when `hours` is
given, else per hour; capacity already paid costs 0; an unknown price ranks after every known one); then fewer
instances; then capacity type (training plan owned, on-demand, spot, training plan to buy), the regions in the
order asked, zone and instance type.

Each option carries the request that acts on it: `create_cluster` (POST /v1/clusters) or, with `cluster`,
`add_instance_groups` (POST /v1/clusters/{cluster}/instance-groups, one per group), and under `requires` what
must happen first (a training plan to buy).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from functions.domain.capacity.facts import Fact, RegionFacts
from functions.domain.capacity.inputs import ClusterContext, _start, wants
from functions.domain.capacity.models import (
    CLOSENESS,
    MAX_NEAR_MISSES,
    RESERVABLE,
    Advice,
    AdviceRequest,
    AskedFor,
    NearMiss,
    Option,
    Reason,
)
from functions.domain.capacity.options import _consider, _Ctx, _line
from functions.domain.clusters.api import CapacityType


def advise(req: AdviceRequest, regions: list[RegionFacts], *, now: datetime, account: str | None = None,
           cluster: ClusterContext | None = None, cluster_name: str | None = None,
           taken_plan_names: set[str] | None = None, extra_facts: list[Fact[Any]] | None = None) -> Advice:
    ctx = _Ctx(req=req, now=now, start=_start(req, now), account=account, cluster=cluster,
               cluster_name=cluster_name or suggest_name(req), plan_names=set(taken_plan_names or ()),
               region_order={f.region: i for i, f in enumerate(regions)})
    todo = wants(req)
    for f in regions:
        if not todo:
            what = req.gpu_model or "accelerator"
            ctx.misses.append(NearMiss(region=f.region, instance_type=None, capacity_types=[],
                                       reason=Reason.no_instance_type,
                                       detail=f"SageMaker HyperPod offers no instance type with {what} "
                                              f"accelerators for {req.gpus} of them"))
            continue
        for w in todo:
            _consider(ctx, f, w)
        if ctx.unreservable:
            names = sorted(ctx.unreservable)
            ctx.misses.append(NearMiss(
                region=f.region, instance_type=names[0] if len(names) == 1 else None,
                capacity_types=[CapacityType.training_plan], reason=Reason.not_reservable,
                detail=f"training plans do not reserve {', '.join(names)} (they reserve "
                       f"{', '.join(sorted(t.removeprefix('ml.') for t in RESERVABLE))})"))
            ctx.unreservable.clear()
    ranked = sorted(ctx.candidates, key=lambda c: c.sort)
    options = [Option.model_validate({**c.option, "rank": i + 1}) for i, c in enumerate(ranked[: req.max_options])]
    misses = sorted(ctx.misses, key=lambda m: (CLOSENESS[m.reason], m.short_by or 0, ctx.region_order.get(m.region, 99),
                                               m.instance_type or "", ",".join(m.capacity_types)))
    facts = [_line(fact, f.region, now) for f in regions for fact in f.all_facts()]
    facts += [_line(fact, None, now) for fact in extra_facts or []]
    unavailable = [f"{x.region + ' ' if x.region else ''}{x.fact}{' ' + x.subject if x.subject else ''}: {x.reason}"
                   for x in facts if not x.available]
    asked = AskedFor(gpus=req.gpus, gpu_model=(req.gpu_model or "any") if req.gpus else None,
                     instance_type=req.instance_type, instance_count=req.instance_count, hours=req.hours,
                     plan_hours=req.plan_hours, start_after=ctx.start, regions=[f.region for f in regions],
                     capacity_types=req.wanted_capacity, max_hourly_usd=req.max_hourly_usd,
                     efa_required=bool(req.efa_required), same_zone=req.same_zone,
                     cluster=cluster.name if cluster else None)
    return Advice(asked=asked, summary=_summary(req, options, len(ranked), misses, now), options=options,
                  options_more=max(0, len(ranked) - len(options)), near_misses=misses[:MAX_NEAR_MISSES],
                  near_misses_more=max(0, len(misses) - MAX_NEAR_MISSES), facts=facts, unavailable=unavailable)


def suggest_name(req: AdviceRequest) -> str:
    if req.name:
        return req.name
    if req.gpus:
        what = req.gpu_model or "any"
        return f"{'gpu' if what == 'any' else what}-{req.gpus}x"[:32]
    family = re.sub(r"[^a-z0-9]+", "-", str(req.instance_type).removeprefix("ml.").split(".")[0])
    return f"{family}-{req.instance_count}x"[:32].strip("-")


def _summary(req: AdviceRequest, options: list[Option], fitting: int, misses: list[NearMiss], now: datetime) -> str:
    what = (f"{req.gpus} x {req.gpu_model or 'any'} accelerators" if req.gpus
            else f"{req.instance_count} x {req.instance_type}")
    if req.hours:
        what += f" for {req.hours} h"
    if not options:
        reasons = sorted({m.reason.value for m in misses}, key=lambda r: CLOSENESS[Reason(r)])
        return f"nothing fits {what}: {len(misses)} near miss(es) ({', '.join(reasons) or 'no candidates'})"
    best = options[0]
    when = "now" if best.starts_now else f"from {best.earliest_start:%Y-%m-%d %H:%M} UTC"
    cost = ("already paid" if best.price.already_paid else
            f"{best.price.hourly_usd:,.2f} USD/h" if best.price.hourly_usd is not None else "price unknown")
    return (f"{fitting} option(s) for {what}; best: {best.instance_count} x {best.instance_type} "
            f"{best.capacity_type.value} in {best.availability_zone}, {when}, {cost}")
