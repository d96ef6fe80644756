"""`make test`'s last stage: its suites (lint, the template check, unit/functional/infra, the UI's tests, the e2e
suite with a sandbox per worker, the browser suite with a sandbox per file) run side by side. The e2e and browser
suites spend most of their time waiting on a sandbox's clock or a browser, so together they all use the two cores
that any one of them alone leaves half idle.

Each suite's lines are printed as they come, prefixed with its name; the run ends with each suite's result and
wall time, and fails when either failed (both always run to the end: one red suite does not hide the other's).

    python -m tests.suites "e2e=<command>" "browser=<command>" [...]
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field


@dataclass
class Suite:
    name: str
    command: str
    started: float = field(default_factory=time.monotonic)
    returncode: int | None = None
    seconds: float = 0.0


def _pump(suite: Suite, proc: subprocess.Popen[bytes], lock: threading.Lock) -> None:
    assert proc.stdout is not None
    prefix = f"[{suite.name}] ".encode()
    for line in iter(proc.stdout.readline, b""):
        with lock:
            sys.stdout.buffer.write(prefix + line)
            sys.stdout.buffer.flush()
    suite.returncode = proc.wait()
    suite.seconds = time.monotonic() - suite.started


def run(suites: list[Suite]) -> int:
    lock = threading.Lock()
    pumps = []
    for suite in suites:
        # A shell: the commands come from the Makefile (never from a user), and they `cd` and set variables.
        proc = subprocess.Popen(["bash", "-c", suite.command], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        pump = threading.Thread(target=_pump, args=(suite, proc, lock), daemon=True)
        pump.start()
        pumps.append(pump)
    for pump in pumps:
        pump.join()
    print("== suites ==")
    for suite in suites:
        verdict = "passed" if suite.returncode == 0 else f"FAILED (exit {suite.returncode})"
        print(f"  {suite.name:10s} {verdict} in {suite.seconds / 60:.1f} min: {suite.command}")
    return 0 if all(s.returncode == 0 for s in suites) else 1


def parse(args: list[str]) -> list[Suite]:
    suites = []
    for arg in args:
        name, sep, command = arg.partition("=")
        if not sep or not name or not command.strip():
            raise SystemExit(f"expected NAME=COMMAND, got {shlex.quote(arg)}")
        suites.append(Suite(name=name, command=command))
    return suites


if __name__ == "__main__":
    sys.exit(run(parse(sys.argv[1:])))
