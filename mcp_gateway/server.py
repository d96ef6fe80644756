"""The MCP server: the catalog's tools, each call forwarded to the PodStart REST API over HTTP.

Low-level `mcp.server.lowlevel.Server` with `tools/list` and `tools/call` handlers, so every tool's
input schema and annotations are exactly the catalog's (derived from the REST OpenAPI document).
The gateway holds no AWS permissions: it calls the REST API with the caller's identity.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

import httpx2
import mcp_types as types
from mcp.server.lowlevel import Server

from mcp_gateway.calls import ArgumentError, Outcome, build_request, refusal, shape_response
from mcp_gateway.catalog import ToolSpec, build_catalog

log = logging.getLogger(__name__)

SERVER_NAME = "podstart"
INSTRUCTIONS = (
    "PodStart manages SageMaker HyperPod clusters on EKS. Inspect before creating (list_clusters, list_regions, "
    "list_availability_zones, list_instance_types, get_quotas). Mutating tools return an operation: watch it with "
    "get_operation(wait_seconds=20) until SUCCEEDED, FAILED or CANCELLED."
)
TIMEOUT = httpx2.Timeout(40.0, connect=5.0)  # get_operation may long-poll 20 s

TokenSource = Callable[[], str | None] | str | None

# The Authorization header of the MCP HTTP request being served (set by mcp_gateway.asgi).
caller_authorization: ContextVar[str | None] = ContextVar("podstart_caller_authorization", default=None)


def api_base(api_url: str) -> str:
    """`http://host:port`, `.../` or `.../v1` all mean the API root."""
    base = api_url.rstrip("/")
    return base.removesuffix("/v1")


def _bearer(token: str | None) -> str | None:
    if not token:
        return None
    token = token.strip()
    return token if token.lower().startswith("bearer ") else f"Bearer {token}"


ROLE_TTL = 60.0
_roles: dict[str, tuple[float, str]] = {}  # authorization -> (when asked, role)


class Gateway:
    """Catalog + HTTP forwarding, shared by every transport."""

    def __init__(self, api_url: str, token: TokenSource, read_only: bool, openapi: dict[str, Any] | None,
                 from_caller: bool = False) -> None:
        self.base = api_base(api_url)
        self._token = token
        self.read_only = read_only
        self.from_caller = from_caller
        self._openapi = openapi
        self._specs: dict[str, ToolSpec] | None = build_index(openapi) if openapi is not None else None

    def authorization(self) -> str | None:
        """Who the REST API sees: the MCP caller's bearer token (HTTP), else the configured token.

        With `from_caller`, a request without a token stays anonymous (the REST API answers 401):
        the gateway never lends its own identity to a caller.
        """
        if self.from_caller:
            return caller_authorization.get()
        token = self._token() if callable(self._token) else self._token
        return _bearer(token)

    async def specs(self) -> dict[str, ToolSpec]:
        """The catalog; fetched once (two concurrent first calls may both fetch: harmless, no lock to
        tie the gateway to one event loop, since the Lambda adapter runs a loop per invocation)."""
        if self._specs is None:
            self._openapi = await self._fetch_openapi()
            self._specs = build_index(self._openapi)
        return self._specs

    def cached_spec(self, name: str) -> ToolSpec | None:
        return None if self._specs is None else self._specs.get(name)

    async def _fetch_openapi(self) -> dict[str, Any]:
        headers = {"Accept": "application/json"}
        auth = self.authorization()
        if auth:
            headers["Authorization"] = auth
        async with httpx2.AsyncClient(timeout=TIMEOUT) as client:
            response = await client.get(f"{self.base}/v1/openapi.json", headers=headers)
        response.raise_for_status()
        doc = response.json()
        if not isinstance(doc, dict) or "paths" not in doc:
            raise RuntimeError(f"{self.base}/v1/openapi.json is not an OpenAPI document")
        return doc

    async def caller_read_only(self) -> bool:
        """Read-only when configured so, or when the caller is a viewer (asked once a minute per identity).
        The REST API refuses a viewer's writes either way; this keeps them out of the tool list."""
        if self.read_only:
            return True
        auth = self.authorization()
        if not auth:
            return False
        now = time.monotonic()
        hit = _roles.get(auth)
        if hit is None or now - hit[0] > ROLE_TTL:
            role = ""
            try:
                async with httpx2.AsyncClient(timeout=TIMEOUT) as client:
                    r = await client.get(f"{self.base}/v1/me", headers={"Authorization": auth})
                if r.status_code == 200:
                    role = str(r.json().get("role", ""))
            except (httpx2.HTTPError, ValueError):
                role = ""
            hit = _roles[auth] = (now, role)
        return hit[1] == "viewer"

    async def visible(self) -> list[ToolSpec]:
        read_only = await self.caller_read_only()
        return [s for s in (await self.specs()).values() if not (read_only and s.mutating)]

    async def call(self, name: str, arguments: dict[str, Any]) -> Outcome:
        try:
            specs = await self.specs()
        except (httpx2.HTTPError, RuntimeError, ValueError) as exc:
            return Outcome(f"{name}: could not load the tool catalog from {self.base}/v1/openapi.json ({exc})",
                           None, True)
        spec = specs.get(name)
        if spec is None:
            return Outcome(f"unknown tool {name}", None, True)
        if spec.mutating and await self.caller_read_only():
            return refusal(spec)
        try:
            req = build_request(spec, arguments)
        except ArgumentError as exc:
            return Outcome(str(exc), None, True)
        headers = dict(req.headers)
        auth = self.authorization()
        if auth:
            headers["Authorization"] = auth
        try:
            async with httpx2.AsyncClient(timeout=TIMEOUT) as client:
                response = await client.request(req.method, f"{self.base}{req.path}", params=req.query or None,
                                                json=req.body, headers=headers)
        except httpx2.HTTPError as exc:
            log.warning("PodStart API unreachable: %r", exc)
            return Outcome(f"{name}: the PodStart API at {self.base} did not answer ({type(exc).__name__}); "
                           "this is transient, retry the same call (same idempotency key).", None, True)
        return shape_response(spec, response.status_code, response.headers.get("content-type", ""), response.text)


