"""The workflow table loads a kind's module with its first lookup: the steps and events functions start without
importing every workflow (and the Kubernetes client behind them), and no listed workflow is missing."""

from __future__ import annotations

import subprocess
import sys

import pytest

from functions.domain.kinds import KINDS
from functions.workflows.registry import WHERE, WORKFLOWS, LazyWorkflows


def test_every_listed_kind_loads_the_workflow_of_that_kind() -> None:
    assert set(WORKFLOWS) == set(KINDS)  # every kind the API starts has a workflow, and only those
    for kind in WHERE:
        assert WORKFLOWS[kind].kind == kind
    assert WORKFLOWS.get("no.such-kind") is None


def test_a_kind_listed_against_the_wrong_workflow_fails_loudly() -> None:
    wrong = LazyWorkflows({"cluster.create": ("cluster_delete", "WORKFLOW")})
    with pytest.raises(ValueError, match=r"cluster\.delete, listed as cluster\.create"):
        wrong["cluster.create"]


@pytest.mark.parametrize("entry", ["functions.steps.handler", "functions.events.handler"])
def test_the_entry_loads_no_workflow_module_and_no_kubernetes_client(entry: str) -> None:
    code = (f"import sys, {entry}\n"
            "light = ('functions.workflows.registry', 'functions.workflows.context', 'functions.workflows')\n"
            "heavy = [m for m in sys.modules if (m.startswith('functions.workflows') and m not in light) "
            "or m.startswith(('kubernetes', 'functions.adapters.catalog_aws', 'functions.logic.'))]\n"
            "print(','.join(sorted(heavy)))")
    env = {"OPERATIONS_TABLE": "o", "STATE_TABLE": "s", "IDEMPOTENCY_TABLE": "i", "POWERTOOLS_TRACE_DISABLED": "1",
           "PATH": "/usr/bin:/bin", "PYTHONPATH": ".", "AWS_DEFAULT_REGION": "us-west-2"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == ""
