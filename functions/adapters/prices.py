"""Prices for plans from the AWS Price List Query API (`pricing:GetProducts`), cached per container.

Prices change rarely (AWS publishes a few times a month), so a price found is kept for `TTL_SECONDS` and a
missing one for a shorter while; a plan for ten groups of one instance type asks once. Every line carries
its source: "AWS Price List, <publication date>". The Price List API answers in us-east-1 only (the region
asked for is a filter). In the sandbox the answers are seeded (sandbox/aws/pricing.py).

Keys (functions.domain.plans.Capacity.price):
  ("hyperpod", "<instance type>")  AmazonSageMaker, the HyperPod cluster usage of the instance type, per hour
  ("eks", "cluster")               AmazonEKS, the control plane, per cluster-hour
  ("nat", "gateway")               AmazonEC2, a NAT gateway, per hour (data processed is not counted)
  ("fsx", "PERSISTENT_2/<MB/s/TiB>")  AmazonFSx Lustre, per GiB-month (returned per GiB-hour: / 730)
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

from functions.adapters import aws
from functions.observability import logger

PRICING_REGION = "us-east-1"
TTL_SECONDS = 24 * 3600
MISS_TTL_SECONDS = 600
HOURS_PER_MONTH = 730.0


def _tm(field_name: str, value: str) -> dict[str, str]:
    return {"Type": "TERM_MATCH", "Field": field_name, "Value": value}


def query(region: str, key: tuple[str, str]) -> tuple[str, list[dict[str, str]], str] | None:
    """(ServiceCode, Filters, what the product's usage type must contain) for a price key."""
    family, what = key
    loc = _tm("regionCode", region)
    if family == "hyperpod":
        return "AmazonSageMaker", [loc, _tm("instanceName", what), _tm("component", "Cluster")], ""
    if family == "eks":
        return "AmazonEKS", [loc], "AmazonEKS-Hours:perCluster"
    if family == "nat":
        return "AmazonEC2", [loc, _tm("productFamily", "NAT Gateway")], "NatGateway-Hours"
    if family == "fsx":
        deployment, _, throughput = what.partition("/")
        return "AmazonFSx", [loc, _tm("fileSystemType", "Lustre"), _tm("deploymentOption", deployment.title()),
                             _tm("throughputCapacity", throughput)], ""
    return None


def parse(price_list: list[str], usage_contains: str = "") -> tuple[float, str, str] | None:
    """The first on-demand USD price in a GetProducts answer: (price per unit, unit, publication date)."""
    for raw in price_list:
        doc = json.loads(raw) if isinstance(raw, str) else raw
        usage = str(((doc.get("product") or {}).get("attributes") or {}).get("usagetype", ""))
        if usage_contains and usage_contains not in usage:
            continue
        for term in ((doc.get("terms") or {}).get("OnDemand") or {}).values():
            for dim in (term.get("priceDimensions") or {}).values():
                usd = (dim.get("pricePerUnit") or {}).get("USD")
                if usd is None:
                    continue
                return float(usd), str(dim.get("unit", "")), str(doc.get("publicationDate", ""))[:10]
    return None


@dataclass
class AwsPriceList:
    """PriceBook over the Price List API, with a per-container cache."""

    _cache: dict[tuple[str, str, str], tuple[float, tuple[float, str] | None]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _fetched: dict[tuple[str, str, str], datetime] = field(default_factory=dict)  # when each key was last asked

    def fetched_at(self, region: str, key: tuple[str, str]) -> datetime | None:
        """When the cached answer for the key was read from the Price List (None: never)."""
        with self._lock:
            return self._fetched.get((region, *key))

    def hourly(self, region: str, key: tuple[str, str]) -> tuple[float, str] | None:
        ck = (region, *key)
        now = time.monotonic()
        with self._lock:
            hit = self._cache.get(ck)
        if hit is not None and hit[0] > now:
            return hit[1]
        value = self._fetch(region, key)
        ttl = TTL_SECONDS if value is not None else MISS_TTL_SECONDS
        with self._lock:
            self._cache[ck] = (now + ttl, value)
            self._fetched[ck] = datetime.now(UTC)
        return value

    def _fetch(self, region: str, key: tuple[str, str]) -> tuple[float, str] | None:
        q = query(region, key)
        if q is None:
            return None
        service, filters, usage = q
        try:
            answer = aws.client("pricing", PRICING_REGION).get_products(
                ServiceCode=service, Filters=filters, FormatVersion="aws_v1", MaxResults=100)
        except Exception:  # a plan without a price is still a plan: the line says "unknown"
            logger.exception("price list unavailable", extra={"price_key": list(key)})
            return None
        found = parse(answer.get("PriceList") or [], usage)
        if found is None:
            return None
        price, unit, date = found
        if unit.lower().startswith("gb-mo"):
            price = price / HOURS_PER_MONTH
        return price, f"AWS Price List, {date}" if date else "AWS Price List"
