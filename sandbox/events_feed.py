"""Live feed of PodStart's own events (the `podstart` bus) for /ws subscribers."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections import deque
from typing import Any

from functions.adapters import aws

BUS = "podstart"


class EventFeed:
    def __init__(self, keep: int = 500) -> None:
        self._lock = threading.Lock()
        self._subscribers: set[tuple[asyncio.AbstractEventLoop, asyncio.Queue[dict[str, Any]]]] = set()
        self.recent: deque[dict[str, Any]] = deque(maxlen=keep)

    def install(self) -> None:
        aws.register_hook("before-parameter-build.eventbridge.PutEvents", self._on_put_events)

    def _on_put_events(self, params: Any = None, **_: Any) -> None:
        entries = (params or {}).get("Entries", []) if isinstance(params, dict) else []
        for e in entries:
            if e.get("EventBusName") != BUS:
                continue
            with contextlib.suppress(ValueError, TypeError):
                self.publish({"detail_type": e.get("DetailType"), **json.loads(e.get("Detail") or "{}")})

    def publish(self, event: dict[str, Any]) -> None:
        with self._lock:
            self.recent.append(event)
            subs = list(self._subscribers)
        for loop, queue in subs:
            with contextlib.suppress(RuntimeError):  # loop closed
                loop.call_soon_threadsafe(queue.put_nowait, event)

    def subscribe(self) -> tuple[asyncio.AbstractEventLoop, asyncio.Queue[dict[str, Any]]]:
        sub = (asyncio.get_running_loop(), asyncio.Queue[dict[str, Any]](maxsize=1000))
        with self._lock:
            self._subscribers.add(sub)
        return sub

    def unsubscribe(self, sub: tuple[asyncio.AbstractEventLoop, asyncio.Queue[dict[str, Any]]]) -> None:
        with self._lock:
            self._subscribers.discard(sub)
