"""The capacity advisor's facts from AWS (CapacityFacts), cached per (region, fact) per container.

At most one AWS read per (region, fact) per cache period, even when requests arrive together (one loader per
key; the others wait for its answer). A paginated list (ListServiceQuotas, DescribeInstanceTypeOfferings) is one
read of as many pages as AWS returns. A fact AWS refuses (no permission, throttled, any error) is cached as
unavailable for `RETRY_UNAVAILABLE_S`, so a struggling API is asked again soon but not on every request.

Cache periods (seconds) follow how fast each fact changes: zones rarely; offerings and quota limits slowly;
the account's own training plans and the offerings for sale quickly; prices publish a few times a month (the
price book's own 24-hour cache, shared with plans' cost lines).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

from botocore.exceptions import BotoCoreError, ClientError

from functions.adapters import aws
from functions.adapters.prices import AwsPriceList
from functions.domain import catalog as cat
from functions.domain.capacity.facts import (
    Fact,
    PlanOffering,
    PlanSearch,
    Price,
    QuotaLimit,
    plan_offerings_from_api,
    quota_limits_from_api,
)
from functions.observability import logger

T = TypeVar("T")

CACHE_SECONDS: dict[str, float] = {
    "zones": 3600.0,
    "offerings": 900.0,
    "quotas": 600.0,
    "training_plans": 30.0,
    "plan_offerings": 300.0,
    "spot_scores": 600.0,
    "account": 24 * 3600.0,
}
RETRY_UNAVAILABLE_S = 30.0
SOURCES = {
    "zones": "ec2:DescribeAvailabilityZones",
    "offerings": "ec2:DescribeInstanceTypeOfferings",
    "quotas": "servicequotas:ListServiceQuotas",
    "training_plans": "sagemaker:ListTrainingPlans",
    "plan_offerings": "sagemaker:SearchTrainingPlanOfferings",
    "price": "pricing:GetProducts",
    "spot_scores": "ec2:GetSpotPlacementScores",
    "account": "sts:GetCallerIdentity",
}
NO_PERMISSION = {"AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "UnauthorizedAccess",
                 "NoSuchResourceException"}
THROTTLED = {"Throttling", "ThrottlingException", "ThrottledException", "TooManyRequestsException",
             "RequestLimitExceeded", "SlowDown"}


def why_unavailable(exc: Exception) -> str:
    """What an agent and a user can act on: no permission, throttled, or the AWS error code."""
    if isinstance(exc, ClientError):
        code = str(exc.response.get("Error", {}).get("Code") or "ClientError")
        if code in NO_PERMISSION:
            return f"no permission ({code})"
        if code in THROTTLED:
            return f"throttled ({code})"
        message = str(exc.response.get("Error", {}).get("Message") or "")[:160]
        return f"{code}: {message}" if message else code
    if isinstance(exc, BotoCoreError | ConnectionError | TimeoutError):
        return f"unreachable ({type(exc).__name__})"
    return f"error ({type(exc).__name__})"


@dataclass
class _Entry:
    expires: float
    fact: Fact[Any]


@dataclass
class FactCache:
    """(key) -> Fact, with one loader per key at a time."""

    clock: Callable[[], float] = time.monotonic
    _entries: dict[tuple[Any, ...], _Entry] = field(default_factory=dict)
    _locks: dict[tuple[Any, ...], threading.Lock] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def get(self, key: tuple[Any, ...], ttl: float, load: Callable[[], Fact[T]], force: bool = False) -> Fact[T]:
        """The cached fact, else `load()` (kept `ttl` seconds); `force` reads again whatever the cache holds."""
        hit = None if force else self._fresh(key)
        if hit is not None:
            return hit
        with self._lock:
            key_lock = self._locks.setdefault(key, threading.Lock())
        with key_lock:
            hit = None if force else self._fresh(key)  # another request loaded it meanwhile
            if hit is not None:
                return hit
            fact = load()
            keep = ttl if fact.unavailable is None else min(ttl, RETRY_UNAVAILABLE_S)
            with self._lock:
                self._entries[key] = _Entry(self.clock() + keep, fact)
            return fact

    def _fresh(self, key: tuple[Any, ...]) -> Fact[Any] | None:
        with self._lock:
            entry = self._entries.get(key)
        return entry.fact if entry is not None and entry.expires > self.clock() else None

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def drop(self, match: Callable[[tuple[Any, ...]], bool]) -> None:
        with self._lock:
            for key in [k for k in self._entries if match(k)]:
                del self._entries[key]


_client_lock = threading.Lock()


def _client(service: str, region: str | None) -> Any:
    """boto3 clients are built one at a time (session.client is not thread-safe); calls on them may overlap."""
    with _client_lock:
        return aws.client(service, region)


@dataclass
class AwsCapacityFacts:
    """CapacityFacts over EC2, Service Quotas, SageMaker, the Price List and STS."""

    prices: AwsPriceList
    cache: FactCache = field(default_factory=FactCache)
    client: Callable[[str, str | None], Any] = _client

    def _read(self, name: str, key: tuple[Any, ...], load: Callable[[], T], subject: str | None = None,
              fresh: bool = False) -> Fact[T]:
        def run() -> Fact[T]:
            try:
                value = load()
            except Exception as exc:  # any failure of one fact is reported with the advice, never fatal
                logger.warning("capacity fact unavailable", fact=name, key=str(key), error=str(exc)[:300])
                return Fact(name=name, source=SOURCES[name], unavailable=why_unavailable(exc), subject=subject,
                            fetched_at=datetime.now(UTC))
            return Fact(name=name, source=SOURCES[name], value=value, fetched_at=datetime.now(UTC), subject=subject)

        return self.cache.get((name, *key), CACHE_SECONDS[name], run, force=fresh)

    def zones(self, region: str) -> Fact[list[cat.AvailabilityZone]]:
        def load() -> list[cat.AvailabilityZone]:
            resp = self.client("ec2", region).describe_availability_zones(
                Filters=[{"Name": "zone-type", "Values": ["availability-zone"]}])
            return [cat.AvailabilityZone(name=z["ZoneName"], id=z["ZoneId"], state=z.get("State", "available"))
                    for z in resp.get("AvailabilityZones", [])]

        return self._read("zones", (region,), load)

    def offerings(self, region: str, instance_types: tuple[str, ...]) -> Fact[dict[str, frozenset[str]]]:
        def load() -> dict[str, frozenset[str]]:
            found: dict[str, set[str]] = {}
            names = [cat.ec2_name(t) for t in instance_types]
            pages = self.client("ec2", region).get_paginator("describe_instance_type_offerings").paginate(
                LocationType="availability-zone", Filters=[{"Name": "instance-type", "Values": names}])
            for page in pages:
                for o in page.get("InstanceTypeOfferings", []):
                    found.setdefault(o["Location"], set()).add(cat.ML_PREFIX + o["InstanceType"])
            return {zone: frozenset(types) for zone, types in found.items()}

        return self._read("offerings", (region, tuple(sorted(instance_types))), load)

    def quotas(self, region: str) -> Fact[dict[str, QuotaLimit]]:
        def load() -> dict[str, QuotaLimit]:
            raw: list[dict[str, Any]] = []
            pages = self.client("service-quotas", region).get_paginator("list_service_quotas").paginate(
                ServiceCode="sagemaker", PaginationConfig={"PageSize": 100})
            for page in pages:
                raw.extend(page.get("Quotas", []))
            return quota_limits_from_api(raw)

        return self._read("quotas", (region,), load)

    def training_plans(self, region: str, fresh: bool = False) -> Fact[list[cat.TrainingPlan]]:
        def load() -> list[cat.TrainingPlan]:
            sm = self.client("sagemaker", region)
            plans: list[cat.TrainingPlan] = []
            args: dict[str, Any] = {"MaxResults": 100}
            while True:
                resp = sm.list_training_plans(**args)
                plans.extend(cat.training_plan_from_api(p) for p in resp.get("TrainingPlanSummaries", []))
                if not resp.get("NextToken"):
                    return plans
                args["NextToken"] = resp["NextToken"]

        return self._read("training_plans", (region,), load, fresh=fresh)

    def plan_offerings(self, search: PlanSearch, fresh: bool = False) -> Fact[list[PlanOffering]]:
        def load() -> list[PlanOffering]:
            args: dict[str, Any] = {"InstanceType": search.instance_type, "InstanceCount": search.instance_count,
                                    "DurationHours": search.duration_hours, "TargetResources": ["hyperpod-cluster"]}
            if search.start_after is not None:
                args["StartTimeAfter"] = search.start_after
            if search.end_before is not None:
                args["EndTimeBefore"] = search.end_before
            return plan_offerings_from_api(self.client("sagemaker", search.region).search_training_plan_offerings(
                **args))

        key = (search.region, search.instance_type, search.instance_count, search.duration_hours,
               search.start_after, search.end_before)
        return self._read("plan_offerings", key, load, subject=search.instance_type, fresh=fresh)

    def price(self, region: str, instance_type: str) -> Fact[Price]:
        key = ("hyperpod", instance_type)
        found = self.prices.hourly(region, key)  # its own 24-hour cache: one Price List call per (region, type)
        fetched = self.prices.fetched_at(region, key)
        if found is None:
            return Fact(name="price", source=SOURCES["price"], subject=instance_type, fetched_at=fetched,
                        unavailable="no price in the AWS Price List (or the Price List was unreachable)")
        return Fact(name="price", source=SOURCES["price"], subject=instance_type, fetched_at=fetched,
                    value=Price(hourly_usd=found[0], source=found[1]))

    def spot_scores(self, region: str, instance_type: str, count: int) -> Fact[dict[str, int]]:
        def load() -> dict[str, int]:
            resp = self.client("ec2", region).get_spot_placement_scores(
                InstanceTypes=[cat.ec2_name(instance_type)], TargetCapacity=count, TargetCapacityUnitType="units",
                SingleAvailabilityZone=True, RegionNames=[region])
            return {str(s["AvailabilityZoneId"]): int(s.get("Score") or 0)
                    for s in resp.get("SpotPlacementScores", []) if s.get("AvailabilityZoneId")}

        return self._read("spot_scores", (region, instance_type, count), load, subject=instance_type)

    def account(self) -> Fact[str]:
        def load() -> str:
            return str(self.client("sts", None).get_caller_identity()["Account"])

        return self._read("account", (), load)

    def forget(self, region: str, *facts: str) -> None:
        self.cache.drop(lambda key: key[0] in facts and len(key) > 1 and key[1] == region)
