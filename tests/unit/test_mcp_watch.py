"""get_operation(wait_seconds<=60, version) in the gateway, and its HTTP retries, against an in-memory
REST API (httpx2.MockTransport) on a fake clock: waits for a real change, never busy-loops when the REST
API answers early with nothing new, answers within the host's deadline; one idempotency key per call."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx2
import pytest

from mcp_gateway import server
from mcp_gateway.calls import Outcome
from mcp_gateway.server import Gateway

OP_ID = "op-abcdef123456"


@dataclass
class Clock:
    now: float = 1000.0
    sleeps: list[float] = field(default_factory=list)

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@dataclass
class FakeOperations:
    """GET /v1/operations/{id}?wait=&version=: the REST long poll, on the fake clock.

    `changes`: fake times at which the version goes up by one. `early`: the API answers at once even when
    nothing changed (a stale version it ignores, a proxy cutting the poll). `terminal_at`: SUCCEEDED then."""

    clock: Clock
    changes: list[float] = field(default_factory=list)
    early: bool = False
    terminal_at: float | None = None
    polls: list[tuple[float, int, int | None]] = field(default_factory=list)  # (when, wait, version)

    def state(self) -> dict[str, Any]:
        version = 1 + sum(1 for t in self.changes if t <= self.clock.now)
        done = self.terminal_at is not None and self.clock.now >= self.terminal_at
        return {"id": OP_ID, "kind": "cluster.create", "status": "SUCCEEDED" if done else "RUNNING",
                "phase": None if done else "eks_control_plane", "version": version + (1 if done else 0),
                "attempt": 1, "steps": [], "target": {"cluster": "c", "region": "us-west-2"}}

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        wait = int(request.url.params.get("wait", "0"))
        since = request.url.params.get("version")
        self.polls.append((self.clock.now, wait, None if since is None else int(since)))
        assert len(self.polls) < 100, "the gateway is busy-looping on the REST API"
        op = self.state()
        baseline = op["version"] if since is None else int(since)
        if not (self.early or wait == 0 or op["version"] != baseline or op["status"] == "SUCCEEDED"):
            end = self.clock.now + wait
            events = [t for t in [*self.changes, self.terminal_at] if t is not None and self.clock.now < t <= end]
            self.clock.now = min(events) if events else end
            op = self.state()
        return httpx2.Response(200, json=op)


def gateway(clock: Clock, handler: Callable[[httpx2.Request], httpx2.Response]) -> Gateway:
    from functions.api.handler import openapi_document

    def route(request: httpx2.Request) -> httpx2.Response:
        if request.url.path == "/v1/me":  # the gateway asks the caller's role before a write
            return httpx2.Response(200, json={"role": "operator"})
        return handler(request)

    return Gateway("http://rest", "token", False, openapi_document(), transport=httpx2.MockTransport(route),
                   sleep=clock.sleep, clock=clock)


def call(gw: Gateway, name: str, args: dict[str, Any]) -> Outcome:
    async def go() -> Outcome:
        return await gw.call(name, args)

    return anyio.run(go)


def test_a_burst_of_changes_is_one_answer_and_a_long_burst_is_cut_at_settle_max() -> None:
    # Given an operation that changes at 10 s, then every second for a while (a step ends, the next starts, ...)
    clock = Clock()
    rest = FakeOperations(clock, changes=[clock.now + 10 + i for i in range(10)])

    first = call(gateway(clock, rest.handle), "get_operation",
                 {"operation_id": OP_ID, "version": 1, "wait_seconds": 60})

    # Then one answer carries the changes that came within SETTLE of each other, for at most SETTLE_MAX
    assert first.structured is not None and clock.now == 1010 + server.SETTLE_MAX
    assert first.structured["version"] == 1 + 1 + server.SETTLE_MAX  # the first change and one a second after
    assert all(w <= server.SETTLE for _, w, _ in rest.polls[1:])


def test_waits_across_rest_long_polls_until_the_next_change() -> None:
    # Given an operation whose version changes 45 s from now
    clock = Clock()
    rest = FakeOperations(clock, changes=[clock.now + 45])

    result = call(gateway(clock, rest.handle), "get_operation",
                  {"operation_id": OP_ID, "version": 1, "wait_seconds": 60})

    # Then one tool call answers at the change (and 2 s of settling), after REST long polls of at most 20 s
    assert result.structured is not None and result.structured["version"] == 2
    assert clock.now == 1045 + server.SETTLE
    assert [(w, v) for _, w, v in rest.polls] == [(20, 1), (20, 1), (20, 1), (server.SETTLE, 2)]
    assert 'version=2, wait_seconds=60' in result.structured["next"]


def test_a_step_end_and_the_next_start_come_as_one_answer() -> None:
    # Given a step that ends and the next one that starts half a second later (two versions)
    clock = Clock()
    rest = FakeOperations(clock, changes=[clock.now + 30, clock.now + 30.5])

    result = call(gateway(clock, rest.handle), "get_operation",
                  {"operation_id": OP_ID, "version": 1, "wait_seconds": 60})

    # Then one tool call carries both changes
    assert result.structured is not None and result.structured["version"] == 3


def test_without_a_version_it_waits_for_a_change_after_the_first_read() -> None:
    clock = Clock()
    rest = FakeOperations(clock, changes=[clock.now + 10])

    result = call(gateway(clock, rest.handle), "get_operation", {"operation_id": OP_ID, "wait_seconds": 60})

    assert result.structured is not None and result.structured["version"] == 2
    assert [(w, v) for _, w, v in rest.polls] == [(0, None), (20, 1), (server.SETTLE, 2)]


def test_nothing_changes_for_60_s_then_it_answers_the_same_version() -> None:
    clock = Clock()
    rest = FakeOperations(clock)

    result = call(gateway(clock, rest.handle), "get_operation",
                  {"operation_id": OP_ID, "version": 1, "wait_seconds": 60})

    assert result.structured is not None and result.structured["version"] == 1
    assert 1059 <= clock.now <= 1060 and len(rest.polls) == 3


def test_an_api_that_answers_at_once_with_nothing_new_is_not_busy_looped() -> None:
    # Given a REST API that returns immediately with the same version (a stale version it ignores, a proxy)
    clock = Clock()
    rest = FakeOperations(clock, early=True)

    result = call(gateway(clock, rest.handle), "get_operation",
                  {"operation_id": OP_ID, "version": 1, "wait_seconds": 60})

    # Then the gateway backs off (1, 2, 4, 5, 5 ... s) instead of repeating at once, and still answers in 60 s
    assert not result.is_error
    times = [t for t, _, _ in rest.polls]
    assert len(times) <= 16, len(times)
    assert all(b - a >= 1 for a, b in itertools.pairwise(times))
    assert clock.sleeps[:4] == [1, 2, 4, 5] and clock.now <= 1060


def test_a_version_older_than_the_operations_answers_at_once() -> None:
    # The agent missed changes: it learns of them now (and gets the version to pass back next)
    clock = Clock()
    rest = FakeOperations(clock, changes=[clock.now - 5, clock.now - 1])

    result = call(gateway(clock, rest.handle), "get_operation",
                  {"operation_id": OP_ID, "version": 1, "wait_seconds": 60})

    assert result.structured is not None and result.structured["version"] == 3
    assert [w for _, w, _ in rest.polls] == [20, server.SETTLE] and clock.now == 1000 + server.SETTLE


def test_a_terminal_operation_answers_at_once() -> None:
    clock = Clock()
    rest = FakeOperations(clock, terminal_at=clock.now - 1)

    result = call(gateway(clock, rest.handle), "get_operation",
                  {"operation_id": OP_ID, "version": 1, "wait_seconds": 60})

    assert result.structured is not None and result.structured["status"] == "SUCCEEDED"
    assert len(rest.polls) == 1 and result.structured["next"].startswith("done")


def test_wait_zero_is_one_plain_read() -> None:
    clock = Clock()
    rest = FakeOperations(clock)

    call(gateway(clock, rest.handle), "get_operation", {"operation_id": OP_ID, "version": 1})

    assert [(w, v) for _, w, v in rest.polls] == [(0, 1)]


def test_the_hosts_deadline_caps_the_wait() -> None:
    # Given a host (Lambda) that must answer within 29 s
    clock = Clock()
    rest = FakeOperations(clock)
    reset = server.answer_by.set(clock.now + 29)
    try:
        result = call(gateway(clock, rest.handle), "get_operation",
                      {"operation_id": OP_ID, "version": 1, "wait_seconds": 60})
    finally:
        server.answer_by.reset(reset)

    assert not result.is_error
    assert clock.now <= 1000 + 29 - server.HOST_MARGIN


# --- one key per tool call ---------------------------------------------------------------------------

def test_gateway_retries_reuse_the_calls_key_and_a_new_call_gets_a_new_key() -> None:
    # Given a REST API that answers 503 to the first attempt of every request
    clock = Clock()
    seen: list[str] = []

    def handle(request: httpx2.Request) -> httpx2.Response:
        seen.append(request.headers["Idempotency-Key"])
        if len(seen) % 2 == 1:
            return httpx2.Response(503, json={"title": "busy", "status": 503})
        body = json.loads(request.content)
        return httpx2.Response(202, json={"id": f"op-{len(seen):012d}", "kind": "instance_group.scale",
                                          "status": "PENDING", "steps": [], "version": 0, **body})

    gw = gateway(clock, handle)
    args = {"cluster": "c", "group": "g", "instance_count": 2}

    first = call(gw, "scale_instance_group", args)
    second = call(gw, "scale_instance_group", args)

    # Then each tool call's retry carried that call's key; the second call (same arguments) a new one
    assert not first.is_error and not second.is_error
    assert seen[0] == seen[1] and seen[2] == seen[3] and seen[0] != seen[2]
    assert first.structured is not None and second.structured is not None
    assert first.structured["id"] != second.structured["id"]


def test_an_explicit_key_is_sent_as_is() -> None:
    clock = Clock()
    seen: list[str] = []

    def handle(request: httpx2.Request) -> httpx2.Response:
        seen.append(request.headers["Idempotency-Key"])
        return httpx2.Response(202, json={"id": "op-000000000001", "status": "PENDING", "steps": [], "version": 1})

    gw = gateway(clock, handle)
    for _ in range(2):
        call(gw, "retry_operation", {"operation_id": OP_ID, "idempotency_key": "mine-1"})

    assert seen == ["mine-1", "mine-1"]


@pytest.mark.parametrize("status", [500, 400])
def test_other_errors_are_not_retried(status: int) -> None:
    clock = Clock()
    seen: list[str] = []

    def handle(request: httpx2.Request) -> httpx2.Response:
        seen.append(request.headers["Idempotency-Key"])
        return httpx2.Response(status, json={"title": "no", "status": status})

    result = call(gateway(clock, handle), "retry_operation", {"operation_id": OP_ID})

    assert result.is_error and len(seen) == 1
    if status == 500:
        assert f'idempotency_key="{seen[0]}"' in result.text  # how to retry safely


def test_a_connection_error_is_retried_with_the_same_key_and_finally_says_which_key_to_reuse() -> None:
    clock = Clock()
    seen: list[str] = []

    def handle(request: httpx2.Request) -> httpx2.Response:
        seen.append(request.headers["Idempotency-Key"])
        raise httpx2.ConnectError("refused", request=request)

    result = call(gateway(clock, handle), "retry_operation", {"operation_id": OP_ID})

    assert result.is_error and len(seen) == 3 and len(set(seen)) == 1
    assert f'call again with the same idempotency_key="{seen[0]}"' in result.text
    assert clock.sleeps == list(server.RETRY_DELAYS)
