"""Tool call <-> REST request/response, as plain data (no MCP, no sockets).

`build_request` splits a tool's arguments into path, query and body by the catalog (gateway arguments
such as `detail` stay here); `shape_response` turns the REST answer into what the agent sees: the compact
view (`views.py`) as structured content and as JSON text, or with `detail="full"` the REST document as is;
problem+json stays field by field so the agent can fix its input.

Idempotency: a mutating call carries `Idempotency-Key`: the caller's `idempotency_key`, else a fresh
key for this one tool call (`new_idempotency_key`), reused only for the gateway's own HTTP retries of
that call. The same arguments called again later are a new request: `scale 2 -> 1 -> 2` scales twice.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from mcp_gateway import views
from mcp_gateway.catalog import DETAIL_ARG, IDEMPOTENCY_ARG, LIMIT_ARG, MORE_ARG, TOKEN_ARG, ToolSpec, folded

TERMINAL = "SUCCEEDED, FAILED or CANCELLED"


class ArgumentError(ValueError):
    """The arguments cannot be turned into a request (unknown name, missing path parameter, bad value)."""


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Outcome:
    """What a tool call returns: text for the model, structured JSON, and whether it failed."""

    text: str
    structured: dict[str, Any] | None
    is_error: bool


@dataclass(frozen=True)
class Shape:
    """How the caller asked to see the answer: the full REST document, or a compact page of it."""

    full: bool = False
    page: views.Page = field(default_factory=views.Page)
    used: frozenset[str] = frozenset()  # the filters the caller already passed


def new_idempotency_key() -> str:
    """A key for one tool call: its HTTP retries share it, a later call with the same arguments does not."""
    return f"mcp-{uuid.uuid4().hex}"


def build_request(spec: ToolSpec, arguments: dict[str, Any], key: str | None = None) -> tuple[Request, Shape]:
    """The HTTP request for a tool call, and how to shape its answer. `key` is this call's idempotency key
    (ignored when the caller passed `idempotency_key`; a fresh one when both are missing)."""
    known = {a.name for a in spec.args if a.location != "more"} | ({IDEMPOTENCY_ARG} if spec.mutating else set())
    unknown = sorted(set(arguments) - known)
    rarer = folded(spec)
    if unknown and set(unknown) <= set(rarer):  # a field of `more` passed at the top level: take it there too
        arguments = {k: v for k, v in arguments.items() if k not in unknown} | {
            MORE_ARG: {**(arguments.get(MORE_ARG) or {}), **{k: arguments[k] for k in unknown}}}
        unknown = []
    if unknown:
        takes = ", ".join(sorted(known)) or "no arguments"
        raise ArgumentError(f"{spec.name} does not take {', '.join(unknown)}; it takes: {takes}")
    cluster = arguments.get("cluster")
    if isinstance(cluster, str) and "/" in cluster and spec.arg("region") is not None:
        region, _, name = cluster.partition("/")  # region/name: a cluster name in several regions
        if arguments.get("region") not in (None, region):
            raise ArgumentError(f"{spec.name}: cluster says region {region}, region says {arguments['region']}")
        arguments = {**arguments, "cluster": name, "region": region}
    shape = _shape(spec, arguments)
    path = spec.path
    query: dict[str, str] = {}
    body: dict[str, Any] = {}
    for arg in spec.args:
        if arg.name not in arguments or arg.location == "gateway":
            if arg.location == "path":
                raise ArgumentError(f"{spec.name} needs {arg.name}")
            continue
        value = arguments[arg.name]
        if arg.location == "more":
            continue
        if arg.location == "path":
            path = path.replace("{" + arg.wire + "}", quote(str(value), safe=""))
        elif arg.location == "query":
            if arg.name == TOKEN_ARG and spec.paging == "rest":
                value = shape.page.rest_token  # the REST API's own token inside the gateway's
            if value is not None:
                query[arg.wire] = _query_value(value)
        else:
            body[arg.wire] = value  # null is meaningful in a body ("clear this field")
    more = arguments.get(MORE_ARG)
    if more is not None:
        if not isinstance(more, dict):
            raise ArgumentError(f"{spec.name}: {MORE_ARG} is an object of body fields ({', '.join(rarer)})")
        wrong = sorted(set(more) - set(rarer))
        if wrong:
            raise ArgumentError(f"{spec.name}: {MORE_ARG} takes {', '.join(rarer)}; not {', '.join(wrong)}")
        body.update(more)
    headers = {"Accept": "application/json"}
    if spec.mutating:
        headers["Idempotency-Key"] = str(arguments.get(IDEMPOTENCY_ARG) or key or new_idempotency_key())
    return Request(spec.method, path, query, body if spec.has_body else None, headers), shape


def _shape(spec: ToolSpec, arguments: dict[str, Any]) -> Shape:
    detail = arguments.get(DETAIL_ARG)
    if detail not in (None, "compact", "full"):
        raise ArgumentError(f'{spec.name}: detail must be "full" (or omitted for the compact view), got {detail!r}')
    offset, rest_token = views.decode_token(arguments.get(TOKEN_ARG) if spec.paging else None)
    limit = None
    if spec.paging == "gateway" and arguments.get(LIMIT_ARG) is not None:
        limit = arguments[LIMIT_ARG]
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise ArgumentError(f"{spec.name}: limit must be a whole number >= 1, got {limit!r}")
    used = frozenset(f for f in spec.filters if arguments.get(f) is not None)
    return Shape(full=detail == "full", page=views.Page(offset, limit, rest_token), used=used)


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def shape_response(spec: ToolSpec, status: int, content_type: str, text: str, shape: Shape = Shape(),
                   key: str | None = None) -> Outcome:
    """The tool result for a REST answer: compact view by default, the REST document with `detail="full"`."""
    data = _json(text)
    if 200 <= status < 300:
        if data is None:
            return Outcome(text or "{}", None, False)
        if not shape.full:
            data = views.compact(spec.name, data, shape.page, filters=spec.filters, used=shape.used)
        structured = data if isinstance(data, dict) else {"result": data}
        return Outcome(views.dumps(data), structured, False)
    problem = data if isinstance(data, dict) else {"status": status, "detail": text[:2000]}
    return _bounded(Outcome(problem_text(spec, status, problem, key), problem, True))


def _bounded(outcome: Outcome) -> Outcome:
    """An error result within the budget too: a problem with hundreds of field errors keeps the first ones."""
    if views.result_bytes(outcome.structured, outcome.text, True) <= views.BUDGET:
        return outcome
    structured = views.fit(outcome.structured, views.BUDGET // 2)
    text = outcome.text[: views.BUDGET // 3] + "\n(cut; fix these first)"
    return Outcome(text, structured, True)


def problem_text(spec: ToolSpec, status: int, problem: dict[str, Any], key: str | None = None) -> str:
    """problem+json as text an agent can act on: what failed, and each field with its message."""
    title = problem.get("title") or "Request failed"
    detail = problem.get("detail") or ""
    errors = problem.get("errors") or []
    # A validation problem's detail repeats its errors: list those, one per field, instead.
    said = f": {detail}" if detail and not errors else ""
    lines = [f"{spec.name} failed: {title} (HTTP {status}){said}"]
    if status == 403 and spec.mutating:
        lines.append("The caller may only read (viewer role): this tool changes state and was refused. "
                     "Ask an operator or admin to run it.")
    if status == 429 or status >= 500:
        again = (f' with idempotency_key="{key}" (the key this call used, so a retry cannot start a second '
                 'operation)') if spec.mutating and key else ""
        lines.append(f"This may be transient: call again later{again}.")
    renames = {a.wire: a.name for a in spec.args if a.wire != a.name}
    for err in errors:
        loc = [str(p) for p in err.get("loc") or []]
        where = ".".join(loc)
        hint = f" (argument {renames[loc[-1]]})" if loc and loc[-1] in renames else ""
        lines.append(f"- {where}{hint}: {err.get('msg', 'invalid')}")
    return "\n".join(lines)


def refusal(spec: ToolSpec) -> Outcome:
    """The one write check of a read-only gateway."""
    text = (f"{spec.name} changes state and this PodStart MCP gateway is read-only: refused, nothing was sent. "
            "Use a read-write gateway (or ask an operator) to run it.")
    return Outcome(text, {"refused": spec.name, "reason": "read-only"}, True)


def _json(text: str) -> Any:
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None
