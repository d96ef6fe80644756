"""Build and store the audit record of one mutating request (called by edge.audit once it has the answer).

An audit write that fails is logged and counted (metric AuditWriteFailures) but never turns a mutation that
happened into an error for the caller.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from aws_lambda_powertools.event_handler.api_gateway import APIGatewayRestResolver

from functions.api.edge import body_model, secret_paths
from functions.domain import redaction
from functions.domain.audit.records import FACE_HEADER, AuditRecord, AuditResult, AuditTarget, face_of
from functions.domain.operations import Actor, now_iso
from functions.domain.principal import Principal
from functions.observability import logger, metrics


def _name(value: Any) -> str | None:
    """A target name as the caller sent it, if it is one: a refused request may carry any JSON there (a number, an
    object), and its refusal is audited all the same."""
    return value[:256] if isinstance(value, str) and value else None


def _header(headers: Any, name: str) -> str | None:
    if not headers:
        return None
    value = headers.get(name)
    if value is None:
        value = next((v for k, v in headers.items() if k.lower() == name.lower()), None)
    return str(value) if value is not None else None


def _json(text: str) -> Any:
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None


def build(app: APIGatewayRestResolver, status: int, body: str, replay: bool) -> AuditRecord | None:
    principal = app.context.get("principal")
    if not isinstance(principal, Principal):
        return None
    event = app.current_event
    route = app.context.get("_route")
    args: dict[str, Any] = dict(app.context.get("_route_args") or {})
    query = dict(event.query_string_parameters or {})
    try:
        sent = event.json_body if event.body else None
    except Exception:
        sent = None
    model = body_model(app)
    secret = secret_paths(model) if model is not None else frozenset()
    answer = _json(body) if status == 202 else None
    op = answer if isinstance(answer, dict) and str(answer.get("id", "")).startswith("op-") else None
    op_target = (op or {}).get("target") or {}
    cluster = args.get("cluster") or op_target.get("cluster")
    if cluster is None and isinstance(sent, dict) and event.path.rstrip("/") in ("/v1/clusters", "/v1/clusters/import"):
        cluster = _name(sent.get("podstart_name")) or _name(sent.get("name"))
    identity = event.request_context.identity
    return AuditRecord(
        id=uuid.uuid4().hex, at=now_iso(),
        principal=Actor(sub=principal.sub, name=principal.name, role=principal.role.name),
        face=face_of(_header(event.headers, FACE_HEADER)),
        source_ip=identity.source_ip if identity else None,
        user_agent=(_header(event.headers, "User-Agent") or "")[:256] or None,
        action=route.func.__name__ if route is not None else f"{event.http_method} {event.path}",
        method=event.http_method, path=event.path,
        target=AuditTarget(cluster=cluster, region=_name(query.get("region")) or op_target.get("region")
                           or (_name(sent.get("region")) if isinstance(sent, dict) else None),
                           resource=args.get("group") or op_target.get("resource"),
                           operation_id=args.get("operation_id") or (op or {}).get("id")),
        # one redaction, on every path (refusals too): fields secret by schema, credential-looking values, keys
        # that name secrets
        request=redaction.redact({"body": sent, "query": query} if sent is not None else {"query": query}, secret),
        idempotency_key=_header(event.headers, "Idempotency-Key"),
        result=AuditResult(status=status, operation_id=(op or {}).get("id")),
        replay=replay, correlation_id=event.request_context.request_id,
    )


def record(app: APIGatewayRestResolver, status: int, body: str, replay: bool) -> None:
    try:
        from functions.api.deps import services

        log = services().audit
        if log is None:
            return
        rec = build(app, status, body, replay)
        if rec is not None:
            log.append(rec)
    except Exception:
        logger.exception("audit record not written")
        metrics.add_metric(name="AuditWriteFailures", unit="Count", value=1)
