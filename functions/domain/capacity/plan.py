"""Plan for training_plan.purchase: the training plan the purchase step creates (CreateTrainingPlan, with what the
offering reserves: instances, zone, window) and its upfront fee, paid once and not refundable; the ready step
only watches it reach Scheduled or Active.

Facts: `offering` (the offering as the search answered it now), `confirmed` (the request repeats the fee)."""

from __future__ import annotations

from functions.domain.plans import Draft, create
from functions.domain.plans.base import PlanInput

PLAN = "AWS::SageMaker::TrainingPlan"


def plan_training_plan_purchase(p: PlanInput) -> Draft:
    r = p.request
    fee = float(r["upfront_fee"])
    change = create(PLAN, r["name"], "purchase", call="CreateTrainingPlan", offering_id=r["offering_id"],
                    instance_type=r["instance_type"], instance_count=r["instance_count"],
                    availability_zones=r.get("zones") or [], start_time=r.get("start_time"),
                    end_time=r.get("end_time"), duration_hours=r["duration_hours"], upfront_fee=r["upfront_fee"],
                    currency=r["currency"], tags={"podstart:managed": "true"},
                    then="watched until Scheduled or Active (the ready step)")
    warnings = [f"buying charges {fee:,.2f} {r['currency']} upfront, once, not refundable; the capacity is yours "
                f"from {r.get('start_time') or 'the plan start'} to {r.get('end_time') or 'its end'} whether used "
                "or not"]
    if not p.facts.get("confirmed"):
        warnings.append(f"to buy, send the same request with confirm_upfront_fee \"{r['upfront_fee']}\"")
    warnings.append("clusters use it by training_plan_arn in an instance group (capacity_type training-plan), in "
                    f"{', '.join(r.get('zones') or []) or 'the plan zone'}")
    changes = [c.model_copy(update={"action": "none"}) if c.step in p.skip_steps else c for c in [change]]
    return Draft(changes=changes, warnings=warnings, upfront=fee)
