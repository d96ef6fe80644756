"""Capacity use cases: the advice (POST /v1/capacity/advice), a cluster's GPUs per group (GET .../gpus), and buying a
training plan (POST /v1/capacity/training-plans, operation training_plan.purchase, admin).

The advice reads its facts region by region in parallel (zones, offerings, quotas and the account's plans first;
then, for the instance types still in the running, prices, spot scores and training plan offerings), each fact
through the cached port (`deps.capacity`), and what PodStart's clusters use from its own records. The rules are
the domain's (functions.domain.capacity.advice).
"""

from __future__ import annotations

import contextvars
import dataclasses
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any, TypeVar

from functions.domain.capacity import accelerators, inputs, placement, purchase
from functions.domain.capacity import advice as rules
from functions.domain.capacity.facts import CapacityFacts, Fact, RegionFacts
from functions.domain.capacity.models import Advice, AdviceRequest
from functions.domain.clusters.models import CapacityType
from functions.domain.clusters.record import ClusterRecord, ClusterStatus
from functions.domain.errors import Conflict, InvalidInput
from functions.domain.operations import Actor, Operation, Target
from functions.domain.plans import Plan
from functions.logic.clusters.views import find_record
from functions.logic.deps import Deps
from functions.logic.plans import Started, start_or_plan

T = TypeVar("T")
WORKERS = 16  # AWS reads in flight at once for one advice (three regions: their first facts all at once)
COUNTED = (ClusterStatus.CREATING, ClusterStatus.ACTIVE, ClusterStatus.DELETING, ClusterStatus.DELETE_FAILED,
           ClusterStatus.IMPORTING)


def _facts(deps: Deps) -> CapacityFacts:
    if deps.capacity is None:
        raise RuntimeError("no capacity facts reader configured")
    return deps.capacity


def in_use(records: list[ClusterRecord], region: str) -> dict[str, int]:
    """Instances PodStart's clusters hold per type in a region, as the cluster-usage quota counts them: every group
    but those on training plan capacity (a plan is capacity of its own)."""
    used: dict[str, int] = {}
    for r in records:
        if r.region != region or r.status not in COUNTED:
            continue
        for g in r.instance_groups:
            if g.capacity_type == CapacityType.training_plan.value:
                continue
            used[g.instance_type] = used.get(g.instance_type, 0) + max(g.instance_count, g.current_count or 0)
    return used


def _default_region(deps: Deps) -> str:
    settings = getattr(deps, "settings", None)
    return str(getattr(settings, "aws_region", "") or "us-west-2")


def _in_context(pool: ThreadPoolExecutor, fn: Callable[..., T], *args: Any) -> Any:
    """Submit with the caller's context (the sandbox's call log tags each AWS call with its API request)."""
    return pool.submit(contextvars.copy_context().run, fn, *args)


def advise(deps: Deps, req: AdviceRequest, now: datetime | None = None) -> Advice:
    now = now or datetime.now(UTC)
    reader = _facts(deps)
    records = deps.records.all()
    cluster: inputs.ClusterContext | None = None
    regions = list(req.regions or [])
    if req.cluster is not None:
        rec = find_record(deps, req.cluster, regions[0] if len(regions) == 1 else None)
        if regions and regions != [rec.region]:
            raise InvalidInput.field(["body", "regions"], f"{rec.name} is in {rec.region}: its groups can only be "
                                                          f"added there (leave regions out)")
        regions = [rec.region]
        cluster = inputs.ClusterContext(name=rec.name, region=rec.region,
                                        group_names=frozenset(g.name for g in rec.instance_groups),
                                        zones=tuple(sorted({g.availability_zone for g in rec.instance_groups})))
    regions = regions or [_default_region(deps)]
    types = tuple(sorted(set(accelerators.ACCELERATORS) | ({req.instance_type} if req.instance_type else set())))
    with ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="capacity") as pool:
        plans_wanted = CapacityType.training_plan in req.wanted_capacity and req.plan_hours is not None
        account = _in_context(pool, reader.account) if plans_wanted else None  # a bought plan's ARN names it
        firsts = [(r, _in_context(pool, reader.zones, r), _in_context(pool, reader.offerings, r, types),
                   _in_context(pool, reader.quotas, r), _in_context(pool, reader.training_plans, r)) for r in regions]
        base = [RegionFacts(region=r, zones=z.result(), offerings=o.result(), quotas=q.result(),
                            training_plans=p.result(), in_use=in_use(records, r)) for r, z, o, q, p in firsts]
        wanted = set(req.wanted_capacity)
        later: list[tuple[str, str, str, Any]] = []  # (kind, region, instance type, future)
        for f in base:
            for w in inputs.priced_types(req, f):
                if CapacityType.on_demand in wanted:
                    later.append(("price", f.region, w.instance_type,
                                  _in_context(pool, reader.price, f.region, w.instance_type)))
                if CapacityType.spot in wanted:
                    later.append(("spot", f.region, w.instance_type,
                                  _in_context(pool, reader.spot_scores, f.region, w.instance_type, w.nodes)))
            for s in inputs.plan_searches(req, f, now):
                later.append(("plan", f.region, s.instance_type, _in_context(pool, reader.plan_offerings, s)))
        done: dict[tuple[str, str], dict[str, Fact[Any]]] = {}
        for kind, region, itype, fut in later:
            done.setdefault((kind, region), {})[itype] = fut.result()
        account_fact: Fact[str] | None = account.result() if account is not None else None
    regions_facts = [dataclasses.replace(f, prices=done.get(("price", f.region), {}),
                                         spot_scores=done.get(("spot", f.region), {}),
                                         plan_offerings=done.get(("plan", f.region), {})) for f in base]
    names = {r.name for r in records}
    name = rules.suggest_name(req)
    if req.name is None and cluster is None:
        name = _free(name, names)
    taken_plans = {p.name for f in base for p in (f.training_plans.value or [])}
    return rules.advise(req, regions_facts, now=now,
                        account=account_fact.value if account_fact is not None and account_fact.ok else None,
                        cluster=cluster, cluster_name=name, taken_plan_names=taken_plans,
                        extra_facts=[account_fact] if account_fact is not None else [])


