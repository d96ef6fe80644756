"""The OpenAPI document clients see: what Powertools generates from the routes and models, completed in one place.

- Every operation lists the problem+json answers it may give (the edge in functions.api.edge and the exception
  handlers map them once for all routes), with the one Problem schema.
- A route without a response model answers a JSON object; Powertools would infer "string" from `Response[str]`.
"""

from __future__ import annotations

from typing import Any

from functions.api.problems import PROBLEM_JSON
from functions.api.schemas import Problem

_EVERY_ROUTE = {
    400: "Bad request: the request cannot be read (a page token this API did not issue, a body that is not JSON)",
    401: "Unauthorized: no token, or one that is not valid",
    403: "Forbidden: your role does not allow this",
    404: "Not found",
    413: "Payload too large: the body is over 256 KiB",
    422: "Invalid request: `errors` names each field and what is wrong with it",
}
_WITH_BODY = {415: "Unsupported media type: the body must be JSON (Content-Type: application/json)"}
_MUTATING = {409: "Conflict: the target is busy, the name is taken, or a field cannot change"}
_ON_A_CLUSTER = {409: "Conflict: the cluster is not ACTIVE (still creating, or being deleted): its Kubernetes API "
                      "cannot be read yet"}
_INFERRED_FROM_RESPONSE_STR = {"title": "Return", "type": "string"}


def complete(doc: dict[str, Any]) -> dict[str, Any]:
    schema = Problem.model_json_schema(ref_template="#/components/schemas/{model}")
    schemas = doc.setdefault("components", {}).setdefault("schemas", {})
    schemas.update(schema.pop("$defs", {}))
    schemas["Problem"] = schema
    # Powertools' validation shapes: PodStart answers problem+json instead
    for name in ("HTTPValidationError", "ValidationError", "ResponseValidationError"):
        schemas.pop(name, None)
    problem = {PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/Problem"}}}
    for path, operations in doc.get("paths", {}).items():
        for method, op in operations.items():
            if not isinstance(op, dict) or "responses" not in op:
                continue
            for response in op["responses"].values():
                for media in response.get("content", {}).values():
                    if media.get("schema") == _INFERRED_FROM_RESPONSE_STR:
                        media["schema"] = {"type": "object"}
            wanted = {**_EVERY_ROUTE, **(_WITH_BODY if "requestBody" in op else {}),
                      **(_ON_A_CLUSTER if "/{cluster}/" in path else {}),
                      **(_MUTATING if method in ("post", "put", "patch", "delete") else {})}
            for status, description in wanted.items():
                op["responses"].setdefault(str(status), {"description": description, "content": problem})
    return doc
