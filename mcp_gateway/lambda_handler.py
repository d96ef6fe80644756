"""The MCP gateway Lambda: API Gateway proxy event -> the stateless streamable HTTP app -> response.

A plain `tools/list` (most first requests) is answered by mcp_gateway.fast without importing the MCP SDK
(loading it costs ~4x `import boto3` of CPU time); everything else goes to the SDK's app, which is built on
first use. Per invocation the stateless app gets the one request (its own session manager runs for just that
request, see mcp_gateway.asgi) and the response is collected from the ASGI messages. Both paths share one
`Gateway` per (API URL, read-only) per container, so the catalog (OpenAPI document) is fetched once per
container with the first caller's token and reused.
Config: PODSTART_API_URL (the REST API root; when unset, derived from the event as
``https://{requestContext.domainName}/{requestContext.stage}``, the API that invoked us, so the
stack needs no function -> API URL reference), PODSTART_MCP_READ_ONLY ("1"/"true" for read-only),
PODSTART_MCP_FAST_TOOLS_LIST ("0"/"false": every request goes to the SDK).
The caller's Authorization header reaches the REST API per request (mcp_gateway.asgi). A tool call
that waits (get_operation with wait_seconds) answers within the invocation's remaining time.
"""

from __future__ import annotations

import base64
import os
import time
from typing import Any
from urllib.parse import urlencode

Key = tuple[str, bool]  # (REST API root, read-only)
_gateways: dict[Key, Any] = {}  # mcp_gateway.gateway.Gateway, shared by the fast path and the SDK app
_apps: dict[Key, Any] = {}


def api_url(event: dict[str, Any]) -> str:
    """The REST API root: env PODSTART_API_URL, else the invoking API Gateway stage's own URL."""
    configured = os.environ.get("PODSTART_API_URL")
    if configured:
        return configured
    context = event.get("requestContext") or {}
    domain, stage = context.get("domainName"), context.get("stage")
    if not domain or not stage:
        raise RuntimeError("PODSTART_API_URL is unset and the event has no requestContext.domainName/stage")
    return f"https://{domain}/{stage}"


def _key(event: dict[str, Any]) -> Key:
    return api_url(event), os.environ.get("PODSTART_MCP_READ_ONLY", "").lower() in ("1", "true")


def _gateway(key: Key) -> Any:
    if key not in _gateways:
        from mcp_gateway.gateway import Gateway

        _gateways[key] = Gateway(key[0], None, key[1], None, from_caller=True)  # caches the catalog
    return _gateways[key]


def _app(key: Key) -> Any:
    if key not in _apps:
        from mcp_gateway.asgi import create_app  # the MCP SDK: loaded by the first request the fast path leaves

        _apps[key] = create_app(key[0], read_only=key[1], gateway=_gateway(key))
    return _apps[key]


def _fast_path_on() -> bool:
    return os.environ.get("PODSTART_MCP_FAST_TOOLS_LIST", "1").lower() not in ("0", "false")


def _scope(event: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
    headers: dict[str, str] = {}
    for k, v in (event.get("headers") or {}).items():
        headers[k.lower()] = str(v)
    for k, vs in (event.get("multiValueHeaders") or {}).items():
        headers[k.lower()] = ", ".join(str(v) for v in vs)
    query = event.get("multiValueQueryStringParameters") or {
        k: [v] for k, v in (event.get("queryStringParameters") or {}).items()}
    raw = event.get("body") or ""
    body = base64.b64decode(raw) if event.get("isBase64Encoded") else raw.encode()
    source_ip = ((event.get("requestContext") or {}).get("identity") or {}).get("sourceIp") or "0.0.0.0"
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
        "method": event.get("httpMethod") or "POST", "scheme": "https",
        "path": event.get("path") or "/mcp", "raw_path": (event.get("path") or "/mcp").encode(),
        "root_path": "", "query_string": urlencode([(k, v) for k, vs in query.items() for v in vs]).encode(),
        "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()],
        "client": (source_ip, 0), "server": (headers.get("host", "lambda"), 443),
    }
    return scope, body


async def _serve(app: Any, scope: dict[str, Any], body: bytes) -> dict[str, Any]:
    sent = False
    status = 500
    out_headers: dict[str, list[str]] = {}
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
            for k, v in message.get("headers", []):
                out_headers.setdefault(k.decode("latin-1"), []).append(v.decode("latin-1"))
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await app(scope, receive, send)
    payload = b"".join(chunks)
    return {"statusCode": status, "multiValueHeaders": out_headers, "body": payload.decode(),
            "isBase64Encoded": False}


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    import anyio

    scope, body = _scope(event)
    key = _key(event)
    if _fast_path_on():
        from mcp_gateway import fast

        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        request = fast.classify(scope["method"], headers, body)
        if request is not None:
            answered = anyio.run(fast.answer, _gateway(key), request, headers.get("authorization"))
            if answered is not None:
                return answered

    from mcp_gateway.gateway import answer_by

    app = _app(key)
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    reset = answer_by.set(time.monotonic() + remaining() / 1000 if callable(remaining) else None)
    try:
        return anyio.run(_serve, app, scope, body)
    finally:
        answer_by.reset(reset)
