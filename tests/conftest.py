"""Test-session wiring shared by every layer."""

from __future__ import annotations

from typing import Any


def pytest_xdist_make_scheduler(config: Any, log: Any) -> Any:
    """How `pytest -n 2 --dist loadgroup` (make test) shares tests between workers: one file per work unit, so
    module fixtures run once and a file's tests run in order on one worker, and the whole infra layer as one unit,
    so the CDK app is synthesized once rather than once per worker.

    A scheduler of our own rather than `xdist_group` marks: xdist 3.8 groups by a suffix it writes into
    `item._nodeid`, which pytest 9 no longer reads (a node's id is `_id`), so the marks silently grouped nothing
    and files were split across workers."""
    if config.getvalue("dist") not in ("loadgroup", "loadfile"):
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ByFile(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return "tests/infra" if path.startswith("tests/infra/") else path

    return ByFile(config, log)


# The e2e files that take longest (the 20 slowest tests `make test` prints): dealt out first, so no worker is left
# alone with one of them at the end of the run while the others idle.
LONGEST_FIRST = (
    "tests/e2e/test_fuzz_api.py",
    "tests/e2e/test_mcp_agent_script.py",
    "tests/e2e/test_mcp_sandbox.py",
    "tests/e2e/test_specs.py",
    "tests/e2e/test_cli.py",
    "tests/e2e/test_agent_journeys_parts.py",
    "tests/e2e/test_hardening.py",
    "tests/e2e/test_cli_fidelity.py",
    "tests/e2e/test_health_checks.py",
    "tests/e2e/test_plan_vs_run.py",
)


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    # sorted() is stable: within a file, and among files not listed, the collection order stays.
    items[:] = sorted(items, key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))
