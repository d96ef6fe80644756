"""`make bench`: the numbers PodStart keeps an eye on, measured in one run.

- cold start of each Lambda (entry-module import, and import + first request) against a bare `import boto3`
  (goal: entry modules <= 1.6x, the MCP function's first tools/list <= 2.5x), in CPU time (tests/bench_cold.py)
- each function's bundle size, and synth time
- MCP tools/list bytes per tool (goal: <= 800, raw JSON-RPC), the gateway's cold import, and the scripted
  agent's tool calls and bytes of tool results for the two requests of issue 9 (from the last e2e run)
- the capacity advice's answer time over three regions, cold and warm (goal: <= 1.5 s), and its AWS calls
  (tests/bench_capacity.py)
"""

from __future__ import annotations

import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = 5


def cold_import(module: str) -> float:
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    samples = []
    for _ in range(RUNS):
        out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                             env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
        samples.append(float(out.stdout.strip().splitlines()[-1]))
    return statistics.median(samples)


def main() -> int:

    from tests import bench_cold

    bench_cold.main()

    try:
        from infra import bench as infra_bench
    except ImportError:
        print("(infra bench unavailable)")
    else:
        print("== Lambda bundles (unzipped, each from its entry's import graph; MB) ==")
        for line in infra_bench.bundle_report():
            print(f"  {line}")
        print("== Synth ==")
        print(f"  cdk synth (in-process) {infra_bench.synth_seconds():.1f} s (goal < 60 s)")

    try:
        from mcp_gateway import bench as mcp_bench
    except ImportError:
        print("(MCP bench unavailable)")
    else:
        from functions.api.handler import openapi_document

        doc = openapi_document()
        total, n = mcp_bench.tools_list_bytes(doc)
        sizes = mcp_bench.tool_sizes(doc)
        largest = max(sizes, key=lambda k: sizes[k])
        print("== MCP ==")
        verdict = "OK" if total <= mcp_bench.TOTAL_BUDGET else "OVER"
        print(f"  tools/list {total} bytes raw JSON-RPC ({total / 1024:.1f} KB), {n} tools, {total / n:.0f} B/tool "
              f"(goal <= {mcp_bench.TOTAL_BUDGET // 1024} KB in all): {verdict}")
        verdict = "OK" if sizes[largest] <= mcp_bench.TOOL_BUDGET else "OVER"
        print(f"  largest tool {largest} {sizes[largest]} bytes (goal <= {mcp_bench.TOOL_BUDGET}): {verdict}")
        print(f"  gateway cold import (mcp_gateway.asgi: the SDK, loaded by the first request that is not a plain "
              f"tools/list) "
              f"{mcp_bench.cold_import_seconds() * 1000:.0f} ms")
    # Each of these starts a sandbox of its own: one per process (moto's backends are process-wide).
    for module in ("tests.bench_agent", "tests.bench_workflows", "tests.bench_capacity"):
        sys.stdout.flush()
        subprocess.run([sys.executable, "-m", module], cwd=ROOT, check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
