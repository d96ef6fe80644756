"""The MCP server: the SDK's side of the gateway (mcp_gateway.gateway holds the catalog and the calls).

Low-level `mcp.server.lowlevel.Server` with `tools/list`, `tools/call` and resources handlers, so every tool's
input schema and annotations are exactly the catalog's (derived from the REST OpenAPI document); each handler
asks the `Gateway` (SDK-free: catalog fetch, role lookup, visible tools, HTTP forwarding, get_operation waits)
and turns its answer or error into the SDK's types. The gateway holds no AWS permissions: it calls the REST API
with the caller's identity. What hosts and tests import from here (`Gateway`, `answer_by`,
`caller_authorization`, the timing constants) is re-exported from mcp_gateway.gateway.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from mcp_gateway.calls import Outcome
from mcp_gateway.catalog import RESOURCE, SPEC_SCHEMA, ToolSpec
from mcp_gateway.gateway import (  # re-exported: hosts and tests import them from here
    BACKOFF_MAX,
    CATALOG_ERRORS,
    HOST_MARGIN,
    REST_LONG_POLL,
    RETRY_DELAYS,
    RETRY_STATUS,
    ROLE_TTL,
    SERVER_NAME,
    SERVER_VERSION,
    SETTLE,
    SETTLE_MAX,
    TIMEOUT,
    Gateway,
    ResourceError,
    TokenSource,
    answer_by,
    api_base,
    build_index,
    caller_authorization,
)

__all__ = ["BACKOFF_MAX", "CATALOG_ERRORS", "HOST_MARGIN", "INSTRUCTIONS", "REST_LONG_POLL", "RETRY_DELAYS",
           "RETRY_STATUS", "ROLE_TTL", "SERVER_NAME", "SERVER_VERSION", "SETTLE", "SETTLE_MAX", "TIMEOUT", "Gateway",
           "ResourceError", "TokenSource", "answer_by", "api_base", "build_index", "build_server",
           "caller_authorization", "to_result", "to_tool"]

INSTRUCTIONS = (
    "PodStart manages SageMaker HyperPod clusters on EKS. Inspect before creating (list_clusters, then the "
    "catalog tools for the region). Mutating tools return an operation: watch it with get_operation, passing "
    "back the version you got and wait_seconds=60, until SUCCEEDED, FAILED or CANCELLED. Before a mutation, call "
    "it with dry_run=true, show the user the plan and its hourly cost, and ask once. Conventions every tool shares "
    "(not repeated in each schema): a `cluster` argument takes region/name when the name is in 2+ regions; read "
    "tools take detail=\"full\" for the whole REST answer (answers are compact by default) and lists take limit; "
    "write tools take idempotency_key (the same key repeats the same call safely); a `more` argument holds a "
    "tool's rarer fields (they may also be passed at the top level). Resource podstart://tools/<tool> has a "
    "tool's whole schema."
)


def to_tool(spec: ToolSpec) -> types.Tool:
    a = spec.annotations
    return types.Tool(
        name=spec.name, description=spec.description, input_schema=spec.input_schema,
        annotations=types.ToolAnnotations(read_only_hint=a.get("readOnlyHint"),
                                          destructive_hint=a.get("destructiveHint"),
                                          idempotent_hint=a.get("idempotentHint")),
    )


def to_result(outcome: Outcome) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=outcome.text)],
                                structured_content=outcome.structured, is_error=outcome.is_error)


def build_server(api_url: str, token: TokenSource = None, read_only: bool = False,
                 openapi: dict[str, Any] | None = None, *, from_caller: bool = False,
                 gateway: Gateway | None = None) -> Server[Any]:
    """An MCP server whose tools are the REST API's operations.

    `token` is a bearer token or a callable returning one (read per call). `from_caller=True` (used by
    `mcp_gateway.asgi`) forwards the MCP HTTP caller's own Authorization header instead. Without
    `openapi`, /v1/openapi.json is fetched from the API on first use, with that identity. `gateway`: serve
    this existing `Gateway` (and its cached catalog) instead of one built from the other arguments (the
    Lambda shares one between its fast tools/list and the SDK).
    """
    if gateway is None:
        gateway = Gateway(api_url, token, read_only, openapi, from_caller=from_caller)

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        try:
            visible = await gateway.visible()
        except CATALOG_ERRORS as exc:  # a JSON-RPC error that says why, not a broken session
            raise MCPError(types.INVALID_REQUEST, gateway.catalog_problem(exc)) from exc
        return types.ListToolsResult(tools=[to_tool(s) for s in visible])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return to_result(await gateway.call(params.name, dict(params.arguments or {})))

    def input_schema(name: str) -> dict[str, Any] | None:
        spec = gateway.cached_spec(name)
        return None if spec is None else spec.input_schema

    async def list_resources(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        try:
            visible = await gateway.visible()
        except CATALOG_ERRORS as exc:
            raise MCPError(types.INVALID_REQUEST, gateway.catalog_problem(exc)) from exc
        return types.ListResourcesResult(resources=[
            types.Resource(uri=SPEC_SCHEMA, name="spec-schema", mime_type="application/json",
                           description="JSON Schema of spec documents (Cluster, TrainingJob, Endpoint)"),
            *(types.Resource(uri=RESOURCE.format(name=s.name), name=s.name, mime_type="application/json",
                             description=f"{s.name}: every argument, folded and shared ones included")
              for s in visible)])

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        try:
            text = await gateway.resource(params.uri)
        except ResourceError as exc:
            raise MCPError(types.INVALID_PARAMS if exc.unknown else types.INVALID_REQUEST, str(exc)) from exc
        return types.ReadResourceResult(contents=[
            types.TextResourceContents(uri=params.uri, mime_type="application/json", text=text)])

    server: Server[Any] = Server(SERVER_NAME, version=SERVER_VERSION, instructions=INSTRUCTIONS,
                                 get_tool_input_schema=input_schema, on_list_tools=list_tools, on_call_tool=call_tool,
                                 on_list_resources=list_resources, on_read_resource=read_resource)
    server.gateway = gateway  # type: ignore[attr-defined]  # for hosts and tests
    return server
