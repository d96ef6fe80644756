"""Buying a training plan (POST /v1/capacity/training-plans, operation training_plan.purchase, admin).

A training plan is paid upfront and not refundable, so the request repeats the search that found the offering
(type, count, duration, window: offering ids come from SearchTrainingPlanOfferings and change), and the real
request must repeat the upfront fee the plan showed in `confirm_upfront_fee`, exactly. A dry run answers the plan
with the fee; without the confirmation it only warns that the purchase will need it.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from functions.domain.capacity.facts import PlanOffering, PlanSearch
from functions.domain.capacity.models import RESERVABLE
from functions.domain.preferences import RegionName

KIND = "training_plan.purchase"
PLAN_NAME = r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,63}$"
FEE = re.compile(r"^\d{1,12}(\.\d{1,4})?$")
TAGS = {"podstart:managed": "true"}


class OfferingRef(BaseModel):
    """The training plan offering, as advise_capacity names it (requires[].body.offering): the search that found it
    (offering ids change as capacity sells, so admission searches again) and its id."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    region: RegionName
    offering_id: str = Field(pattern=r"^[a-z0-9\-]+$", min_length=1, max_length=256,
                             description="TrainingPlanOfferingId (SearchTrainingPlanOfferings)")
    instance_type: str = Field(description="The offering's instance type, e.g. ml.p5.48xlarge")
    instance_count: int = Field(ge=1, le=256, description="Instances the offering reserves")
    duration_hours: int = Field(ge=1, le=87600, description="The offering's duration in hours")
    start_after: datetime | None = Field(default=None, description="The search's window start (ISO 8601)")

    @field_validator("instance_type")
    @classmethod
    def _reservable(cls, v: str) -> str:
        if v not in RESERVABLE:
            raise ValueError(f"{v} cannot be reserved with a training plan; these can: {', '.join(sorted(RESERVABLE))}")
        return v

    @field_validator("start_after")
    @classmethod
    def _aware(cls, v: datetime | None) -> datetime | None:
        return v.replace(tzinfo=UTC) if v is not None and v.tzinfo is None else v

    def plan_search(self) -> PlanSearch:
        return PlanSearch(region=self.region, instance_type=self.instance_type, instance_count=self.instance_count,
                          duration_hours=self.duration_hours, start_after=self.start_after)


class TrainingPlanPurchase(BaseModel):
    """POST /v1/capacity/training-plans: buy one training plan offering (advise_capacity names it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=PLAN_NAME, max_length=64, description="Plan name")
    offering: OfferingRef = Field(description="From advise_capacity's requires")
    confirm_upfront_fee: str | None = Field(default=None, max_length=20,
                                            description="The fee the dry run shows, exactly")

    @field_validator("confirm_upfront_fee")
    @classmethod
    def _fee(cls, v: str | None) -> str | None:
        if v is not None and not FEE.match(v.strip()):
            raise ValueError("the upfront fee as the plan shows it: digits with an optional decimal part, no "
                             "currency sign or thousands separator")
        return v.strip() if v is not None else None

    @property
    def region(self) -> str:
        return self.offering.region


CONFIRM_LOC = ("body", "confirm_upfront_fee")


def same_fee(a: str, b: str) -> bool:
    try:
        return abs(float(a) - float(b)) < 0.005
    except ValueError:
        return False


def confirm_problem(offering: PlanOffering, confirm: str | None, dry_run: bool) -> str | None:
    """Why the confirmation does not allow the purchase (None: it does, or a dry run without one)."""
    fee = f"{offering.upfront_fee} {offering.currency}"
    if confirm is None:
        return None if dry_run else (f"buying charges {fee} upfront and is not refundable: send confirm_upfront_fee "
                                     f"\"{offering.upfront_fee}\" to buy (a dry run shows the fee)")
    if not same_fee(confirm, offering.upfront_fee):
        return f"the offering's upfront fee is {fee}, not {confirm}: repeat it exactly to buy"
    return None


def normalized(body: TrainingPlanPurchase, offering: PlanOffering) -> dict[str, Any]:
    """The operation's request: what will be bought, as the offering says it."""
    ref = body.offering
    return {"region": ref.region, "name": body.name, "offering_id": offering.offering_id,
            "instance_type": ref.instance_type, "instance_count": ref.instance_count,
            "duration_hours": offering.duration_hours or ref.duration_hours, "upfront_fee": offering.upfront_fee,
            "currency": offering.currency, "zones": offering.zones,
            "start_time": _iso(offering.start_time), "end_time": _iso(offering.end_time)}


def _iso(t: datetime | None) -> str | None:
    return t.astimezone(UTC).isoformat().replace("+00:00", "Z") if t else None
