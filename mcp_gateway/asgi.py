"""Stateless streamable HTTP: the ASGI app the sandbox mounts at /mcp and the Lambda adapter feeds.

Each HTTP request gets its own stateless session manager (`stateless=True`, JSON responses, no DNS
rebinding check: API Gateway and the sandbox proxy set their own Host), run for that one request.
So the app needs no lifespan from its host and answers on whatever path it is mounted at. The
caller's `Authorization` header is forwarded to the REST API: per-request identity.

Mounting (Starlette host): `routes=[Route("/mcp", endpoint=app), Mount("/mcp", app=app)]`, or any
dispatcher that hands `/mcp` requests to `app`. Nothing to run in the host's lifespan.
"""

from __future__ import annotations

from typing import Any

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import Receive, Scope, Send

from mcp_gateway.server import Gateway, TokenSource, build_server, caller_authorization

NO_REBINDING_CHECK = TransportSecuritySettings(enable_dns_rebinding_protection=False)


class GatewayApp:
    """ASGI callable; `server` is the MCP server (its `gateway` holds the cached catalog)."""

    def __init__(self, api_url: str, read_only: bool = False, token_from_request: bool = True, *,
                 token: TokenSource = None, openapi: dict[str, Any] | None = None,
                 gateway: Gateway | None = None) -> None:
        self.server = build_server(api_url, token, read_only, openapi, from_caller=token_from_request,
                                   gateway=gateway)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        auth = next((v.decode("latin-1") for k, v in scope.get("headers", []) if k == b"authorization"), None)
        manager = StreamableHTTPSessionManager(app=self.server, json_response=True, stateless=True,
                                               security_settings=NO_REBINDING_CHECK)
        reset = caller_authorization.set(auth)
        try:
            async with manager.run():
                await manager.handle_request(scope, receive, send)
        finally:
            caller_authorization.reset(reset)


async def _lifespan(receive: Receive, send: Send) -> None:
    """Run directly under uvicorn: nothing to start or stop."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


def create_app(api_url: str, read_only: bool = False, token_from_request: bool = True, *,
               token: TokenSource = None, openapi: dict[str, Any] | None = None,
               gateway: Gateway | None = None) -> GatewayApp:
    """The MCP endpoint as an ASGI app (stateless streamable HTTP, JSON responses).

    `token_from_request=True`: the REST API sees each MCP caller's own bearer token. `False`: it sees
    `token` (a string or a callable), e.g. a single-user local setup. `openapi`: skip fetching
    /v1/openapi.json (it is fetched on first use otherwise, with the caller's identity). `gateway`: serve an
    existing `Gateway` (its catalog cache) instead of one built from the arguments above (the Lambda shares one
    with its fast tools/list, mcp_gateway.fast).
    """
    return GatewayApp(api_url, read_only, token_from_request, token=token, openapi=openapi, gateway=gateway)
