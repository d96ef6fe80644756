"""`python -m sandbox` (what `make dev` runs): the whole control plane on one port, no AWS account."""

from __future__ import annotations

import logging
import signal
import socket
import sys
import time
import warnings

import uvicorn

from sandbox.app import Sandbox, write_tokens


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
    sandbox.start()
    token_files = write_tokens(sandbox)
    config = uvicorn.Config(sandbox.asgi(), host=sandbox.settings.host, port=sandbox.settings.port,
                            log_level="warning", ws="websockets-sansio" if _has_sansio() else "auto")
    server = uvicorn.Server(config)

    def on_started() -> None:
        print(f"""
PodStart sandbox is serving on {sandbox.base_url}  (ready in {time.monotonic() - t0:.1f} s)
  Open:        {sandbox.sign_in_url()}
  REST API:    {sandbox.base_url}/v1   (OpenAPI: /v1/openapi.json)
  MCP:         {sandbox.base_url}/mcp
  Live events: ws://{sandbox.settings.host}:{sandbox.settings.port}/ws
  Tokens:      admin    {token_files["admin"]}
               operator {token_files["operator"]}  (create, scale, retry; not delete)
               viewer   {token_files["viewer"]}  (read only)
  Embedded AWS endpoint: {sandbox.aws.endpoint}   time scale: {sandbox.settings.time_scale}x
  Everything lives in memory: stopping the sandbox (Ctrl-C) resets it.
""", flush=True)

    original_startup = server.startup

    async def startup(sockets: object = None) -> None:
        await original_startup(sockets=sockets)  # type: ignore[arg-type]
        if server.started:
            on_started()

    server.startup = startup  # type: ignore[method-assign]
    signal.signal(signal.SIGTERM, lambda *_: setattr(server, "should_exit", True))
    try:
        server.run(sockets=[listener])
    finally:
        sandbox.stop()
        print("PodStart sandbox stopped.", flush=True)
    return 0


def _has_sansio() -> bool:
    try:
        import websockets.sansio  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    sys.exit(main())
