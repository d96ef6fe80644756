"""Test-session wiring shared by every layer."""

from __future__ import annotations

from typing import Any

import pytest


def _group(nodeid: str) -> str:
    """A test's work unit under `pytest -n 2 --dist loadgroup` (make test): its file, so module fixtures run once
    and a file's tests run in order on one worker; the whole infra layer is one unit, so the CDK app is
    synthesized once rather than once per worker."""
    path = nodeid.split("::", 1)[0]
    return "infra" if path.startswith("tests/infra/") else path


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        item.add_marker(pytest.mark.xdist_group(_group(item.nodeid)))


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Group by `_group` in the scheduler itself: pytest-xdist 3.8 names a test's group by rewriting its node id
    (`item._nodeid`), which pytest 9 no longer reads, so `xdist_group` marks alone group nothing and a file's
    tests would be spread over both workers (each running the module fixtures again)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class FileGroups(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _group(nodeid)

    return FileGroups(config, log)
