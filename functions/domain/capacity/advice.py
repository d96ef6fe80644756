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
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from functions.domain.arns import partition
from functions.domain.capacity import accelerators as acc
from functions.domain.capacity.accelerators import Accelerators, GpuModel
from functions.domain.capacity.facts import Fact, PlanOffering, PlanSearch, QuotaLimit, RegionFacts
from functions.domain.capacity.models import (
    CAPACITY_ORDER,
    CLOSENESS,
    MAX_NEAR_MISSES,
    MAX_NODES,
    RESERVABLE,
    SPOT_MIN_SCORE,
    Advice,
    AdviceRequest,
    AskedFor,
    FactLine,
    GroupPlacement,
    NearMiss,
    Option,
    PriceView,
    QuotaView,
    Reason,
    RequestToSend,
    Requirement,
)
from functions.domain.catalog import TrainingPlan
from functions.domain.clusters.api import CapacityType, ClusterCreate, InstanceGroupAdd, InstanceGroupSpec

# --- inputs besides the facts ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ClusterContext:
    """Adding to an existing cluster: its name, region, group names, and the zones its groups use."""

    name: str
    region: str
    group_names: frozenset[str]
    zones: tuple[str, ...]


@dataclass(frozen=True)
class Want:
    """One instance type that gives what was asked: how many instances."""

    instance_type: str
    nodes: int
    accel: Accelerators | None


def wants(req: AdviceRequest) -> list[Want]:
    """The instance types to consider and how many instances of each."""
    if req.instance_type is not None:
        return [Want(req.instance_type, int(req.instance_count or 1), acc.of(req.instance_type))]
    gpus = int(req.gpus or 1)
    out = []
    for a in acc.candidates(GpuModel(req.gpu_model or "any")):
        nodes = acc.nodes_for(gpus, a.count)
        if nodes <= MAX_NODES:
            out.append(Want(a.instance_type, nodes, a))
    return out


def plan_searches(req: AdviceRequest, f: RegionFacts, now: datetime) -> list[PlanSearch]:
    """The SearchTrainingPlanOfferings to make in a region: reservable types the region offers, EFA as asked, that
    the account's own plans do not already cover (capacity already bought comes first: no offering is shown)."""
    if CapacityType.training_plan not in req.wanted_capacity or req.plan_hours is None:
        return []
    start = _start(req, now)
    offered = offered_types(f)
    return [PlanSearch(region=f.region, instance_type=w.instance_type, instance_count=w.nodes,
                       duration_hours=req.plan_hours, start_after=_hour(start))
            for w in wants(req) if w.instance_type in RESERVABLE and w.instance_type in offered
            and (not req.efa_required or (w.accel is not None and w.accel.efa))
            and not _owned_cover(req, f, w, start)]


def _owned_cover(req: AdviceRequest, f: RegionFacts, w: Want, start: datetime) -> bool:
    plans = [p for p in (f.training_plans.value or []) if p.instance_type == w.instance_type
             and p.status in ("Active", "Scheduled") and p.available_instance_count > 0
             and (req.hours is None or (_at(p.end_time) or start) >= start + timedelta(hours=req.hours))]
    if not req.same_zone:
        return sum(p.available_instance_count for p in plans) >= w.nodes
    zones: dict[str | None, int] = {}
    for p in plans:
        zones[p.availability_zone] = zones.get(p.availability_zone, 0) + p.available_instance_count
    return any(n >= w.nodes for n in zones.values())


def _hour(t: datetime) -> datetime:
    """The search's start rounded down to the hour: one cached answer serves a whole hour of requests."""
    return t.replace(minute=0, second=0, microsecond=0)


def _start(req: AdviceRequest, now: datetime) -> datetime:
    return max(now, req.start_after) if req.start_after else now


def offered_types(f: RegionFacts) -> set[str]:
    return set().union(*f.offerings.value.values()) if f.offerings.ok and f.offerings.value else set()


def priced_types(req: AdviceRequest, f: RegionFacts) -> list[Want]:
    """Types whose on-demand price or spot score matters: offered, EFA as asked, within the quota."""
    if not ({CapacityType.on_demand, CapacityType.spot} & set(req.wanted_capacity)):
        return []
    offered = offered_types(f)
    out = []
    for w in wants(req):
        if w.instance_type not in offered or (req.efa_required and not (w.accel and w.accel.efa)):
            continue
        headroom = _headroom(f, w.instance_type)
        if headroom is None or headroom >= w.nodes:
            out.append(w)
    return out


