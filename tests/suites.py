"""`make test`'s last stage: its suites run side by side. The Makefile says which start at once, which wait for
another (`NAME<AFTER=...`), and at what priority each runs (nice): the e2e suite, the critical path, ahead of the
others, which fill the cores it leaves idle while it waits on a sandbox's clock.

Each suite's lines are printed as they come, prefixed with its name; the run ends with each suite's result, wall
time and CPU time (what it cost the shared cores), and fails when any failed (all always run to the end: one red
suite does not hide another's). A failed suite's failure lines (pytest's FAILED/ERROR summary, node's `not ok`,
vitest's FAIL) are repeated under its result: whoever reads only the end of the output (CI shows a tail) still sees
which tests failed.

    python -m tests.suites "e2e=<command>" "checks=<command>" "unit<checks=<command>" [...]

`NAME<AFTER=COMMAND` starts NAME once the suite AFTER (named before it) has ended, whatever its result.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

# pytest's short summary, node --test's TAP, vitest's file and test lines
FAILURE_LINE = re.compile("^\\s*(FAILED \\S|ERROR \\S|not ok |FAIL |\u00d7 )".encode())  # not "ERROR    logger:"
MAX_FAILURE_LINES = 30
COLOUR = re.compile(rb"\x1b\[[0-9;]*m")  # vitest colours its lines even into a pipe


@dataclass
class Suite:
    name: str
    command: str
    after: str | None = None
    started: float = 0.0
    returncode: int | None = None
    seconds: float = 0.0
    cpu: float = 0.0  # user + system seconds of the suite's processes (those its command waited for)
    failures: list[bytes] = field(default_factory=list)
    ended: threading.Event = field(default_factory=threading.Event)


def _run_one(suite: Suite, after: Suite | None, lock: threading.Lock) -> None:
    if after is not None:
        after.ended.wait()
    suite.started = time.monotonic()
    # A shell: the commands come from the Makefile (never from a user), and they `cd` and set variables.
    proc = subprocess.Popen(["bash", "-c", suite.command], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.stdout is not None
    prefix = f"[{suite.name}] ".encode()
    for line in iter(proc.stdout.readline, b""):
        plain = COLOUR.sub(b"", line)
        if FAILURE_LINE.match(plain) and len(suite.failures) < MAX_FAILURE_LINES:
            suite.failures.append(plain.rstrip()[:300])
        with lock:
            sys.stdout.buffer.write(prefix + line)
            sys.stdout.buffer.flush()
    _, status, usage = os.wait4(proc.pid, 0)
    suite.returncode = proc.returncode = os.waitstatus_to_exitcode(status)
    suite.cpu = usage.ru_utime + usage.ru_stime
    suite.seconds = time.monotonic() - suite.started
    suite.ended.set()


def run(suites: list[Suite]) -> int:
    lock = threading.Lock()
    began = time.monotonic()
    by_name = {s.name: s for s in suites}
    threads = [threading.Thread(target=_run_one, args=(s, by_name.get(s.after or ""), lock), daemon=True)
               for s in suites]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("== suites ==")
    for suite in suites:
        verdict = "passed" if suite.returncode == 0 else f"FAILED (exit {suite.returncode})"
        start = (suite.started - began) / 60
        print(f"  {suite.name:10s} {verdict} in {suite.seconds / 60:.1f} min (from {start:.1f}, "
              f"{suite.cpu:.0f} CPU-s): {suite.command}")
        if suite.returncode != 0:
            for line in suite.failures:
                print(f"      {line.decode(errors='replace').strip()}")
    print(f"  all suites in {(time.monotonic() - began) / 60:.1f} min")
    return 0 if all(s.returncode == 0 for s in suites) else 1


def parse(args: list[str]) -> list[Suite]:
    suites: list[Suite] = []
    for arg in args:
        head, sep, command = arg.partition("=")
        name, _, after = head.partition("<")
        if not sep or not name or not command.strip():
            raise SystemExit(f"expected NAME=COMMAND or NAME<AFTER=COMMAND, got {shlex.quote(arg)}")
        if after and after not in {s.name for s in suites}:
            raise SystemExit(f"{name} waits for {after!r}, which is not a suite named before it")
        suites.append(Suite(name=name, command=command, after=after or None))
    return suites


if __name__ == "__main__":
    sys.exit(run(parse(sys.argv[1:])))
