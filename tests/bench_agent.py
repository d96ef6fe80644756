"""Agent numbers for `make bench`: the scripted agent of tests/e2e/test_mcp_agent_script.py runs the two
requests of issue 9 through MCP against a fresh sandbox (time scale 60: AWS durations keep their
proportions) and reports its tool calls, the bytes of tool results it read, and what watching cost.

Budgets (issue 9): the create request in <= 12 tool calls and <= 30 KB of tool results; add + scale in
<= 8 calls; watching an operation costs no more get_operation calls than one per step change plus one per
minute it runs. Then issue 26's five journeys (an operator's agent: create, features, fine-tune on the user's data,
serve the user's model behind a load balancer, fix a broken node): each <= 12 calls and <= 8 KB of tool results, no
result over 4 KB. Printed, not asserted here (tests/e2e/test_mcp_agent_script.py asserts them at its time scale)."""

from __future__ import annotations

import asyncio
import math
import socket
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import uvicorn

SCALE = 60.0
CREATE_CALLS, CREATE_KB, ADD_SCALE_CALLS = 12, 30, 8
JOURNEY_CALLS, JOURNEY_KB = 12, 8  # issue 26: each journey


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _verdict(ok: bool) -> str:
    return "OK" if ok else "OVER"


def _by_tool(calls: list[str], sizes: list[int]) -> str:
    """'list_clusters 1 (0.4 KB), get_operation 7 (12.1 KB), ...' in call order."""
    totals: dict[str, list[int]] = {}
    for name, size in zip(calls, sizes, strict=True):
        totals.setdefault(name, []).append(size)
    return ", ".join(f"{name} {len(v)} ({sum(v) / 1024:.1f} KB)" for name, v in totals.items())


def main() -> None:
    from sandbox.app import Sandbox
    from sandbox.config import SandboxSettings
    from tests.e2e.test_mcp_agent_script import run_both
    from tests.e2e.test_mcp_sandbox import http_client

    sb = Sandbox(SandboxSettings(port=_port(), time_scale=SCALE, state_dir=Path(tempfile.mkdtemp())))
    sb.start()
    server = uvicorn.Server(uvicorn.Config(sb.asgi(), host="127.0.0.1", port=sb.settings.port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    try:
        async def go():  # type: ignore[no-untyped-def]
            async with http_client(f"{sb.base_url}/mcp", sb.tokens.admin) as client:
                return await run_both(client, "agent-demo")

        agent, figures, _, _ = asyncio.run(go())
        journeys = _journeys(sb)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sb.stop()

    print(f"== MCP agent (issue 9's two requests, scripted; sandbox time scale {SCALE:g}) ==")
    print(f"  capacity lookup: {figures.capacity}")
    kb = figures.create_bytes / 1024
    print(f"  create: {figures.create_calls} tool calls (goal <= {CREATE_CALLS}): "
          f"{_verdict(figures.create_calls <= CREATE_CALLS)}; {kb:.1f} KB of tool results "
          f"(goal <= {CREATE_KB} KB): {_verdict(kb <= CREATE_KB)}")
    print(f"    {_by_tool(agent.calls[:figures.create_calls], agent.result_bytes[:figures.create_calls])}")
    print(f"  add + scale: {figures.add_scale_calls} tool calls (goal <= {ADD_SCALE_CALLS}): "
          f"{_verdict(figures.add_scale_calls <= ADD_SCALE_CALLS)}; {figures.add_scale_bytes / 1024:.1f} KB")
    print(f"    {_by_tool(agent.calls[figures.create_calls:], agent.result_bytes[figures.create_calls:])}")
    print(f"  largest tool result {figures.max_result_bytes} bytes (budget 4096)")
    for w in figures.watches:
        allowed = w.step_changes + math.ceil(w.seconds / 60)
        kind = w.final.get("kind")
        print(f"  watching {kind}: {w.calls} get_operation calls for {w.step_changes} step changes over "
              f"{w.seconds:.0f} s (goal <= {allowed}): {_verdict(w.calls <= allowed)}; versions seen {w.versions}")

    print(f"== MCP agent (issue 26's five journeys, an operator following the skills; time scale {SCALE:g}) ==")
    for f in journeys.figures:
        ok = len(f.calls) <= JOURNEY_CALLS and f.bytes <= JOURNEY_KB * 1024 and max(f.sizes) <= 4096
        print(f"  {f.name}: {len(f.calls)} tool calls (goal <= {JOURNEY_CALLS}), {f.bytes / 1024:.1f} KB (goal <= "
              f"{JOURNEY_KB} KB), largest {max(f.sizes)} B: {_verdict(ok)}")
        print(f"    {_by_tool(f.calls, f.sizes)}")


def _journeys(sb: Any) -> Any:
    """Issue 26's journeys on this sandbox: the test's scripted agent, its admin and boto3 for the user's world."""
    import boto3

    from tests.e2e.conftest import Api
    from tests.e2e.test_mcp_agent_script import run_journeys

    def aws(service: str) -> Any:
        return boto3.client(service, region_name="us-west-2", endpoint_url=sb.aws.endpoint,
                            aws_access_key_id="testing", aws_secret_access_key="testing")

    agent, _ = run_journeys(sb.base_url, sb.tokens.operator, Api(sb.base_url, sb.tokens.admin), aws)
    return agent


if __name__ == "__main__":
    main()
