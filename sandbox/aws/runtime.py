"""Shared state of the embedded AWS extensions: time scale, timers, kube registry, emitted events.

moto's backends are process-global, so the patches read one process-global runtime; EmbeddedAws
configures it on start. Simulated durations are in AWS seconds and divided by the time scale.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import threading
from collections.abc import Callable
from typing import Any, Protocol

LOG = logging.getLogger("sandbox.aws")
ACCOUNT_ID = "123456789012"


class KubeRegistry(Protocol):
    def add_cluster(self, name: str) -> str: ...

    def remove_cluster(self, name: str) -> None: ...


class Runtime:
    def __init__(self) -> None:
        self.lock = threading.RLock()  # guards the extensions' stores and moto objects they mutate
        self.time_scale = 60.0
        self.kube: KubeRegistry | None = None
        self.lambda_handlers: dict[str, Callable[[dict[str, Any], Any], Any]] = {}
        self._timers: set[threading.Timer] = set()
        self._timers_lock = threading.Lock()

    def after(self, aws_seconds: float, fn: Callable[[], None]) -> None:
        """Run fn once after aws_seconds of simulated time (in a daemon thread)."""

        def run() -> None:
            with self._timers_lock:
                self._timers.discard(timer)
            try:
                with self.lock:
                    fn()
            except Exception:  # a transition failing must not kill the server
                LOG.exception("simulated transition failed")

        timer = threading.Timer(max(aws_seconds, 0.0) / self.time_scale, run)
        timer.daemon = True
        with self._timers_lock:
            self._timers.add(timer)
        timer.start()

    def cancel_timers(self) -> None:
        with self._timers_lock:
            timers, self._timers = list(self._timers), set()
        for t in timers:
            t.cancel()

    def put_event(
        self,
        region: str,
        source: str,
        detail_type: str,
        detail: dict[str, Any],
        resources: list[str] | None = None,
    ) -> None:
        """Put an event on the default bus of region, as the AWS service itself would."""
        from moto.events.models import events_backends

        try:
            events_backends[ACCOUNT_ID][region].put_events(
                [
                    {
                        "Source": source,
                        "DetailType": detail_type,
                        "Detail": json.dumps(detail, default=str),
                        "Resources": resources or [],
                        "EventBusName": "default",
                    }
                ]
            )
        except Exception:
            LOG.exception("emitting %s event failed", detail_type)


RUNTIME = Runtime()


def now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)
