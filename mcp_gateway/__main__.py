"""stdio transport: `python -m mcp_gateway --api URL [--read-only]`.

The REST API sees the token from $PODSTART_TOKEN, else from the file .podstart/token (the sandbox
writes it there at start). Read per call, so a refreshed token is picked up without a restart.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

TOKEN_ENV = "PODSTART_TOKEN"
TOKEN_FILE = Path(".podstart") / "token"


def read_token() -> str | None:
    token = os.environ.get(TOKEN_ENV)
    if token:
        return token.strip()
    try:
        return TOKEN_FILE.read_text().strip() or None
    except OSError:
        return None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m mcp_gateway", description="PodStart MCP gateway (stdio)")
    parser.add_argument("--api", required=True, help="PodStart REST API root, e.g. http://127.0.0.1:3099")
    parser.add_argument("--read-only", action="store_true", help="list and allow only read-only tools")
    args = parser.parse_args(argv)

    import anyio
    from mcp.server.stdio import stdio_server

    from mcp_gateway.server import build_server

    server = build_server(args.api, read_token, read_only=args.read_only)

    async def serve() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(serve)


if __name__ == "__main__":
    main()
