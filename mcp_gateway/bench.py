"""Numbers for `make bench`: how big tools/list is, and what importing the gateway costs cold.

`tools_list_bytes` measures what a client really receives: the raw JSON-RPC response body of
`tools/list` from the gateway's own ASGI app (the SDK's serialization), in process, no REST call.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

TOTAL_BUDGET = 30 * 1024  # bytes of the raw tools/list response for every tool (issue 26)
TOOL_BUDGET = 1024  # bytes of one tool's entry in it (issue 26)


def tool_sizes(openapi: dict[str, Any]) -> dict[str, int]:
    """Bytes of each tool's entry in tools/list, as the catalog serializes it (name, description, schema, hints)."""
    from mcp_gateway.catalog import build_catalog, tool_payload

    return {s.name: len(json.dumps(tool_payload(s), separators=(",", ":")).encode()) for s in build_catalog(openapi)}


def tools_list_bytes(openapi: dict[str, Any]) -> tuple[int, int]:
    """(bytes of the raw JSON-RPC tools/list response, number of tools) for the full, read-write catalog: the
    larger of the handshake era (2025-06-18) and the latest protocol, whose results carry a little more."""
    import anyio
    import httpx2
    import mcp_types

    from mcp_gateway.asgi import create_app

    async def measure(version: str) -> tuple[int, int]:
        app = create_app("http://127.0.0.1:9", openapi=openapi)  # no Authorization: no role lookup, no fetch
        params: dict[str, Any] = {}
        if version != "2025-06-18":  # the stateless era: every request says who and what it speaks
            params = {"_meta": {"io.modelcontextprotocol/protocolVersion": version,
                                "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
                                "io.modelcontextprotocol/clientCapabilities": {}}}
        async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url="http://gateway") as http:
            response = await http.post(
                "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params},
                headers={"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": version,
                         "Mcp-Method": "tools/list"})
        response.raise_for_status()
        return len(response.content), len(response.json()["result"]["tools"])

    return max(anyio.run(measure, v) for v in ("2025-06-18", mcp_types.LATEST_PROTOCOL_VERSION))


def cold_import_seconds(module: str = "mcp_gateway.asgi", runs: int = 3) -> float:
    """Median wall time to import `module` in a fresh interpreter: `mcp_gateway.asgi` is what the Lambda's
    first invocation pays (`mcp_gateway.lambda_handler` itself imports no `mcp` at module load)."""
    code = f"import time; t=time.perf_counter(); import {module}; print(time.perf_counter()-t)"
    times = sorted(float(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                                        text=True).stdout.strip()) for _ in range(runs))
    return times[len(times) // 2]


def main() -> None:
    from functions.api.handler import openapi_document

    doc = openapi_document()
    total, n = tools_list_bytes(doc)
    sizes = tool_sizes(doc)
    print(json.dumps({"tools": n, "tools_list_bytes": total, "budget_bytes": TOTAL_BUDGET,
                      "largest_tool": max(sizes, key=lambda k: sizes[k]), "largest_tool_bytes": max(sizes.values()),
                      "budget_per_tool": TOOL_BUDGET,
                      "cold_import_seconds": round(cold_import_seconds(), 3),
                      "lambda_module_import_seconds": round(cold_import_seconds("mcp_gateway.lambda_handler"), 3)}))


if __name__ == "__main__":
    main()
