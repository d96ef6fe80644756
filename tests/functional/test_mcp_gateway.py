"""The MCP gateway, spoken to with the official `mcp` client over streamable HTTP and stdio, against
the real REST handler (functions.api.handler) served over HTTP on moto."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlsplit

import boto3
import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from moto import mock_aws

from mcp_gateway.asgi import create_app
from mcp_gateway.bench import TOOL_BUDGET, TOTAL_BUDGET, tool_sizes, tools_list_bytes
from mcp_gateway.catalog import (
    DETAIL_ARG,
    HIDDEN,
    IDEMPOTENCY_ARG,
    REST_ONLY,
    build_catalog,
    folded,
    gateway_args,
    unlisted,
)

ROOT = Path(__file__).resolve().parents[2]
T = TypeVar("T")
ADMIN, VIEWER = "admin-token", "viewer-token"
CLAIMS = {ADMIN: {"sub": "u-admin", "cognito:username": "ada", "cognito:groups": "admin"},
          VIEWER: {"sub": "u-viewer", "cognito:username": "vic", "cognito:groups": "viewer"}}
MUTATING = {"retry_operation", "cancel_operation", "set_preferences"}
READ_ONLY = {"list_regions", "find_capacity", "list_instance_types", "list_operations", "get_operation", "get_identity"}
ZONE_TYPES = ("list_instance_types", {"region": "us-west-2", "availability_zone": "us-west-2a"})
ENV = {
    "OPERATIONS_TABLE": "podstart-operations", "STATE_TABLE": "podstart-state",
    "IDEMPOTENCY_TABLE": "podstart-idempotency", "WORKFLOW_ARNS": "{}", "EVENT_BUS_NAME": "podstart",
    "POWERTOOLS_TRACE_DISABLED": "1", "POWERTOOLS_METRICS_NAMESPACE": "PodStart",
    "POWERTOOLS_SERVICE_NAME": "podstart-api", "AWS_REGION": "us-west-2", "AWS_DEFAULT_REGION": "us-west-2",
    "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
}


# --- the REST API over HTTP (a test helper until the sandbox server exists) -------------------------

@dataclass
class _Context:
    function_name: str = "podstart-api"
    memory_limit_in_mb: int = 256
    invoked_function_arn: str = "arn:aws:lambda:us-west-2:123456789012:function:podstart-api"
    aws_request_id: str = "req-mcp-test"


def _tables() -> None:
    ddb = boto3.client("dynamodb", region_name="us-west-2")
    s = {"AttributeType": "S"}
    ddb.create_table(
        TableName=ENV["OPERATIONS_TABLE"], BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": n, **s} for n in ("pk", "list_pk", "created_key", "target_key")],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        GlobalSecondaryIndexes=[
            {"IndexName": name, "Projection": {"ProjectionType": "ALL"},
             "KeySchema": [{"AttributeName": h, "KeyType": "HASH"},
                           {"AttributeName": "created_key", "KeyType": "RANGE"}]}
            for name, h in (("by_created", "list_pk"), ("by_target", "target_key"))],
    )
    ddb.create_table(TableName=ENV["STATE_TABLE"], BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "pk", **s}, {"AttributeName": "sk", **s}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                                {"AttributeName": "sk", "KeyType": "RANGE"}])
    ddb.create_table(TableName=ENV["IDEMPOTENCY_TABLE"], BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "id", **s}],
                     KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}])


def _rest_handler_class(seen: list[dict[str, Any]]) -> type[BaseHTTPRequestHandler]:
    from functions.api.handler import handler
    from sandbox.proxy import from_result, to_event

    lock = threading.Lock()  # the Powertools resolver keeps the current event globally

    class RestHandler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            url = urlsplit(self.path)
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            token = (self.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
            event = to_event(self.command, url.path, list(self.headers.items()), parse_qsl(url.query), body,
                             CLAIMS.get(token), "127.0.0.1")
            with lock:
                seen.append({"method": self.command, "path": url.path, "headers": dict(self.headers.items())})
                status, headers, payload = from_result(handler(event, _Context()))  # type: ignore[arg-type]
            self.send_response(status)
            for k, v in headers.items():
                if k.lower() not in ("content-length", "transfer-encoding", "connection"):
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_PUT = do_POST = do_PATCH = do_DELETE = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return RestHandler


@dataclass
class RestApi:
    url: str
    seen: list[dict[str, Any]]
    openapi: dict[str, Any]


@contextmanager
def serve_rest_api() -> Iterator[RestApi]:
    """The REST handler on moto over HTTP, as the gateway reaches it (shared with test_mcp_fast_tools_list)."""
    with pytest.MonkeyPatch.context() as mp:
        for k, v in ENV.items():
            mp.setenv(k, v)
        with mock_aws():
            _tables()
            from functions.adapters import aws as adapter
            from functions.adapters import catalog_aws
            from functions.api import deps
            from functions.api.handler import openapi_document
            from functions.settings import api_settings

            for cached in (adapter._session, adapter.client, api_settings, deps.services):
                cached.cache_clear()
            catalog_aws.clear_cache()
            seen: list[dict[str, Any]] = []
            httpd = ThreadingHTTPServer(("127.0.0.1", 0), _rest_handler_class(seen))
            thread = threading.Thread(target=httpd.serve_forever, daemon=True)
            thread.start()
            try:
                yield RestApi(f"http://127.0.0.1:{httpd.server_address[1]}", seen, openapi_document())
            finally:
                httpd.shutdown()
                httpd.server_close()
                for cached in (adapter._session, adapter.client, api_settings, deps.services):
                    cached.cache_clear()


@pytest.fixture(scope="module")
def rest_api() -> Iterator[RestApi]:
    with serve_rest_api() as api:
        yield api


# --- the MCP gateway over streamable HTTP ----------------------------------------------------------

class Served:
    def __init__(self, app: Any) -> None:
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning",
                                                    lifespan="on"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/mcp"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture(scope="module")
def mcp_url(rest_api: RestApi) -> Iterator[str]:
    with Served(create_app(rest_api.url)) as url:
        yield url


@pytest.fixture(scope="module")
def mcp_read_only_url(rest_api: RestApi) -> Iterator[str]:
    with Served(create_app(rest_api.url, read_only=True)) as url:
        yield url


def run(fn: Callable[[Client], Awaitable[T]], url: str, token: str | None = ADMIN) -> T:
    async def go() -> T:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with (httpx2.AsyncClient(headers=headers, timeout=30) as http,
                    Client(streamable_http_client(url, http_client=http)) as client):
            return await fn(client)

    return asyncio.run(go())


async def _tools(client: Client) -> list[Any]:
    return list((await client.list_tools()).tools)


def _leaves(exc: BaseException) -> list[BaseException]:
    inner = getattr(exc, "exceptions", None)
    return [leaf for e in inner for leaf in _leaves(e)] if inner else [exc]


def _text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


# --- tests -----------------------------------------------------------------------------------------

def test_tools_list_names_descriptions_and_annotations(mcp_url: str, rest_api: RestApi) -> None:
    # Given the gateway in front of today's REST API / When an agent lists tools
    tools = {t.name: t for t in run(_tools, mcp_url)}

    # Then every operation an agent needs is there, described, and annotated truthfully
    assert set(tools) >= READ_ONLY | MUTATING
    for t in tools.values():
        assert t.description and len(t.description) < 400, t.name
        for prop, schema in t.input_schema["properties"].items():
            assert schema.get("description"), f"{t.name}.{prop} has no description"
        assert t.annotations is not None, t.name
        # a read says so; a write says whether it destroys (MCP's defaults: readOnlyHint false, idempotentHint false)
        assert t.annotations.read_only_hint is True or t.annotations.destructive_hint is not None, t.name
    catalog = {s.name: s for s in build_catalog(rest_api.openapi)}
    for name in READ_ONLY:
        assert tools[name].annotations.read_only_hint is True, name
    for name in MUTATING:
        a = tools[name].annotations
        assert not a.read_only_hint and a.destructive_hint is not None, name
        assert IDEMPOTENCY_ARG in unlisted(catalog[name]), name  # taken by every write tool, said once
    assert tools["cancel_operation"].annotations.destructive_hint is True
    assert tools["set_preferences"].annotations.destructive_hint is False
    assert "get_operation" in tools["retry_operation"].description
    # get_operation: the gateway waits up to 60 s (looping on the 20 s REST long poll) and says to pass back
    # the version
    props = tools["get_operation"].input_schema["properties"]
    assert (props["wait_seconds"]["minimum"], props["wait_seconds"]["maximum"]) == (0, 60)
    assert "wait" not in props and "version" in props
    assert "pass back its version" in tools["get_operation"].description
    assert "detail" not in props and DETAIL_ARG in gateway_args(catalog["get_operation"])  # said once, for every read


def test_input_schemas_match_the_rest_openapi(mcp_url: str, rest_api: RestApi) -> None:
    # Given the OpenAPI document the REST API serves
    doc = rest_api.openapi
    tools = {t.name: t for t in run(_tools, mcp_url)}
    by_route = {(s.method.lower(), s.path): s.name for s in build_catalog(doc)}

    # Then each tool's properties are exactly the route's path + query + body field names (plus the
    # gateway's own: detail, paging where the REST route does not page), or the body fields a tool exposes
    specs = {s.name: s for s in build_catalog(doc)}
    for path, item in doc["paths"].items():
        for method, op in item.items():
            if method not in ("get", "put", "post", "patch", "delete"):
                continue
            if (method, path) in REST_ONLY:
                continue
            name = by_route[(method, path)]
            expected = {p["name"] for p in op.get("parameters", []) if p["in"] in ("path", "query")} - HIDDEN.get(
                name, frozenset())
            required = {p["name"] for p in op.get("parameters", [])
                        if p.get("required") and p["in"] in ("path", "query")}
            if "requestBody" in op:
                ref = op["requestBody"]["content"]["application/json"]["schema"]["$ref"]
                body_schema = doc["components"]["schemas"][ref.rsplit("/", 1)[1]]
                only = [a.name for a in specs[name].args if a.location == "body"]
                # scale_instance_group exposes (and requires) one field; update_features the five managed
                # features (each optional, as in REST); start_health_check group and node_ids (both checks run);
                # advise_capacity all but what agents leave to defaults (name, max_options); every other tool the
                # whole body
                body = set(only) if name in ("scale_instance_group", "update_features", "start_health_check",
                                             "advise_capacity") \
                    else set(body_schema["properties"])
                expected |= body
                required |= body if name == "scale_instance_group" else set(body_schema.get("required", [])) & body
            if method != "get" and not op.get("x-podstart-read-only"):  # a POST that only reads takes no key
                expected.add(IDEMPOTENCY_ARG)
            if name == "get_operation":
                expected = (expected - {"wait"}) | {"wait_seconds"}
            expected |= gateway_args(specs[name])
            # listed once, not per tool (region folds into cluster; detail, limit, idempotency_key are shared), and
            # a tool's rarer fields in its `more`
            expected = expected - set(unlisted(specs[name])) - set(folded(specs[name])) - HIDDEN.get(name, frozenset())
            required -= set(unlisted(specs[name]))
            assert set(tools[name].input_schema["properties"]) == expected, name
            assert set(tools[name].input_schema.get("required", [])) == required, name
    assert set(tools["scale_instance_group"].input_schema["properties"]) == {
        "cluster", "group", "instance_count", "dry_run"}
    assert set(tools["start_health_check"].input_schema["properties"]) == {"cluster", "group", "node_ids", "dry_run"}


def test_list_regions_and_zones_return_structured_content(mcp_url: str) -> None:
    async def calls(client: Client) -> tuple[Any, Any]:
        return (await client.call_tool("list_regions", {}),
                await client.call_tool(*ZONE_TYPES))

    regions, zones = run(calls, mcp_url)

    assert not regions.is_error, _text(regions)
    assert "us-west-2" in {r["name"] for r in regions.structured_content["items"]}
    assert json.loads(_text(regions)) == regions.structured_content
    assert not zones.is_error, _text(zones)
    assert zones.structured_content["region"] == "us-west-2"
    assert any(t["name"].startswith("ml.") for t in zones.structured_content["items"])


def test_bad_input_is_a_tool_error_with_the_field_and_message(mcp_url: str) -> None:
    result = run(lambda c: c.call_tool("list_instance_types", {"region": "mars"}), mcp_url)

    assert result.is_error
    text = _text(result)
    assert "HTTP 422" in text and "query.region" in text and "pattern" in text, text


def test_unknown_argument_is_refused_before_the_api(mcp_url: str, rest_api: RestApi) -> None:
    run(_tools, mcp_url)  # the catalog loaded (the first call on this gateway fetches /v1/openapi.json)
    before = len(rest_api.seen)
    result = run(lambda c: c.call_tool("list_regions", {"regoin": "us-west-2"}), mcp_url)

    assert result.is_error and "regoin" in _text(result)
    assert len(rest_api.seen) == before


def test_missing_operation_is_a_404_tool_error(mcp_url: str) -> None:
    result = run(lambda c: c.call_tool("get_operation", {"operation_id": "op-doesnotexist1", "wait_seconds": 0}),
                 mcp_url)

    assert result.is_error
    assert "HTTP 404" in _text(result), _text(result)


def test_each_mutation_call_is_a_new_request_unless_the_caller_repeats_a_key(
        mcp_url: str, rest_api: RestApi) -> None:
    # Given the same arguments sent twice without a key, then twice with one key
    args = {"active_cluster": {"name": "ml-a", "region": "us-west-2"}}

    async def calls(client: Client) -> tuple[Any, Any]:
        first = await client.call_tool("set_preferences", args)
        await client.call_tool("set_preferences", args)
        await client.call_tool("set_preferences", {**args, IDEMPOTENCY_ARG: "agent-key-1"})
        await client.call_tool("set_preferences", {**args, IDEMPOTENCY_ARG: "agent-key-1"})
        prefs = await client.call_tool("get_identity", {})
        return first, prefs

    before = len(rest_api.seen)
    first, prefs = run(calls, mcp_url)

    # Then it acted with the caller's identity; the two keyless calls carried two different keys (a later
    # call with the same arguments is a new request), the keyed calls the caller's key
    assert not first.is_error, _text(first)
    assert prefs.structured_content["preferences"]["active_cluster"] == args["active_cluster"]
    puts = [s for s in rest_api.seen[before:] if s["method"] == "PUT"]
    assert [p["headers"]["Authorization"] for p in puts] == [f"Bearer {ADMIN}"] * 4
    keys = [p["headers"]["Idempotency-Key"] for p in puts]
    assert keys[0] != keys[1] and keys[0].startswith("mcp-") and keys[1].startswith("mcp-")
    assert keys[2:] == ["agent-key-1", "agent-key-1"]


def test_viewer_is_read_only_even_on_a_read_write_gateway(mcp_url: str, rest_api: RestApi) -> None:
    # Given a viewer calling a read-write gateway: its role (GET /v1/me) makes the gateway read-only
    async def calls(client: Client) -> tuple[Any, Any]:
        return await client.list_tools(), await client.call_tool("retry_operation", {"operation_id": "op-abcdef123"})

    listed, result = run(calls, mcp_url, token=VIEWER)

    assert "retry_operation" not in {t.name for t in listed.tools}
    assert result.is_error and "read-only" in _text(result), _text(result)
    assert not [s for s in rest_api.seen if s["method"] == "POST" and s["path"].endswith("/retry")
                and s["headers"].get("Authorization") == f"Bearer {VIEWER}"]


def test_caller_without_token_is_anonymous(mcp_url: str) -> None:
    result = run(lambda c: c.call_tool("list_regions", {}), mcp_url, token=None)

    assert result.is_error and "HTTP 401" in _text(result), _text(result)


def test_anonymous_caller_of_a_fresh_gateway_is_told_to_sign_in(rest_api: RestApi) -> None:
    # a gateway that has not read the catalog yet (it is behind the API's auth, as every tool is)
    with Served(create_app(rest_api.url)) as url:
        result = run(lambda c: c.call_tool("list_regions", {}), url, token=None)
        assert result.is_error and "not signed in" in _text(result) and "HTTP 401" in _text(result), _text(result)
        refused: list[str] = []
        try:
            run(_tools, url, token=None)
        except* MCPError as group:  # the client's task groups carry the JSON-RPC error out, nested
            refused = [str(e) for e in _leaves(group)]
        assert refused and "not signed in" in refused[0], refused


def test_read_only_gateway_hides_and_refuses_mutating_tools(mcp_read_only_url: str, rest_api: RestApi) -> None:
    names = {t.name for t in run(_tools, mcp_read_only_url)}
    assert names >= READ_ONLY
    assert not names & MUTATING

    before = len(rest_api.seen)
    for tool, args in (("set_preferences", {"default_region": "us-east-1"}),
                       ("retry_operation", {"operation_id": "op-abcdef123"}),
                       ("cancel_operation", {"operation_id": "op-abcdef123"})):
        result = run(lambda c, tool=tool, args=args: c.call_tool(tool, args), mcp_read_only_url)
        assert result.is_error and "read-only" in _text(result), tool
    assert len(rest_api.seen) == before  # refused in the gateway: nothing reached the API


def test_new_routes_become_tools_with_no_gateway_code(rest_api: RestApi) -> None:
    # Given a route the map does not know and the coming cluster routes
    doc = json.loads(json.dumps(rest_api.openapi))
    doc["paths"]["/v1/clusters/{cluster}/jobs"] = {"post": {
        "operationId": "submit_job_v1_clusters__cluster__jobs_post", "summary": "Submit a training job",
        "parameters": [{"name": "cluster", "in": "path", "required": True, "schema": {"type": "string"}}],
        "requestBody": {"content": {"application/json": {"schema": {"type": "object", "required": ["image"],
                        "properties": {"image": {"type": "string"}}}}}}}}
    doc["paths"]["/v1/clusters/{cluster}"] = {"delete": {
        "operationId": "delete_cluster_v1_clusters__cluster__delete",
        "parameters": [{"name": "cluster", "in": "path", "required": True, "schema": {"type": "string"}},
                       {"name": "confirm", "in": "query", "required": True, "schema": {"type": "string"}}]}}

    specs = {s.name: s for s in build_catalog(doc)}

    job = specs["submit_job"]
    assert set(job.input_schema["properties"]) == {"cluster", "image"}
    assert IDEMPOTENCY_ARG in unlisted(job)  # taken (a write), said once for every write tool
    assert set(job.input_schema["required"]) == {"cluster", "image"}
    assert all(p["description"] for p in job.input_schema["properties"].values())
    delete = specs["delete_cluster"]
    assert delete.annotations == {"destructiveHint": True, "idempotentHint": True}


def test_tools_list_is_at_most_30_kb_and_no_tool_over_1_kb(rest_api: RestApi) -> None:
    # Given the live catalog (every tool the REST API has today, and any added later)
    total, n = tools_list_bytes(rest_api.openapi)
    sizes = tool_sizes(rest_api.openapi)

    # Then the raw JSON-RPC tools/list response is at most 30 KB for every tool, and no tool is over 1 KB
    assert n >= 12
    assert total <= TOTAL_BUDGET, f"{total} bytes for {n} tools"
    over = {name: size for name, size in sizes.items() if size > TOOL_BUDGET}
    assert not over, over


def test_each_tools_whole_schema_is_a_resource(mcp_url: str, rest_api: RestApi) -> None:
    # Given the gateway, whose tools/list folds rarer fields into `more` and says the shared arguments once
    async def go(client: Client) -> tuple[set[str], dict[str, Any], str]:
        listed = {str(r.uri) for r in (await client.list_resources()).resources}
        tool = await client.read_resource("podstart://tools/deploy_endpoint")
        spec = await client.read_resource("podstart://spec-schema")
        return listed, json.loads(tool.contents[0].text), spec.contents[0].text  # type: ignore[union-attr]

    listed, deploy, spec_schema = run(go, mcp_url)

    # Then every tool has its resource, with every argument as the REST API describes it
    tools = {s.name for s in build_catalog(rest_api.openapi)}
    assert {f"podstart://tools/{t}" for t in tools} | {"podstart://spec-schema"} == listed
    assert deploy["rest"] == "POST /v1/clusters/{cluster}/endpoints"
    assert {"service", "internet_facing", "source_ranges", "router"} <= set(deploy["folded_into_more"])
    props = deploy["arguments"]["properties"]
    assert props["replicas"]["maximum"] == 64 and "NLB" in props["service"]["description"]
    assert set(deploy["taken_but_not_listed"]) == {"idempotency_key", "region"}
    assert "Cluster" in spec_schema or "TrainingJob" in spec_schema


def test_stdio_transport(rest_api: RestApi) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mcp_gateway", "--api", rest_api.url, "--read-only"],
        env={**{k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}, "PODSTART_TOKEN": ADMIN,
             "PYTHONPATH": str(ROOT)},
        cwd=str(ROOT))

    async def go() -> tuple[set[str], Any, Any]:
        async with Client(params) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            zones = await client.call_tool(*ZONE_TYPES)
            refused = await client.call_tool("set_preferences", {"default_region": "us-east-1"})
            return names, zones, refused

    names, zones, refused = asyncio.run(go())

    assert names >= READ_ONLY and not names & MUTATING
    assert not zones.is_error and zones.structured_content["region"] == "us-west-2"
    assert refused.is_error and "read-only" in _text(refused)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_both_protocol_eras_over_http(mcp_url: str, mode: str) -> None:
    # Given a 2026 client (discover) or a handshake-era client (initialize) against the stateless endpoint
    async def go() -> tuple[str, Any]:
        async with (httpx2.AsyncClient(headers={"Authorization": f"Bearer {ADMIN}"}, timeout=30) as http,
                    Client(streamable_http_client(mcp_url, http_client=http), mode=mode) as client):
            return client.protocol_version, await client.call_tool("get_identity", {})

    version, prefs = asyncio.run(go())

    assert version
    assert not prefs.is_error, _text(prefs)
    assert "active_cluster" in prefs.structured_content["preferences"]


def test_mounted_at_mcp_in_a_starlette_host(rest_api: RestApi) -> None:
    # Given a host app that routes /mcp to the gateway and runs nothing for it in its lifespan
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Mount, Route

    gateway = create_app(rest_api.url, openapi=rest_api.openapi)
    host = Starlette(routes=[Route("/", lambda r: PlainTextResponse("ui")), Route("/mcp", endpoint=gateway),
                             Mount("/mcp", app=gateway)])

    with Served(host) as url:
        names = {t.name for t in run(_tools, url)}
        names_slash = {t.name for t in run(_tools, url + "/")}

    assert names >= READ_ONLY and names == names_slash


def test_lambda_handler_serves_one_request_per_invocation(rest_api: RestApi, monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_gateway import lambda_handler

    monkeypatch.setenv("PODSTART_API_URL", rest_api.url)
    monkeypatch.setattr(lambda_handler, "_apps", {})

    def invoke(method: str, params: dict[str, Any]) -> dict[str, Any]:
        event = {
            "httpMethod": "POST", "path": "/mcp", "isBase64Encoded": False,
            "headers": {"Host": "abc.execute-api.us-west-2.amazonaws.com", "Content-Type": "application/json",
                        "Accept": "application/json, text/event-stream", "Authorization": f"Bearer {ADMIN}",
                        "MCP-Protocol-Version": "2025-06-18"},
            "body": json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}),
            "requestContext": {"identity": {"sourceIp": "203.0.113.9"}},
        }
        response = lambda_handler.handler(event, None)
        assert response["statusCode"] == 200, response
        return json.loads(response["body"])  # type: ignore[no-any-return]

    listed = invoke("tools/list", {})
    called = invoke("tools/call", {"name": ZONE_TYPES[0], "arguments": ZONE_TYPES[1]})
    bad = invoke("tools/call", {"name": "list_instance_types", "arguments": {"region": "mars"}})

    assert {t["name"] for t in listed["result"]["tools"]} >= READ_ONLY
    assert called["result"]["structuredContent"]["region"] == "us-west-2"
    assert bad["result"]["isError"] is True and "query.region" in bad["result"]["content"][0]["text"]


def test_mutation_result_names_the_status_tool(rest_api: RestApi) -> None:
    from mcp_gateway.calls import shape_response

    spec = {s.name: s for s in build_catalog(rest_api.openapi)}["retry_operation"]
    op = {"id": "op-abc123def", "kind": "cluster.create", "status": "PENDING", "steps": [],
          "status_tool": "get_operation", "links": {"self": "/v1/operations/op-abc123def"}}

    outcome = shape_response(spec, 202, "application/json", json.dumps(op))

    assert not outcome.is_error and outcome.structured is not None
    assert outcome.structured["id"] == "op-abc123def" and outcome.structured["status"] == "PENDING"
    assert 'get_operation(operation_id="op-abc123def"' in outcome.structured["next"]
    assert json.loads(outcome.text) == outcome.structured
