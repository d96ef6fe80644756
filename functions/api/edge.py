"""What every /v1 request passes before a route runs, in this order, each failure a problem+json 4xx:

    correlate -> authenticate (401) -> audit (records every mutating request but dry runs, with its answer)
              -> authorize (403, the role the route declares)
              -> admit_body (413, then 415 and 400 for routes that take a body)
              -> validate_request (422) -> refuse_credentials (422) -> the route -> validate_response

No secret value is stored: a body value that looks like a credential (functions.domain.redaction) is refused with
a 422 naming the field and pointing to the secrets route, except in fields the body's schema marks `writeOnly`
(a Secret's values) and in a model's free text (an invoke's chat); the audit record of any request, refused ones
included, is redacted the same way.

Powertools, with `enable_validation=True`, puts its OpenAPI request validation before every middleware given to
`app.use`, so an anonymous caller would learn field rules (422) and make the API parse any body before anyone
knows who sent it. The resolver is therefore built with `enable_validation=False` and this chain adds the same
two Powertools validation middlewares itself, after authentication and body admission.

Bodies are JSON: `Content-Type: application/json` or `application/*+json` (parameters such as charset are
ignored; JSON is UTF-8). A body without a Content-Type is read as JSON too (lenient, for clients that omit the
header); any other media type is 415 and the body is never read. Routes that take no body ignore one (after the
size check, which holds for every route).
"""

from __future__ import annotations

import inspect
import json
import re
from functools import lru_cache
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import APIGatewayRestResolver
from aws_lambda_powertools.event_handler.middlewares import NextMiddleware
from aws_lambda_powertools.event_handler.middlewares.openapi_validation import (
    OpenAPIRequestValidationMiddleware,
    OpenAPIResponseValidationMiddleware,
)
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from pydantic import BaseModel

from functions.api.context import REPLAYED_HEADER, route_role
from functions.domain import redaction
from functions.domain.errors import (
    BadRequest,
    InvalidInput,
    PayloadTooLarge,
    Problem,
    Unauthorized,
    UnsupportedMediaType,
)
from functions.domain.principal import Principal

CORRELATION_HEADER = "X-Correlation-Id"
_JSON_MEDIA_TYPE = re.compile(r"^application/([a-z0-9!#$&^_.-]+\+)?json$")


def strict_json(text: str) -> Any:
    """The resolver's JSON body parser: RFC 8259 JSON only (Python's json also reads NaN and Infinity)."""
    return json.loads(text, parse_constant=_not_json)


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON value")


def correlate(app: APIGatewayRestResolver, next_middleware: NextMiddleware) -> Response[Any]:
    response = next_middleware(app)
    response.headers[CORRELATION_HEADER] = app.current_event.request_context.request_id or ""
    return response


def authenticate(app: APIGatewayRestResolver, next_middleware: NextMiddleware) -> Response[Any]:
    """Who is calling: Cognito authorizer claims (the sandbox fills the same shape). Nothing else is read first."""
    ctx = app.current_event.request_context
    claims = (ctx.authorizer.claims if ctx.authorizer else None) or {}
    if not claims:
        raise Unauthorized("sign in first: send Authorization: Bearer <token>")
    app.append_context(principal=Principal.from_claims(dict(claims)))
    return next_middleware(app)


MUTATING_METHODS = ("POST", "PUT", "PATCH", "DELETE")


def audit(app: APIGatewayRestResolver, next_middleware: NextMiddleware) -> Response[Any]:
    """One audit record per mutating request (its answer included: operation id or status), dry runs aside."""
    event = app.current_event
    if event.http_method not in MUTATING_METHODS or reads_only(app.context.get("_route")):
        return next_middleware(app)
    if _is_dry_run(event.query_string_parameters or {}):
        route = app.context.get("_route")
        if route is not None and "dry_run" not in inspect.signature(route.func).parameters:
            # never mutate for a caller who asked for a plan: this route has no planner yet
            raise InvalidInput.field(["query", "dry_run"], "this endpoint has no dry run yet; send it without dry_run")
        return next_middleware(app)
    status, replay = 500, False
    body: Any = ""
    headers: dict[str, Any] = {}
    try:
        response = next_middleware(app)
        status, body, headers = response.status_code, response.body, response.headers
        return response
    except Problem as exc:
        status, replay = exc.status, bool(exc.extra.get("idempotency_key_in_progress"))
        raise
    except RequestValidationError:
        status = 422
        raise
    finally:
        from functions.api.audit_trail import record

        record(app, status, body if isinstance(body, str) else "",
               replay or str((headers or {}).get(REPLAYED_HEADER, "")).lower() == "true")


READ_ONLY_EXTENSION = "x-podstart-read-only"


def reads_only(route: Any) -> bool:
    """A POST that only reads (the capacity advice): its route says so in its OpenAPI extensions."""
    return bool((getattr(route, "openapi_extensions", None) or {}).get(READ_ONLY_EXTENSION))


