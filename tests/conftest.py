"""Test-session wiring shared by every layer."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Groups for `pytest -n 2 --dist loadgroup` (make test): one file per group, so module fixtures run once,
    and the whole infra layer in one group, so the CDK app is synthesized once rather than once per worker."""
    for item in items:
        path = item.path.as_posix()
        item.add_marker(pytest.mark.xdist_group("infra" if "/tests/infra/" in path else path))
