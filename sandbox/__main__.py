"""`python -m sandbox` (what `make dev` runs): the whole control plane on one port, no AWS account.

Ctrl-C (SIGINT) or SIGTERM stops it: the server, the embedded AWS and Kubernetes and every timer
they run are stopped, one line says so, and the exit code is 0 (a stop you asked for is not an
error). A second Ctrl-C while stopping leaves at once (exit code 130).
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import sys
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import uvicorn

from sandbox.app import Sandbox, write_tokens

STOP_REQUESTED = threading.Event()
GRACE_S = 3  # open connections (a long poll, a live-events socket) get this long to finish on Ctrl-C


# Idle keep-alive connections stay open longer than clients keep theirs (Node's fetch: 4 s, browsers more), so
# a client never sends a request on a connection the server is closing at that moment (a long poll's client
# reuses its connection right after each answer).
KEEP_ALIVE_S = 75


def main() -> int:
    # Metrics are off in the sandbox; Powertools still warns per invocation that none were published.
    warnings.filterwarnings("ignore", message="No application metrics to publish")
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    t0 = time.monotonic()
    sandbox = Sandbox()
    print("PodStart sandbox: starting the embedded AWS and Kubernetes ...", flush=True)
    # Hold the one port before the embedded services pick theirs, so none of them can take it.
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((sandbox.settings.host, sandbox.settings.port))
    except OSError as exc:
        print(f"PodStart sandbox: cannot listen on {sandbox.base_url}: {exc} (set PODSTART_PORT)", flush=True)
        return 3
    try:
        sandbox.start()  # Ctrl-C while starting: KeyboardInterrupt, handled below like a stop
        token_files = write_tokens(sandbox)
        # uvicorn stops serving on SIGINT/SIGTERM, then raises the signal again once it has shut
        # down: with Python's default handler that is a KeyboardInterrupt and its traceback.
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, _stop_requested)
        config = uvicorn.Config(sandbox.asgi(), host=sandbox.settings.host, port=sandbox.settings.port,
                                log_level="warning", ws="websockets-sansio" if _has_sansio() else "auto",
                                timeout_graceful_shutdown=GRACE_S, timeout_keep_alive=KEEP_ALIVE_S)
        server = _Server(config, sandbox)
        _announce_when_started(server, lambda: _banner(sandbox, token_files, time.monotonic() - t0))
        if not STOP_REQUESTED.is_set():  # a signal in the moment before uvicorn took over
            server.run(sockets=[listener])
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGINT, _force_exit)  # a second Ctrl-C while stopping: leave at once
        signal.signal(signal.SIGTERM, _force_exit)
        sandbox.stop()
        listener.close()
        print("PodStart sandbox stopped.", flush=True)
    return 0


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, sandbox: Sandbox) -> None:
        super().__init__(config)
        self.sandbox = sandbox

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self.sandbox.drain()  # long polls answer now instead of holding the stop for up to 20 s
        await super().shutdown(sockets=sockets)


def _stop_requested(signum: int, frame: object) -> None:
    """Where uvicorn's re-raised SIGINT/SIGTERM lands after its graceful shutdown: main() goes on to
    stop the rest. (Installed before serving, it also keeps asyncio from turning the re-raised
    signal into a KeyboardInterrupt.)"""
    STOP_REQUESTED.set()


def _force_exit(signum: int, frame: object) -> None:
    print("PodStart sandbox stopped (forced).", flush=True)
    os._exit(128 + signum)


def _announce_when_started(server: uvicorn.Server, announce: Callable[[], None]) -> None:
    original_startup = server.startup

    async def startup(sockets: object = None) -> None:
        await original_startup(sockets=sockets)  # type: ignore[arg-type]
        if server.started:
            announce()

    server.startup = startup  # type: ignore[method-assign]


def _banner(sandbox: Sandbox, token_files: dict[str, Path], ready_s: float) -> None:
    host, port = sandbox.settings.host, sandbox.settings.port
    print(f"""
PodStart sandbox is serving on {sandbox.base_url}  (ready in {ready_s:.1f} s)
  Open:        {sandbox.sign_in_url()}
  REST API:    {sandbox.base_url}/v1   (OpenAPI: /v1/openapi.json)
  MCP:         {sandbox.base_url}/mcp
  Live events: ws://{host}:{port}/ws
  Tokens:      admin    {token_files["admin"]}
               operator {token_files["operator"]}  (create, scale, retry; not delete)
               viewer   {token_files["viewer"]}  (read only)
  Embedded AWS endpoint: {sandbox.aws.endpoint}   time scale: {sandbox.settings.time_scale}x
  Everything lives in memory: stopping the sandbox (Ctrl-C) resets it.
""", flush=True)


def _has_sansio() -> bool:
    try:
        import websockets.sansio  # noqa: F401
    except ImportError:
        return False
    return True


def exit_now(code: int) -> None:
    """Leave without the interpreter's teardown: everything is stopped and nothing is kept (the sandbox
    lives in memory), but deallocating the embedded AWS's and Kubernetes' state object by object took
    5-15 s after "stopped" on a loaded 2-core machine, so Ctrl-C seemed to hang. Logs and output are
    flushed first."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    exit_now(main())
