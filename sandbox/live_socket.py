"""The sandbox's /ws after sign-in: `podstart` bus events and live log follows on one socket
(the protocol of functions.domain.live; deployed, the WebSocket API speaks the same).

One writer task sends everything (events and log lines arrive from other threads through one queue); each
follow runs functions.logic.live_logs.run on its own thread and is closed when the client unfollows or the
socket goes (no follow outlives its socket). Fair share (functions.domain.limits, leases in the state store as
deployed): a user holds at most `sockets_per_user` sockets and `follows_per_user` follows, everybody together
`sockets_total` and `follows_total`; past a limit the socket (or the follow) gets a 429 error message with
`retry_after` and the socket closes (1013, try again later), never a hang.
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
from functions.domain.limits import Lease, Leases, Limits, TooMany, refusal
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


SOCKET_SECONDS = 2 * 3600  # a socket's lease (API Gateway closes a WebSocket after 2 hours); renewed per socket
TRY_AGAIN_LATER = 1013  # WebSocket close code


class LiveSockets:
    def __init__(self, feed: EventFeed) -> None:
        self.feed = feed

    @staticmethod
    def _leases() -> tuple[Leases, Limits]:
        from functions.api.deps import services
        from functions.settings import api_settings

        s = services()
        assert s.leases is not None
        return s.leases, api_settings().limits

    def follows_of(self, sub: str) -> int:
        leases, limits = self._leases()
        return leases.held("follow", sub, limits.follows_per_user)

    def sockets_of(self, sub: str) -> int:
        leases, limits = self._leases()
        return leases.held("socket", sub, limits.sockets_per_user)

    def _take(self, sub: str) -> Lease | TooMany:
        leases, limits = self._leases()
        held = leases.hold("follow", sub, limits.follows_per_user, limits.follows_total, live.MAX_FOLLOW_SECONDS)
        return refusal("log follows", held, limits) if isinstance(held, str) else held

    async def admit(self, websocket: WebSocket, user: str) -> Lease | None:
        """The user's share of sockets, or a 429 message and the socket closed (1013)."""
        leases, limits = self._leases()
        held = await asyncio.to_thread(leases.hold, "socket", user, limits.sockets_per_user, limits.sockets_total,
                                       SOCKET_SECONDS)
        if isinstance(held, Lease):
            return held
        await websocket.send_json(live.too_many(None, refusal("live sockets", held, limits)))
        await websocket.close(code=TRY_AGAIN_LATER)
        return None

    async def serve(self, websocket: WebSocket, user: str) -> None:
        lease = await self.admit(websocket, user)
        if lease is None:
            return
        try:
            await self._serve(websocket, user)
        finally:
            leases, _ = self._leases()
            await asyncio.to_thread(leases.release, lease)

    async def _serve(self, websocket: WebSocket, user: str) -> None:
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

        def follow(msg: live.FollowLogs, running: _Running, lease: Lease) -> None:
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
                self._leases()[0].release(lease)

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
                taken = await asyncio.to_thread(self._take, user)
                if isinstance(taken, TooMany):
                    await out.put(live.too_many(msg.id, taken))
                    continue
                running = _Running()
                follows[msg.id] = running
                threading.Thread(target=follow, args=(msg, running, taken), name=f"ws-follow-{msg.id}",
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
