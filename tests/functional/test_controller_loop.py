"""The sandbox's controller loop runs a cluster's simulated controllers when something happened in it or a wait
they started comes due, not on every tick: an idle sandbox costs next to nothing, and nothing reacts later."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from sandbox.kube.operators import base
from sandbox.kube.operators import loop as loop_module
from sandbox.kube.operators.base import ReconcileContext
from sandbox.kube.operators.loop import ControllerLoop
from sandbox.kube.store import ClusterStore

CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}}


class Clock:
    """The loop's and the contexts' monotonic clock, moved by the test: no test depends on how fast the machine is."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture(autouse=True)
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    c = Clock()
    fake = SimpleNamespace(monotonic=c.monotonic)
    monkeypatch.setattr(loop_module, "time", fake)
    monkeypatch.setattr(base, "time", fake)
    return c


def loop_with(store: ClusterStore, *reconcilers: object, full_every: float = 60.0) -> ControllerLoop:
    return ControllerLoop(lambda: [store], list(reconcilers), time_scale=1.0, full_every=full_every)  # type: ignore[arg-type]


def test_an_idle_cluster_is_left_alone_until_an_object_or_a_log_line_changes() -> None:
    store, runs = ClusterStore("idle"), []
    loop = loop_with(store, lambda ctx: runs.append(1))
    for _ in range(5):
        loop.tick()
    assert len(runs) == 1  # the first look, then nothing happened
    store.create(dict(CM))
    loop.tick()
    loop.tick()
    assert len(runs) == 2
    store.append_log("default", "p", "step 1\n")
    loop.tick()
    assert len(runs) == 3


def test_what_a_reconciler_writes_makes_the_next_tick_run_until_nothing_changes() -> None:
    store, runs = ClusterStore("chain"), []

    def make_three(ctx: ReconcileContext) -> None:  # a Deployment -> ReplicaSet -> Pod chain, one step a tick
        runs.append(1)
        have = ctx.store.count("v1", "ConfigMap")
        if have < 3:
            ctx.store.create({**CM, "metadata": {"name": f"c{have}", "namespace": "default"}})

    loop = loop_with(store, make_three)
    for _ in range(8):
        loop.tick()
    assert store.count("v1", "ConfigMap") == 3 and len(runs) == 4  # three writes, one look that wrote nothing


def test_a_wait_brings_the_controller_back_when_it_is_due_and_not_before(clock: Clock) -> None:
    store, seen = ClusterStore("wait"), []
    store.create(dict(CM))

    def ready_after_a_while(ctx: ReconcileContext) -> None:
        obj = ctx.store.get("v1", "ConfigMap", "c", "default")
        assert obj is not None
        seen.append(ctx.waited(obj, 0.3, "ready"))

    loop = loop_with(store, ready_after_a_while)
    loop.tick()
    loop.tick()
    clock.sleep(0.29)
    loop.tick()
    assert seen == [False]  # waiting: not asked again before it is due
    clock.sleep(0.02)
    loop.tick()
    loop.tick()
    assert seen == [False, True]


def test_every_cluster_is_looked_at_now_and_then_whatever_happened(clock: Clock) -> None:
    store, runs = ClusterStore("net"), []
    loop = loop_with(store, lambda ctx: runs.append(1), full_every=0.2)
    loop.tick()
    clock.sleep(0.19)
    loop.tick()
    assert len(runs) == 1
    clock.sleep(0.02)
    loop.tick()
    assert len(runs) == 2