def _headroom(f: RegionFacts, itype: str) -> int | None:
    if not f.quotas.ok or f.quotas.value is None:
        return None
    q = f.quotas.value.get(itype)
    return (q.limit if q else 0) - f.in_use.get(itype, 0)


# --- the advisor ----------------------------------------------------------------------------------------------------

@dataclass
class _Candidate:
    option: dict[str, Any]
    sort: tuple[Any, ...]


@dataclass
class _Ctx:
    req: AdviceRequest
    now: datetime
    start: datetime
    account: str | None
    cluster: ClusterContext | None
    cluster_name: str
    plan_names: set[str]
    region_order: dict[str, int]
    candidates: list[_Candidate] = field(default_factory=list)
    unreservable: set[str] = field(default_factory=set)  # a region's types training plans do not reserve
    misses: list[NearMiss] = field(default_factory=list)


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


def _line(fact: Fact[Any], region: str | None, now: datetime) -> FactLine:
    age = int(max(0.0, (now - fact.fetched_at).total_seconds())) if fact.fetched_at else None
    return FactLine(region=region, fact=fact.name, subject=fact.subject, source=fact.source,
                    fetched_at=fact.fetched_at, age_seconds=age, available=fact.unavailable is None,
                    reason=fact.unavailable)


def _miss(ctx: _Ctx, f: RegionFacts, w: Want, cap: CapacityType | list[CapacityType] | None, reason: Reason,
          detail: str, **more: Any) -> None:
    caps = [] if cap is None else [cap] if isinstance(cap, CapacityType) else list(cap)
    ctx.misses.append(NearMiss(region=f.region, instance_type=w.instance_type, capacity_types=caps, reason=reason,
                               detail=detail, **more))


def _consider(ctx: _Ctx, f: RegionFacts, w: Want) -> None:
    req = ctx.req
    if req.efa_required and not (w.accel and w.accel.efa):
        _miss(ctx, f, w, None, Reason.no_efa, f"{w.instance_type} has no EFA networking (efa_required)")
        return
    if not f.offerings.ok or f.offerings.value is None:
        _miss(ctx, f, w, None, Reason.unknown, f"where {w.instance_type} is offered is unknown: "
                                               f"{f.offerings.unavailable}")
        return
    zones = [z for z in _zone_names(f) if w.instance_type in f.offerings.value.get(z, frozenset())]
    if not zones:
        _miss(ctx, f, w, None, Reason.not_offered, f"{w.instance_type} is not offered in any zone of {f.region}")
        return
    if ctx.cluster is not None:  # the zones the cluster already uses first
        zones.sort(key=lambda z: (z not in ctx.cluster.zones if ctx.cluster else True, z))
    quota_caps: list[CapacityType] = [c for c in req.wanted_capacity if c is not CapacityType.training_plan]
    quota = _quota_check(ctx, f, w, quota_caps) if quota_caps else None  # one quota for on-demand and spot
    for cap in req.wanted_capacity:
        if cap is CapacityType.on_demand and quota is not None:
            _on_demand(ctx, f, w, zones, quota)
        elif cap is CapacityType.spot and quota is not None:
            _spot(ctx, f, w, zones, quota)
        elif cap is CapacityType.training_plan:
            _training_plans(ctx, f, w, zones)


def _zone_names(f: RegionFacts) -> list[str]:
    if f.zones.ok and f.zones.value:
        return sorted(z.name for z in f.zones.value)
    return sorted((f.offerings.value or {}).keys())


def _zone_id(f: RegionFacts, zone: str) -> str:
    for z in f.zones.value or []:
        if zone in (z.name, z.id):
            return z.id
    return ""


def _zone_name(f: RegionFacts, zone: str | None) -> str | None:
    for z in f.zones.value or []:
        if zone in (z.name, z.id):
            return z.name
    return zone


