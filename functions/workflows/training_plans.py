"""training_plan.purchase: one CreateTrainingPlan (recorded once sent: a retry never buys twice), then the plan
watched from Pending until SageMaker says Scheduled or Active (its capacity reserved), or failed naming why.

A retry first looks for the plan by name: one this operation made (tagged with its id) is adopted, any other
plan of that name is a permanent failure (PodStart never adopts a plan someone else bought)."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from functions.domain.capacity.purchase import TAGS
from functions.domain.errors import PermanentStepError
from functions.domain.workflow import Done, Outcome, Wait
from functions.workflows.context import StepContext, Workflow

OPERATION_TAG = "podstart:operation"
READY = ("Scheduled", "Active")
FAILED = ("Failed", "Expired")
PENDING_SECONDS = 300.0  # a new plan is Pending for a few minutes at AWS speed


def _describe(ctx: StepContext, name: str) -> dict[str, Any] | None:
    try:
        return ctx.aws("sagemaker").describe_training_plan(TrainingPlanName=name)  # type: ignore[no-any-return]
    except ClientError as err:
        if err.response.get("Error", {}).get("Code") in ("ResourceNotFound", "ResourceNotFoundException",
                                                          "ValidationException"):
            return None
        raise


def _tags(ctx: StepContext, arn: str) -> dict[str, str]:
    found = ctx.aws("sagemaker").list_tags(ResourceArn=arn).get("Tags", [])
    return {t["Key"]: t["Value"] for t in found}


def purchase(ctx: StepContext) -> Outcome:
    req = ctx.request
    name = req["name"]
    arn = ctx.outputs.get("training_plan_arn")
    if arn:
        return Done(message=f"training plan {name} already bought ({arn})", outputs={"training_plan_arn": arn})
    existing = _describe(ctx, name)
    if existing is not None:
        arn = existing["TrainingPlanArn"]
        if _tags(ctx, arn).get(OPERATION_TAG) != ctx.operation.id:
            raise PermanentStepError("TrainingPlanNameTaken", f"a training plan named {name} already exists in "
                                     f"{ctx.region} and this operation did not buy it: buy under another name")
        return Done(message=f"training plan {name} was bought by this operation ({arn})",
                    outputs={"training_plan_arn": arn})
    tags = [{"Key": k, "Value": v} for k, v in {**TAGS, OPERATION_TAG: ctx.operation.id}.items()]
    try:
        answer = ctx.aws("sagemaker").create_training_plan(TrainingPlanName=name,
                                                           TrainingPlanOfferingId=req["offering_id"], Tags=tags)
    except ClientError as err:
        code = err.response.get("Error", {}).get("Code")
        if code in ("ValidationException", "ResourceNotFound", "ResourceNotFoundException"):
            raise PermanentStepError("OfferingUnavailable", f"SageMaker refused offering {req['offering_id']}: "
                                     f"{err.response.get('Error', {}).get('Message', '')} (offerings expire and "
                                     "sell out: ask advise_capacity again); nothing was bought") from None
        raise
    arn = answer["TrainingPlanArn"]
    ctx.record(training_plan_arn=arn)
    return Done(message=f"bought training plan {name}: {req['instance_count']} x {req['instance_type']} for "
                        f"{req['duration_hours']} h, {req['upfront_fee']} {req['currency']} upfront",
                outputs={"training_plan_arn": arn})


def ready(ctx: StepContext) -> Outcome:
    name = ctx.request["name"]
    plan = _describe(ctx, name)
    if plan is None:
        raise PermanentStepError("TrainingPlanGone", f"training plan {name} is not there any more")
    status = plan.get("Status")
    if status in FAILED:
        raise PermanentStepError("TrainingPlanFailed", f"training plan {name} is {status}: "
                                 f"{plan.get('StatusMessage') or 'no reason given'}")
    caps = plan.get("ReservedCapacitySummaries") or []
    zones = sorted({c.get("AvailabilityZone") for c in caps if c.get("AvailabilityZone")})
    outputs = {"training_plan_arn": plan["TrainingPlanArn"], "status": status,
               "start_time": str(plan.get("StartTime") or ""), "end_time": str(plan.get("EndTime") or ""),
               "availability_zones": zones}
    if status in READY:
        when = f"from {plan.get('StartTime')}" if status == "Scheduled" else "now"
        return Done(message=f"training plan {name} is {status}: {plan.get('TotalInstanceCount')} instance(s) in "
                            f"{', '.join(zones) or 'its zone'} {when}; use training_plan_arn in an instance group",
                    outputs=outputs)
    return Wait(message=f"training plan {name} is {status}", expected_seconds=PENDING_SECONDS, outputs=outputs)


PURCHASE = Workflow(kind="training_plan.purchase", steps={"purchase": purchase, "ready": ready})
