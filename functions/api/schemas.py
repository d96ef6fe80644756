"""Response schemas for the OpenAPI document (request models live with their routes' domain)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from functions.domain.operations import ErrorInfo, OperationStatus, StepStatus, Target


class StepOut(BaseModel):
    name: str
    status: StepStatus
    started_at: str | None = None
    ended_at: str | None = None
    message: str | None = None
    error: ErrorInfo | None = None
    attempts: int = 0
    outputs: dict[str, Any] = Field(default_factory=dict)


class OperationOut(BaseModel):
    """The Operation record: a mutation's 202 body and what get_operation returns."""

    id: str
    kind: str
    target: Target
    status: OperationStatus
    phase: str | None = None
    steps: list[StepOut]
    request: dict[str, Any]
    result: dict[str, Any] | None = None
    error: ErrorInfo | None = None
    principal: dict[str, str]
    idempotency_key: str | None = None
    created_at: str
    updated_at: str
    attempt: int
    version: int
    links: dict[str, str]
    status_tool: str = Field(description="The tool/endpoint that tracks this operation to a terminal state")


class OperationList(BaseModel):
    items: list[OperationOut]
    next_token: str | None = None


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
    202: {"description": "Accepted: the operation record; watch it with GET /v1/operations/{id}",
          "content": {"application/json": {"model": OperationOut}}},
    409: {"description": "Conflict", "content": {"application/problem+json": {"model": Problem}}},
}