def _quota_check(ctx: _Ctx, f: RegionFacts, w: Want, cap: list[CapacityType]) -> QuotaView | None:
    """The quota view when it covers the instances, else a near miss (and None)."""
    if not f.quotas.ok or f.quotas.value is None:
        _miss(ctx, f, w, cap, Reason.unknown, f"the cluster-usage quota of {w.instance_type} is unknown: "
                                              f"{f.quotas.unavailable}")
        return None
    q = f.quotas.value.get(w.instance_type) or QuotaLimit(
        instance_type=w.instance_type, quota_code="", quota_name=f"{w.instance_type} for cluster usage", limit=0)
    used = f.in_use.get(w.instance_type, 0)
    headroom = q.limit - used
    if w.nodes > headroom:
        short = w.nodes - max(headroom, 0)
        code = f" ({q.quota_code})" if q.quota_code else ""
        _miss(ctx, f, w, cap, Reason.quota_short,
              f"needs {w.nodes} x {w.instance_type}; the quota '{q.quota_name}'{code} is {q.limit}, PodStart's "
              f"clusters use {used}: short by {short}", short_by=short,
              would_fit_with=f"a quota increase to {used + w.nodes} in Service Quotas ({q.quota_name}{code})")
        return None
    return QuotaView(quota_name=q.quota_name, quota_code=q.quota_code, limit=q.limit, in_use=used,
                     headroom_after=headroom - w.nodes)


def _budget_ok(ctx: _Ctx, f: RegionFacts, w: Want, cap: CapacityType, hourly: float | None, label: str) -> bool:
    limit = ctx.req.max_hourly_usd
    if limit is None:
        return True
    if hourly is None:
        _miss(ctx, f, w, cap, Reason.no_price, f"{label}: no price is known to check against max_hourly_usd "
                                               f"{limit:g}")
        return False
    if hourly > limit:
        _miss(ctx, f, w, cap, Reason.over_budget,
              f"{label} costs {hourly:,.2f} USD/h, over max_hourly_usd {limit:,.2f}",
              would_fit_with=f"max_hourly_usd {hourly:,.2f} or more")
        return False
    return True


def _on_demand(ctx: _Ctx, f: RegionFacts, w: Want, zones: list[str], quota: QuotaView) -> None:
    cap = CapacityType.on_demand
    price = f.prices.get(w.instance_type)
    unit = price.value.hourly_usd if price is not None and price.ok and price.value else None
    hourly = round(unit * w.nodes, 2) if unit is not None else None
    label = f"{w.nodes} x {w.instance_type} on-demand"
    if not _budget_ok(ctx, f, w, cap, hourly, label):
        return
    source = price.value.source if price is not None and price.ok and price.value else (
        f"no price ({price.unavailable})" if price is not None and price.unavailable else "no price")
    zone = zones[0]
    groups = [GroupPlacement(availability_zone=zone, availability_zone_id=_zone_id(f, zone), instance_count=w.nodes)]
    _add(ctx, f, w, cap, "on-demand", groups, zones[1:], quota,
         PriceView(hourly_usd=hourly, total_usd=_total(unit * w.nodes if unit is not None else None, ctx.req.hours),
                   source=source),
         ctx.start, None, None, [], [] if unit is not None else ["no on-demand price was found: unknown cost"])


def _spot(ctx: _Ctx, f: RegionFacts, w: Want, zones: list[str], quota: QuotaView) -> None:
    cap = CapacityType.spot
    scores_fact = f.spot_scores.get(w.instance_type)
    if scores_fact is None or not scores_fact.ok or scores_fact.value is None:
        why = scores_fact.unavailable if scores_fact is not None else "not read"
        _miss(ctx, f, w, cap, Reason.unknown, f"spot placement scores of {w.instance_type} are unknown: {why}")
        return
    scored = sorted(((scores_fact.value.get(_zone_id(f, z), 0), z) for z in zones), key=lambda s: (-s[0], s[1]))
    best, zone = scored[0]
    if best < SPOT_MIN_SCORE:
        _miss(ctx, f, w, cap, Reason.spot_unlikely,
              f"EC2 spot placement score for {w.nodes} x {w.instance_type} is at most {best}/10 in {f.region} "
              f"(best {zone}): unlikely to be filled", would_fit_with=f"fewer instances, or a score of "
                                                                      f"{SPOT_MIN_SCORE}+ later")
        return
    if not _budget_ok(ctx, f, w, cap, None, f"{w.nodes} x {w.instance_type} spot"):
        return
    others = [z for s, z in scored[1:] if s >= SPOT_MIN_SCORE]
    groups = [GroupPlacement(availability_zone=zone, availability_zone_id=_zone_id(f, zone), instance_count=w.nodes)]
    _add(ctx, f, w, cap, "spot", groups, others, quota,
         PriceView(hourly_usd=None, source="spot: the rate varies and is not in the Price List"),
         ctx.start, None, best,
         [], [f"spot placement score {best}/10 in {zone}; spot instances can be interrupted"])