def _free(name: str, taken: set[str]) -> str:
    candidate, n = name, 2
    while candidate in taken:
        suffix = f"-{n}"
        candidate, n = name[: 32 - len(suffix)] + suffix, n + 1
    return candidate


def cluster_gpus(deps: Deps, name: str, region: str | None) -> placement.ClusterGpus:
    rec = find_record(deps, name, region)
    if rec.status is not ClusterStatus.ACTIVE:
        raise Conflict(f"cluster {rec.name} is {rec.status.value}: its nodes are counted once it is ACTIVE")
    kube = deps.kube(rec.eks_cluster_name, rec.region)
    return placement.cluster_gpus(rec.name, rec.region, kube.list("/api/v1/nodes"), kube.list("/api/v1/pods"))


def purchase_plan(deps: Deps, body: purchase.TrainingPlanPurchase, actor: Actor, key: str | None,
                  dry_run: bool = False) -> Started | Plan:
    reader = _facts(deps)
    target = Target(region=body.region, resource=f"training-plans/{body.name}")

    class _Admission:
        facts: dict[str, Any] = {}

        def normalize(self) -> dict[str, Any]:
            owned = reader.training_plans(body.region, fresh=True)
            if owned.ok and any(p.name == body.name for p in owned.value or []):
                raise Conflict(f"{body.region} already has a training plan named {body.name!r}",
                               errors=[{"loc": ["body", "name"], "msg": "already taken in this region"}])
            ref = body.offering
            found = reader.plan_offerings(ref.plan_search(), fresh=True)
            if not found.ok:
                raise Conflict(f"SageMaker did not answer the offering search ({found.unavailable}): nothing was "
                               f"bought; try again shortly")
            offering = next((o for o in found.value or [] if o.offering_id == ref.offering_id), None)
            if offering is None:
                raise Conflict(f"offering {ref.offering_id} is no longer offered for {ref.instance_count} x "
                               f"{ref.instance_type} (offerings change as capacity sells): ask advise_capacity again",
                               errors=[{"loc": ["body", "offering", "offering_id"], "msg": "no longer offered"}])
            problem = purchase.confirm_problem(offering, body.confirm_upfront_fee, dry_run)
            if problem:
                raise InvalidInput.field(purchase.CONFIRM_LOC, problem)
            self.facts = {"offering": offering.model_dump(mode="json"),
                          "confirmed": body.confirm_upfront_fee is not None}
            return purchase.normalized(body, offering)

        def claim(self, op: Operation) -> None:
            """Nothing to reserve: CreateTrainingPlan takes the name (the purchase step adopts a plan it made)."""

        def unclaim(self, op: Operation) -> None:
            """Nothing was reserved."""

    result = start_or_plan(deps, dry_run=dry_run, kind=purchase.KIND, target=target,
                           request=body.model_dump(mode="json"), principal=actor, idempotency_key=key,
                           admission=_Admission())
    if not dry_run:  # the next advice reads the plans and the offerings again (the purchase changes both)
        reader.forget(body.region, "training_plans", "plan_offerings")
    return result
