"""The capacity advisor's request and answer (POST /v1/capacity/advice): the public contract, validated here."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from functions.domain.capacity.accelerators import AskedModel
from functions.domain.catalog import HYPERPOD_REGIONS, REGION_PATTERN
from functions.domain.clusters.api import CapacityType
from functions.domain.preferences import ClusterName

Region = Annotated[str, Field(pattern=REGION_PATTERN)]

SPOT_MIN_SCORE = 5  # EC2 spot placement scores run 1-10; below this a request is unlikely to be filled
PLAN_HOURS_STEP = 24  # training plans are sold by the day
MAX_NEAR_MISSES = 25  # the REST answer lists this many (closest first) and counts the rest
MAX_NODES = 2000  # an instance group's ceiling (InstanceGroupSpec.instance_count)
# SearchTrainingPlanOfferings' ReservedCapacityInstanceType enum (botocore's SageMaker model; a test compares)
RESERVABLE: frozenset[str] = frozenset({
    "ml.p4d.24xlarge", "ml.p4de.24xlarge", "ml.p5.48xlarge", "ml.p5.4xlarge", "ml.p5e.48xlarge", "ml.p5en.48xlarge",
    "ml.p6-b200.48xlarge", "ml.p6-b300.48xlarge", "ml.p6e-gb200.36xlarge", "ml.trn1.32xlarge", "ml.trn2.48xlarge",
})
CAPACITY_ORDER = {"owned": 0, CapacityType.on_demand.value: 1, CapacityType.spot.value: 2, "offering": 3}
RANKING = ("earliest start first; then the cheapest (whole duration when hours is given, else per hour; capacity "
           "already paid costs 0; unknown prices last); then fewer instances; then capacity type (training plan "
           "owned, on-demand, spot, training plan to buy), region as asked, zone, instance type")


class Reason(StrEnum):
    """Why a (region, instance type, capacity type) is not an option: one reason each, closest first."""

    split_needed = "split_needed"
    over_budget = "over_budget"
    quota_short = "quota_short"
    spot_unlikely = "spot_unlikely"
    no_plan_offering = "no_plan_offering"
    no_price = "no_price"
    not_offered = "not_offered"
    no_efa = "no_efa"
    not_reservable = "not_reservable"
    no_duration = "no_duration"
    unknown = "unknown"
    no_instance_type = "no_instance_type"


CLOSENESS = {r: i for i, r in enumerate(Reason)}
InstanceTypeName = str


class AdviceRequest(BaseModel):
    """POST /v1/capacity/advice. Ask for accelerators (`gpus`, optionally `gpu_model`) or for an instance type
    and count; everything else narrows or sizes the answer."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    gpus: int | None = Field(default=None, ge=1, le=16384,
                             description="GPUs or Trainium chips")
    gpu_model: AskedModel | None = Field(default=None, validate_default=True,
                                       description="Default any")
    instance_type: str | None = Field(default=None, pattern=r"^ml\.[a-z0-9-]+\.[a-z0-9]+$", max_length=40,
                                      validate_default=True, description="Instead of gpus, e.g. ml.p5.48xlarge")
    instance_count: int | None = Field(default=None, ge=1, le=MAX_NODES, validate_default=True,
                                       description="Instances of instance_type")
    hours: int | None = Field(default=None, ge=1, le=8760,
                              description="Duration in hours")
    start_after: datetime | None = Field(default=None, description="Default now")
    regions: list[Region] | None = Field(default=None, min_length=1, max_length=6,
                                         description="Default: this API's region")
    capacity_types: list[CapacityType] | None = Field(default=None, min_length=1, max_length=3,
                                                      description="Default: all three")
    max_hourly_usd: float | None = Field(default=None, gt=0,
                                         description="USD/h cap (all instances)")
    efa_required: bool | None = Field(default=None, description="Only EFA types")
    same_zone: bool = Field(default=True, description="false: may span zones")
    cluster: ClusterName | None = Field(default=None, description="Add to this cluster")
    name: ClusterName | None = Field(default=None, description="The new cluster's name in the options' create_cluster")
    max_options: int = Field(default=5, ge=1, le=20, description="How many options to return")

    @field_validator("gpu_model")
    @classmethod
    def _model(cls, v: str | None, info: ValidationInfo) -> str | None:
        if v is not None and "gpus" in info.data and info.data["gpus"] is None:
            raise ValueError("gpu_model goes with gpus (the number of accelerators)")
        return v

    @field_validator("instance_type")
    @classmethod
    def _either(cls, v: str | None, info: ValidationInfo) -> str | None:
        gpus = info.data.get("gpus")
        if v is not None and gpus is not None:
            raise ValueError("ask for gpus (with gpu_model) or for an instance_type with instance_count, not both")
        if v is None and gpus is None and "gpus" in info.data:
            raise ValueError("ask for gpus (with gpu_model), or for an instance_type with instance_count")
        return v

    @field_validator("instance_count")
    @classmethod
    def _count(cls, v: int | None, info: ValidationInfo) -> int | None:
        if "instance_type" not in info.data:
            return v  # instance_type itself was refused
        if info.data.get("instance_type") is not None and v is None:
            raise ValueError("instance_count is required with instance_type")
        if info.data.get("instance_type") is None and v is not None:
            raise ValueError("instance_count goes with instance_type (with gpus, the advisor sizes it)")
        return v

    @field_validator("regions")
    @classmethod
    def _regions(cls, v: list[str] | None) -> list[str] | None:
        if v is None:
            return v
        unknown = [r for r in v if r not in HYPERPOD_REGIONS]
        if unknown:
            raise ValueError(f"SageMaker HyperPod does not run in {', '.join(unknown)} (see list_regions)")
        if len(set(v)) != len(v):
            raise ValueError("a region is listed twice")
        return v

    @field_validator("capacity_types")
    @classmethod
    def _types(cls, v: list[CapacityType] | None) -> list[CapacityType] | None:
        if v is not None and len(set(v)) != len(v):
            raise ValueError("a capacity type is listed twice")
        return v

    @field_validator("start_after")
    @classmethod
    def _aware(cls, v: datetime | None) -> datetime | None:
        return v.replace(tzinfo=UTC) if v is not None and v.tzinfo is None else v

    @property
    def wanted_capacity(self) -> list[CapacityType]:
        return list(self.capacity_types or list(CapacityType))

    @property
    def plan_hours(self) -> int | None:
        return None if self.hours is None else -(-self.hours // PLAN_HOURS_STEP) * PLAN_HOURS_STEP


# --- the answer -----------------------------------------------------------------------------------------------------

class GroupPlacement(BaseModel):
    model_config = ConfigDict(frozen=True)

    availability_zone: str
    availability_zone_id: str
    instance_count: int
    training_plan: str | None = Field(default=None, description="The plan's ARN (owned) or name (to buy)")


class QuotaView(BaseModel):
    model_config = ConfigDict(frozen=True)

    quota_name: str
    quota_code: str
    limit: int
    in_use: int = Field(description="Instances PodStart's clusters use (training plan capacity aside)")
    headroom_after: int = Field(description="What the quota leaves after this option")


class PriceView(BaseModel):
    model_config = ConfigDict(frozen=True)

    hourly_usd: float | None = Field(description="All instances, per hour; null when no price is known")
    total_usd: float | None = Field(default=None, description="For the whole duration (hours), when known")
    upfront_usd: float | None = Field(default=None, description="Paid once when buying the training plan")
    already_paid: bool = False
    source: str


class Requirement(BaseModel):
    """What must happen before the option's create request (a training plan to buy)."""

    model_config = ConfigDict(frozen=True)

    action: Literal["buy_training_plan"]
    method: Literal["POST"] = "POST"
    path: str
    body: dict[str, Any]
    upfront_fee: str
    currency: str
    detail: str


class RequestToSend(BaseModel):
    model_config = ConfigDict(frozen=True)

    method: Literal["POST"] = "POST"
    path: str
    body: dict[str, Any]


class Option(BaseModel):
    model_config = ConfigDict(frozen=True)

    rank: int
    region: str
    instance_type: str
    accelerators: str | None = Field(description="Per instance, e.g. 8 x NVIDIA H100 80 GiB")
    gpus: int = Field(description="Accelerators in total")
    instance_count: int
    capacity_type: CapacityType
    availability_zone: str = Field(description="The (first) zone")
    availability_zone_id: str
    groups: list[GroupPlacement] = Field(description="One per zone (and per training plan)")
    other_zones: list[str] = Field(default_factory=list, description="Other zones the same option fits in")
    quota: QuotaView | None = Field(description="On-demand and spot: the cluster-usage quota; plans use none")
    price: PriceView
    earliest_start: datetime
    starts_now: bool
    ends: datetime | None = Field(default=None, description="A training plan's end")
    spot_score: int | None = None
    efa: bool
    nvlink: bool
    requires: list[Requirement] = Field(default_factory=list)
    create_cluster: RequestToSend | None = Field(default=None, description="POST /v1/clusters for this option")
    add_instance_groups: list[RequestToSend] = Field(default_factory=list,
                                                     description="With cluster: POST .../instance-groups per group")
    notes: list[str] = Field(default_factory=list)


class NearMiss(BaseModel):
    model_config = ConfigDict(frozen=True)

    region: str
    instance_type: str | None = Field(description="null: every instance type the detail names")
    capacity_types: list[CapacityType] = Field(description="The capacity types left out for this reason; [] all")
    reason: Reason
    detail: str
    short_by: int | None = Field(default=None, description="quota_short: instances missing")
    would_fit_with: str | None = Field(default=None, description="What would make it fit")


class FactLine(BaseModel):
    model_config = ConfigDict(frozen=True)

    region: str | None
    fact: str
    subject: str | None = None
    source: str
    fetched_at: datetime | None
    age_seconds: int | None
    available: bool
    reason: str | None = None


class AskedFor(BaseModel):
    model_config = ConfigDict(frozen=True)

    gpus: int | None
    gpu_model: str | None
    instance_type: str | None
    instance_count: int | None
    hours: int | None
    plan_hours: int | None
    start_after: datetime
    regions: list[str]
    capacity_types: list[CapacityType]
    max_hourly_usd: float | None
    efa_required: bool
    same_zone: bool
    cluster: str | None


class Advice(BaseModel):
    """POST /v1/capacity/advice's answer."""

    model_config = ConfigDict(frozen=True)

    asked: AskedFor
    summary: str
    ranking: str = RANKING
    options: list[Option]
    options_more: int = Field(default=0, description="Options that fit but are past max_options")
    near_misses: list[NearMiss]
    near_misses_more: int = 0
    facts: list[FactLine]
    unavailable: list[str] = Field(default_factory=list, description="Facts AWS did not give, and why")