def _covers(ctx: _Ctx, plan_end: datetime | None) -> bool:
    if ctx.req.hours is None or plan_end is None:
        return True
    return plan_end >= ctx.start + timedelta(hours=ctx.req.hours)


def _at(value: Any) -> datetime | None:
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    try:
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _owned(ctx: _Ctx, f: RegionFacts, w: Want) -> list[TrainingPlan]:
    plans = f.training_plans.value or [] if f.training_plans.ok else []
    return [p for p in plans if p.instance_type == w.instance_type and p.status in ("Active", "Scheduled")
            and p.available_instance_count > 0 and _covers(ctx, _at(p.end_time))]


def _combine(plans: list[TrainingPlan], nodes: int) -> list[tuple[TrainingPlan, int]] | None:
    """Plans (largest first) that together hold `nodes` instances, with how many each gives."""
    out, left = [], nodes
    for p in sorted(plans, key=lambda p: (-p.available_instance_count, p.name)):
        take = min(left, p.available_instance_count)
        out.append((p, take))
        left -= take
        if left == 0:
            return out
    return None


def _training_plans(ctx: _Ctx, f: RegionFacts, w: Want, zones: list[str]) -> None:
    """Capacity already bought (one zone, or several with same_zone false), else offerings to buy; else the one
    reason neither fits."""
    cap = CapacityType.training_plan
    req = ctx.req
    owned = _owned(ctx, f, w)
    by_zone: dict[str, list[TrainingPlan]] = {}
    for p in owned:
        by_zone.setdefault(_zone_name(f, p.availability_zone) or "", []).append(p)
    found = False
    for zone in sorted(by_zone):
        picked = _combine(by_zone[zone], w.nodes)
        if picked:
            found |= _owned_option(ctx, f, w, picked)
    split = _combine(owned, w.nodes) if not found and len(by_zone) > 1 else None
    if split and not req.same_zone:
        found |= _owned_option(ctx, f, w, split)
    if found:
        return
    why: tuple[Reason, str, str | None] | None = None
    multi: list[PlanOffering] = []
    if w.instance_type not in RESERVABLE and not owned:
        ctx.unreservable.add(w.instance_type)  # one near miss per region names them all
        return
    if w.instance_type not in RESERVABLE:
        why = (Reason.not_reservable, f"{w.instance_type} cannot be reserved with a training plan", None)
    elif req.plan_hours is None:
        why = (Reason.no_duration, "training plan offerings need a duration: send hours", "hours")
    else:
        fact = f.plan_offerings.get(w.instance_type)
        if fact is None or not fact.ok or fact.value is None:
            reason = fact.unavailable if fact is not None else "not searched"
            why = (Reason.unknown, f"training plan offerings for {w.instance_type} are unknown: {reason}", None)
        else:
            offers = [o for o in fact.value if o.instance_count >= w.nodes]
            single = [o for o in offers if len(o.zones) <= 1]
            multi = [o for o in offers if len(o.zones) > 1]
            usable = single + (multi if not req.same_zone else [])
            limit = req.max_hourly_usd
            within = [o for o in usable if limit is None or _offer_hourly(ctx, o) <= limit]
            if usable and not within:
                cheapest = min(usable, key=lambda o: _offer_hourly(ctx, o))
                _budget_ok(ctx, f, w, cap, _offer_hourly(ctx, cheapest), f"the cheapest training plan offering "
                                                                        f"({cheapest.offering_id})")
                return
            for o in within:
                _offering_option(ctx, f, w, o)
            if within:
                return
    if split and req.same_zone:
        zs = sorted({_zone_name(f, p.availability_zone) or "" for p, _ in split})
        _miss(ctx, f, w, cap, Reason.split_needed,
              f"{w.nodes} x {w.instance_type} fit only across zones {', '.join(zs)}, in training plans "
              f"{', '.join(p.name for p, _ in split)} (already bought)",
              would_fit_with="same_zone: false (instances in several zones)")
    elif multi and req.same_zone:
        _miss(ctx, f, w, cap, Reason.split_needed,
              f"a training plan offering of {w.nodes} x {w.instance_type} spans zones {', '.join(multi[0].zones)}",
              would_fit_with="same_zone: false (instances in several zones)")
    elif why is not None and not (owned and why[0] is Reason.not_reservable):
        _miss(ctx, f, w, cap, why[0], why[1], would_fit_with=why[2])
    elif owned:
        _miss(ctx, f, w, cap, Reason.no_plan_offering,
              f"the account's {w.instance_type} training plans hold {sum(p.available_instance_count for p in owned)} "
              f"free instance(s) over the duration; {w.nodes} needed")
    elif not f.training_plans.ok:
        _miss(ctx, f, w, cap, Reason.unknown, f"the account's training plans are unknown: "
                                              f"{f.training_plans.unavailable}")
    else:
        window = f"from {ctx.start:%Y-%m-%d %H:%M} UTC for {req.plan_hours} h"
        _miss(ctx, f, w, cap, Reason.no_plan_offering,
              f"no training plan offering of {w.nodes} x {w.instance_type} in {f.region} {window}, and none "
              f"already bought", would_fit_with="a later start_after, a shorter duration or fewer instances")