def build_index(openapi: dict[str, Any]) -> dict[str, ToolSpec]:
    return {s.name: s for s in build_catalog(openapi)}


def to_tool(spec: ToolSpec) -> types.Tool:
    a = spec.annotations
    return types.Tool(
        name=spec.name, description=spec.description, input_schema=spec.input_schema,
        annotations=types.ToolAnnotations(read_only_hint=a["readOnlyHint"], destructive_hint=a["destructiveHint"],
                                          idempotent_hint=a["idempotentHint"]),
    )


def to_result(outcome: Outcome) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=outcome.text)],
                                structured_content=outcome.structured, is_error=outcome.is_error)


def build_server(api_url: str, token: TokenSource = None, read_only: bool = False,
                 openapi: dict[str, Any] | None = None, *, from_caller: bool = False) -> Server[Any]:
    """An MCP server whose tools are the REST API's operations.

    `token` is a bearer token or a callable returning one (read per call). `from_caller=True` (used by
    `mcp_gateway.asgi`) forwards the MCP HTTP caller's own Authorization header instead. Without
    `openapi`, /v1/openapi.json is fetched from the API on first use, with that identity.
    """
    gateway = Gateway(api_url, token, read_only, openapi, from_caller=from_caller)

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[to_tool(s) for s in await gateway.visible()])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return to_result(await gateway.call(params.name, dict(params.arguments or {})))

    def input_schema(name: str) -> dict[str, Any] | None:
        spec = gateway.cached_spec(name)
        return None if spec is None else spec.input_schema

    server: Server[Any] = Server(SERVER_NAME, version="1.0.0", instructions=INSTRUCTIONS,
                                 get_tool_input_schema=input_schema, on_list_tools=list_tools, on_call_tool=call_tool)
    server.gateway = gateway  # type: ignore[attr-defined]  # for hosts and tests
    return server
