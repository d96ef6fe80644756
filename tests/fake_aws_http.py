"""A local stand-in for AWS's JSON-protocol services and the REST API's reads, on a free port: what a Lambda bundle run
alone (tests/infra/test_bundle_contents.py) or a cold-start measurement (tests/bench_cold.py) talks to instead of
the network."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeAws(BaseHTTPRequestHandler):
    """Answers every AWS JSON-protocol call with an empty result, recording its target and signature."""

    calls: list[dict[str, str]] = []
    api: dict[str, bytes] = {}  # REST API path -> JSON body, for the MCP gateway's reads

    def do_GET(self) -> None:
        self.calls.append({"target": f"GET {self.path}", "authorization": self.headers.get("Authorization", "")})
        data = self.api.get(self.path.split("?")[0])
        self.send_response(200 if data is not None else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data or b"")))
        self.end_headers()
        self.wfile.write(data or b"")

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        target = self.headers.get("X-Amz-Target", "")
        self.calls.append({"target": target, "authorization": self.headers.get("Authorization", "")})
        body = {"Items": [], "Count": 0, "ScannedCount": 0} if target.endswith((".Query", ".Scan")) else {}
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-amz-json-1.0")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass


@contextmanager
def serving(api: dict[str, bytes]) -> Iterator[str]:
    """Serve `FakeAws` with the REST API paths `api` (path -> JSON body); yields its base URL."""
    FakeAws.api = api
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeAws)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
