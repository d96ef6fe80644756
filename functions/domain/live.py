"""The live socket's protocol (the sandbox's /ws; deployed, the API Gateway WebSocket API): what a client may
send, what it gets back, and the bounds every follow keeps. Pure: no I/O.

A client sends JSON messages:

* `{"action": "follow_logs", "id": "<its own id>", "cluster", "region"?, "job", "namespace"?, "pod"?,
  "container"?, "tail"?}`: stream a job pod's log, starting with its last `tail` lines;
* `{"action": "unfollow", "id"}`: stop that stream.

It receives `{"type": "ready"}` once, `{"type": "event", ...}` for each `podstart` bus event,
`{"type": "log", "id", "pod", "container", "lines": [...]}` as a followed pod writes,
`{"type": "log_end", "id", "reason"}` when a stream stops (the pod ended, the client unfollowed, a bound was
reached), and `{"type": "error", "id"?, "status", "title", "detail", "errors"?}` (RFC 9457 fields) for a
message it cannot act on; the socket stays open.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from functions.domain.catalog import REGION_PATTERN
from functions.domain.identifiers import JOB_NAME as NAME
from functions.domain.tenancy import Namespace

MAX_FOLLOWS_PER_USER = 4  # concurrent log follows one user may hold, across their tabs
MAX_MESSAGE_BYTES = 4096
FLUSH_SECONDS = 0.1  # lines written within this long go out in one message
MAX_LINES_PER_MESSAGE = 200
MAX_LINE_CHARS = 16 * 1024  # a longer line is cut (a progress bar without newlines must not grow a message)
MAX_FOLLOW_SECONDS = 14 * 60  # one follow's life (deployed: a Lambda's); the client follows again after it
SUB_ID = r"^[A-Za-z0-9_-]{1,64}$"
POD = r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$"
CONTAINER = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FollowLogs(_Message):
    action: Literal["follow_logs"]
    id: str = Field(pattern=SUB_ID, description="The client's name for this stream")
    cluster: str = Field(pattern=r"^[a-z]([-a-z0-9]{0,30}[a-z0-9])?$")
    region: str | None = Field(None, pattern=REGION_PATTERN)
    job: str = Field(pattern=NAME)
    namespace: Namespace = "default"
    pod: str | None = Field(None, pattern=POD, description="Default: the job's first pod")
    container: str | None = Field(None, pattern=CONTAINER)
    tail: int = Field(200, ge=0, le=1000, description="Lines of history before the live ones")


class Unfollow(_Message):
    action: Literal["unfollow"]
    id: str = Field(pattern=SUB_ID)


class Token(_Message):
    """The sandbox's sign-in message (deployed, the $connect authorizer reads the token instead)."""

    token: str = Field(max_length=8192)


ClientMessage = Annotated[FollowLogs | Unfollow, Field(discriminator="action")]
_ADAPTER: TypeAdapter[FollowLogs | Unfollow] = TypeAdapter(ClientMessage)


class BadMessage(Exception):
    def __init__(self, problem: dict[str, Any]) -> None:
        super().__init__(problem.get("detail"))
        self.problem = problem


def parse(raw: str | bytes) -> FollowLogs | Unfollow:
    """A client message, validated; BadMessage carries the error to send back (fields named as REST names them)."""
    if len(raw) > MAX_MESSAGE_BYTES:
        raise BadMessage(error(None, 413, "Message too large", f"messages are at most {MAX_MESSAGE_BYTES} bytes"))
    try:
        data = json.loads(raw)
    except ValueError:
        raise BadMessage(error(None, 400, "Bad message", "a message is one JSON object")) from None
    sub = data.get("id") if isinstance(data, dict) and isinstance(data.get("id"), str) else None
    try:
        return _ADAPTER.validate_python(data)
    except ValidationError as exc:
        tag = data.get("action") if isinstance(data, dict) else None
        errors = [{"loc": ["message", *[str(p) for p in (e["loc"][1:] if e["loc"][:1] == (tag,) else e["loc"])]],
                   "msg": e["msg"], "type": e["type"]} for e in exc.errors(include_url=False)]
        detail = "; ".join(f"{'.'.join(e['loc'][1:]) or 'message'}: {e['msg']}" for e in errors)
        raise BadMessage(error(sub, 422, "Invalid message", detail, errors)) from None


def error(sub: str | None, status: int, title: str, detail: str,
          errors: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "error", "status": status, "title": title, "detail": detail}
    if sub is not None:
        out["id"] = sub
    if errors:
        out["errors"] = errors
    return out


def log(sub: str, pod: str, container: str | None, lines: list[str]) -> dict[str, Any]:
    return {"type": "log", "id": sub, "pod": pod, "container": container, "lines": lines}


def log_end(sub: str, reason: str) -> dict[str, Any]:
    return {"type": "log_end", "id": sub, "reason": reason}


def too_many(sub: str | None, problem: Any = None) -> dict[str, Any]:
    """A limit reached (functions.domain.limits.TooMany, or the per-user follows by default): 429 with
    `retry_after` seconds."""
    if problem is None:
        return {**error(sub, 429, "Too many follows", f"at most {MAX_FOLLOWS_PER_USER} log follows at once per user: "
                                                      f"unfollow one (or close a tab) first"), "retry_after": 5}
    return {**error(sub, 429, problem.title, problem.detail), "retry_after": problem.retry_after,
            "limit": problem.extra.get("limit"), "scope": problem.extra.get("scope")}


class Lines:
    """Chunks of a log stream -> whole lines (a line split across chunks waits for its end; an endless line is
    cut at MAX_LINE_CHARS)."""

    def __init__(self) -> None:
        self._partial = ""

    def feed(self, chunk: str) -> list[str]:
        text = self._partial + chunk
        *whole, self._partial = text.split("\n")
        if len(self._partial) > MAX_LINE_CHARS:
            whole.append(self._partial[:MAX_LINE_CHARS])
            self._partial = ""
        return [w[:MAX_LINE_CHARS] for w in whole]

    def rest(self) -> list[str]:
        out, self._partial = ([self._partial] if self._partial else []), ""
        return out
