"""Per-request context the routes read: who is calling, and helpers for operation responses."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query
from pydantic import BaseModel

from functions.domain.operations import Actor, Operation
from functions.domain.principal import Principal, Role

if TYPE_CHECKING:  # the planners and views load with the routes that answer them, not with this module
    from functions.api.deps import Services
    from functions.domain.plans import Plan
    from functions.domain.views import NoChange
    from functions.logic.started import Started


def services() -> Services:
    """The API's services, built on first use: boto3 and the AWS adapters load with the first request
    that needs them, not at import (a cold start pays only for what it uses)."""
    from functions.api.deps import services as build

    return build()


F = TypeVar("F", bound=Callable[..., Any])


def requires(role: Role) -> Callable[[F], F]:
    """Declare the role a route needs; the edge checks it before the body is validated, so a caller
    without the role learns nothing about field rules (403 before 422)."""

    def mark(fn: F) -> F:
        fn.podstart_role = role  # type: ignore[attr-defined]
        return fn

    return mark


def route_role(fn: Callable[..., Any]) -> Role | None:
    return getattr(fn, "podstart_role", None)


def principal(router: Router) -> Principal:
    p = router.context.get("principal")
    assert isinstance(p, Principal)  # set by the auth middleware before any route runs
    return p


def require(router: Router, role: Role) -> Principal:
    p = principal(router)
    p.require(role)
    return p


def actor(p: Principal) -> Actor:
    return Actor(sub=p.sub, name=p.name, role=p.role.name)


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response[str]:
    return Response(status_code=status, content_type="application/json", body=json.dumps(body, default=str),
                    headers=headers or {})


def model_response(model: BaseModel, status: int = 200) -> Response[str]:
    return Response(status_code=status, content_type="application/json", body=model.model_dump_json(),
                    headers={})


REPLAYED_HEADER = "Idempotent-Replayed"  # "true" when the answer is an earlier request's (same Idempotency-Key)

DryRun = Annotated[bool, Query(description=(
    "true: answer the plan (200: changes, quota, hourly cost, warnings) after the same checks, and change nothing"))]


def accepted(op: Operation, replayed: bool = False) -> Response[str]:
    """A mutation's answer: 202, the Operation record itself, and where to watch it."""
    headers = {"Location": f"/v1/operations/{op.id}"}
    if replayed:
        headers[REPLAYED_HEADER] = "true"
    return json_response(op.public(), 202, headers)


def respond(result: Started | Plan | NoChange | Operation) -> Response[str]:
    """What a mutating route answers: 202 with the operation, or 200 with a plan (dry run) or `changed: false`."""
    from functions.logic.started import Started as Begun

    if isinstance(result, Begun):
        return accepted(result.operation, result.replayed)
    if isinstance(result, Operation):
        return accepted(result)
    return model_response(result)
