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
from dataclasses import dataclass
from typing import Any, Protocol

LOG = logging.getLogger("sandbox.aws")
ACCOUNT_ID = "123456789012"


class KubeRegistry(Protocol):
    def add_cluster(self, name: str, version: str | None = None) -> str: ...

    def version_of(self, cluster: str) -> str: ...

    def remove_cluster(self, name: str) -> None: ...

    def store_or_none(self, name: str) -> Any: ...

    def cluster_of(self, url: str) -> str | None: ...


class ResourceMissing(LookupError):
    """A sandbox control named an AWS resource that does not exist."""


@dataclass(frozen=True)
class ArmedFailure:
    """The next create (or update) of a matching resource lands in a failed state, part-way through."""

    service: str  # sagemaker | eks | fsx
    resource: str  # cluster | addon | file_system
    region: str
    when: str  # next_create | next_update
    status: str
    reason: str
    cluster: str | None = None
    addon: str | None = None
    code: str | None = None

    def matches(self, service: str, resource: str, region: str, when: str, cluster: str | None,
                addon: str | None) -> bool:
        return (
            (self.service, self.resource, self.region, self.when) == (service, resource, region, when)
            and self.cluster in (None, cluster)
            and self.addon in (None, addon)
        )


class Runtime:
    def __init__(self) -> None:
        self.lock = threading.RLock()  # guards the extensions' stores and moto objects they mutate
        self.time_scale = 60.0
        self.kube: KubeRegistry | None = None
        self.public_url = ""  # the sandbox's one port (presigned MLflow links point at its /sandbox/mlflow pages)
        self.lambda_handlers: dict[str, Callable[[dict[str, Any], Any], Any]] = {}
        self._timers: set[threading.Timer] = set()
        self._timers_lock = threading.Lock()
        self._armed: list[ArmedFailure] = []

    # armed failures (the sandbox's POST /v1/sandbox/states with "when": "next_create") ----------
    def arm(self, failure: ArmedFailure) -> None:
        with self.lock:
            self._armed.append(failure)

    def take_armed(self, service: str, resource: str, region: str, when: str, *, cluster: str | None = None,
                   addon: str | None = None) -> ArmedFailure | None:
        """The first armed failure matching this create/update, removed (each fires once); else None."""
        with self.lock:
            for failure in self._armed:
                if failure.matches(service, resource, region, when, cluster, addon):
                    self._armed.remove(failure)
                    return failure
        return None

    def armed(self) -> list[ArmedFailure]:
        with self.lock:
            return list(self._armed)

    def disarm(self) -> None:
        with self.lock:
            self._armed.clear()

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
