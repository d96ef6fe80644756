"""Training plans for sale: SearchTrainingPlanOfferings and CreateTrainingPlan (moto has neither).

Each seeded region has pools of reservable capacity: an instance type in one zone, so many instances, free from
some days out. A search for a type, count and duration answers one offering per pool that still holds the count,
starting at the later of the pool's first day and the search's StartTimeAfter (on the hour), for the duration
asked, at the pool's rate per instance-hour; its id is derived from what it sells, so the same search answers the
same id. CreateTrainingPlan buys an offering a search answered (an unknown or expired id is a ValidationException,
a name taken is ResourceInUse): the plan is Pending, then Scheduled (or Active once its start has passed), and the
pool holds that many fewer instances. A bought plan's tags answer ListTags.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from typing import Any

from sandbox.aws.pricing import PLAN_HOURLY
from sandbox.aws.runtime import ACCOUNT_ID, RUNTIME, now
from sandbox.aws.sagemaker.common import errors, validation
from sandbox.aws.sagemaker.store import store

PENDING_AWS_SECONDS = 120.0  # a new plan is Pending this long (AWS seconds, divided by the time scale)
# region -> (instance type, zone, instances, first day from now): seeded so some requests fit only with a plan that
# starts later (B200 in us-west-2), and some fit nowhere (H200 is sold out in us-west-2, B200 has 4)
POOLS: dict[str, list[tuple[str, str, int, int]]] = {
    "us-west-2": [("ml.p6-b200.48xlarge", "us-west-2a", 4, 3), ("ml.p5.48xlarge", "us-west-2b", 8, 2),
                  ("ml.p4d.24xlarge", "us-west-2d", 4, 1), ("ml.trn1.32xlarge", "us-west-2d", 8, 5)],
    "us-east-1": [("ml.p5.48xlarge", "us-east-1a", 16, 7), ("ml.p6-b200.48xlarge", "us-east-1c", 2, 10)],
    "us-east-2": [("ml.p5en.48xlarge", "us-east-2b", 8, 4), ("ml.trn2.48xlarge", "us-east-2c", 4, 2)],
    "eu-west-2": [("ml.p5.48xlarge", "eu-west-2a", 4, 6)],
    "ap-northeast-1": [("ml.p5.48xlarge", "ap-northeast-1c", 4, 9)],
}
_issued: dict[str, dict[str, Any]] = {}  # offering id -> what it sells (for CreateTrainingPlan)
_sold: dict[tuple[str, str, str], int] = {}  # (region, type, zone) -> instances bought from the pool
_tags: dict[str, list[dict[str, str]]] = {}  # bought plan ARN -> its tags


def _zone_id(region: str, zone: str) -> str:
    from moto.ec2.models.availability_zones_and_regions import RegionsAndZonesBackend

    return next((z.zone_id for z in RegionsAndZonesBackend.zones.get(region, []) if z.name == zone), "")


def _param_time(value: Any) -> dt.datetime | None:
    if value in (None, ""):
        return None
    if isinstance(value, int | float) or str(value).replace(".", "", 1).isdigit():
        return dt.datetime.fromtimestamp(float(value), tz=dt.UTC)
    parsed = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def _ceil_hour(t: dt.datetime) -> dt.datetime:
    floor = t.replace(minute=0, second=0, microsecond=0)
    return floor if floor == t else floor + dt.timedelta(hours=1)


def _offering_id(*parts: Any) -> str:
    return "tpo-" + hashlib.sha1("|".join(str(p) for p in parts).encode()).hexdigest()[:20]


def offerings(region: str, instance_type: str, count: int, hours: int, start_after: dt.datetime | None,
              end_before: dt.datetime | None) -> list[dict[str, Any]]:
    out = []
    today = now().replace(hour=0, minute=0, second=0, microsecond=0)
    for itype, zone, size, days in POOLS.get(region, []):
        left = size - _sold.get((region, itype, zone), 0)
        if itype != instance_type or left < count:
            continue
        start = max(today + dt.timedelta(days=days, hours=11, minutes=30), _ceil_hour(start_after or now()))
        end = start + dt.timedelta(hours=hours)
        if end_before is not None and end > end_before:
            continue
        oid = _offering_id(region, itype, zone, count, hours, start.isoformat())
        fee = f"{count * hours * PLAN_HOURLY.get(itype, 50.0):.2f}"
        offering = {
            "TrainingPlanOfferingId": oid, "TargetResources": ["hyperpod-cluster"],
            "RequestedStartTimeAfter": start_after or now(), "DurationHours": hours, "DurationMinutes": 0,
            "UpfrontFee": fee, "CurrencyCode": "USD",
            "ReservedCapacityOfferings": [{"ReservedCapacityType": "Instance", "InstanceType": itype,
                                           "InstanceCount": count, "AvailabilityZone": zone, "DurationHours": hours,
                                           "DurationMinutes": 0, "StartTime": start, "EndTime": end}],
        }
        _issued[oid] = {"region": region, "zone": zone, "offering": offering}
        out.append(offering)
    return out


def search_training_plan_offerings(self: Any) -> Any:
    from moto.core.responses import ActionResult

    p = self._get_params()
    itype, count, hours = p.get("InstanceType"), int(p.get("InstanceCount") or 1), int(p.get("DurationHours") or 0)
    if not itype:
        raise validation("InstanceType or UltraServerType is required")
    if hours < 1:
        raise validation("DurationHours is required (at least 1)")
    with RUNTIME.lock:
        found = offerings(self.region, itype, count, hours, _param_time(p.get("StartTimeAfter")),
                          _param_time(p.get("EndTimeBefore")))
    return ActionResult({"TrainingPlanOfferings": found})


def _resource_in_use(message: str) -> Exception:
    class ResourceInUse(errors().SagemakerClientError):  # type: ignore[name-defined,misc]
        code = "ResourceInUse"

    return ResourceInUse(message)  # type: ignore[no-any-return]


def create_training_plan(self: Any) -> Any:
    from moto.core.responses import ActionResult

    name, oid = self._get_param("TrainingPlanName"), self._get_param("TrainingPlanOfferingId")
    region = self.region
    with RUNTIME.lock:
        s = store(region)
        if any(p["TrainingPlanName"] == name for p in s.plans.values()):
            raise _resource_in_use(f"Training plan {name} already exists.")
        issued = _issued.get(oid)
        if issued is None or issued["region"] != region:
            raise validation(f"Training plan offering {oid} is not valid or has expired; search again.")
        offer = issued["offering"]
        cap = offer["ReservedCapacityOfferings"][0]
        key = (region, cap["InstanceType"], cap["AvailabilityZone"])
        pool = next(size for itype, zone, size, _ in POOLS[region] if (region, itype, zone) == key)
        if pool - _sold.get(key, 0) < cap["InstanceCount"]:
            raise validation(f"Training plan offering {oid} is no longer available.")
        _sold[key] = _sold.get(key, 0) + cap["InstanceCount"]
        del _issued[oid]
        arn = f"arn:aws:sagemaker:{region}:{ACCOUNT_ID}:training-plan/{name}"
        _tags[arn] = list(self._get_param("Tags") or [])
        s.plans[arn] = {
            "TrainingPlanArn": arn, "TrainingPlanName": name, "Status": "Pending",
            "StatusMessage": "Training plan is being created", "DurationHours": offer["DurationHours"],
            "DurationMinutes": 0, "StartTime": cap["StartTime"], "EndTime": cap["EndTime"],
            "UpfrontFee": offer["UpfrontFee"], "CurrencyCode": "USD", "TotalInstanceCount": cap["InstanceCount"],
            "TargetResources": ["hyperpod-cluster"],
            "ReservedCapacitySummaries": [{
                "ReservedCapacityArn": f"arn:aws:sagemaker:{region}:{ACCOUNT_ID}:reserved-capacity/{name}-{oid[4:12]}",
                "ReservedCapacityType": "Instance", "InstanceType": cap["InstanceType"],
                "TotalInstanceCount": cap["InstanceCount"], "Status": "Pending",
                "AvailabilityZone": cap["AvailabilityZone"],
                "AvailabilityZoneId": _zone_id(region, cap["AvailabilityZone"]),
                "DurationHours": offer["DurationHours"], "DurationMinutes": 0, "StartTime": cap["StartTime"],
                "EndTime": cap["EndTime"]}],
        }

    def settle() -> None:
        with RUNTIME.lock:
            plan = store(region).plans.get(arn)
            if plan is None:
                return
            status = "Active" if plan["StartTime"] <= now() else "Scheduled"
            plan["Status"] = status
            plan["StatusMessage"] = f"Training plan is {status.lower()}"
            for c in plan["ReservedCapacitySummaries"]:
                c["Status"] = status

    RUNTIME.after(PENDING_AWS_SECONDS, settle)
    return ActionResult({"TrainingPlanArn": arn})


def patch_tags() -> None:
    """ListTags on a training plan ARN answers the tags it was bought with (after the cluster tags patch)."""
    from moto.core.responses import ActionResult
    from moto.sagemaker.responses import SageMakerResponse

    original = SageMakerResponse.list_tags

    def list_tags(self: Any) -> Any:
        with RUNTIME.lock:
            tags = _tags.get(self._get_param("ResourceArn"))
            if tags is not None:
                return ActionResult({"Tags": list(tags)})
        return original(self)

    SageMakerResponse.list_tags = list_tags  # type: ignore[method-assign]


OPERATIONS = (search_training_plan_offerings, create_training_plan)
