"""The facts the capacity advisor reads from AWS, and the port that reads them.

Each fact is read at most once per (region, fact) per cache period (the adapter's `CACHE_SECONDS`) and carries
where it came from and when: `Fact.source` names the AWS call ("ec2:DescribeInstanceTypeOfferings"), `fetched_at`
its time. A fact AWS would not give (no permission, throttled, an error) is `Fact.unavailable` with the reason:
the advice reports it and answers from the other facts, it never fails for one of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict

from functions.domain.catalog import AvailabilityZone, TrainingPlan

T = TypeVar("T")


@dataclass(frozen=True)
class Fact(Generic[T]):
    """A value read from AWS (or None and why not), where from and when."""

    name: str  # zones | offerings | quotas | training_plans | plan_offerings | price | spot_scores | account
    source: str  # the AWS call: "ec2:DescribeAvailabilityZones"
    value: T | None = None
    fetched_at: datetime | None = None
    unavailable: str | None = None  # why the value is missing: "no permission (AccessDenied)", "throttled"
    subject: str | None = None  # what a per-subject fact is about: an instance type

    @property
    def ok(self) -> bool:
        return self.unavailable is None and self.value is not None


class QuotaLimit(BaseModel):
    """A SageMaker `<type> for cluster usage` quota (Service Quotas); what is in use comes from PodStart."""

    model_config = ConfigDict(frozen=True)

    instance_type: str
    quota_code: str
    quota_name: str
    limit: int


class ReservedSegment(BaseModel):
    """One ReservedCapacityOffering of a training plan offering: instances in one zone for a time window."""

    model_config = ConfigDict(frozen=True)

    instance_type: str
    instance_count: int
    availability_zone: str | None
    start_time: datetime | None
    end_time: datetime | None
    duration_hours: int


class PlanOffering(BaseModel):
    """A SageMaker training plan offering (SearchTrainingPlanOfferings): capacity that can be bought now."""

    model_config = ConfigDict(frozen=True)

    offering_id: str
    upfront_fee: str  # as AWS says it ("123456.78"), repeated verbatim by the purchase's confirmation
    currency: str
    duration_hours: int
    segments: tuple[ReservedSegment, ...]

    @property
    def start_time(self) -> datetime | None:
        starts = [s.start_time for s in self.segments if s.start_time]
        return min(starts) if starts else None

    @property
    def end_time(self) -> datetime | None:
        ends = [s.end_time for s in self.segments if s.end_time]
        return max(ends) if ends else None

    @property
    def zones(self) -> list[str]:
        return sorted({s.availability_zone for s in self.segments if s.availability_zone})

    @property
    def instance_count(self) -> int:
        return sum(s.instance_count for s in self.segments)


class PlanSearch(BaseModel):
    """What one SearchTrainingPlanOfferings asks (also the cache key of its answer)."""

    model_config = ConfigDict(frozen=True)

    region: str
    instance_type: str
    instance_count: int
    duration_hours: int
    start_after: datetime | None = None
    end_before: datetime | None = None


class Price(BaseModel):
    model_config = ConfigDict(frozen=True)

    hourly_usd: float
    source: str  # "AWS Price List, 2026-11-30"


@dataclass(frozen=True)
class RegionFacts:
    """What the advisor knows about one region."""

    region: str
    zones: Fact[list[AvailabilityZone]]
    offerings: Fact[dict[str, frozenset[str]]]  # zone name -> ml. instance types offered there
    quotas: Fact[dict[str, QuotaLimit]]  # ml. instance type -> its cluster-usage quota
    training_plans: Fact[list[TrainingPlan]]  # the account's plans (capacity already bought)
    in_use: dict[str, int] = field(default_factory=dict)  # ml. type -> instances PodStart's clusters use (no plans)
    prices: dict[str, Fact[Price]] = field(default_factory=dict)  # ml. type -> on-demand price
    plan_offerings: dict[str, Fact[list[PlanOffering]]] = field(default_factory=dict)  # ml. type -> offerings
    spot_scores: dict[str, Fact[dict[str, int]]] = field(default_factory=dict)  # ml. type -> zone id -> 1..10

    def all_facts(self) -> list[Fact[object]]:
        out: list[Fact[object]] = [self.zones, self.offerings, self.quotas, self.training_plans]  # type: ignore[list-item]
        for group in (self.prices, self.plan_offerings, self.spot_scores):
            out += [group[k] for k in sorted(group)]  # type: ignore[misc]
        return out


class CapacityFacts(Protocol):
    """Reads the advisor's facts from AWS, cached per (region, fact); never raises for an unavailable fact."""

    def zones(self, region: str) -> Fact[list[AvailabilityZone]]: ...

    def offerings(self, region: str, instance_types: tuple[str, ...]) -> Fact[dict[str, frozenset[str]]]:
        """Zones offering each of the accelerated HyperPod types (one DescribeInstanceTypeOfferings)."""

    def quotas(self, region: str) -> Fact[dict[str, QuotaLimit]]: ...

    def training_plans(self, region: str, fresh: bool = False) -> Fact[list[TrainingPlan]]:
        """The account's plans; `fresh` reads past the cache (a purchase's admission)."""

    def plan_offerings(self, search: PlanSearch, fresh: bool = False) -> Fact[list[PlanOffering]]:
        """SearchTrainingPlanOfferings; `fresh` reads past the cache (a purchase's admission)."""

    def price(self, region: str, instance_type: str) -> Fact[Price]: ...

    def spot_scores(self, region: str, instance_type: str, count: int) -> Fact[dict[str, int]]:
        """EC2 spot placement scores per zone id (1-10) for `count` instances of the type's EC2 twin."""

    def account(self) -> Fact[str]:
        """The AWS account id (STS GetCallerIdentity): the ARN a training plan bought here will have."""

    def forget(self, region: str, *facts: str) -> None:
        """Drop what is cached of these facts in the region (a purchase changes the plans and the offerings)."""


