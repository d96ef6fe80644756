"""The model-pool worker's supervisor (functions/assets/podstart_pool_worker.py), run for real: a fake engine
process stands in for vLLM, the annotations file for the downward API volume the kubelet rewrites."""

from __future__ import annotations

import json
import socket
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from functions.assets import podstart_pool_worker as pw
from functions.domain.inference import manifests as im

# A stand-in engine: records its argv, then answers /health 200 on the port it is given (unless told to hang).
FAKE_ENGINE = """
import http.server, json, sys, time
out, port, hang = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "hang"
open(out, "w").write(json.dumps(sys.argv[4:]))
if hang:
    time.sleep(3600)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b"ok")
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def until(check: Callable[[], Any], timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := check()):
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)
    return value


def annotations_file(path: Path, values: dict[str, str]) -> None:
    # the kubelet's format: key="value", Go-quoted
    path.write_text("\n".join(f"{k}={json.dumps(v)}" for k, v in values.items()) + "\n")


def test_the_downward_api_file_parses_and_only_a_plain_path_is_an_assignment() -> None:
    text = ('kubernetes.io/config.seen="2026-12-04T20:00:00Z"\n'
            'podstart.dev/model-name="Qwen/Qwen3-0.6B"\npodstart.dev/model-path="/data/models/Qwen/Qwen3-0.6B/main"\n')
    parsed = pw.parse_annotations(text)
    assert pw.assignment(parsed) == pw.Assignment("/data/models/Qwen/Qwen3-0.6B/main", "Qwen/Qwen3-0.6B")
    assert pw.assignment({}) is None  # unassigned: warm, no engine
    assert pw.assignment({pw.PATH_KEY: "--trust-remote-code"}) is None  # never an engine flag
    assert pw.assignment({pw.PATH_KEY: "org/m"}) == pw.Assignment("org/m", "org/m")


def test_placeholders_are_replaced_as_whole_arguments_only() -> None:
    template = im.engine_command("vllm", "{model}", "{name}", [])
    argv = pw.engine_argv(template, pw.Assignment("/data/models/a b/main", "a b"))
    assert argv[:3] == ["vllm", "serve", "/data/models/a b/main"]
    assert argv[argv.index("--served-model-name") + 1] == "a b"
    assert pw.engine_argv(["x{model}"], pw.Assignment("p", "n")) == ["x{model}"]


def test_the_manifest_runs_this_script_with_the_engine_template_and_the_annotations_pool_assign_writes() -> None:
    pool = {"name": "warm", "engine": "vllm", "image": "vllm/vllm-openai:v0.10.1", "instance_type": "ml.g5.8xlarge",
            "gpus_per_worker": 1, "workers": 2}
    cm, dep = im.pool_objects(pool, "SCRIPT")
    assert cm["kind"] == "ConfigMap" and cm["data"] == {im.POOL_SCRIPT_KEY: "SCRIPT"}
    assert im.POOL_SCRIPT_KEY == pw.POOL_SCRIPT_NAME
    [c] = dep["spec"]["template"]["spec"]["containers"]
    cmd = c["command"]
    assert cmd[:3] == ["python3", f"/opt/podstart/{im.POOL_SCRIPT_KEY}", "--"]
    assert pw.MODEL_PLACEHOLDER in cmd and pw.NAME_PLACEHOLDER in cmd
    assert c["readinessProbe"]["httpGet"] == {"path": "/health", "port": "health"}
    assert c["livenessProbe"]["httpGet"] == c["startupProbe"]["httpGet"] == {"path": "/live", "port": "health"}
    assert {"name": "health", "containerPort": pw.HEALTH_PORT} in c["ports"]
    podinfo = next(v for v in dep["spec"]["template"]["spec"]["volumes"] if v["name"] == "podinfo")
    assert podinfo["downwardAPI"]["items"] == [{"path": "annotations",
                                                 "fieldRef": {"fieldPath": "metadata.annotations"}}]
    written = im.assigned_model({"source": "s3", "uri": "/data/models/Qwen/Qwen3-0.6B/main/"})
    assert written == {pw.PATH_KEY: "/data/models/Qwen/Qwen3-0.6B/main/", pw.NAME_KEY: "Qwen/Qwen3-0.6B/main"}


@pytest.fixture
def engine(tmp_path: Path) -> dict[str, Any]:
    port = free_port()
    return {"port": port, "argv_file": tmp_path / "argv.json", "ann": tmp_path / "annotations",
            "template": [sys.executable, "-c", FAKE_ENGINE, str(tmp_path / "argv.json"), str(port), "serve",
                         "{model}", "{name}"]}


def test_assign_starts_the_engine_change_restarts_it_release_stops_it_and_a_crash_restarts_it(
        engine: dict[str, Any]) -> None:
    worker = pw.Worker(engine["template"], str(engine["ann"]), f"http://127.0.0.1:{engine['port']}/health")
    try:
        worker.step()  # no annotations yet: warm, nothing runs, ready
        assert worker.engine is None and worker.healthy()

        annotations_file(engine["ann"], {pw.PATH_KEY: "/data/models/a/main", pw.NAME_KEY: "a"})
        worker.step()
        first = worker.engine
        assert first is not None
        until(worker.healthy)  # ready once the engine answers
        assert json.loads(engine["argv_file"].read_text()) == ["/data/models/a/main", "a"]
        worker.step()
        assert worker.engine is first  # nothing changed: the same process

        annotations_file(engine["ann"], {pw.PATH_KEY: "org/b", pw.NAME_KEY: "org/b"})
        worker.step()
        assert first.poll() is not None and worker.engine is not first
        until(lambda: json.loads(engine["argv_file"].read_text() or "[]") == ["org/b", "org/b"])
        until(worker.healthy)

        worker.engine.kill()  # the engine dies: the next step starts it again
        worker.engine.wait()
        worker.step()
        assert worker.engine is not None and worker.engine.poll() is None
        until(worker.healthy)

        engine["ann"].write_text("")  # pool.release removed the annotations
        running = worker.engine
        worker.step()
        assert running.poll() is not None and worker.engine is None and worker.healthy()
    finally:
        worker.stop()


def test_the_probe_port_says_503_while_the_assigned_engine_is_not_serving(engine: dict[str, Any]) -> None:
    template = [*engine["template"]]
    template[template.index("serve")] = "hang"  # loads forever, never answers /health
    worker = pw.Worker(template, str(engine["ann"]), f"http://127.0.0.1:{engine['port']}/health")
    server = pw.serve_health(worker, 0)
    url = f"http://127.0.0.1:{server.server_address[1]}/health"

    def status(path: str = "/health") -> int:
        try:
            with urllib.request.urlopen(url.replace("/health", path), timeout=5) as r:
                return int(r.status)
        except urllib.error.HTTPError as e:
            return int(e.code)

    try:
        worker.step()
        assert status() == 200  # warm
        annotations_file(engine["ann"], {pw.PATH_KEY: "/data/models/a/main", pw.NAME_KEY: "a"})
        worker.step()
        until(engine["argv_file"].exists)
        assert status() == 503  # loading: the Service does not route to it yet
        assert status("/live") == 200  # but the pod is alive: loading a model is no reason to restart it
    finally:
        worker.stop()
        server.shutdown()
