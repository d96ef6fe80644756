"""Following things as they happen: an operation to its end (progress on stderr), and a job's log over the live
socket (the protocol of functions/domain/live.py), falling back to polling the REST logs route."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from rich.live import Live
from rich.markup import escape
from rich.table import Table

from podstart_cli import output
from podstart_cli.client import ApiError, Client
from podstart_cli.config import Settings

ICON = {"PENDING": "[dim]·[/]", "RUNNING": "[yellow]>[/]", "SUCCEEDED": "[green]✓[/]", "FAILED": "[red]✗[/]",
        "SKIPPED": "[dim]-[/]", "CANCELLED": "[red]✗[/]"}


def _steps_table(op: dict[str, Any]) -> Table:
    t = Table(box=None, show_header=False, pad_edge=False)
    t.add_column(width=1)
    t.add_column()
    t.add_column()
    for s in op.get("steps") or []:
        t.add_row(ICON.get(s["status"], "?"), s["name"], escape(s.get("message") or ""))
    status = op["status"]
    t.add_row("", f"[bold]{op['kind']}[/] {op['id']}", f"[bold]{status}[/]")
    return t


def operation(client: Client, op_id: str, timeout: float | None = None) -> dict[str, Any]:
    """Watch an operation to its end: a live step list on a terminal, one line per change otherwise."""
    err = output.err
    if err.is_terminal:
        with Live(_steps_table(client.operation(op_id)), console=err, refresh_per_second=4, transient=False) as live:
            return client.wait_operation(op_id, timeout, on_change=lambda op: live.update(_steps_table(op)))
    seen: dict[str, tuple[str, str]] = {}

    def changed(op: dict[str, Any]) -> None:
        for s in op.get("steps") or []:
            now = (s["status"], s.get("message") or "")
            if seen.get(s["name"]) != now and s["status"] != "PENDING":
                seen[s["name"]] = now
                err.print(f"{op['id']} {s['name']}: {s['status']}" + (f": {escape(now[1])}" if now[1] else ""))

    final = client.wait_operation(op_id, timeout, on_change=changed)
    err.print(f"{final['id']} {final['kind']}: {final['status']}")
    return final


# -- logs ---------------------------------------------------------------------------------------------------------
class SocketUnavailable(Exception):
    pass


def _ws_url(settings: Settings) -> str:
    if settings.ws_url:
        return settings.ws_url
    base = settings.endpoint
    scheme = "wss://" if base.startswith("https://") else "ws://"
    return scheme + base.split("://", 1)[-1] + "/ws"


def follow_socket(settings: Settings, request: dict[str, Any], write: Callable[[list[str]], None]) -> str:
    """Stream the job's log over the live socket until the pod's log ends; returns why it ended. A follow the
    socket bounds (its time limit) is followed again from where it was."""
    from websockets.exceptions import InvalidHandshake, WebSocketException
    from websockets.sync.client import connect
    from websockets.typing import Subprotocol

    url = _ws_url(settings)
    kw: dict[str, Any] = {"open_timeout": 10}
    if settings.ws_url:  # deployed: the $connect authorizer reads the token from the sub-protocol
        kw["subprotocols"] = [Subprotocol("podstart"), Subprotocol(settings.token)]
    else:
        kw["additional_headers"] = {"Authorization": f"Bearer {settings.token}"}
    try:
        ws = connect(url, **kw)
    except (OSError, InvalidHandshake, WebSocketException, TimeoutError) as exc:
        raise SocketUnavailable(f"{url}: {exc}") from None
    with ws:
        try:
            ready = json.loads(ws.recv(timeout=10))
        except (TimeoutError, WebSocketException) as exc:
            raise SocketUnavailable(f"{url}: {exc}") from None
        if ready.get("type") == "error":
            raise SocketUnavailable(f"{url}: {ready.get('detail')}")
        sub = request["id"]
        ws.send(json.dumps(request))
        while True:
            try:
                msg = json.loads(ws.recv())
            except WebSocketException as exc:
                raise SocketUnavailable(f"the socket closed: {exc}") from None
            if msg.get("id") not in (None, sub):
                continue
            kind = msg.get("type")
            if kind == "log":
                write(list(msg.get("lines") or []))
            elif kind == "log_end":
                reason = str(msg.get("reason") or "")
                if reason.startswith("time limit"):
                    ws.send(json.dumps({**request, "tail": 0}))  # the socket's bound: go on where it stopped
                    continue
                return reason
            elif kind == "error":
                status = int(msg.get("status") or 0)
                if status in (429, 500, 502, 503):
                    raise SocketUnavailable(f"{msg.get('title')}: {msg.get('detail')}")
                raise ApiError(status, msg)


def new_lines(before: list[str], now: list[str]) -> list[str]:
    """The lines of `now` after what `before` already showed (the longest overlap of before's end and now's
    start); all of `now` when they do not overlap (more was written than a tail holds)."""
    for k in range(min(len(before), len(now)), 0, -1):
        if before[-k:] == now[:k]:
            return now[k:]
    return now


def poll(client: Client, path: dict[str, str], query: dict[str, Any], write: Callable[[list[str]], None],
         done: Callable[[], bool], every: float = 2.0) -> str:
    shown: list[str] = []
    while True:
        lines = list(client.call("get_job_logs", path, query).body.get("lines") or [])
        fresh = new_lines(shown, lines)
        if fresh:
            write(fresh)
        shown = lines
        if not fresh and done():
            return "the job ended"
        time.sleep(every)
