"""Response schemas for the OpenAPI document: the documents live in `functions.domain.views`."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from functions.domain.plans import Plan
from functions.domain.views import (  # noqa: F401  (re-exported for the routes)
    ClusterDetail,
    ClusterList,
    ClusterSummary,
    GroupList,
    GroupView,
    NoChange,
    OperationList,
    OperationOut,
)


class FieldError(BaseModel):
    loc: list[str | int] = Field(description='Where: ["body", "instance_groups", 0, "name"], ["query", "next_token"]')
    msg: str


class Problem(BaseModel):
    """application/problem+json (RFC 9457): every error the API answers."""

    type: str
    title: str
    status: int
    detail: str
    instance: str | None = None
    errors: list[FieldError] | None = None



OPERATION_RESPONSES: dict[int, Any] = {
    200: {"description": "dry_run=true: the plan (changes, quota, hourly cost, warnings); nothing was changed",
          "content": {"application/json": {"model": Plan}}},
    202: {"description": "Accepted: the operation record; watch it with GET /v1/operations/{id}",
          "content": {"application/json": {"model": OperationOut}}},
    409: {"description": "Conflict", "content": {"application/problem+json": {"model": Problem}}},
}
