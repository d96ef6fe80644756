"""The MCP Lambda's fast tools/list (mcp_gateway.fast): the same answer as the MCP SDK's, without loading it.

Driven through `mcp_gateway.lambda_handler.handler` with API Gateway events, against the real REST handler over
HTTP on moto (as test_mcp_gateway serves it): every protocol version the fast path serves x admin,
viewer and a read-only gateway, with the fast path on and off; request shapes it must leave to the SDK; the SDK's
own client in both protocol eras; and, in a fresh interpreter, that the SDK is not imported until a request
needs it.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import mcp_types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from mcp_gateway import fast, lambda_handler
from mcp_gateway.catalog import build_catalog
from sandbox.proxy import from_result, to_event
from tests.functional.test_mcp_gateway import ADMIN, MUTATING, ROOT, VIEWER, ZONE_TYPES, RestApi, serve_rest_api

MODERN = MODERN_PROTOCOL_VERSIONS[-1]
ENVELOPE = {fast.PROTOCOL_VERSION_META_KEY: MODERN, fast.CLIENT_INFO_META_KEY: {"name": "test", "version": "1"},
            fast.CLIENT_CAPABILITIES_META_KEY: {}}
Seen = tuple[int, str, Any]  # what a client sees of an answer: status, content type, body
WHO = {"admin": (ADMIN, False), "viewer": (VIEWER, False), "read-only gateway": (ADMIN, True)}


@pytest.fixture(scope="module")
def rest_api() -> Iterator[RestApi]:
    with serve_rest_api() as api:
        yield api


@pytest.fixture
def lam(rest_api: RestApi, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A fresh container: no gateway or SDK app cached yet, the REST API under test."""
    monkeypatch.setenv("PODSTART_API_URL", rest_api.url)
    monkeypatch.delenv("PODSTART_MCP_FAST_TOOLS_LIST", raising=False)
    monkeypatch.setattr(lambda_handler, "_gateways", {})
    monkeypatch.setattr(lambda_handler, "_apps", {})
    yield


def _event(message: Any, token: str | None = ADMIN, version: str | None = None,
           headers: dict[str, str] | None = None) -> dict[str, Any]:
    h = {"Host": "abc.execute-api.us-west-2.amazonaws.com", "Content-Type": "application/json",
         "Accept": "application/json, text/event-stream"}
    if token:
        h["Authorization"] = f"Bearer {token}"
    if version:
        h["MCP-Protocol-Version"] = version
        if version in MODERN_PROTOCOL_VERSIONS and isinstance(message, dict) and "method" in message:
            h["Mcp-Method"] = message["method"]
    h.update(headers or {})
    body = message if isinstance(message, str) else json.dumps(message)
    return {"httpMethod": "POST", "path": "/mcp", "isBase64Encoded": False, "headers": h, "body": body,
            "requestContext": {"identity": {"sourceIp": "203.0.113.9"}}}


def _tools_list(version: str | None, ident: Any = 1, params: Any = None) -> dict[str, Any]:
    if params is None:
        params = {"_meta": dict(ENVELOPE)} if version in MODERN_PROTOCOL_VERSIONS else {}
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/list", "params": params}


def _seen(response: dict[str, Any]) -> Seen:
    """What a client sees: the status, the content type, and the parsed body."""
    status, headers, body = from_result(response)
    content_type = {k.lower(): v for k, v in headers.items()}.get("content-type", "")
    return status, content_type, (json.loads(body) if content_type == "application/json" and body else body)


