"""/v1/audit: who did what through which face, newest first (admin; anyone may read their own with actor=me)."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from functions.api.context import model_response, principal, services
from functions.domain.audit.records import AuditPage, AuditQuery, Face
from functions.domain.errors import Forbidden
from functions.domain.principal import Role

router = Router()

Timestamp = Annotated[str | None, Query(description="UTC ISO 8601",
                                        pattern=r"^\d{4}-\d{2}-\d{2}(T[0-9:.]{2,12}Z?)?$")]


@router.get("/v1/audit", summary="The audit trail: every mutation, who did it and through which face, newest first",
            tags=["audit"], responses={200: {"description": "A page of audit records",
                                             "content": {"application/json": {"model": AuditPage}}}})
def list_audit(
    actor: Annotated[str | None, Query(description="Sub, or me", max_length=128)] = None,
    cluster: Annotated[str | None, Query(description="Cluster name", max_length=63)] = None,
    action: Annotated[str | None, Query(description="Action", pattern=r"^[a-z_]{1,64}$")] = None,
    face: Annotated[Face | None, Query(description="Face")] = None,
    since: Timestamp = None,
    until: Timestamp = None,
    limit: Annotated[int, Query(ge=1, le=100, description="Page size")] = 50,
    next_token: Annotated[str | None, Query(description="From the previous page", max_length=2048)] = None,
) -> Response[str]:
    p = principal(router)
    if actor == "me":
        actor = p.sub
    if p.role < Role.admin and actor != p.sub:
        raise Forbidden("the audit trail of others needs the admin role; read your own with actor=me")
    log = services().audit
    if log is None:
        return model_response(AuditPage(items=[]))
    items, token = log.query(AuditQuery(actor=actor, cluster=cluster, action=action, face=face,
                                        since=_norm(since), until=_norm(until), limit=limit, token=next_token))
    return model_response(AuditPage(items=items, next_token=token))


def _norm(ts: str | None) -> str | None:
    """Records are keyed by `YYYY-MM-DDTHH:MM:SS.mmmZ`: a bound compares as a string prefix of that."""
    return ts.removesuffix("Z") if ts else None
