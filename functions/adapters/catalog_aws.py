"""Catalog reads from the real AWS APIs (EC2, SageMaker, Service Quotas), cached briefly per container."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

from botocore.exceptions import ClientError

from functions.adapters import aws
from functions.domain import catalog as cat
from functions.domain.errors import InvalidInput

T = TypeVar("T")
CACHE_SECONDS = 60.0
_cache: dict[tuple[Any, ...], tuple[float, Any]] = {}
_cache_lock = threading.Lock()


def cached(key: tuple[Any, ...], load: Callable[[], T], ttl: float = CACHE_SECONDS) -> T:
    now = time.monotonic()
    with _cache_lock:
        hit = _cache.get(key)
        if hit and now - hit[0] < ttl:
            return hit[1]  # type: ignore[no-any-return]
    value = load()
    with _cache_lock:
        _cache[key] = (now, value)
    return value


def clear_cache_key(key: tuple[Any, ...]) -> None:
    with _cache_lock:
        _cache.pop(key, None)


def clear_cache() -> None:
    with _cache_lock:
        _cache.clear()


def check_region(region: str, loc: tuple[str, ...] = ("query", "region")) -> str:
    if region not in cat.HYPERPOD_REGIONS:
        raise InvalidInput.field(loc, f"{region!r} is not a region where SageMaker HyperPod runs; "
                                      f"see GET /v1/catalog/regions")
    return region


def hyperpod_instance_types() -> tuple[str, ...]:
    """The `ClusterInstanceType` enum of the SageMaker service model: the types HyperPod accepts."""
    shape = aws.client("sagemaker", "us-west-2").meta.service_model.shape_for("ClusterInstanceType")
    return tuple(shape.enum)


def regions() -> list[cat.Region]:
    def load() -> list[cat.Region]:
        resp = aws.client("ec2", "us-east-1").describe_regions(AllRegions=False)
        enabled = {r["RegionName"] for r in resp.get("Regions", [])}
        return [cat.Region(name=r) for r in cat.HYPERPOD_REGIONS if r in enabled]

    return cached(("regions",), load)


def availability_zones(region: str) -> list[cat.AvailabilityZone]:
    check_region(region)

    def load() -> list[cat.AvailabilityZone]:
        resp = aws.client("ec2", region).describe_availability_zones(
            Filters=[{"Name": "zone-type", "Values": ["availability-zone"]}]
        )
        return [cat.AvailabilityZone(name=z["ZoneName"], id=z["ZoneId"], state=z.get("State", "available"))
                for z in resp.get("AvailabilityZones", [])]

    return cached(("azs", region), load)


def resolve_zone(region: str, zone: str, loc: tuple[str, ...]) -> cat.AvailabilityZone:
    for z in availability_zones(region):
        if zone in (z.name, z.id):
            return z
    raise InvalidInput.field(loc, f"{zone!r} is not an availability zone of {region}")


def instance_types(region: str, zone: str | None) -> list[cat.InstanceType]:
    check_region(region)
    az = resolve_zone(region, zone, ("query", "availability_zone")) if zone else None

    def load() -> list[cat.InstanceType]:
        ec2 = aws.client("ec2", region)
        wanted = {cat.ec2_name(t) for t in hyperpod_instance_types()}
        offered: set[str] = set()
        args: dict[str, Any] = {"LocationType": "availability-zone" if az else "region"}
        if az:
            args["Filters"] = [{"Name": "location", "Values": [az.name]}]
        for page in ec2.get_paginator("describe_instance_type_offerings").paginate(**args):
            offered.update(o["InstanceType"] for o in page.get("InstanceTypeOfferings", []))
        names = sorted(wanted & offered)
        infos: list[cat.InstanceType] = []
        for i in range(0, len(names), 100):
            resp = ec2.describe_instance_types(InstanceTypes=names[i : i + 100])
            infos.extend(cat.instance_type_from_ec2(t) for t in resp.get("InstanceTypes", []))
        return sorted(infos, key=lambda t: (not t.accelerated, t.name))

    return cached(("types", region, az.name if az else None), load)


def training_plans(region: str) -> list[cat.TrainingPlan]:
    check_region(region)

    def load() -> list[cat.TrainingPlan]:
        sm = aws.client("sagemaker", region)
        plans: list[cat.TrainingPlan] = []
        args: dict[str, Any] = {}
        while True:
            resp = sm.list_training_plans(**args)
            plans.extend(cat.training_plan_from_api(p) for p in resp.get("TrainingPlanSummaries", []))
            if not resp.get("NextToken"):
                return plans
            args["NextToken"] = resp["NextToken"]

    return cached(("plans", region), load, ttl=30.0)


def instances_in_use(region: str) -> dict[str, int]:
    sm = aws.client("sagemaker", region)
    used: dict[str, int] = {}
    for page in sm.get_paginator("list_clusters").paginate():
        for c in page.get("ClusterSummaries", []):
            if c.get("ClusterStatus") in ("Deleting", "Failed"):
                continue
            try:
                desc = sm.describe_cluster(ClusterName=c["ClusterName"])
            except ClientError:
                continue
            for g in desc.get("InstanceGroups", []):
                n = max(int(g.get("TargetCount") or 0), int(g.get("CurrentCount") or 0))
                used[g["InstanceType"]] = used.get(g["InstanceType"], 0) + n
    return used


def quotas(region: str) -> list[cat.Quota]:
    check_region(region)

    def load() -> list[cat.Quota]:
        sq = aws.client("service-quotas", region)
        raw: list[dict[str, Any]] = []
        for page in sq.get_paginator("list_service_quotas").paginate(ServiceCode="sagemaker"):
            raw.extend(page.get("Quotas", []))
        return cat.quotas_from_api(raw, instances_in_use(region))

    return cached(("quotas", region), load, ttl=15.0)


def offerings(region: str, instance_type: str) -> cat.Offerings:
    """One view for "where can I run this type": zones offering it, quota, training plans, spot."""
    check_region(region)
    zones = availability_zones(region)
    known = instance_type in hyperpod_instance_types()
    offered: set[str] = set()
    spot: set[str] = set()
    info: cat.InstanceType | None = None
    if known:
        ec2 = aws.client("ec2", region)
        name = cat.ec2_name(instance_type)

        def load_offered() -> set[str]:
            found: set[str] = set()
            for page in ec2.get_paginator("describe_instance_type_offerings").paginate(
                    LocationType="availability-zone", Filters=[{"Name": "instance-type", "Values": [name]}]):
                found.update(o["Location"] for o in page.get("InstanceTypeOfferings", []))
            return found

        def load_spot() -> set[str]:
            resp = ec2.describe_spot_price_history(InstanceTypes=[name], ProductDescriptions=["Linux/UNIX"],
                                                   StartTime=datetime.now(UTC), MaxResults=100)
            return {p["AvailabilityZone"] for p in resp.get("SpotPriceHistory", [])}

        offered = cached(("offered", region, instance_type), load_offered)
        spot = cached(("spot", region, instance_type), load_spot)
        if offered:
            resp = cached(("type", region, instance_type),
                          lambda: ec2.describe_instance_types(InstanceTypes=[name]).get("InstanceTypes", []))
            info = cat.instance_type_from_ec2(resp[0]) if resp else None
    quota = next((q for q in quotas(region) if q.instance_type == instance_type), None)
    return cat.offerings(region, instance_type, known=known, zones=zones, offered=offered, spot=spot, quota=quota,
                         plans=training_plans(region) if known else [], info=info)