def _owned_option(ctx: _Ctx, f: RegionFacts, w: Want, picked: list[tuple[TrainingPlan, int]]) -> bool:
    cap = CapacityType.training_plan
    if not _budget_ok(ctx, f, w, cap, 0.0, "capacity already bought"):
        return False
    groups = [GroupPlacement(availability_zone=_zone_name(f, p.availability_zone) or "",
                             availability_zone_id=_zone_id(f, p.availability_zone or ""), instance_count=n,
                             training_plan=p.arn) for p, n in picked]
    starts = [s for s in (_at(p.start_time) for p, _ in picked) if s]
    ends = [e for e in (_at(p.end_time) for p, _ in picked) if e]
    start = max([ctx.start, *starts])
    names = ", ".join(p.name for p, _ in picked)
    _add(ctx, f, w, cap, "owned", groups, [], None,
         PriceView(hourly_usd=0.0, total_usd=0.0 if ctx.req.hours else None, already_paid=True,
                   source=f"training plan {names}: already paid"),
         start, min(ends) if ends else None, None, [], [f"capacity of training plan {names}, already bought"])
    return True


def plan_arn(region: str, account: str, name: str) -> str:
    return f"arn:{partition(region)}:sagemaker:{region}:{account}:training-plan/{name}"


def suggest_plan_name(instance_type: str, nodes: int, start: datetime, taken: set[str]) -> str:
    family = re.sub(r"[^a-z0-9]+", "-", instance_type.removeprefix("ml.").split(".")[0])
    base = f"podstart-{family}-{nodes}x-{start:%Y%m%d}"[:60]
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    taken.add(name)
    return name


def _offer_hourly(ctx: _Ctx, o: PlanOffering) -> float:
    """A plan's upfront fee spread over its hours (what it costs per hour, for ranking and budgets)."""
    return round(float(o.upfront_fee or 0) / (o.duration_hours or ctx.req.plan_hours or 1), 2)


def _offering_option(ctx: _Ctx, f: RegionFacts, w: Want, o: PlanOffering) -> None:
    cap = CapacityType.training_plan
    fee = float(o.upfront_fee or 0)
    hours = o.duration_hours or ctx.req.plan_hours or 1
    hourly = _offer_hourly(ctx, o)
    start = o.start_time or ctx.start
    name = suggest_plan_name(w.instance_type, w.nodes, start, ctx.plan_names)
    arn = plan_arn(f.region, ctx.account, name) if ctx.account else None
    left, groups = w.nodes, []
    for s in o.segments:
        if left <= 0:
            break
        n = min(left, s.instance_count)
        zone = _zone_name(f, s.availability_zone) or ""
        groups.append(GroupPlacement(availability_zone=zone, availability_zone_id=_zone_id(f, zone),
                                     instance_count=n, training_plan=arn or name))
        left -= n
    body = {"name": name, "offering": {"region": f.region, "offering_id": o.offering_id,
                                       "instance_type": w.instance_type, "instance_count": w.nodes,
                                       "duration_hours": ctx.req.plan_hours or hours,
                                       "start_after": _iso(_hour(ctx.start))}}
    need = Requirement(action="buy_training_plan", path="/v1/capacity/training-plans", body=body,
                       upfront_fee=o.upfront_fee, currency=o.currency,
                       detail=f"buy training plan {name}: {w.nodes} x {w.instance_type} for {hours} h from "
                              f"{start:%Y-%m-%d %H:%M} UTC, {fee:,.2f} {o.currency} upfront (admin; add "
                              f"confirm_upfront_fee: \"{o.upfront_fee}\")")
    notes = [f"starts {start:%Y-%m-%d %H:%M} UTC when the plan's capacity does; paid upfront, not refundable"]
    if not arn:
        notes.append("the account id is unknown: use the training_plan_arn the purchase returns")
    _add(ctx, f, w, cap, "offering", groups, [], None,
         PriceView(hourly_usd=hourly, total_usd=fee, upfront_usd=fee,
                   source=f"SageMaker training plan offering {o.offering_id} ({o.currency} upfront)"),
         start, o.end_time, None, [need], notes)


