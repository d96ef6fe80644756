"""Step Functions state transitions per operation kind, counted on a running sandbox (`make bench` prints them;
tests/e2e/test_transitions.py holds the create's).

A transition is a state entered (Step Functions bills Standard workflows per transition): each execution's
`*StateEntered` history events, by state name. The operations are driven over the REST API, as a user would.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from typing import Any

import boto3
import httpx

CREATE_GOAL = 30  # issue #29: a cluster create in <= 30 transitions at realistic durations

# the kinds the bench reports, in the order it runs them (each needs what the ones before made)
KINDS = ("cluster.create", "instance_group.add", "features.update", "job.submit", "endpoint.deploy",
         "cluster.delete")


def wait_terminal(http: httpx.Client, op: dict[str, Any], timeout: float = 600) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while op["status"] not in ("SUCCEEDED", "FAILED", "CANCELLED"):
        assert time.monotonic() < deadline, f"operation {op['id']} still {op['status']} at {op.get('phase')}"
        op = http.get(f"/v1/operations/{op['id']}", params={"wait": 20, "version": op["version"]}).json()
    return op


def states_entered(sandbox: Any, op: dict[str, Any]) -> Counter[str]:
    """The states the operation's execution entered (its current attempt), by name."""
    sfn = boto3.client("stepfunctions", region_name="us-west-2", endpoint_url=sandbox.aws.endpoint,
                       aws_access_key_id="testing", aws_secret_access_key="testing")
    machine = sandbox.info["workflows"][op["kind"]]
    arn = machine.replace(":stateMachine:", ":execution:", 1) + f":{op['id']}-{op.get('attempt', 1)}"
    deadline = time.monotonic() + 30  # the operation records its end a moment before its execution ends
    while sfn.describe_execution(executionArn=arn)["status"] == "RUNNING":
        assert time.monotonic() < deadline, f"{arn} still RUNNING"
        time.sleep(0.05)
    events = sfn.get_execution_history(executionArn=arn, maxResults=1000)["events"]
    return Counter(e["stateEnteredEventDetails"]["name"] for e in events if e["type"].endswith("StateEntered"))


def run(http: httpx.Client, path: str, body: dict[str, Any] | None, method: str = "POST",
        **params: str) -> dict[str, Any]:
    r = http.request(method, path, json=body, params={"region": "us-west-2", **params},
                     headers={"Idempotency-Key": uuid.uuid4().hex})
    assert r.status_code == 202, f"{method} {path}: {r.status_code} {r.text[:500]}"
    op = wait_terminal(http, r.json())
    assert op["status"] == "SUCCEEDED", op
    return op


def per_kind(http: httpx.Client, sandbox: Any, cluster: str) -> dict[str, tuple[int, Counter[str]]]:
    """Run one operation of each of KINDS on a new cluster (deleted at the end): kind -> (transitions, states)."""
    base = f"/v1/clusters/{cluster}"
    ops = {
        "cluster.create": run(http, "/v1/clusters", {"name": cluster, "region": "us-west-2", "instance_groups": [
            {"name": "accel", "instance_type": "ml.g5.8xlarge", "instance_count": 2,
             "availability_zone": "us-west-2a"}]}),
        "instance_group.add": run(http, f"{base}/instance-groups", {
            "name": "cpu", "instance_type": "ml.c5.large", "instance_count": 1, "availability_zone": "us-west-2a"}),
        "features.update": run(http, f"{base}/features", {"observability": {"enabled": True}}, method="PATCH"),
        "job.submit": run(http, f"{base}/jobs", {
            "name": "bench-job", "recipe": "pytorch", "image": "123456789012.dkr.ecr.us-west-2.amazonaws.com/t:1",
            "instance_type": "ml.c5.large", "nodes": 1, "gpus_per_node": 0,
            "parameters": {"script": "train.py", "epochs": 1}}),
        "endpoint.deploy": run(http, f"{base}/endpoints", {
            "name": "bench-llm", "mode": "self-managed", "engine": "vllm", "image": "vllm/vllm-openai:v0.10.1",
            "model": {"source": "s3", "uri": "/data/models/Qwen/Qwen3-0.6B/main/"},
            "instance_type": "ml.g5.8xlarge", "gpus": 1, "replicas": 1}),
        "cluster.delete": run(http, base, None, method="DELETE", confirm=cluster),
    }
    out = {}
    for kind, op in ops.items():
        states = states_entered(sandbox, op)
        out[kind] = (sum(states.values()), states)
    return out


def describe(states: Counter[str]) -> str:
    """Which waits the transitions went to: 'eks_control_plane~wait x1, hyperpod_cluster~event x1'."""
    waits = sorted((n, c) for n, c in states.items() if "~" in n)
    return ", ".join(f"{n} x{c}" for n, c in waits) or "no waits"
