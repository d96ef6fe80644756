"""make test's suite runner: suites side by side, one may wait for another, every result reported."""

from __future__ import annotations

import sys

import pytest

from tests import suites


def test_a_suite_that_waits_starts_when_the_other_ended_and_a_red_one_fails_the_run(
        capsys: pytest.CaptureFixture[str]) -> None:
    run = suites.parse(["first=sleep 0.3; echo one", "second<first=echo two; exit 3", "third=echo three"])
    assert suites.run(run) == 1
    first, second, third = run
    assert second.started >= first.started + first.seconds - 0.05  # it waited for first to end
    assert third.started < first.started + 0.2  # the others did not wait
    out = capsys.readouterr().out
    assert "[first] one" in out and "[second] two" in out and "[third] three" in out
    assert "second     FAILED (exit 3)" in out and "first      passed" in out


@pytest.mark.parametrize("arg", ["noequals", "=echo", "x=  ", "x<later=echo"])
def test_a_malformed_suite_or_an_unknown_wait_is_refused(arg: str) -> None:
    with pytest.raises(SystemExit):
        suites.parse([arg])


def test_a_red_suites_failure_lines_are_repeated_under_its_result_a_green_ones_are_not(
        capsys: pytest.CaptureFixture[str]) -> None:
    red = ("printf 'FAILED tests/a.py::test_one - assert 1 == 2\\nnoise\\nERROR    tracer:tracer.py:360 a log line\\n"
           "not ok 3 - a walk\\n\\033[31m   \\033[31m\u00d7\\033[31m a coloured vitest line\\033[39m\\n'; exit 1")
    run = suites.parse([f"red={red}", "green=echo '  not ok 1 - retried, then passed'"])
    assert suites.run(run) == 1
    summary = capsys.readouterr().out.split("== suites ==")[1].splitlines()
    at = next(i for i, line in enumerate(summary) if "red        FAILED" in line)
    assert [line.strip() for line in summary[at + 1:at + 4]] == ["FAILED tests/a.py::test_one - assert 1 == 2",
                                                                 "not ok 3 - a walk", "\u00d7 a coloured vitest line"]
    assert not any(line.strip().startswith("not ok 1") for line in summary)


def test_each_suite_reports_the_cpu_its_processes_spent_not_its_wall_time(capsys: pytest.CaptureFixture[str]) -> None:
    busy = f"{sys.executable} -c 'sum(range(30_000_000))'"
    idle, burner = suites.parse(["idle=sleep 0.5", f"busy={busy}"])
    assert suites.run([idle, burner]) == 0
    assert idle.cpu < 0.2 and burner.cpu > 0.3
    assert f"{burner.cpu:.0f} CPU-s)" in capsys.readouterr().out
