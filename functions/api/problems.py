"""problem+json (RFC 9457) rendering for every error the API returns."""

from __future__ import annotations

import json
from typing import Any

from aws_lambda_powertools.event_handler import Response

from functions.domain.errors import PROBLEM_BASE, Problem

PROBLEM_JSON = "application/problem+json"


def problem_response(body: dict[str, Any], headers: dict[str, str] | None = None) -> Response[str]:
    return Response(status_code=int(body["status"]), content_type=PROBLEM_JSON, body=json.dumps(body),
                    headers=headers or {})


def from_problem(exc: Problem, instance: str | None) -> Response[str]:
    retry_after = exc.extra.get("retry_after")
    return problem_response(exc.to_problem(instance),
                            {"Retry-After": str(retry_after)} if retry_after is not None else None)


def _msg(err: dict[str, Any]) -> str:
    msg = str(err.get("msg") or err.get("type") or "invalid")
    return msg.removeprefix("Value error, ")


def from_validation(errors: list[dict[str, Any]], instance: str | None) -> Response[str]:
    items = [{"loc": [str(p) if not isinstance(p, int) else p for p in e.get("loc", ())], "msg": _msg(e)}
             for e in errors]
    detail = "; ".join(f"{'.'.join(str(p) for p in i['loc'])}: {i['msg']}" for i in items) or "invalid request"
    return problem_response({
        "type": PROBLEM_BASE + "validation", "title": "Invalid request", "status": 422,
        "detail": detail, "instance": instance, "errors": items,
    })


def internal_error(instance: str | None, correlation_id: str | None) -> Response[str]:
    return problem_response({
        "type": PROBLEM_BASE + "internal", "title": "Internal error", "status": 500,
        "detail": f"an unexpected error happened; quote correlation id {correlation_id}",
        "instance": instance,
    })
