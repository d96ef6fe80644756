"""PodStart's API key gate: a small reverse proxy in front of a self-managed endpoint's engine (or its router).

A constant script: endpoint.deploy ships this file unchanged in a ConfigMap; when an endpoint names an
`api_key_secret`, the pods its Service selects run it as a second container (`python3 /opt/podstart-gate/
podstart_gate.py`) on GATE_PORT, the port the Service targets, while the engine listens on 127.0.0.1:UPSTREAM_PORT
only. Nothing in it is built from user input; the key comes from the Secret through the environment
(PODSTART_API_KEY) and is never logged.

Why a gate and not the engine's own `--api-key`: vLLM and SGLang read a key only from `Authorization: Bearer`, and
the Kubernetes API server's service proxy (PodStart's invoke path) takes that header for its own authentication
and drops it. The gate accepts the key either way: `Authorization: Bearer <key>` (OpenAI clients) or
`X-Api-Key: <key>` (invoke through the API server). Keys are compared in constant time. The probes' paths
(/health, /health_generate, /ping) pass without a key; everything else answers 401 without the right one.

Responses stream through as the engine writes them (chat completions with `stream: true`).

The sandbox imports `authorized` and `OPEN_PATHS`, so its engine double answers exactly as this gate would.

Stdlib only.
"""

from __future__ import annotations

import hmac
import http.client
import os
import sys
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

GATE_SCRIPT_NAME = "podstart_gate.py"
GATE_PORT = 8000
UPSTREAM_PORT = 8001
KEY_ENV = "PODSTART_API_KEY"
KEY_HEADER = "X-Api-Key"
OPEN_PATHS = frozenset({"/health", "/health_generate", "/ping"})
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailers",
                        "transfer-encoding", "upgrade", "host", "content-length"})
CHUNK = 64 * 1024
UPSTREAM_TIMEOUT_S = 600.0


def offered_key(headers: Mapping[str, str]) -> str | None:
    """The key a caller sent: `X-Api-Key`, else the token of `Authorization: Bearer`."""
    lowered = {k.lower(): v for k, v in headers.items()}
    if lowered.get(KEY_HEADER.lower()):
        return lowered[KEY_HEADER.lower()].strip()
    auth = lowered.get("authorization", "")
    scheme, _, token = auth.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def authorized(path: str, headers: Mapping[str, str], key: str) -> bool:
    """May this request through? Probe paths always; anything else only with the key."""
    if path.split("?", 1)[0] in OPEN_PATHS:
        return True
    offered = offered_key(headers)
    return bool(key) and offered is not None and hmac.compare_digest(offered.encode(), key.encode())


class _Gate(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "podstart-gate"
    key = ""

    def log_message(self, format: str, *args: object) -> None:  # never log requests (they may carry the key)
        return

    def _refuse(self) -> None:
        body = b'{"error": {"message": "Unauthorized: send the endpoint\'s API key (Authorization: Bearer <key>)", ' \
               b'"type": "invalid_request_error", "code": 401}}'
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("WWW-Authenticate", "Bearer")
        self.end_headers()
        self.wfile.write(body)

    def _forward(self) -> None:
        if not authorized(self.path, dict(self.headers.items()), self.key):
            self._refuse()
            return
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items()
                   if k.lower() not in HOP_BY_HOP and k.lower() not in ("authorization", KEY_HEADER.lower())}
        upstream = http.client.HTTPConnection("127.0.0.1", UPSTREAM_PORT, timeout=UPSTREAM_TIMEOUT_S)
        try:
            upstream.request(self.command, self.path, body=body, headers=headers)
            resp = upstream.getresponse()
        except OSError:
            self.send_error(502, "the engine is not answering")
            return
        try:
            self.send_response(resp.status)
            for k, v in resp.getheaders():
                if k.lower() not in HOP_BY_HOP:
                    self.send_header(k, v)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            while chunk := resp.read1(CHUNK):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        finally:
            upstream.close()

    do_GET = do_POST = do_PUT = do_DELETE = _forward


def serve(key: str, port: int = GATE_PORT) -> ThreadingHTTPServer:
    handler = type("Gate", (_Gate,), {"key": key})
    return ThreadingHTTPServer(("0.0.0.0", port), handler)


def main() -> int:
    key = os.environ.get(KEY_ENV, "")
    if not key:
        print(f"{KEY_ENV} is empty: the Secret has no api_key", file=sys.stderr)
        return 2
    serve(key).serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