# --- shaping what the AWS APIs answer (pure) ------------------------------------------------------------------------

QUOTA_SUFFIX = " for cluster usage"


def quota_limits_from_api(quotas: list[dict[str, Any]]) -> dict[str, QuotaLimit]:
    """ListServiceQuotas(ServiceCode=sagemaker) -> the `<ml type> for cluster usage` limits by instance type."""
    out: dict[str, QuotaLimit] = {}
    for q in quotas:
        name = str(q.get("QuotaName") or "")
        if not name.startswith("ml.") or not name.endswith(QUOTA_SUFFIX):
            continue
        itype = name.removesuffix(QUOTA_SUFFIX)
        out[itype] = QuotaLimit(instance_type=itype, quota_code=str(q.get("QuotaCode") or ""), quota_name=name,
                                limit=int(float(str(q.get("Value") or 0))))
    return out


def _time(value: object) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if value in (None, ""):
        return None
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None


def plan_offerings_from_api(answer: dict[str, Any]) -> list[PlanOffering]:
    """SearchTrainingPlanOfferings' TrainingPlanOfferings -> offerings (instance capacity only)."""
    out = []
    for o in answer.get("TrainingPlanOfferings") or []:
        segments = tuple(
            ReservedSegment(instance_type=str(r.get("InstanceType") or ""),
                            instance_count=int(r.get("InstanceCount") or 0),
                            availability_zone=r.get("AvailabilityZone"), start_time=_time(r.get("StartTime")),
                            end_time=_time(r.get("EndTime")), duration_hours=int(r.get("DurationHours") or 0))
            for r in o.get("ReservedCapacityOfferings") or []
            if r.get("ReservedCapacityType", "Instance") == "Instance")
        if not segments:
            continue
        out.append(PlanOffering(offering_id=str(o["TrainingPlanOfferingId"]),
                                upfront_fee=str(o.get("UpfrontFee") or "0"),
                                currency=str(o.get("CurrencyCode") or "USD"),
                                duration_hours=int(o.get("DurationHours") or 0), segments=segments))
    return out
