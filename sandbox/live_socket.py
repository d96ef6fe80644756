"""The sandbox's /ws after sign-in: `podstart` bus events and live log follows on one socket
(the protocol of functions.domain.live; deployed, the WebSocket API speaks the same).

One writer task sends everything (events and log lines arrive from other threads through one queue); each
follow runs functions.logic.live_logs.run on its own thread and is closed when the client unfollows or the
socket goes (no follow outlives its socket); one user holds at most MAX_FOLLOWS_PER_USER follows at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from dataclasses import dataclass, field
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect

from functions.domain import live
from functions.domain.errors import Problem
from functions.domain.ports import LogStream
from sandbox.events_feed import EventFeed

LOG = logging.getLogger("podstart.sandbox.ws")


@dataclass
class _Running:
    stream: LogStream | None = None
    stopped: threading.Event = field(default_factory=threading.Event)

    def stop(self) -> None:
        self.stopped.set()
        if self.stream is not None:
            self.stream.close()


class LiveSockets:
    def __init__(self, feed: EventFeed) -> None:
        self.feed = feed
        self._lock = threading.Lock()
        self._per_user: dict[str, int] = {}

    def follows_of(self, sub: str) -> int:
        with self._lock:
            return self._per_user.get(sub, 0)

    def _take(self, sub: str) -> bool:
        with self._lock:
            if self._per_user.get(sub, 0) >= live.MAX_FOLLOWS_PER_USER:
                return False
            self._per_user[sub] = self._per_user.get(sub, 0) + 1
            return True

    def _give_back(self, sub: str) -> None:
        with self._lock:
            self._per_user[sub] = max(0, self._per_user.get(sub, 0) - 1)

    async def serve(self, websocket: WebSocket, user: str) -> None:
        loop = asyncio.get_running_loop()
        out: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=5000)
        follows: dict[str, _Running] = {}
        sub = self.feed.subscribe()  # before "ready": nothing published after it is missed

        def put(msg: dict[str, Any]) -> None:  # from any thread
            with contextlib.suppress(RuntimeError):  # the loop closed with the socket
                loop.call_soon_threadsafe(out.put_nowait, msg)

        async def events() -> None:
            while True:
                await out.put({"type": "event", **await sub[1].get()})

        async def writer() -> None:
            while True:
                await websocket.send_json(await out.get())

        def follow(msg: live.FollowLogs, running: _Running) -> None:
            from functions.api.deps import services
            from functions.logic import live_logs

            try:
                target = live_logs.open_follow(services(), msg)
                if running.stopped.is_set():
                    return

                def opened(stream: LogStream) -> None:
                    running.stream = stream
                    if running.stopped.is_set():
                        stream.close()

                live_logs.run(target, put, opened=opened, stopped=running.stopped.is_set)
            except Problem as exc:
                put(live.error(msg.id, exc.status, exc.title, exc.detail, exc.errors or None))
            except Exception as exc:
                LOG.warning("log follow %s failed: %s", msg.id, exc)
                put(live.error(msg.id, 502, "Log unavailable", f"the pod's log could not be followed: {exc}"))
            finally:
                if follows.get(msg.id) is running:
                    follows.pop(msg.id, None)
                self._give_back(user)

        await out.put({"type": "ready"})
        tasks = [asyncio.create_task(events()), asyncio.create_task(writer())]
        try:
            while True:
                raw = await websocket.receive_text()
                try:
                    msg = live.parse(raw)
                except live.BadMessage as bad:
                    await out.put(bad.problem)
                    continue
                if isinstance(msg, live.Unfollow):
                    running = follows.pop(msg.id, None)
                    if running is None:
                        await out.put(live.log_end(msg.id, "not followed"))
                    else:
                        running.stop()
                    continue
                if msg.id in follows:
                    follows.pop(msg.id).stop()  # following again under one id replaces the stream
                if not self._take(user):
                    await out.put(live.too_many(msg.id))
                    continue
                running = _Running()
                follows[msg.id] = running
                threading.Thread(target=follow, args=(msg, running), name=f"ws-follow-{msg.id}",
                                 daemon=True).start()
                if any(t.done() for t in tasks):
                    break
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            for running in list(follows.values()):
                running.stop()
            for t in tasks:
                t.cancel()
            self.feed.unsubscribe(sub)
