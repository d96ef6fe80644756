"""Cold starts, counted honestly: what a Lambda's first invocation pays before it answers.

For each function: the import of its entry module, and the import plus its first request (the API: GET
/v1/me, which reads no AWS; the MCP function: `tools/list`, which loads the `mcp` SDK on first use), each in a
fresh interpreter, against a bare `import boto3`. Times are CPU time (user + system of the process), the least
of RUNS interpreters: wall time on a shared machine moves with its load; CPU time much less, and what noise is
left only ever adds, so the least run is the truest.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = 5
BUDGET = 1.6  # issue 29: every entry module within 1.6x `import boto3`

_ENV = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "AWS_DEFAULT_REGION": "us-west-2",
        "AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "OPERATIONS_TABLE": "ops",
        "STATE_TABLE": "state", "IDEMPOTENCY_TABLE": "idem", "POWERTOOLS_TRACE_DISABLED": "1",
        "POWERTOOLS_METRICS_DISABLED": "1", "POWERTOOLS_LOG_LEVEL": "ERROR",
        "PYDANTIC_DISABLE_PLUGINS": "__all__"}  # as every function's environment sets it

API_FIRST_REQUEST = """
from functions.api.handler import handler
class C:
    function_name = "podstart-api"; memory_limit_in_mb = 512; aws_request_id = "r"
    invoked_function_arn = "arn:aws:lambda:us-west-2:123456789012:function:podstart-api"
    def get_remaining_time_in_millis(self): return 29000
event = {"httpMethod": "GET", "path": "/v1/me", "resource": "/{proxy+}", "headers": {}, "body": None,
         "queryStringParameters": None, "multiValueQueryStringParameters": None, "isBase64Encoded": False,
         "requestContext": {"requestId": "r", "stage": "v1", "path": "/v1/me", "httpMethod": "GET",
                            "authorizer": {"claims": {"sub": "u", "cognito:username": "u", "cognito:groups": "viewer"}},
                            "identity": {"sourceIp": "127.0.0.1"}}}
assert handler(event, C())["statusCode"] == 200
"""

MCP_FIRST_REQUEST = """
import json, os
import mcp_gateway.lambda_handler
from mcp_gateway import bench
bench.tools_list_bytes(json.load(open(os.environ["BENCH_OPENAPI"])))
"""


def _cpu(code: str, env: dict[str, str]) -> float:
    wrapped = ("import resource, time\n" + code +
               "\nu = resource.getrusage(resource.RUSAGE_SELF)\nprint(u.ru_utime + u.ru_stime)")
    samples = []
    for _ in range(RUNS):
        out = subprocess.run([sys.executable, "-c", wrapped], cwd=ROOT, capture_output=True, text=True,
                             check=True, env=env)
        samples.append(float(out.stdout.strip().splitlines()[-1]))
    return min(samples)


def measure() -> list[tuple[str, float, float | None]]:
    from functions.api.handler import openapi_document
    from functions.lambdas import LAMBDAS

    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(openapi_document(), f)
    env = {**_ENV, "BENCH_OPENAPI": f.name}
    try:
        empty = _cpu("pass", env)  # the interpreter itself, taken off every figure
        rows: list[tuple[str, float, float | None]] = [("import boto3", _cpu("import boto3", env) - empty, None)]
        first = {"api": API_FIRST_REQUEST, "mcp": MCP_FIRST_REQUEST}
        for spec in LAMBDAS.values():
            module = spec.handler.rpartition(".")[0]
            imported = _cpu(f"import {module}", env) - empty
            request = _cpu(first[spec.name], env) - empty if spec.name in first else None
            rows.append((f"{spec.name} ({module})", imported, request))
        return rows
    finally:
        os.unlink(f.name)


def main() -> bool:
    rows = measure()
    base = rows[0][1]
    print(f"== Cold start, CPU time (least of {RUNS} fresh interpreters, interpreter start excluded) ==")
    print(f"  {'import boto3':42s} {base * 1000:7.0f} ms  (baseline)")
    worst = 0.0
    for name, imported, request in rows[1:]:
        worst = max(worst, imported / base)
        line = f"  {name:42s} {imported * 1000:7.0f} ms  {imported / base:4.2f}x"
        if request is not None:
            line += f"   import + first request {request * 1000:5.0f} ms  {request / base:4.2f}x"
        print(line)
    print(f"  worst entry-module import {worst:.2f}x boto3 (goal <= {BUDGET}x): {'OK' if worst <= BUDGET else 'OVER'}")
    return worst <= BUDGET


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
