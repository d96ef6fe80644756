"""The advisor's options: for each region and want, every capacity type considered (on-demand, spot, the training
plans owned and offered), each an option with its groups, cost and quota, or a near miss saying why not."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from functions.domain.arns import partition
from functions.domain.capacity.facts import Fact, PlanOffering, QuotaLimit, RegionFacts
from functions.domain.capacity.inputs import ClusterContext, Want, _at, _hour
from functions.domain.capacity.models import (
    CAPACITY_ORDER,
    RESERVABLE,
    SPOT_MIN_SCORE,
    AdviceRequest,
    FactLine,
    GroupPlacement,
    NearMiss,
    PriceView,
    QuotaView,
    Reason,
    RequestToSend,
    Requirement,
)
from functions.domain.catalog import TrainingPlan
from functions.domain.clusters.api import CapacityType, ClusterCreate, InstanceGroupAdd, InstanceGroupSpec

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
