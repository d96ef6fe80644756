"""The controller loop: every registered reconciler, for every cluster, on each tick."""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable

from sandbox.kube.errors import ApiError
from sandbox.kube.operators.base import ReconcileContext, Reconciler
from sandbox.kube.store import ClusterStore

log = logging.getLogger(__name__)


class ControllerLoop:
    """A daemon thread that looks every `interval` seconds and runs each reconciler for a cluster whose store
    changed since its reconcilers last ran (an object, or a log line: a reconciler that logged a step starts the
    next step's wait on the next tick), or whose reconcilers asked to look again by now
    (`ReconcileContext.wake_at`), and for every cluster at least every `full_every` seconds (a safety net for a
    reconciler that depends on something else). An idle cluster costs a counter read per tick."""

    def __init__(
        self,
        stores: Callable[[], list[ClusterStore]],
        reconcilers: list[Reconciler],
        time_scale: float,
        interval: float = 0.05,
        full_every: float = 2.0,
    ) -> None:
        self._stores = stores
        self.reconcilers = reconcilers
        self._time_scale = time_scale
        self._interval = interval
        self._full_every = full_every
        self._stop = threading.Event()
        self._contexts: dict[int, ReconcileContext] = {}
        self._seen: dict[int, tuple[tuple[int, int], int, float]] = {}  # store -> (activity, reconcilers, when)
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="kube-controllers", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=5)

    def tick(self, force: bool = False) -> None:
        now = time.monotonic()
        for store in self._stores():
            ctx = self._contexts.setdefault(id(store), ReconcileContext(store, self._time_scale))
            version = store.activity
            seen = self._seen.get(id(store))
            if (not force and seen is not None and seen[:2] == (version, len(self.reconcilers)) and now < ctx.due
                    and now - seen[2] < self._full_every):
                continue
            # Read before running: what the reconcilers write makes the next tick run them again, until a tick
            # writes nothing (a Deployment's ReplicaSet, then its Pods, then their status, ...).
            self._seen[id(store)] = (version, len(self.reconcilers), now)
            ctx.due = math.inf
            for reconcile in list(self.reconcilers):
                try:
                    reconcile(ctx)
                except ApiError:
                    ctx.wake_at(now)  # raced with a client write; the next tick retries
                except Exception:  # a broken reconciler must not stop the others
                    log.exception("reconciler %s failed", getattr(reconcile, "__name__", reconcile))

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            self.tick()
