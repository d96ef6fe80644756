"""Typed configuration, parsed once per function from its environment; fails fast when incomplete."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class CommonSettings(BaseSettings):
    model_config = SettingsConfigDict(extra="ignore", frozen=True)

    operations_table: str
    state_table: str
    event_bus_name: str = "podstart"
    aws_region: str = Field(default="us-west-2", alias="AWS_REGION")


class _WorkflowArns(CommonSettings):
    workflow_arns: dict[str, str] = Field(default_factory=dict)

    @field_validator("workflow_arns", mode="before")
    @classmethod
    def _json(cls, v: Any) -> Any:
        return json.loads(v) if isinstance(v, str) else v


class ApiSettings(_WorkflowArns):
    idempotency_table: str
    audit_table: str = ""
    audit_retention_days: int = 400
    data_bucket: str = ""
    max_body_bytes: int = 256 * 1024
    podstart_api_role_arn: str = ""  # this function's own role (its EKS access entry; a reconcile plan checks it)


class EventsSettings(_WorkflowArns):
    """The projector also sweeps orphan operations: it looks executions up by their derived names."""


class StepsSettings(CommonSettings):
    data_bucket: str = ""
    assets_bucket: str = ""
    time_scale: float = 1.0
    podstart_role_arn: str = ""
    podstart_api_role_arn: str = ""  # the API function's role: an access entry with the podstart-api group
    permissions_boundary_arn: str = ""  # every role the workflows create carries it


@lru_cache(maxsize=1)
def api_settings() -> ApiSettings:
    return ApiSettings()  # type: ignore[call-arg]


@lru_cache(maxsize=1)
def steps_settings() -> StepsSettings:
    return StepsSettings()  # type: ignore[call-arg]


@lru_cache(maxsize=1)
def events_settings() -> EventsSettings:
    return EventsSettings()  # type: ignore[call-arg]
