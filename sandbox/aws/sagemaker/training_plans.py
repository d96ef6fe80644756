"""Training plans: seeded per region (two or three each), ListTrainingPlans and DescribeTrainingPlan with
the instances clusters use from them."""

from __future__ import annotations

import copy
import datetime as dt
import secrets
from typing import Any

from sandbox.aws.runtime import ACCOUNT_ID, RUNTIME, now
from sandbox.aws.sagemaker.common import not_found, paginate
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
