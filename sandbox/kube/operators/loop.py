"""The controller loop: every registered reconciler, for every cluster, on each tick."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from sandbox.kube.errors import ApiError
from sandbox.kube.operators.base import ReconcileContext, Reconciler
from sandbox.kube.store import ClusterStore

log = logging.getLogger(__name__)


class ControllerLoop:
    """A daemon thread calling each reconciler for each cluster every `interval` seconds."""

    def __init__(
        self,
        stores: Callable[[], list[ClusterStore]],
        reconcilers: list[Reconciler],
        time_scale: float,
        interval: float = 0.05,
    ) -> None:
        self._stores = stores
        self.reconcilers = reconcilers
        self._time_scale = time_scale
        self._interval = interval
        self._stop = threading.Event()
        self._contexts: dict[int, ReconcileContext] = {}
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="kube-controllers", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=5)

    def tick(self) -> None:
        for store in self._stores():
            ctx = self._contexts.setdefault(id(store), ReconcileContext(store, self._time_scale))
            for reconcile in list(self.reconcilers):
                try:
                    reconcile(ctx)
                except ApiError:
                    pass  # raced with a client write; the next tick retries
                except Exception:  # a broken reconciler must not stop the others
                    log.exception("reconciler %s failed", getattr(reconcile, "__name__", reconcile))

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            self.tick()
