"""PodStart's model-pool worker: keeps a GPU pod warm and serves whatever model PodStart assigns to it.

A constant script: pool.create ships this file unchanged in a ConfigMap and each pool worker runs it as
`python3 /opt/podstart/podstart_pool_worker.py -- <engine argv with {model} and {name} placeholders>` on the
pool's own engine image (vLLM and SGLang images carry python3). Nothing in it is built from user input.

The pod's annotations reach it through a downward API volume (`/etc/podinfo/annotations`, which the kubelet
rewrites when they change). pool.assign sets `podstart.dev/model-path` (the model under /data, or a Hugging Face
id) and `podstart.dev/model-name` (the name it is served as) while it moves the pod's `podstart.dev/model` label to
the endpoint, so the endpoint's Service selects it; pool.release removes both. Every POLL_SECONDS this worker
compares what is assigned with what runs: it starts the engine (the placeholders replaced by whole arguments, no
shell), stops it (SIGTERM, then SIGKILL after STOP_SECONDS) when the assignment goes, and restarts it when the
assignment changes or the engine exits.

Its own answers on HEALTH_PORT are what the pod's probes read. Readiness, /health: 200 while unassigned (warm,
ready to take a model), 200 when assigned and the engine's /health answers 200, 503 while the engine loads the
model (so the Service routes to it only once it serves). Startup and liveness, /live: 200 whenever this
supervisor answers, so a model that takes minutes to load does not get the pod restarted.

The sandbox imports `assignment`, so it serves the model this same logic would start.

Stdlib only.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import NamedTuple

POOL_SCRIPT_NAME = "podstart_pool_worker.py"
ANNOTATIONS = "/etc/podinfo/annotations"
PATH_KEY = "podstart.dev/model-path"
NAME_KEY = "podstart.dev/model-name"
MODEL_PLACEHOLDER = "{model}"
NAME_PLACEHOLDER = "{name}"
HEALTH_PORT = 8081
ENGINE_HEALTH = "http://127.0.0.1:8000/health"
POLL_SECONDS = 2.0
STOP_SECONDS = 30.0


class Assignment(NamedTuple):
    path: str  # what the engine loads: a directory under /data, or a Hugging Face model id
    name: str  # the model name clients ask for


def parse_annotations(text: str) -> dict[str, str]:
    """The downward API file: one `key="value"` per line, the value quoted as Go's %q does (JSON-compatible for
    the names PodStart writes)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, quoted = line.partition("=")
        if not sep:
            continue
        try:
            value = json.loads(quoted)
        except ValueError:
            value = quoted.strip('"')
        out[key.strip()] = str(value)
    return out


def assignment(annotations: dict[str, str]) -> Assignment | None:
    """What PodStart assigned to this worker, or None (unassigned: warm, the engine stopped)."""
    path, name = annotations.get(PATH_KEY, "").strip(), annotations.get(NAME_KEY, "").strip()
    if not path or path.startswith("-") or any(c in path for c in "\n\r\0"):
        return None
    return Assignment(path=path, name=name or path)


def engine_argv(template: list[str], assigned: Assignment) -> list[str]:
    """The engine's argv: each placeholder argument replaced whole by the assigned path or name."""
    subst = {MODEL_PLACEHOLDER: assigned.path, NAME_PLACEHOLDER: assigned.name}
    return [subst.get(arg, arg) for arg in template]


class Worker:
    """The loop's state: the running engine and what it serves."""

    def __init__(self, template: list[str], annotations_path: str = ANNOTATIONS,
                 engine_health: str = ENGINE_HEALTH) -> None:
        self.template = template
        self.annotations_path = annotations_path
        self.engine_health = engine_health
        self.engine: subprocess.Popen[bytes] | None = None
        self.serving: Assignment | None = None
        self.lock = threading.Lock()

    def wanted(self) -> Assignment | None:
        try:
            with open(self.annotations_path, encoding="utf-8") as f:
                return assignment(parse_annotations(f.read()))
        except OSError:
            return None

    def stop(self) -> None:
        engine, self.engine, self.serving = self.engine, None, None
        if engine is None or engine.poll() is not None:
            return
        engine.terminate()
        try:
            engine.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            engine.kill()
            engine.wait()

    def step(self) -> None:
        """One comparison of what is assigned with what runs, acting on the difference."""
        want = self.wanted()
        with self.lock:
            exited = self.engine is not None and self.engine.poll() is not None
            if want == self.serving and not exited:
                return
            self.stop()
            if want is not None:
                argv = engine_argv(self.template, want)
                print(f"podstart pool worker: serving {want.name} from {want.path}", flush=True)
                self.engine = subprocess.Popen(argv)
                self.serving = want
            else:
                print("podstart pool worker: unassigned, warm", flush=True)

    def healthy(self) -> bool:
        with self.lock:
            if self.serving is None:
                return True  # warm and ready to take a model
            if self.engine is None or self.engine.poll() is not None:
                return False
        try:
            with urllib.request.urlopen(self.engine_health, timeout=2) as r:
                return bool(r.status == 200)
        except OSError:
            return False


def serve_health(worker: Worker, port: int = HEALTH_PORT) -> ThreadingHTTPServer:
    class Health(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            # /live: the supervisor answers (liveness: a model that loads for minutes must not restart the pod);
            # /health: ready to take traffic (readiness)
            ok = self.path == "/live" or (self.path in ("/health", "/healthz") and worker.healthy())
            self.send_response(200 if ok else 503)
            self.end_headers()
            self.wfile.write(b"ok" if ok else b"not serving")

        def log_message(self, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("0.0.0.0", port), Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main(argv: list[str]) -> int:
    if "--" not in argv or argv.index("--") == len(argv) - 1:
        print("usage: podstart_pool_worker.py -- <engine argv with {model} and {name}>", file=sys.stderr)
        return 2
    worker = Worker(argv[argv.index("--") + 1:], os.environ.get("PODSTART_ANNOTATIONS", ANNOTATIONS))
    server = serve_health(worker, int(os.environ.get("PODSTART_HEALTH_PORT", HEALTH_PORT)))
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    while not done.is_set():
        worker.step()
        done.wait(POLL_SECONDS)
    worker.stop()
    server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
