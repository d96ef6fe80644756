"""`python -m sandbox` (what `make dev` runs) as a process: it starts, prints where each token is,
and Ctrl-C stops it cleanly with one line, every thread and server stopped."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

REPO = Path(__file__).resolve().parents[2]
STOPPED = "PodStart sandbox stopped."


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _port_is_free(port: int) -> bool:
    """Free for a server to listen on again (as the sandbox does, with SO_REUSEADDR: a closed
    connection's TIME_WAIT does not hold the port)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


class Running:
    def __init__(self, proc: subprocess.Popen[str], ports: dict[str, int], state_dir: Path) -> None:
        self.proc, self.ports, self.state_dir = proc, ports, state_dir

    def wait_healthy(self, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        url = f"http://127.0.0.1:{self.ports['PODSTART_PORT']}/healthz"
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.proc.communicate()[0]
            try:
                if httpx.get(url, timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        pytest.fail("the sandbox did not become healthy")

    def interrupt(self, timeout: float = 30) -> tuple[int, str, float]:
        """Ctrl-C: SIGINT to the process; (exit code, everything it printed, seconds to exit)."""
        t0 = time.monotonic()
        self.proc.send_signal(signal.SIGINT)
        try:
            out, _ = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, _ = self.proc.communicate()
            pytest.fail(f"still running {timeout} s after Ctrl-C:\n{out}")
        return self.proc.returncode, out, time.monotonic() - t0


def _start(tmp_path: Path, *argv: str, **extra_env: str) -> Running:
    ports = {k: _free_port() for k in ("PODSTART_PORT", "PODSTART_AWS_PORT", "PODSTART_KUBE_PORT")}
    state_dir = tmp_path / ".podstart"
    env = {**os.environ, **{k: str(v) for k, v in ports.items()}, "PODSTART_STATE_DIR": str(state_dir),
           "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1", **extra_env}
    for key in ("PODSTART_TOKEN", "PODSTART_OPERATOR_TOKEN", "PODSTART_VIEWER_TOKEN", "AWS_ENDPOINT_URL"):
        env.pop(key, None)
    proc = subprocess.Popen([sys.executable, *argv], cwd=tmp_path, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return Running(proc, ports, state_dir)


@pytest.fixture
def started(tmp_path: Path) -> Iterator[Running]:
    running = _start(tmp_path, "-m", "sandbox")
    yield running
    if running.proc.poll() is None:
        running.proc.kill()
        running.proc.communicate()


def test_ctrl_c_stops_the_sandbox_with_one_line_and_no_traceback(started: Running) -> None:
    started.wait_healthy()
    code, out, seconds = started.interrupt()
    assert "Traceback" not in out and "KeyboardInterrupt" not in out, out
    assert code == 0, out
    assert seconds < 8, f"took {seconds:.1f} s to stop"
    assert out.rstrip().splitlines()[-1] == STOPPED, out
    assert out.count(STOPPED) == 1
    # The one port and the embedded AWS and Kubernetes ports are free again.
    assert all(_port_is_free(p) for p in started.ports.values()), started.ports


def test_the_banner_says_where_each_roles_token_is(started: Running) -> None:
    started.wait_healthy()
    _, out, _ = started.interrupt()
    for name in ("token", "operator-token", "viewer-token"):
        path = started.state_dir / name
        assert str(path) in out, out
        assert (path.stat().st_mode & 0o777) == 0o600
    tokens = {name: (started.state_dir / name).read_text().strip()
              for name in ("token", "operator-token", "viewer-token")}
    assert len(set(tokens.values())) == 3
    assert tokens["token"] not in out.replace(f"#token={tokens['token']}", ""), "token printed outside the link"


CREATE = {"name": "inflight", "region": "us-west-2", "instance_groups": [
    {"name": "accel", "instance_type": "ml.g5.8xlarge", "instance_count": 1, "availability_zone": "us-west-2a"}]}


def _admin(running: Running) -> httpx.Client:
    token = (running.state_dir / "token").read_text().strip()
    return httpx.Client(base_url=f"http://127.0.0.1:{running.ports['PODSTART_PORT']}",
                        headers={"Authorization": f"Bearer {token}"}, timeout=30)


def test_ctrl_c_stops_every_thread_the_sandbox_started(tmp_path: Path) -> None:
    """With a cluster creation in flight (a Step Functions execution waiting, simulated AWS timers
    pending), main() returns after Ctrl-C with only the main thread left."""
    script = ("import sys, threading\n"
              "from sandbox.__main__ import exit_now, main\n"
              "code = main()\n"
              "alive = [t.name for t in threading.enumerate() if t is not threading.main_thread()]\n"
              "print('alive threads:', alive)\n"
              "exit_now(code)\n")
    running = _start(tmp_path, "-c", script)
    try:
        running.wait_healthy()
        api = _admin(running)
        op = api.post("/v1/clusters", json=CREATE).json()
        deadline = time.monotonic() + 30
        while api.get(f"/v1/operations/{op['id']}").json()["status"] == "PENDING":
            assert time.monotonic() < deadline
            time.sleep(0.2)
        code, out, seconds = running.interrupt()
    finally:
        if running.proc.poll() is None:
            running.proc.kill()
            running.proc.communicate()
    assert code == 0 and "Traceback" not in out, out
    assert "alive threads: []" in out, out
    assert seconds < 8, f"took {seconds:.1f} s to stop"


def test_ctrl_c_answers_a_long_poll_and_does_not_wait_for_it(tmp_path: Path) -> None:
    """The UI long-polls operations for up to 20 s; Ctrl-C must not wait for that, nor log an error."""
    # Time scale 1: nothing changes for 20 s. After main() returns, the process lives 3 s more, so the
    # released long poll (a daemon thread) reaches the stopped embedded AWS before the process ends.
    linger = ("import sys, time\n"
              "from sandbox.__main__ import exit_now, main\n"
              "code = main()\n"
              "time.sleep(3)\n"
              "exit_now(code)\n")
    started = _start(tmp_path, "-c", linger, PODSTART_TIME_SCALE="1")
    try:
        _long_poll_then_interrupt(started)
    finally:
        if started.proc.poll() is None:
            started.proc.kill()
            started.proc.communicate()


def _settled(api: httpx.Client, op_id: str, quiet: float = 2.0, timeout: float = 60) -> dict[str, Any]:
    """The operation once its version has not moved for `quiet` seconds: its first steps have recorded their phases
    and it waits on AWS (at time scale 1 the NAT gateway's first look is 72 s away), however loaded the machine."""
    deadline = time.monotonic() + timeout
    op = api.get(f"/v1/operations/{op_id}").json()
    since = time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.25)
        now = api.get(f"/v1/operations/{op_id}").json()
        if now["version"] != op["version"]:
            op, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            assert op["status"] == "RUNNING", op
            return dict(op)
    pytest.fail(f"operation {op_id} kept changing for {timeout} s")


def _long_poll_then_interrupt(started: Running) -> None:
    started.wait_healthy()
    api = _admin(started)
    op = _settled(api, api.post("/v1/clusters", json=CREATE).json()["id"])
    answers: list[int] = []

    def long_poll() -> None:
        r = api.get(f"/v1/operations/{op['id']}", params={"wait": 20, "version": op["version"]})
        answers.append(r.status_code)

    poller = threading.Thread(target=long_poll)
    poller.start()
    time.sleep(2.0)  # the poll has reached the server and waits there (its answer is 20 s away)
    code, out, seconds = started.interrupt()
    poller.join(timeout=10)
    assert code == 0 and "Traceback" not in out and "ERROR" not in out, out
    assert seconds < 8 + 3, f"took {seconds:.1f} s to stop"
    assert answers == [503]
