"""Live job logs over the socket (/ws): a follow starts with the pod's last lines and then gets each new line as
the pod writes it; bad messages, unknown jobs and a fifth follow are refused on the socket, which stays open;
unfollowing or closing the socket ends the follows (none outlives its socket)."""

from __future__ import annotations

import contextlib
import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from websockets.sync.client import connect

from tests.e2e.conftest import eventually
from tests.e2e.test_jobs import _job


@pytest.fixture(scope="module")
def running(api: Any) -> tuple[str, str]:
    cname = f"live-{uuid.uuid4().hex[:6]}"
    body = {"name": cname, "region": "us-west-2",
            "instance_groups": [{"name": "cpu", "instance_type": "ml.c5.large", "instance_count": 2,
                                 "availability_zone": "us-west-2a"}]}
    op = api.post("/v1/clusters", json=body, key=uuid.uuid4().hex).json()
    assert api.wait_terminal(op["id"], timeout=180)["status"] == "SUCCEEDED"
    job = _job("tail-me", secrets=[], parameters={"script": "train.py", "epochs": 50})
    sub = api.post(f"/v1/clusters/{cname}/jobs", json=job, key=uuid.uuid4().hex)
    assert sub.status_code == 202, sub.text
    assert api.wait_terminal(sub.json()["id"], timeout=180)["status"] == "SUCCEEDED"
    return cname, "tail-me"


@contextlib.contextmanager
def _socket(sandbox: Any, token: str | None = None) -> Iterator[Any]:
    with connect(sandbox.base_url.replace("http://", "ws://") + "/ws", open_timeout=10) as ws:
        ws.send(json.dumps({"token": token or sandbox.tokens.admin}))
        assert json.loads(ws.recv(timeout=10))["type"] == "ready"
        yield ws


def _next(ws: Any, kind: str, sub: str | None = None, timeout: float = 20) -> dict[str, Any]:
    """The next message of that type (and stream), skipping bus events."""
    deadline = time.monotonic() + timeout
    while True:
        msg = json.loads(ws.recv(timeout=max(0.1, deadline - time.monotonic())))
        if msg["type"] == kind and (sub is None or msg.get("id") == sub):
            return msg


def test_a_follow_sends_the_tail_then_each_new_line_as_the_pod_writes_it(sandbox: Any,
                                                                         running: tuple[str, str]) -> None:
    cluster, job = running
    with _socket(sandbox) as ws:
        ws.send(json.dumps({"action": "follow_logs", "id": "a", "cluster": cluster, "job": job, "tail": 3}))
        first = _next(ws, "log", "a")
        assert first["pod"].startswith(job) and 1 <= len(first["lines"]) <= 3
        seen = list(first["lines"])
        # then lines the pod writes after the follow began arrive without asking again
        fresh = _next(ws, "log", "a")
        assert fresh["lines"] and not set(fresh["lines"]) & set(seen)
        assert all("\n" not in line for line in fresh["lines"])
        ws.send(json.dumps({"action": "unfollow", "id": "a"}))
        assert _next(ws, "log_end", "a")["reason"] == "unfollowed"


def test_bad_messages_and_unknown_jobs_are_refused_on_a_socket_that_stays_open(sandbox: Any,
                                                                               running: tuple[str, str]) -> None:
    cluster, job = running
    with _socket(sandbox) as ws:
        ws.send(json.dumps({"action": "follow_logs", "id": "b", "cluster": cluster, "job": job, "tail": 5000}))
        bad = _next(ws, "error", "b")
        assert bad["status"] == 422 and bad["errors"][0]["loc"] == ["message", "tail"]
        ws.send("not json")
        assert _next(ws, "error")["status"] == 400
        ws.send(json.dumps({"action": "follow_logs", "id": "c", "cluster": cluster, "job": "no-such-job"}))
        assert _next(ws, "error", "c")["status"] == 404
        ws.send(json.dumps({"action": "follow_logs", "id": "d", "cluster": cluster, "job": job, "pod": "other"}))
        other = _next(ws, "error", "d")
        assert other["status"] == 422 and other["errors"][0]["loc"] == ["message", "pod"]
        # still open: a good follow works after the refusals
        ws.send(json.dumps({"action": "follow_logs", "id": "e", "cluster": cluster, "job": job, "tail": 1}))
        assert _next(ws, "log", "e")["lines"]


def test_a_user_holds_at_most_four_follows_and_a_closed_socket_releases_them(sandbox: Any,
                                                                             running: tuple[str, str]) -> None:
    cluster, job = running
    user = "sandbox-operator"
    with _socket(sandbox, sandbox.tokens.operator) as ws:
        for i in range(5):
            ws.send(json.dumps({"action": "follow_logs", "id": f"f{i}", "cluster": cluster, "job": job, "tail": 1}))
        assert _next(ws, "error", "f4")["status"] == 429
        eventually(lambda: sandbox.sockets.follows_of(user) == 4)
    # the tab closed: every follow of that socket stops, and the user may follow again
    eventually(lambda: sandbox.sockets.follows_of(user) == 0, timeout=15)
    with _socket(sandbox, sandbox.tokens.operator) as ws:
        ws.send(json.dumps({"action": "follow_logs", "id": "g", "cluster": cluster, "job": job, "tail": 1}))
        assert _next(ws, "log", "g")["lines"]
