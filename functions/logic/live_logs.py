"""Live log follows for the socket (the sandbox's /ws; deployed, the WebSocket API's follower): which pod a
follow reads (the same rules as GET .../jobs/{job}/logs), and the loop that turns its log stream into
messages within the protocol's bounds (functions.domain.live)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from functions.domain import live
from functions.domain.ports import ClusterKube, LogStream
from functions.logic.clusters.views import find_record
from functions.logic.deps import Deps
from functions.logic.training.jobs import job_pod


@dataclass(frozen=True)
class Follow:
    sub: str
    kube: ClusterKube
    namespace: str
    pod: str
    container: str | None
    tail: int


def open_follow(deps: Deps, msg: live.FollowLogs) -> Follow:
    """Resolve what a follow reads; NotFound (unknown cluster, job, or no pods yet) and InvalidInput (a pod that
    is not the job's, named at ["message", "pod"]) as the REST logs route answers them."""
    rec = find_record(deps, msg.cluster, msg.region)
    pod = job_pod(deps, rec, msg.job, msg.namespace, msg.pod, where=("message", "pod"))
    return Follow(sub=msg.id, kube=deps.kube(rec.eks_cluster_name, rec.region), namespace=msg.namespace, pod=pod,
                  container=msg.container, tail=msg.tail)


def run(follow: Follow, send: Callable[[dict[str, Any]], None], opened: Callable[[LogStream], None] | None = None,
        stopped: Callable[[], bool] = lambda: False, max_seconds: float = live.MAX_FOLLOW_SECONDS,
        clock: Callable[[], float] = time.monotonic) -> str:
    """Stream the pod's log to `send` as `log` messages (whole lines, at most MAX_LINES_PER_MESSAGE each) until
    the log ends or the stream is closed (via `opened`, the caller gets it to close; `stopped` then says it did),
    or `max_seconds` pass
    (checked as lines arrive: a silent pod is ended by its caller closing the stream). Sends the `log_end` and
    answers its reason."""
    stream = follow.kube.follow_logs(follow.namespace, follow.pod, follow.container, follow.tail)
    if opened is not None:
        opened(stream)
    lines = live.Lines()
    started, reason = clock(), "the pod's log ended (its container stopped)"
    try:
        while True:
            try:
                chunk = stream.read()
            except OSError:
                reason = "stopped"
                break
            if not chunk:
                break
            batch = lines.feed(chunk.decode("utf-8", "replace"))
            for i in range(0, len(batch), live.MAX_LINES_PER_MESSAGE):
                send(live.log(follow.sub, follow.pod, follow.container, batch[i:i + live.MAX_LINES_PER_MESSAGE]))
            if clock() - started > max_seconds:
                reason = "time limit: follow again to go on"
                break
    finally:
        stream.close()
    if stopped():
        reason = "unfollowed"
    if rest := lines.rest():
        send(live.log(follow.sub, follow.pod, follow.container, rest))
    send(live.log_end(follow.sub, reason))
    return reason
