"""Typed configuration, parsed once per function from its environment; fails fast when incomplete."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from functions.domain.limits import Limits


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
    # buckets an admin registered at deploy time (context podstart:registeredBuckets): `bucket` or `bucket/prefix/`,
    # comma-separated; the API's S3 grants name exactly these and the data bucket
    registered_buckets: str = ""
    limits: Limits = Limits()  # env LIMITS: JSON (context podstart:limits)
    max_body_bytes: int = 256 * 1024
    # the roles with the podstart-api group's access entry (this function's, the live socket's); a reconcile plan
    # checks them
    podstart_reader_role_arns: str = ""

    @property
    def reader_roles(self) -> list[str]:
        return [a for a in self.podstart_reader_role_arns.split(",") if a]


class EventsSettings(_WorkflowArns):
    """The projector also sweeps orphan operations: it looks executions up by their derived names."""


class StepsSettings(_WorkflowArns):
    """`workflow_arns` and `idempotency_table`: spec.apply's steps start child operations as the API does."""

    idempotency_table: str = ""
    data_bucket: str = ""
    assets_bucket: str = ""
    time_scale: float = 1.0
    podstart_role_arn: str = ""
    # roles that get an access entry with only the podstart-api group: the API's and the live socket's functions
    podstart_reader_role_arns: str = ""

    @property
    def reader_roles(self) -> list[str]:
        return [a for a in self.podstart_reader_role_arns.split(",") if a]
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


class LiveSettings(BaseSettings):
    """The live socket's functions (WebSocket routes, bus fan-out, followers, the $connect authorizer)."""

    model_config = SettingsConfigDict(extra="ignore", frozen=True)

    state_table: str = ""
    live_table: str = ""
    live_endpoint: str = ""  # the WebSocket API's management endpoint: https://{api}.execute-api.{region}.../{stage}
    live_follower_function: str = ""
    user_pool_id: str = ""
    user_pool_client_ids: str = ""  # comma-separated app clients whose access tokens may connect
    limits: Limits = Limits()  # env LIMITS: JSON (context podstart:limits)
    aws_region: str = Field(default="us-west-2", alias="AWS_REGION")


@lru_cache(maxsize=1)
def live_settings() -> LiveSettings:
    return LiveSettings()
