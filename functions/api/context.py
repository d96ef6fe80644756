"""Per-request context the routes read: who is calling, and helpers for operation responses."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from pydantic import BaseModel

from functions.domain.operations import Actor, Operation
from functions.domain.principal import Principal, Role

if TYPE_CHECKING:
    from functions.api.deps import Services


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


def accepted(op: Operation) -> Response[str]:
    """A mutation's answer: 202, the Operation record itself, and where to watch it."""
    return json_response(op.public(), 202, {"Location": f"/v1/operations/{op.id}"})
