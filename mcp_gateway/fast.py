"""The Lambda's fast `tools/list`: a plain tool listing answered without importing the MCP SDK.

Why: importing the `mcp` SDK (its `mcp_types` alone are pydantic models of two protocol eras) costs ~4x a bare
`import boto3` in CPU time, paid by a cold container's first request before it answers; issue 29 asks <= 2.5x
for the MCP function's first `tools/list`. Every agent session lists the tools, and in the stateless 2026 era
each request may land on a cold container, so the listing is the request worth making cheap. Its answer is small
and fixed in shape, so this module builds it from the same `Gateway` the SDK's server uses (catalog, the
caller's role, `tool_payload`); the SDK is loaded for anything else (initialize and server/discover included).

Strictly conservative: `classify` accepts only a request the SDK would answer with the tool list, and whose
answer this module has been verified to write exactly as the SDK does (status, content type, JSON body; the
test is tests/functional/test_mcp_fast_tools_list.py, one case per protocol version and role). That is one
JSON object `{"jsonrpc": "2.0", "id": <str|int>, "method": "tools/list", "params": ...}` POSTed with a JSON
content type and an Accept the SDK takes, where
- a handshake-era request (no `MCP-Protocol-Version`, or one of `HANDSHAKE_VERSIONS`) has no params, `{}`, or
  only `cursor: null` and a `_meta` holding at most a `progressToken`;
- a 2026-07-28 request (`MODERN_VERSIONS`) has `Mcp-Method: tools/list`, only `_meta` (and `cursor: null`),
  and a `_meta` envelope whose protocol version matches the header, with client capabilities and client info of
  the shapes the spec defines (each checked here the way the SDK's models would accept them, or refused).
Anything else (initialize, tools/call, resources, notifications, batches, unknown versions, a bad Accept or
Content-Type, an envelope with anything unusual, a catalog that cannot be read) goes to the SDK unchanged, so
every error stays the SDK's. `PODSTART_MCP_FAST_TOOLS_LIST=0` turns the fast path off.

Imports neither `mcp` nor `mcp_types`: the constants below mirror the SDK's, and the test fails the day they
differ.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcp_gateway.catalog import tool_payload
from mcp_gateway.gateway import CATALOG_ERRORS, SERVER_NAME, SERVER_VERSION, Gateway, caller_authorization

log = logging.getLogger(__name__)

# Protocol versions whose tools/list answer this module writes as the SDK does (mcp_types.version), and the one
# the SDK assumes when the header is absent (mcp_types.DEFAULT_NEGOTIATED_VERSION, a handshake version).
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSIONS = ("2026-07-28",)
# The 2026-07-28 per-request envelope's `_meta` keys (mcp_types.*_META_KEY).
PROTOCOL_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_META_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_META_KEY = "io.modelcontextprotocol/clientInfo"
SERVER_INFO_META_KEY = "io.modelcontextprotocol/serverInfo"
# What a 2026-07-28 ListToolsResult carries besides the tools when the handler sets none of it (the defaults of
# mcp_types.ListToolsResult; the server sets no cache hints).
MODERN_RESULT = {"ttlMs": 0, "cacheScope": "private", "resultType": "complete"}

VERSION_HEADER = "mcp-protocol-version"
METHOD_HEADER = "mcp-method"
MAX_BODY = 64 * 1024  # a plain tools/list is a few hundred bytes; anything bigger is the SDK's to judge
_SAFE_INT = 2**53  # ids and progress tokens: JSON's exact integers only


@dataclass(frozen=True)
class ToolsList:
    """A plain `tools/list` this module answers: its JSON-RPC id and protocol version (None: no header)."""

    id: str | int
    version: str | None

    @property
    def modern(self) -> bool:
        return self.version in MODERN_VERSIONS


def classify(method: str, headers: Mapping[str, str], body: bytes) -> ToolsList | None:
    """The request as a plain tools/list this module may answer, or None: the SDK answers it.

    `headers`: lowercase names, one value each (as the Lambda adapter folds them).
    """
    if method != "POST" or len(body) > MAX_BODY or not _json_content_type(headers) or not _accepts_json(headers):
        return None
    length = headers.get("content-length")
    if length is not None and length != str(len(body)):
        return None
    message = _decode(body)
    if message is None or set(message) - {"jsonrpc", "id", "method", "params"}:
        return None
    ident: Any = message.get("id")
    if message.get("jsonrpc") != "2.0" or message.get("method") != "tools/list" or not _request_id(ident):
        return None
    version = headers.get(VERSION_HEADER)
    params = message.get("params", {})
    if not isinstance(params, dict) or set(params) - {"_meta", "cursor"} or params.get("cursor", None) is not None:
        return None
    if version is None or version in HANDSHAKE_VERSIONS:
        meta = params.get("_meta", {})
        if not isinstance(meta, dict) or set(meta) - {"progressToken"}:
            return None
        if "progressToken" in meta and not _request_id(meta["progressToken"]):
            return None
        return ToolsList(ident, version)
    if version in MODERN_VERSIONS:
        if headers.get(METHOD_HEADER) != "tools/list" or not _modern_envelope(params.get("_meta"), version):
            return None
        return ToolsList(ident, version)
    return None


def result(request: ToolsList, tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON-RPC result of tools/list in the request's protocol version."""
    if not request.modern:
        return {"tools": tools}
    return {"tools": tools, **MODERN_RESULT,
            "_meta": {SERVER_INFO_META_KEY: {"name": SERVER_NAME, "version": SERVER_VERSION}}}