def _is_dry_run(query: dict[str, str]) -> bool:
    return str(query.get("dry_run", "")).lower() in ("true", "t", "1", "yes", "y", "on")  # pydantic's true


def authorize(app: APIGatewayRestResolver, next_middleware: NextMiddleware) -> Response[Any]:
    """The role a route declares (`context.requires`), checked before its body is read or validated."""
    route = app.context.get("_route")
    role = route_role(route.func) if route is not None else None
    if role is not None:
        app.context["principal"].require(role)
    return next_middleware(app)


def admit_body(app: APIGatewayRestResolver, next_middleware: NextMiddleware) -> Response[Any]:
    """Size first (every route), then media type and JSON syntax (routes that take a body), before validation."""
    from functions.settings import api_settings

    event = app.current_event
    raw: str = event.body or ""
    limit = api_settings().max_body_bytes
    if _size(raw, bool(event.is_base64_encoded)) > limit:
        raise PayloadTooLarge(f"the request body is larger than {limit} bytes")
    if raw and app.context["_route"].dependant.body_params:
        media_type = _media_type(event.headers.get("content-type"))
        if media_type is not None and not _JSON_MEDIA_TYPE.match(media_type):
            raise UnsupportedMediaType(
                f"the body must be JSON (Content-Type: application/json), not {media_type}; "
                "with curl use --json, or -H 'Content-Type: application/json' with -d",
                errors=[{"loc": ["header", "Content-Type"], "msg": f"{media_type} is not JSON"}],
            )
        try:
            event.json_body  # noqa: B018 - parsed once here; validation reads the same cached value
        except UnicodeDecodeError:
            raise BadRequest.field(["body"], "the body is not UTF-8 text") from None
        except RecursionError:
            raise BadRequest.field(["body"], "the JSON is nested too deeply") from None
        except ValueError as exc:  # json.JSONDecodeError, NaN/Infinity, integers past Python's digit limit
            raise BadRequest.field(["body"], f"the body is not valid JSON: {exc}") from None
    return next_middleware(app)


def body_model(app: APIGatewayRestResolver) -> type[BaseModel] | None:
    """The pydantic model of the current route's body, if it takes one."""
    route = app.context.get("_route")
    params = route.dependant.body_params if route is not None else []
    model = params[0].field_info.annotation if params else None
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


@lru_cache(maxsize=128)
def secret_paths(model: type[BaseModel]) -> frozenset[tuple[str, ...]]:
    """The key paths of a body model its schema marks `writeOnly` (secret values), as `("body", ...)`."""
    return frozenset(("body", *p) for p in redaction.write_only_paths(model.model_json_schema()))


FREE_TEXT = "podstart_free_text"  # a body model whose strings are the user's own text (a chat): not scanned


def refuse_credentials(app: APIGatewayRestResolver, next_middleware: NextMiddleware) -> Response[Any]:
    """A mutation never carries a credential outside a Secret's values: 422 naming each field, nothing stored."""
    event = app.current_event
    model = body_model(app)
    if event.http_method in MUTATING_METHODS and model is not None and event.body \
            and not getattr(model, FREE_TEXT, False):
        skip = frozenset(p[1:] for p in secret_paths(model))
        found = list(redaction.findings(event.json_body, (), skip))
        if found:
            raise InvalidInput.of([{"loc": ["body", *loc], "msg": f"this looks like {why}: PodStart never stores a "
                                    f"credential; write it as a Secret (POST /v1/clusters/{{cluster}}/secrets) and "
                                    f"reference the Secret by name"} for loc, why in found[:10]])
    return next_middleware(app)


class ValidateRequest(OpenAPIRequestValidationMiddleware):
    """Powertools' OpenAPI request validation (422), reading the body admit_body already admitted and parsed.

    Powertools picks a parser from the Content-Type itself (and rejects `application/*+json`); here the body is
    JSON by then, so it is taken as parsed.
    """

    def _get_body(self, app: Any) -> Any:
        return app.current_event.json_body


def middlewares() -> list[Any]:
    """The chain, in order, for `app.use` on a resolver built with enable_validation=False."""
    return [correlate, authenticate, audit, authorize, admit_body, ValidateRequest(), refuse_credentials,
            OpenAPIResponseValidationMiddleware()]


def _size(raw: str, base64_encoded: bool) -> int:
    if base64_encoded:  # decoded size, without decoding
        return len(raw) * 3 // 4 - raw[-2:].count("=")
    return len(raw.encode())


def _media_type(content_type: str | None) -> str | None:
    """`application/json; charset=utf-8` -> `application/json`; no (or an empty) header -> None."""
    if content_type is None or not content_type.strip():
        return None
    return content_type.split(";", 1)[0].strip().lower()
