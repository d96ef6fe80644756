"""The API key gate (functions/assets/podstart_gate.py) run for real in front of a stand-in engine on 127.0.0.1."""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from functions.assets import podstart_gate as gate

KEY = "k3y-" + "x" * 28


class _Engine(BaseHTTPRequestHandler):
    """What vLLM answers: /health, and a chat that streams two chunks; it records the headers it saw."""

    protocol_version = "HTTP/1.1"
    seen: list[dict[str, str]] = []

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        self.seen.append(dict(self.headers.items()))
        body = b"ok"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        self.seen.append(dict(self.headers.items()))
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for part in (b"data: one\n\n", b"data: two\n\n"):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")


@pytest.fixture(scope="module")
def gate_port(monkeypatch_module: pytest.MonkeyPatch) -> Iterator[int]:
    engine = ThreadingHTTPServer(("127.0.0.1", 0), _Engine)
    monkeypatch_module.setattr(gate, "UPSTREAM_PORT", engine.server_address[1])
    front = gate.serve(KEY, port=0)
    for s in (engine, front):
        threading.Thread(target=s.serve_forever, daemon=True).start()
    yield int(front.server_address[1])
    front.shutdown()
    engine.shutdown()


@pytest.fixture(scope="module")
def monkeypatch_module() -> Iterator[pytest.MonkeyPatch]:
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def _call(port: int, method: str, path: str, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    body = json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode() if method == "POST" else None
    conn.request(method, path, body=body, headers={**({"Content-Type": "application/json"} if body else {}),
                                                   **(headers or {})})
    resp = conn.getresponse()
    out = resp.status, resp.read()
    conn.close()
    return out


def test_no_key_no_chat_and_the_engine_never_sees_the_request(gate_port: int) -> None:
    _Engine.seen.clear()
    status, body = _call(gate_port, "POST", "/v1/chat/completions")
    assert status == 401 and b"API key" in body and _Engine.seen == []
    assert _call(gate_port, "POST", "/v1/chat/completions", {"Authorization": "Bearer wrong"})[0] == 401
    assert _call(gate_port, "GET", "/v1/models", {"X-Api-Key": KEY[:-1]})[0] == 401


def test_the_key_in_either_header_streams_the_answer_and_is_not_passed_on(gate_port: int) -> None:
    _Engine.seen.clear()
    for headers in ({"Authorization": f"Bearer {KEY}"}, {"X-Api-Key": KEY}):
        status, body = _call(gate_port, "POST", "/v1/chat/completions", headers)
        assert (status, body) == (200, b"data: one\n\ndata: two\n\n")
    assert len(_Engine.seen) == 2
    assert not any(k.lower() in ("authorization", "x-api-key") for h in _Engine.seen for k in h)


def test_probes_pass_without_a_key(gate_port: int) -> None:
    assert _call(gate_port, "GET", "/health") == (200, b"ok")
