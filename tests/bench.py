"""`make bench`: the numbers PodStart keeps an eye on, measured in one run.

- cold import time of each Lambda entry module against a bare `import boto3` (goal: <= 2.0x)
- each function's bundle size, and synth time
- MCP tools/list size (goal: <= 40 KB for the full tool set) and the gateway's cold import
"""

from __future__ import annotations

import importlib.util
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
    from functions.lambdas import LAMBDAS

    print(f"== Cold import (median of {RUNS} fresh interpreters, .pyc present) ==")
    base = cold_import("boto3")
    print(f"  {'import boto3':40s} {base * 1000:7.1f} ms  (baseline)")
    worst = 0.0
    entries = {spec.name: spec.handler.rpartition(".")[0] for spec in LAMBDAS.values()}
    if importlib.util.find_spec("mcp_gateway.lambda_handler"):
        entries["mcp"] = "mcp_gateway.lambda_handler"
    for name, module in entries.items():
        t = cold_import(module)
        worst = max(worst, t / base)
        print(f"  {name + ' (' + module + ')':40s} {t * 1000:7.1f} ms  {t / base:4.2f}x boto3")
    print(f"  worst ratio {worst:.2f}x (goal <= 2.0x): {'OK' if worst <= 2.0 else 'OVER'}")

    try:
        from infra import bench as infra_bench
    except ImportError:
        print("(infra bench unavailable)")
    else:
        print("== Lambda bundles ==")
        for name, size in infra_bench.bundle_sizes().items():
            print(f"  {name:20s} {size / 1e6:7.1f} MB unzipped")
        print("== Synth ==")
        print(f"  cdk synth (in-process) {infra_bench.synth_seconds():.1f} s (goal < 60 s)")

    try:
        from mcp_gateway import bench as mcp_bench
    except ImportError:
        print("(MCP bench unavailable)")
    else:
        from functions.api.handler import openapi_document

        total, per_tool, n = mcp_bench.tools_list_size(openapi_document())
        print("== MCP ==")
        at38 = per_tool * 38 / 1024
        print(f"  tools/list {total} bytes, {n} tools ({per_tool} B/tool; 38 tools ~{at38:.0f} KB, goal <= 40 KB)")
        print(f"  gateway cold import (mcp_gateway.asgi, what the first MCP request loads) "
              f"{mcp_bench.cold_import_seconds() * 1000:.0f} ms")

    try:
        from tests import bench_workflows
    except ImportError:
        pass
    else:
        bench_workflows.main()
    return 0


if __name__ == "__main__":
    sys.exit(main())
