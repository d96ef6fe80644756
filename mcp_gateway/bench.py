"""Numbers for `make bench`: how big tools/list is, and what importing the gateway costs cold."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from mcp_gateway.catalog import build_catalog, tool_payload


def tools_list_size(openapi: dict[str, Any]) -> tuple[int, int, int]:
    """(total bytes of the tools/list `tools` array as compact JSON, mean bytes per tool, number of tools)."""
    tools = [tool_payload(s) for s in build_catalog(openapi)]
    total = len(json.dumps(tools, separators=(",", ":"), ensure_ascii=False).encode())
    return total, total // max(len(tools), 1), len(tools)


def cold_import_seconds(module: str = "mcp_gateway.asgi", runs: int = 3) -> float:
    """Median wall time to import `module` in a fresh interpreter: `mcp_gateway.asgi` is what the Lambda's
    first invocation pays (`mcp_gateway.lambda_handler` itself imports no `mcp` at module load)."""
    code = f"import time; t=time.perf_counter(); import {module}; print(time.perf_counter()-t)"
    times = sorted(float(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                                        text=True).stdout.strip()) for _ in range(runs))
    return times[len(times) // 2]


def main() -> None:
    from functions.api.handler import openapi_document

    total, per_tool, n = tools_list_size(openapi_document())
    print(json.dumps({"tools": n, "tools_list_bytes": total, "bytes_per_tool": per_tool,
                      "cold_import_seconds": round(cold_import_seconds(), 3),
                      "lambda_module_import_seconds": round(cold_import_seconds("mcp_gateway.lambda_handler"), 3)}))


if __name__ == "__main__":
    main()
