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
