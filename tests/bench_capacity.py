"""Capacity advice numbers for `make bench`: POST /v1/capacity/advice over three regions on the sandbox (goal: an
answer in <= 1.5 s), cold (every fact read from the embedded AWS) and warm (within the cache period: no AWS call),
and the AWS calls the cold answer made per fact (at most one read per (region, fact))."""

from __future__ import annotations

import socket
import statistics
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
import uvicorn

GOAL_S = 1.5
REGIONS = ["us-west-2", "us-east-1", "eu-west-2"]
QUESTIONS = [  # the heaviest first: every accelerator model, every capacity type, three regions
    {"gpus": 16, "gpu_model": "any", "hours": 72, "regions": REGIONS},
    {"gpus": 16, "gpu_model": "h100", "hours": 72, "regions": REGIONS},
    {"gpus": 4, "gpu_model": "a10g", "regions": REGIONS},
]
WARM_RUNS = 7


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    from sandbox.app import Sandbox
    from sandbox.config import SandboxSettings

    sb = Sandbox(SandboxSettings(port=_port(), time_scale=60.0, state_dir=Path(tempfile.mkdtemp())))
    sb.start()
    server = uvicorn.Server(uvicorn.Config(sb.asgi(), host="127.0.0.1", port=sb.settings.port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    http = httpx.Client(base_url=sb.base_url, headers={"Authorization": f"Bearer {sb.tokens.viewer}"}, timeout=60)
    try:
        # A running API first: its usual reads have loaded botocore's EC2, SageMaker and Service Quotas models (a
        # fresh process pays ~1 s for those on its first request, whatever it is); the advisor's cache stays empty
        for path in ("/v1/catalog/regions", "/v1/clusters", "/v1/catalog/quotas?region=us-west-2"):
            http.get(path)
        from functions.api.deps import services

        print("== Capacity advice (3 regions) ==")
        for body in QUESTIONS:
            services().capacity.cache.clear()  # type: ignore[union-attr]  # cold: every fact read again
            t0 = time.perf_counter()
            cold = http.post("/v1/capacity/advice", json=body)
            cold_s = time.perf_counter() - t0
            assert cold.status_code == 200, cold.text
            calls = [c for c in sb.aws.calls.records(request_id=cold.headers["x-amzn-RequestId"])
                     if c["service"] != "dynamodb"]
            per_fact = Counter((c["operation"], c["region"], str(c["params"])) for c in calls)
            repeated = sum(n - 1 for (op, _, _), n in per_fact.items() if op != "ListServiceQuotas" and n > 1)
            warm = []
            for _ in range(WARM_RUNS):
                t1 = time.perf_counter()
                again = http.post("/v1/capacity/advice", json=body)
                warm.append(time.perf_counter() - t1)
                assert not [c for c in sb.aws.calls.records(request_id=again.headers["x-amzn-RequestId"])
                            if c["service"] != "dynamodb"], "a warm answer made AWS calls"
            what = f"{body['gpus']} x {body['gpu_model']}" + (f" for {body['hours']} h" if body.get("hours") else "")
            verdict = "OK" if cold_s <= GOAL_S else "OVER"
            ops = Counter(c["operation"] for c in calls)
            print(f"  {what}: cold {cold_s * 1000:.0f} ms ({len(calls)} AWS calls: "
                  f"{', '.join(f'{k} x{n}' for k, n in sorted(ops.items()))}; same question twice: {repeated}), "
                  f"warm median {statistics.median(warm) * 1000:.0f} ms, 0 AWS calls; "
                  f"{len(cold.json()['options'])} options, {len(cold.content) / 1024:.0f} KB "
                  f"(goal <= {GOAL_S:g} s): {verdict}")
    finally:
        server.should_exit = True
        sb.stop()


if __name__ == "__main__":
    main()