def _iso(t: datetime) -> str:
    return t.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _total(hourly: float | None, hours: int | None) -> float | None:
    return None if hourly is None or hours is None else round(hourly * hours, 2)


def _group_name(ctx: _Ctx, w: Want, i: int, zone: str, many: bool, taken: set[str]) -> str:
    base = w.accel.model.value if w.accel else "workers"
    if many:
        base = f"{base}-{zone[-1:]}" if zone else f"{base}-{i + 1}"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    taken.add(name)
    return name


def _bodies(ctx: _Ctx, f: RegionFacts, w: Want, cap: CapacityType,
            groups: list[GroupPlacement]) -> tuple[RequestToSend | None, list[RequestToSend]]:
    if any(g.training_plan and not g.training_plan.startswith("arn:") for g in groups):
        return None, []  # the account id is unknown: the ARN comes with the purchase
    taken = set(ctx.cluster.group_names) if ctx.cluster else set()
    specs = [InstanceGroupSpec(name=_group_name(ctx, w, i, g.availability_zone, len(groups) > 1, taken),
                               instance_type=w.instance_type, instance_count=g.instance_count,
                               availability_zone=g.availability_zone, capacity_type=cap,
                               training_plan_arn=g.training_plan)
             for i, g in enumerate(groups)]
    if ctx.cluster is not None:
        return None, [RequestToSend(path=f"/v1/clusters/{ctx.cluster.name}/instance-groups?region={f.region}",
                                    body=InstanceGroupAdd.model_validate(s.model_dump()).model_dump(
                                        mode="json", exclude_none=True)) for s in specs]
    body = ClusterCreate(name=ctx.cluster_name, region=f.region, instance_groups=specs)
    return RequestToSend(path="/v1/clusters", body=body.model_dump(mode="json", exclude_none=True,
                                                                   exclude={"storage"})), []


def _add(ctx: _Ctx, f: RegionFacts, w: Want, cap: CapacityType, flavour: str, groups: list[GroupPlacement],
         other_zones: list[str], quota: QuotaView | None, price: PriceView, start: datetime, ends: datetime | None,
         spot_score: int | None, requires: list[Requirement], notes: list[str]) -> None:
    create, adds = _bodies(ctx, f, w, cap, groups)
    per = w.accel.count if w.accel else 0
    option = {"region": f.region, "instance_type": w.instance_type, "accelerators": w.accel.label if w.accel else None,
              "gpus": per * w.nodes, "instance_count": w.nodes, "capacity_type": cap,
              "availability_zone": groups[0].availability_zone, "availability_zone_id": groups[0].availability_zone_id,
              "groups": groups, "other_zones": other_zones, "quota": quota, "price": price,
              "earliest_start": start, "starts_now": start <= ctx.now, "ends": ends, "spot_score": spot_score,
              "efa": bool(w.accel and w.accel.efa), "nvlink": bool(w.accel and w.accel.nvlink),
              "requires": requires, "create_cluster": create, "add_instance_groups": adds, "notes": notes}
    cost = price.total_usd if ctx.req.hours is not None else price.hourly_usd
    sort = (start, float("inf") if cost is None else cost, w.nodes, CAPACITY_ORDER[flavour],
            ctx.region_order.get(f.region, 99), groups[0].availability_zone, w.instance_type)
    ctx.candidates.append(_Candidate(option, sort))


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
