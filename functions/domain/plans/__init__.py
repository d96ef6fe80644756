"""A plan: what a mutation would do, answered instead of starting it (`?dry_run=true`).

The plan is built by the same admission the real request passes (same 4xx for the same bad input) and
by the kind's planner (`functions.domain.plans.registry`), which lists the objects each workflow step will
create, update or delete. Quota lines come from what admission read; cost lines from the AWS Price List.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from functions.domain.capacity.api import Placement

HOURS_PER_MONTH = 730.0  # AWS's own monthly convention in the Pricing Calculator

Action = Literal["create", "update", "delete", "none"]


class Change(BaseModel):
    model_config = ConfigDict(frozen=True)

    action: Action
    kind: str = Field(description="AWS::Service::Type, eks-addon, Kubernetes <Kind>, or PodStart <record>")
    name: str
    step: str | None = Field(default=None, description="The workflow step that makes the change")
    details: dict[str, Any] = Field(default_factory=dict)


class QuotaLine(BaseModel):
    model_config = ConfigDict(frozen=True)

    instance_type: str
    requested: int = Field(description="Instances this change adds (negative: frees)")
    in_use: int
    limit: int
    ok: bool


class CostLine(BaseModel):
    model_config = ConfigDict(frozen=True)

    item: str
    count: float
    unit_hourly: float | None = Field(description="USD per unit-hour; null when no price was found")
    hourly: float | None
    source: str = Field(description="Where the price came from, and its date")
    paid: bool = Field(default=False, description="Already paid: reserved, or nodes already running")


class Cost(BaseModel):
    model_config = ConfigDict(frozen=True)

    currency: Literal["USD"] = "USD"
    hourly: float = Field(description="The hourly cost delta of this change (negative: it saves)")
    monthly_estimate: float
    lines: list[CostLine] = Field(default_factory=list)
    upfront: float | None = Field(default=None, description="Paid once, now (a training plan's upfront fee)")


class Plan(BaseModel):
    """A dry run's answer (200). `valid` is always true here: an invalid request is the same 4xx problem the
    real request would get."""

    model_config = ConfigDict(frozen=True)

    dry_run: Literal[True] = True
    valid: bool = True
    kind: str = Field(description="The operation kind the real request starts (or the action, for records)")
    target: dict[str, Any] = Field(default_factory=dict)
    changes: list[Change] = Field(default_factory=list)
    quota: list[QuotaLine] = Field(default_factory=list)
    cost: Cost = Field(default_factory=lambda: Cost(hourly=0.0, monthly_estimate=0.0))
    warnings: list[str] = Field(default_factory=list)
    placement: Placement | None = Field(default=None, description=(
        "A job or endpoint: where its pods would run now (group, nodes with the GPUs free), or what they would "
        "wait for"))


class Capacity(BaseModel):
    """Something that costs by the hour, as a planner sees it; prices are filled in by the logic layer.

    `price` is a PriceBook key: ("hyperpod", "ml.g5.8xlarge"), ("eks", "cluster"), ("nat", "gateway"),
    ("fsx", "PERSISTENT_2/125") (per GiB-month; `count` is then GiB)."""

    model_config = ConfigDict(frozen=True)

    item: str
    price: tuple[str, str]
    count: float
    paid: bool = False
    source: str | None = None  # why a paid line costs nothing more (default: a training plan's reservation)


class Draft(BaseModel):
    """What a planner returns: the changes, what costs money, and the instances the quota must cover."""

    changes: list[Change] = Field(default_factory=list)
    capacity: list[Capacity] = Field(default_factory=list)
    quota_requests: dict[str, int] = Field(default_factory=dict)  # instance type -> instances added
    warnings: list[str] = Field(default_factory=list)
    upfront: float | None = None  # paid once, now (a training plan's upfront fee)


def create(kind: str, name: str, step: str | None, **details: Any) -> Change:
    return Change(action="create", kind=kind, name=name, step=step, details=details)


def update(kind: str, name: str, step: str | None, **details: Any) -> Change:
    return Change(action="update", kind=kind, name=name, step=step, details=details)


def delete(kind: str, name: str, step: str | None, **details: Any) -> Change:
    return Change(action="delete", kind=kind, name=name, step=step, details=details)


def none(kind: str, name: str, step: str | None = None, **details: Any) -> Change:
    return Change(action="none", kind=kind, name=name, step=step, details=details)