def _both(event: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> tuple[Seen, Seen, bool]:
    """(the answer with the fast path on, the SDK's answer, whether the fast path answered)."""
    answered: list[bool] = []
    real = fast.answer

    async def counted(*args: Any) -> Any:
        reply = await real(*args)
        answered.append(reply is not None)
        return reply

    with monkeypatch.context() as m:
        m.setattr(fast, "answer", counted)
        with_fast = _seen(lambda_handler.handler(event, None))
    with monkeypatch.context() as m:
        m.setenv("PODSTART_MCP_FAST_TOOLS_LIST", "0")
        sdk = _seen(lambda_handler.handler(event, None))
    return with_fast, sdk, any(answered)


# --- the same answer, per protocol version and role ------------------------------------------------------------

@pytest.mark.parametrize("who", list(WHO))
@pytest.mark.parametrize("version", [None, *fast.HANDSHAKE_VERSIONS, *fast.MODERN_VERSIONS])
def test_fast_tools_list_equals_the_sdks_answer(lam: None, rest_api: RestApi, monkeypatch: pytest.MonkeyPatch,
                                                version: str | None, who: str) -> None:
    # Given a caller listing tools in one protocol version, on a read-write or a read-only gateway
    token, read_only = WHO[who]
    if read_only:
        monkeypatch.setenv("PODSTART_MCP_READ_ONLY", "1")
    event = _event(_tools_list(version), token, version)

    with_fast, sdk, answered = _both(event, monkeypatch)

    # Then the fast path answered, exactly as the SDK does (status, content type, JSON body)
    assert answered
    assert with_fast == sdk
    status, content_type, body = sdk
    assert status == 200 and content_type == "application/json" and body["id"] == 1
    names = {t["name"] for t in body["result"]["tools"]}
    everything = {s.name for s in build_catalog(rest_api.openapi)}
    if who == "admin":
        assert names == everything
    else:  # a viewer, or anyone on a read-only gateway, sees no tool that writes
        assert names and not names & MUTATING and names < everything
    if version in MODERN_PROTOCOL_VERSIONS:
        assert {"cacheScope", "resultType", "ttlMs", "_meta"} <= set(body["result"])


# Requests the fast path serves (its answer must equal the SDK's) and ones it must leave to the SDK.
SERVED = {
    "string id": (_tools_list("2025-06-18", ident="req-7"), "2025-06-18"),
    "empty string id": (_tools_list("2025-06-18", ident=""), "2025-06-18"),
    "zero id, no version header": (_tools_list(None, ident=0), None),
    "no params": ({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, "2025-06-18"),
    "null cursor": (_tools_list("2025-11-25", params={"cursor": None}), "2025-11-25"),
    "progress token": (_tools_list("2025-03-26", params={"_meta": {"progressToken": "p1"}}), "2025-03-26"),
    "2026 with capabilities": (_tools_list(MODERN, params={"_meta": {
        **ENVELOPE, fast.CLIENT_CAPABILITIES_META_KEY: {
            "roots": {"listChanged": True}, "sampling": {"tools": {}}, "elicitation": {"form": {}, "url": {}},
            "experimental": {"x": {}}, "extensions": {"io.example/ext": {"on": True}}}}}), MODERN),
    "2026 with unusual but valid values": (_tools_list(MODERN, ident=2**53 - 1, params={"_meta": {
        **ENVELOPE, fast.CLIENT_INFO_META_KEY: {"name": "", "version": "", "websiteUrl": "not a URL"},
        fast.CLIENT_CAPABILITIES_META_KEY: {"extensions": {"noprefix": {}}, "roots": {"x": [1]}}}}), MODERN),
    "2026 without client info": (_tools_list(MODERN, params={"_meta": {
        fast.PROTOCOL_VERSION_META_KEY: MODERN, fast.CLIENT_CAPABILITIES_META_KEY: {}}}), MODERN),
    "2026 with a full client info, a progress token and cursor null": (_tools_list(MODERN, params={
        "cursor": None, "_meta": {**ENVELOPE, "progressToken": 9, fast.CLIENT_INFO_META_KEY: {
            "name": "n", "version": "1", "title": "T", "description": "d", "websiteUrl": "https://example.com"}}}),
        MODERN),
}
LEFT = {
    "initialize": ({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}, None),
    "tools/call": ({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": ZONE_TYPES[0], "arguments": ZONE_TYPES[1]}}, "2025-06-18"),
    "notification": ({"jsonrpc": "2.0", "method": "notifications/initialized"}, "2025-06-18"),
    "batch": ([_tools_list("2025-06-18")], "2025-06-18"),
    "not JSON": ("{", "2025-06-18"),
    "repeated key": ('{"jsonrpc": "2.0", "id": 1, "id": 2, "method": "tools/list"}', "2025-06-18"),
    "float id": (_tools_list("2025-06-18", ident=1.0), "2025-06-18"),
    "bool id": (_tools_list("2025-06-18", ident=True), "2025-06-18"),
    "null id": (_tools_list("2025-06-18", ident=None), "2025-06-18"),
    "jsonrpc 1.0": ({**_tools_list("2025-06-18"), "jsonrpc": "1.0"}, "2025-06-18"),
    "extra member": ({**_tools_list("2025-06-18"), "extra": 1}, "2025-06-18"),
    "a cursor": (_tools_list("2025-06-18", params={"cursor": "abc"}), "2025-06-18"),
    "null params": (_tools_list("2025-06-18", params=None) | {"params": None}, "2025-06-18"),
    "unknown version": (_tools_list("2031-01-01"), "2031-01-01"),
    "legacy header, 2026 envelope": (_tools_list("2025-06-18", params={"_meta": dict(ENVELOPE)}), "2025-06-18"),
    "2026 without envelope": (_tools_list(MODERN, params={}), MODERN),
    "2026 version mismatch": (_tools_list(MODERN, params={"_meta": {
        **ENVELOPE, fast.PROTOCOL_VERSION_META_KEY: "2025-06-18"}}), MODERN),
    "2026 bad capabilities": (_tools_list(MODERN, params={"_meta": {
        **ENVELOPE, fast.CLIENT_CAPABILITIES_META_KEY: {"sampling": 5}}}), MODERN),
    "2026 bad client info": (_tools_list(MODERN, params={"_meta": {
        **ENVELOPE, fast.CLIENT_INFO_META_KEY: {"name": "n"}}}), MODERN),
    "2026 log level": (_tools_list(MODERN, params={"_meta": {**ENVELOPE, "io.modelcontextprotocol/logLevel": "x"}}),
                       MODERN),
}


@pytest.mark.parametrize("case", list(SERVED))
def test_plain_listings_of_every_shape_are_served_as_the_sdk_would(lam: None, monkeypatch: pytest.MonkeyPatch,
                                                                    case: str) -> None:
    message, version = SERVED[case]
    with_fast, sdk, answered = _both(_event(message, ADMIN, version), monkeypatch)

    assert answered, case
    assert with_fast == sdk and sdk[0] == 200 and "result" in sdk[2], (case, sdk)


@pytest.mark.parametrize("case", list(LEFT))
def test_anything_else_is_left_to_the_sdk(lam: None, monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    message, version = LEFT[case]
    with_fast, sdk, answered = _both(_event(message, ADMIN, version), monkeypatch)

    assert not answered, case
    assert with_fast == sdk, case


@pytest.mark.parametrize(("case", "headers"), [
    ("no JSON in Accept", {"Accept": "text/event-stream"}),
    ("form content type", {"Content-Type": "application/x-www-form-urlencoded"}),
    ("JSON content type in capitals", {"Content-Type": "Application/JSON"}),
    ("2026 without Mcp-Method", {"MCP-Protocol-Version": MODERN, "Mcp-Method": ""}),
    ("a wrong Content-Length", {"Content-Length": "5"}),
])
def test_requests_the_sdk_would_refuse_go_to_the_sdk(lam: None, monkeypatch: pytest.MonkeyPatch, case: str,
                                                      headers: dict[str, str]) -> None:
    version = MODERN if "2026" in case else "2025-06-18"
    event = _event(_tools_list(version), ADMIN, version, headers)

    with_fast, sdk, answered = _both(event, monkeypatch)

    assert not answered, case
    assert with_fast == sdk, case


def test_a_caller_who_cannot_read_the_catalog_gets_the_sdks_error(lam: None, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given an anonymous caller of a fresh container: the catalog (behind the REST API's auth) answers 401
    event = _event(_tools_list("2025-06-18"), token=None, version="2025-06-18")

    with_fast, sdk, answered = _both(event, monkeypatch)

    # Then the fast path stood aside and the SDK's JSON-RPC error says why
    assert not answered
    assert with_fast == sdk
    assert "not signed in" in sdk[2]["error"]["message"], sdk


def test_one_gateway_per_container_serves_both_paths(lam: None, rest_api: RestApi) -> None:
    # Given a fast tools/list, then a tools/call that needs the SDK, in one container
    before = sum(1 for s in rest_api.seen if s["path"] == "/v1/openapi.json")
    listed = _seen(lambda_handler.handler(_event(_tools_list("2025-06-18"), ADMIN, "2025-06-18"), None))
    called = _seen(lambda_handler.handler(_event({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": ZONE_TYPES[0], "arguments": ZONE_TYPES[1]}}, ADMIN, "2025-06-18"), None))

    # Then both answered from one Gateway, and the catalog was fetched once
    assert listed[0] == 200 and called[2]["result"]["structuredContent"]["region"] == "us-west-2"
    (key, gateway), = lambda_handler._gateways.items()
    assert lambda_handler._apps[key].server.gateway is gateway
    assert sum(1 for s in rest_api.seen if s["path"] == "/v1/openapi.json") == before + 1


# --- the SDK's own client, through the Lambda ------------------------------------------------------------------

class LambdaTransport(httpx2.AsyncBaseTransport):
    """An HTTP client's requests as API Gateway events to the Lambda handler (in a worker thread: it runs its own
    event loop per invocation, as Lambda does)."""

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = await request.aread()
        event = to_event(request.method, request.url.path, list(request.headers.items()), [], body, None, "127.0.0.1")
        status, headers, payload = from_result(await anyio.to_thread.run_sync(lambda_handler.handler, event, None))
        return httpx2.Response(status, headers=headers, content=payload)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_sdk_client_lists_tools_through_the_fast_path(lam: None, monkeypatch: pytest.MonkeyPatch,
                                                          mode: str) -> None:
    # Given the official MCP client in the 2026 era (auto: server/discover, then per-request envelopes) or the
    # handshake era (initialize first), speaking to the Lambda
    served: list[bool] = []
    real = fast.answer

    async def counted(*args: Any) -> Any:
        reply = await real(*args)
        served.append(reply is not None)
        return reply

    monkeypatch.setattr(fast, "answer", counted)

    async def go() -> tuple[str | None, set[str], Any]:
        async with (httpx2.AsyncClient(transport=LambdaTransport(), headers={"Authorization": f"Bearer {VIEWER}"},
                                       timeout=30) as http,
                    Client(streamable_http_client("https://abc.example/mcp", http_client=http), mode=mode) as client):
            names = {t.name for t in (await client.list_tools()).tools}
            return client.protocol_version, names, await client.call_tool(*ZONE_TYPES)

    version, names, called = asyncio.run(go())

    # Then its tools/list came from the fast path, and its tool call from the SDK, as a viewer's
    assert served == [True], (version, served)
    assert names and not names & MUTATING
    assert not called.is_error


# --- the SDK stays unloaded until a request needs it -----------------------------------------------------------

CHILD = """
import json, sys
from mcp_gateway import lambda_handler
listed = lambda_handler.handler(json.loads(sys.argv[1]), None)
after_list = sorted(m for m in ("mcp", "mcp_types") if m in sys.modules)
called = lambda_handler.handler(json.loads(sys.argv[2]), None)
after_call = sorted(m for m in ("mcp", "mcp_types") if m in sys.modules)
print(json.dumps({"listed": json.loads(listed["body"]), "after_list": after_list,
                  "called": json.loads(called["body"]), "after_call": after_call}))
"""


def test_a_fast_tools_list_does_not_import_the_sdk_but_a_tool_call_does(rest_api: RestApi) -> None:
    # Given a fresh interpreter (a cold container) asked a 2026-era tools/list, then a tools/call
    listing = _event(_tools_list(MODERN), ADMIN, MODERN)
    call = _event({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "list_regions", "arguments": {}, "_meta": ENVELOPE}}, ADMIN, MODERN, {"Mcp-Name": "list_regions"})
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "PODSTART_API_URL": rest_api.url}
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(listing), json.dumps(call)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])

    # Then the listing left the SDK unloaded; the tool call loaded it
    assert len(out["listed"]["result"]["tools"]) > 30
    assert out["after_list"] == []
    assert "result" in out["called"] and not out["called"]["result"].get("isError"), out["called"]
    assert out["after_call"] == ["mcp", "mcp_types"]


# --- the SDK's constants the fast path mirrors -----------------------------------------------------------------

def test_the_fast_paths_constants_are_the_sdks() -> None:
    assert set(fast.HANDSHAKE_VERSIONS) <= set(HANDSHAKE_PROTOCOL_VERSIONS)
    assert mcp_types.DEFAULT_NEGOTIATED_VERSION in fast.HANDSHAKE_VERSIONS  # what no header means
    assert set(fast.MODERN_VERSIONS) <= set(MODERN_PROTOCOL_VERSIONS)
    assert fast.PROTOCOL_VERSION_META_KEY == mcp_types.PROTOCOL_VERSION_META_KEY
    assert fast.CLIENT_CAPABILITIES_META_KEY == mcp_types.CLIENT_CAPABILITIES_META_KEY
    assert fast.CLIENT_INFO_META_KEY == mcp_types.CLIENT_INFO_META_KEY
    assert fast.SERVER_INFO_META_KEY == mcp_types.SERVER_INFO_META_KEY
    defaults = mcp_types.ListToolsResult(tools=[]).model_dump(by_alias=True, mode="json", exclude_none=True)
    assert {k: v for k, v in defaults.items() if k != "tools"} == fast.MODERN_RESULT
