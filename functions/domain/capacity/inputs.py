"""The advisor's inputs besides the facts: the cluster it advises for (`ClusterContext`), what the request wants
(one `Want` per accelerator and count), the training plan searches to run, and which types are offered and priced."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from functions.domain.capacity import accelerators as acc
from functions.domain.capacity.accelerators import Accelerators, GpuModel
from functions.domain.capacity.facts import PlanSearch, RegionFacts
from functions.domain.capacity.models import (
    MAX_NODES,
    RESERVABLE,
    AdviceRequest,
)
from functions.domain.clusters.api import CapacityType

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
