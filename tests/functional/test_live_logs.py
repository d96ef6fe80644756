"""live_logs.run on a fake stream: whole lines in bounded messages, and why the follow ended."""

from __future__ import annotations

from typing import Any

from functions.domain import live
from functions.logic import live_logs


class _Stream:
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks, self.closed = list(chunks), False

    def read(self) -> bytes:
        if self.closed:
            raise OSError("closed")
        return self.chunks.pop(0) if self.chunks else b""

    def close(self) -> None:
        self.closed = True


class _Kube:
    def __init__(self, stream: _Stream) -> None:
        self.stream = stream
        self.asked: Any = None

    def follow_logs(self, namespace: str, pod: str, container: str | None, tail: int) -> _Stream:
        self.asked = (namespace, pod, container, tail)
        return self.stream


def _follow(stream: _Stream) -> tuple[live_logs.Follow, _Kube]:
    kube = _Kube(stream)
    return live_logs.Follow(sub="s", kube=kube, namespace="ns", pod="job-0", container=None, tail=5), kube  # type: ignore[arg-type]


def test_lines_arrive_whole_in_bounded_messages_and_the_end_says_why() -> None:
    many = "".join(f"step {i}\n" for i in range(live.MAX_LINES_PER_MESSAGE + 5)).encode()
    stream = _Stream([b"step a\nstep", b" b\n", many, b"last without newline"])
    follow, kube = _follow(stream)
    sent: list[dict[str, Any]] = []
    assert live_logs.run(follow, sent.append).startswith("the pod's log ended")
    assert kube.asked == ("ns", "job-0", None, 5) and stream.closed
    logs = [m["lines"] for m in sent if m["type"] == "log"]
    assert logs[0] == ["step a"] and logs[1] == ["step b"]
    assert [len(x) for x in logs[2:4]] == [live.MAX_LINES_PER_MESSAGE, 5] and logs[-1] == ["last without newline"]
    assert sent[-1] == {"type": "log_end", "id": "s", "reason": sent[-1]["reason"]}


def test_a_closed_follow_says_unfollowed_and_a_long_one_stops_at_its_time_limit() -> None:
    stream = _Stream([b"one\n"] * 3)
    follow, _ = _follow(stream)
    sent: list[dict[str, Any]] = []
    stopped = {"yes": False}

    def send(msg: dict[str, Any]) -> None:
        sent.append(msg)
        if msg["type"] == "log":  # the client unfollows after the first line
            stopped["yes"] = True
            stream.close()

    assert live_logs.run(follow, send, stopped=lambda: stopped["yes"]) == "unfollowed"
    ticks = iter(range(0, 10_000, 100))
    follow, _ = _follow(_Stream([b"x\n"] * 50))
    assert live_logs.run(follow, lambda m: None, max_seconds=250, clock=lambda: next(ticks)).startswith("time limit")
