"""The deployed live socket (API Gateway WebSocket API): connect, disconnect, a client's message, a bus event
for every socket, and one follow's worker. The protocol and bounds are functions.domain.live's, the follow
loop functions.logic.live_logs's: the sandbox's /ws speaks the same through its own transport."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from functions.domain import live
from functions.domain.errors import Problem
from functions.domain.limits import Lease, Leases, Limits, TooMany, refusal
from functions.domain.ports import LiveConnections, LogStream, Poster
from functions.logic.deps import Deps

CHECK_SECONDS = 5.0  # how often a follower checks its follow is still wanted (unfollow, disconnect)


SOCKET_SECONDS = 2 * 3600  # API Gateway closes a WebSocket connection after 2 hours


def connect(store: LiveConnections, leases: Leases, limits: Limits, connection_id: str, sub: str) -> TooMany | None:
    """Admit a connection within the user's and the deployment's share of sockets (the 429 to answer if not)."""
    held = leases.hold("socket", sub, limits.sockets_per_user, limits.sockets_total, SOCKET_SECONDS)
    if isinstance(held, str):
        return refusal("live sockets", held, limits)
    store.add_connection(connection_id, sub, lease=held.to_json())
    return None


def disconnect(store: LiveConnections, leases: Leases, connection_id: str) -> list[str]:
    """Forget the connection and give its share back; its followers see their follow gone and stop."""
    lease = store.lease_of(connection_id)
    gone = store.remove_connection(connection_id)
    leases.release(Lease.from_json(lease))
    return gone


def message(deps: Deps, store: LiveConnections, poster: Poster, start_follower: Callable[[dict[str, Any]], None],
            connection_id: str, sub: str, raw: str, leases: Leases | None = None, limits: Limits | None = None
            ) -> None:
    """One client message: a follow is checked (the job and pod exist, the user's limit) and handed to a
    follower; an unfollow removes the follow (its follower ends it). Errors go back on the socket."""
    try:
        msg = live.parse(raw)
    except live.BadMessage as bad:
        poster.post(connection_id, bad.problem)
        return
    if isinstance(msg, live.Unfollow):
        if not store.remove_follow(connection_id, msg.id):
            poster.post(connection_id, live.log_end(msg.id, "not followed"))
        return
    from functions.logic import live_logs  # a follow's reads (the job, its pods) load with the first follow

    try:
        live_logs.open_follow(deps, msg)  # 404/422 now, on the socket, not in a follower
    except Problem as exc:
        poster.post(connection_id, live.error(msg.id, exc.status, exc.title, exc.detail, exc.errors or None))
        return
    limits = limits or Limits()
    store.remove_follow(connection_id, msg.id)  # following again under one id replaces the stream
    if not store.add_follow(connection_id, sub, msg.id, limits.follows_per_user):
        poster.post(connection_id, live.too_many(msg.id, refusal("log follows", "per user", limits)))
        return
    lease = leases.hold_total("follow", limits.follows_total, live.MAX_FOLLOW_SECONDS + 60) if leases else None
    if leases is not None and lease is None:  # every follower is busy: nobody's follow waits in a queue
        store.remove_follow(connection_id, msg.id)
        poster.post(connection_id, live.too_many(msg.id, refusal("log follows", "in total", limits)))
        return
    start_follower({"connection_id": connection_id, "follow": msg.model_dump(mode="json"),
                    "lease": lease.to_json() if lease else []})


def broadcast(store: LiveConnections, poster: Poster, event: dict[str, Any]) -> int:
    """A `podstart` bus event to every socket; a connection that is gone is forgotten. How many got it."""
    sent = 0
    for connection_id in store.connections():
        if poster.post(connection_id, {"type": "event", **event}):
            sent += 1
        else:
            store.remove_connection(connection_id)
    return sent


def follow(deps: Deps, store: LiveConnections, poster: Poster, connection_id: str, request: dict[str, Any],
           max_seconds: float = live.MAX_FOLLOW_SECONDS, check_seconds: float = CHECK_SECONDS,
           leases: Leases | None = None, lease: list[list[str]] | None = None) -> str:
    """The follower: stream the pod's log to the connection until the log ends, the follow is removed
    (unfollow, disconnect), the socket is gone, or `max_seconds` pass (the client then follows again).
    Removes the follow when it ends; answers why it ended."""
    msg = live.FollowLogs.model_validate(request)
    done = threading.Event()
    gone = threading.Event()
    holder: dict[str, LogStream] = {}

    def send(m: dict[str, Any]) -> None:
        if not gone.is_set() and not poster.post(connection_id, m):
            gone.set()
            stop()

    def stop() -> None:
        done.set()
        if "s" in holder:
            holder["s"].close()

    def opened(stream: LogStream) -> None:
        holder["s"] = stream
        if done.is_set():
            stream.close()

    def watch() -> None:  # an unfollow or a disconnect removes the follow item: end the stream
        while not done.wait(check_seconds):
            if not store.has_follow(connection_id, msg.id):
                stop()

    from functions.logic import live_logs

    watcher = threading.Thread(target=watch, name=f"follow-watch-{msg.id}", daemon=True)
    watcher.start()
    try:
        target = live_logs.open_follow(deps, msg)
        reason = live_logs.run(target, send, opened=opened, stopped=done.is_set, max_seconds=max_seconds)
    except Problem as exc:
        send(live.error(msg.id, exc.status, exc.title, exc.detail, exc.errors or None))
        reason = exc.detail
    finally:
        done.set()
        watcher.join(timeout=check_seconds + 1)
        store.remove_follow(connection_id, msg.id)
        if leases is not None and lease:
            leases.release(Lease.from_json(lease))
    return "socket gone" if gone.is_set() else reason
