"""Tool call <-> REST request/response, as plain data (no MCP, no sockets).

`build_request` splits a tool's arguments into path, query and body by the catalog; `shape_response`
turns the REST answer into what the agent sees: JSON as structured content and text, the status
tool named for operations, and problem+json kept field by field so the agent can fix its input.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from mcp_gateway.catalog import IDEMPOTENCY_ARG, STATUS_TOOL, ToolSpec

TERMINAL = "SUCCEEDED, FAILED or CANCELLED"


class ArgumentError(ValueError):
    """The arguments cannot be turned into a request (unknown name, missing path parameter)."""


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


def derive_idempotency_key(tool: str, arguments: dict[str, Any]) -> str:
    """Deterministic key from tool name + canonical JSON of the arguments: a blind retry repeats nothing."""
    args = {k: v for k, v in arguments.items() if k != IDEMPOTENCY_ARG}
    canonical = json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return "mcp-" + hashlib.sha256(f"{tool}\n{canonical}".encode()).hexdigest()[:48]


def build_request(spec: ToolSpec, arguments: dict[str, Any]) -> Request:
    known = {a.name for a in spec.args} | ({IDEMPOTENCY_ARG} if spec.mutating else set())
    unknown = sorted(set(arguments) - known)
    if unknown:
        takes = ", ".join(sorted(known)) or "no arguments"
        raise ArgumentError(f"{spec.name} does not take {', '.join(unknown)}; it takes: {takes}")
    path = spec.path
    query: dict[str, str] = {}
    body: dict[str, Any] = {}
    for arg in spec.args:
        if arg.name not in arguments:
            if arg.location == "path":
                raise ArgumentError(f"{spec.name} needs {arg.name}")
            continue
        value = arguments[arg.name]
        if arg.location == "path":
            path = path.replace("{" + arg.wire + "}", quote(str(value), safe=""))
        elif arg.location == "query":
            if value is not None:
                query[arg.wire] = _query_value(value)
        else:
            body[arg.wire] = value  # null is meaningful in a body ("clear this field")
    headers = {"Accept": "application/json"}
    if spec.mutating:
        headers["Idempotency-Key"] = str(arguments.get(IDEMPOTENCY_ARG) or derive_idempotency_key(spec.name, arguments))
    return Request(spec.method, path, query, body if spec.has_body else None, headers)


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def shape_response(spec: ToolSpec, status: int, content_type: str, text: str) -> Outcome:
    data = _json(text)
    if 200 <= status < 300:
        structured = data if isinstance(data, dict) else ({"result": data} if data is not None else None)
        rendered = json.dumps(data, separators=(",", ":"), default=str) if data is not None else (text or "{}")
        return Outcome(_tracking(spec, data) + rendered, structured, False)
    problem = data if isinstance(data, dict) else {"status": status, "detail": text[:2000]}
    return Outcome(problem_text(spec, status, problem), problem, True)


def _tracking(spec: ToolSpec, data: Any) -> str:
    """A mutation that started an operation names the tool that tracks it to a terminal state."""
    if not spec.mutating or not isinstance(data, dict):
        return ""
    op_id = data.get("id")
    if not (isinstance(op_id, str) and op_id.startswith("op-")):
        return ""
    tool = data.get("status_tool") or STATUS_TOOL
    what = f" ({data['kind']})" if data.get("kind") else ""
    return (f"Operation {op_id}{what} is {data.get('status', 'PENDING')}. Track it with {tool}"
            f"(operation_id=\"{op_id}\", wait_seconds=20), repeating until status is {TERMINAL}.\n")


def problem_text(spec: ToolSpec, status: int, problem: dict[str, Any]) -> str:
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
        lines.append("This may be transient: retry the same call later; the idempotency key makes a retry safe.")
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
