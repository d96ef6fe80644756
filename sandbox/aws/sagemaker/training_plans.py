<<<<<<< HEAD
"""Training plans: seeded per region (two each), ListTrainingPlans and DescribeTrainingPlan with
the instances clusters use from them, and SearchTrainingPlanOfferings (what a new plan could reserve: offerings in
the region's zones for the instance type, count and duration asked, priced at the HyperPod hourly rate)."""
=======
"""Training plans: seeded per region (two or three each), ListTrainingPlans and DescribeTrainingPlan with
the instances clusters use from them."""
>>>>>>> main

from __future__ import annotations

import copy
import datetime as dt
import secrets
from typing import Any

from sandbox.aws.pricing import HYPERPOD
from sandbox.aws.runtime import ACCOUNT_ID, RUNTIME, now
from sandbox.aws.sagemaker.common import not_found, paginate, ts, validation
from sandbox.aws.sagemaker.store import HyperPodStore, store

SEED_PLANS: dict[str, list[tuple[str, str, int, str, str]]] = {
    # region -> (plan name, instance type, count, AZ, AZ id)
    "us-west-2": [
        ("p5-4x-usw2", "ml.p5.48xlarge", 4, "us-west-2a", "usw2-az2"),
        ("p5en-2x-usw2", "ml.p5en.48xlarge", 2, "us-west-2c", "usw2-az3"),
        # a second H200 plan in another zone: 4 x p5en fit only across both (the capacity advisor's split case)
        ("p5en-2x-usw2-d", "ml.p5en.48xlarge", 2, "us-west-2d", "usw2-az4"),
    ],
    "us-east-1": [
        ("p5-4x-use1", "ml.p5.48xlarge", 4, "us-east-1a", "use1-az6"),
        ("p5en-2x-use1", "ml.p5en.48xlarge", 2, "us-east-1c", "use1-az2"),
    ],
    "us-east-2": [
        ("p5-4x-use2", "ml.p5.48xlarge", 4, "us-east-2b", "use2-az2"),
        ("p5en-2x-use2", "ml.p5en.48xlarge", 2, "us-east-2b", "use2-az2"),
    ],
    "eu-west-2": [
        ("p5-4x-euw2", "ml.p5.48xlarge", 4, "eu-west-2b", "euw2-az3"),
        ("p4d-2x-euw2", "ml.p4d.24xlarge", 2, "eu-west-2a", "euw2-az2"),
    ],
    "ap-northeast-1": [
        ("p5-4x-apne1", "ml.p5.48xlarge", 4, "ap-northeast-1c", "apne1-az1"),
        ("p5en-2x-apne1", "ml.p5en.48xlarge", 2, "ap-northeast-1a", "apne1-az4"),
    ],
}


def seed_training_plans(region: str) -> None:
    s = store(region)
    start = now().replace(minute=0, second=0, microsecond=0) - dt.timedelta(days=1)
    hours = 24 * 30
    for name, instance_type, count, az, az_id in SEED_PLANS.get(region, []):
        arn = f"arn:aws:sagemaker:{region}:{ACCOUNT_ID}:training-plan/{name}"
        s.plans[arn] = {
            "TrainingPlanArn": arn,
            "TrainingPlanName": name,
            "Status": "Active",
            "StatusMessage": "Training plan is active",
            "DurationHours": hours,
            "DurationMinutes": 0,
            "StartTime": start,
            "EndTime": start + dt.timedelta(hours=hours),
            "UpfrontFee": f"{count * 31.46 * hours:.2f}",
            "CurrencyCode": "USD",
            "TotalInstanceCount": count,
            "TargetResources": ["hyperpod-cluster"],
            "ReservedCapacitySummaries": [
                {
                    "ReservedCapacityArn": f"arn:aws:sagemaker:{region}:{ACCOUNT_ID}:reserved-capacity/"
                    f"{name}-{secrets.token_hex(4)}",
                    "InstanceType": instance_type,
                    "TotalInstanceCount": count,
                    "Status": "Active",
                    "AvailabilityZone": az,
                    "AvailabilityZoneId": az_id,
                    "DurationHours": hours,
                    "DurationMinutes": 0,
                    "StartTime": start,
                    "EndTime": start + dt.timedelta(hours=hours),
                }
            ],
        }


def _plan_view(s: HyperPodStore, plan: dict[str, Any]) -> dict[str, Any]:
    used = sum(
        g["TargetCount"]
        for c in s.clusters.values()
        for g in c.groups.values()
        if g.get("TrainingPlanArn") == plan["TrainingPlanArn"]
    )
    view = copy.deepcopy(plan)
    view["InUseInstanceCount"] = used
    view["AvailableInstanceCount"] = max(plan["TotalInstanceCount"] - used, 0)
    return view


