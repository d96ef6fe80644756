"""The audit trail: one append-only record per mutating request, who did what through which face.

Faces: `ui`, `mcp` and `cli` identify themselves with the `X-PodStart-Face` header (the web UI, the MCP
gateway and the podstart command send it); anything else is `rest`. Dry runs are not recorded (they change
nothing). A request replayed with the same Idempotency-Key is recorded too, marked `replay: true`, so the
operation has one non-replay record.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from functions.domain.operations import Actor

FACE_HEADER = "X-PodStart-Face"
DEFAULT_RETENTION_DAYS = 400


class Face(StrEnum):
    ui = "ui"
    rest = "rest"
    mcp = "mcp"
    cli = "cli"  # the podstart command


def face_of(header: str | None) -> Face:
    value = (header or "").strip().lower()
    return Face(value) if value in Face.__members__ else Face.rest


class AuditTarget(BaseModel):
    model_config = ConfigDict(frozen=True)

    cluster: str | None = None
    region: str | None = None
    resource: str | None = None
    operation_id: str | None = None


class AuditResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    status: int = Field(description="The HTTP status answered")
    operation_id: str | None = None


class AuditRecord(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    at: str = Field(description="When (UTC, ISO 8601 with milliseconds)")
    principal: Actor
    face: Face
    source_ip: str | None = None
    user_agent: str | None = None
    action: str = Field(description="What was asked: the route's operation id, e.g. create_cluster")
    method: str
    path: str
    target: AuditTarget = Field(default_factory=AuditTarget)
    request: dict[str, Any] = Field(default_factory=dict, description="Body and query, secrets redacted "
                                    "(functions.domain.redaction)")
    idempotency_key: str | None = None
    result: AuditResult
    replay: bool = Field(default=False, description="An earlier request's answer replayed (same Idempotency-Key)")
    correlation_id: str | None = None


class AuditPage(BaseModel):
    items: list[AuditRecord]
    next_token: str | None = None


class AuditQuery(BaseModel):
    model_config = ConfigDict(frozen=True)

    actor: str | None = None  # a principal's sub
    cluster: str | None = None
    action: str | None = None
    face: Face | None = None
    since: str | None = None
    until: str | None = None
    limit: int = 50
    token: str | None = None


def sort_key(at: str, record_id: str) -> str:
    return f"{at}#{record_id}"