async def answer(gateway: Gateway, request: ToolsList, authorization: str | None) -> dict[str, Any] | None:
    """The Lambda proxy response to `request`, from the caller's visible tools; None when the catalog cannot be
    read (the SDK then answers, with its JSON-RPC error saying why)."""
    reset = caller_authorization.set(authorization)
    try:
        visible = await gateway.visible()
    except CATALOG_ERRORS:
        return None
    except Exception:
        log.exception("fast tools/list failed; the MCP SDK answers instead")
        return None
    finally:
        caller_authorization.reset(reset)
    reply = {"jsonrpc": "2.0", "id": request.id, "result": result(request, [tool_payload(s) for s in visible])}
    text = json.dumps(reply, separators=(",", ":"), ensure_ascii=False)
    return {"statusCode": 200,
            "multiValueHeaders": {"content-type": ["application/json"],
                                  "content-length": [str(len(text.encode()))]},
            "body": text, "isBase64Encoded": False}


def _json_content_type(headers: Mapping[str, str]) -> bool:
    # The SDK wants `application/json` exactly (parameters allowed) on the handshake-era path.
    return headers.get("content-type", "").split(";")[0].strip() == "application/json"


def _accepts_json(headers: Mapping[str, str]) -> bool:
    # As the SDK reads Accept (mcp.server.streamable_http.check_accept_headers): JSON answers are all it needs.
    types = {part.split(";")[0].strip().lower() for part in headers.get("accept", "").split(",")}
    return bool(types & {"application/json", "application/*", "*/*"})


def _reject_constant(name: str) -> Any:
    raise ValueError(name)


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("duplicate key")
    return dict(pairs)


def _decode(body: bytes) -> dict[str, Any] | None:
    """The body as one JSON object, if it is plainly one: UTF-8, no NaN/Infinity, no repeated keys, no lone
    surrogates (where JSON parsers may disagree, the SDK decides)."""
    try:
        text = body.decode("utf-8")
        data = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique)
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except (UnicodeError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _request_id(value: Any) -> bool:
    return isinstance(value, str) or (type(value) is int and -_SAFE_INT < value < _SAFE_INT)


def _strings(value: Any, required: tuple[str, ...], optional: tuple[str, ...]) -> bool:
    """An object of string fields: each of `required`, any of `optional`, nothing else."""
    return (isinstance(value, dict) and all(k in value for k in required)
            and not set(value) - set(required) - set(optional) and all(isinstance(v, str) for v in value.values()))


def _objects(value: Any, keys: tuple[str, ...] | None = None) -> bool:
    """An object whose values are all objects (and whose keys are among `keys`, when given)."""
    return (isinstance(value, dict) and all(isinstance(v, dict) for v in value.values())
            and (keys is None or not set(value) - set(keys)))


# ClientCapabilities (2026-07-28): each known capability with the shape the spec gives it. An unknown capability
# or a null is legal, but it is the SDK's to judge.
_CAPABILITIES = {
    "roots": lambda v: isinstance(v, dict),
    "sampling": lambda v: _objects(v, ("context", "tools")),
    "elicitation": lambda v: _objects(v, ("form", "url")),
    "experimental": _objects,
    "extensions": _objects,
}


def _modern_envelope(meta: Any, version: str) -> bool:
    if not isinstance(meta, dict) or set(meta) - {PROTOCOL_VERSION_META_KEY, CLIENT_CAPABILITIES_META_KEY,
                                                   CLIENT_INFO_META_KEY, "progressToken"}:
        return False
    if meta.get(PROTOCOL_VERSION_META_KEY) != version:
        return False
    capabilities = meta.get(CLIENT_CAPABILITIES_META_KEY)
    if not isinstance(capabilities, dict) or not all(
            k in _CAPABILITIES and _CAPABILITIES[k](v) for k, v in capabilities.items()):
        return False
    if CLIENT_INFO_META_KEY in meta and not _strings(meta[CLIENT_INFO_META_KEY], ("name", "version"),
                                                      ("title", "description", "websiteUrl")):
        return False
    return "progressToken" not in meta or _request_id(meta["progressToken"])