def list_training_plans(self: Any) -> Any:
    from moto.core.responses import ActionResult

    params = self._get_params()
    with RUNTIME.lock:
        s = store(self.region)
        plans = [_plan_view(s, p) for p in s.plans.values()]
    for f in params.get("Filters") or []:
        if f.get("Name") == "Status":
            plans = [p for p in plans if p["Status"] == f.get("Value")]
    page, token = paginate(plans, params.get("MaxResults"), params.get("NextToken"))
    return ActionResult({"TrainingPlanSummaries": page, "NextToken": token})


def describe_training_plan(self: Any) -> Any:
    from moto.core.responses import ActionResult

    wanted = self._get_param("TrainingPlanName")
    with RUNTIME.lock:
        s = store(self.region)
        for p in s.plans.values():
            if wanted in (p["TrainingPlanName"], p["TrainingPlanArn"]):
                return ActionResult(_plan_view(s, p))
    raise not_found(f"Resource Not Found: Training plan '{wanted}' does not exist.")


# instance types a training plan can reserve (SageMaker's enum for ReservedCapacityInstanceType, HyperPod's share)
PLAN_TYPES = ("ml.p4d.24xlarge", "ml.p5.48xlarge", "ml.p5e.48xlarge", "ml.p5en.48xlarge", "ml.trn1.32xlarge",
              "ml.trn2.48xlarge", "ml.p6-b200.48xlarge")
_PLAN_PRICE = {"ml.p5e.48xlarge": 118.0, "ml.trn2.48xlarge": 44.7, "ml.p6-b200.48xlarge": 160.0}


def _zones(region: str) -> list[str]:
    zones = sorted({az for plans in SEED_PLANS.values() for _, _, _, az, _ in plans if az.startswith(region)})
    return zones or [f"{region}a", f"{region}b"]


def search_training_plan_offerings(self: Any) -> Any:
    """Offerings for the instance type and count asked: one per zone the region offers it in (two at most), each
    starting at the first whole day after StartTimeAfter (tomorrow by default) for DurationHours (rounded up to
    whole days, 24 h by default), ending before EndTimeBefore when that is given."""
    from moto.core.responses import ActionResult

    params = self._get_params()
    if params.get("TrainingPlanArn"):
        with RUNTIME.lock:
            if params["TrainingPlanArn"] not in store(self.region).plans:
                raise not_found(f"Resource Not Found: Training plan '{params['TrainingPlanArn']}' does not exist.")
        return ActionResult({"TrainingPlanOfferings": [], "TrainingPlanExtensionOfferings": []})
    instance_type = params.get("InstanceType")
    if not instance_type:
        raise validation("InstanceType and InstanceCount are required unless UltraServerType is given")
    if instance_type not in PLAN_TYPES:
        raise validation(f"1 validation error detected: Value '{instance_type}' at 'instanceType' failed to satisfy "
                         f"constraint: Member must satisfy enum value set: [{', '.join(PLAN_TYPES)}]")
    count = int(params.get("InstanceCount") or 0)
    if count < 1:
        raise validation("InstanceCount must be at least 1")
    targets = list(params.get("TargetResources") or ["hyperpod-cluster"])
    hours = int(params.get("DurationHours") or 24)
    hours = -(-hours // 24) * 24
    after = dt.datetime.fromtimestamp(ts(params["StartTimeAfter"]), dt.UTC) if params.get("StartTimeAfter") else now()
    start = (after + dt.timedelta(days=1)).replace(hour=11, minute=30, second=0, microsecond=0)
    end = start + dt.timedelta(hours=hours)
    if params.get("EndTimeBefore") and end > dt.datetime.fromtimestamp(ts(params["EndTimeBefore"]), dt.UTC):
        return ActionResult({"TrainingPlanOfferings": []})
    hourly = HYPERPOD.get(instance_type) or _PLAN_PRICE.get(instance_type, 100.0)
    offerings = []
    for i, zone in enumerate(_zones(self.region)[:2]):
        begin = start + dt.timedelta(days=i)
        offerings.append({
            "TrainingPlanOfferingId": "tpo-SHA-256-" + secrets.token_hex(32),
            "TargetResources": targets,
            "RequestedStartTimeAfter": after,
            **({"RequestedEndTimeBefore": dt.datetime.fromtimestamp(ts(params["EndTimeBefore"]), dt.UTC)}
               if params.get("EndTimeBefore") else {}),
            "DurationHours": hours,
            "DurationMinutes": 0,
            "UpfrontFee": f"{hourly * 0.8 * count * hours:.2f}",
            "CurrencyCode": "USD",
            "ReservedCapacityOfferings": [{
                "InstanceType": instance_type, "InstanceCount": count, "AvailabilityZone": zone,
                "DurationHours": hours, "DurationMinutes": 0,
                "StartTime": begin, "EndTime": begin + dt.timedelta(hours=hours),
            }],
        })
    return ActionResult({"TrainingPlanOfferings": offerings})
