"""Deep health checks: the request model's validation, reading a verdict event, a node's result when an event
is missing, the plan, and the compact MCP view of a finished check."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from functions.domain.nodes.health_checks import HealthCheckStart, node_result, parse_event
from functions.domain.operations import Target
from functions.domain.plans.registry import PLANNERS, PlanInput
from mcp_gateway.views import operation


def test_checks_default_to_both_and_must_come_from_the_set() -> None:
    assert HealthCheckStart(group="workers").checks == ["InstanceStress", "InstanceConnectivity"]
    with pytest.raises(ValidationError) as err:
        HealthCheckStart.model_validate({"group": "workers", "checks": ["CpuBurn"]})
    assert err.value.errors()[0]["loc"][0] == "checks"
    with pytest.raises(ValidationError):
        HealthCheckStart.model_validate({"group": "workers", "checks": ["InstanceStress", "InstanceStress"]})
    with pytest.raises(ValidationError) as err:
        HealthCheckStart.model_validate({"group": "workers", "node_ids": ["node-1"]})
    assert err.value.errors()[0]["loc"][0] == "node_ids"


def test_a_verdict_event_is_read_and_others_are_not() -> None:
    assert parse_event("Deep health check InstanceConnectivity failed on instance i-0abc12345678: EFA down") == (
        "InstanceConnectivity", "i-0abc12345678", False, "EFA down")
    assert parse_event("Deep health check InstanceStress passed on instance i-0abc12345678") == (
        "InstanceStress", "i-0abc12345678", True, None)
    assert parse_event("Instance i-0abc12345678 status changed to Running") is None


def test_a_check_without_its_event_follows_the_label() -> None:
    r = node_result("i-0abc12345678", ["InstanceStress", "InstanceConnectivity"],
                    {"InstanceStress": (True, None)}, "Failed", "EFADeviceDown", "UnschedulablePendingReplacement")
    assert not r.passed
    assert [(c.check, c.passed, c.reason) for c in r.checks] == [
        ("InstanceStress", True, None), ("InstanceConnectivity", False, "EFADeviceDown")]
    assert node_result("i-0abc12345678", ["InstanceStress"], {}, "Passed", None, "Schedulable").passed


def test_the_plan_updates_each_node_for_free_and_warns_it_is_unschedulable() -> None:
    ids = ["i-0aaaaaaaaaaaa", "i-0bbbbbbbbbbbb"]
    draft = PLANNERS["nodes.health_check"](PlanInput(
        kind="nodes.health_check", target=Target(cluster="c", region="us-west-2", resource="nodes"),
        request={"cluster": "c", "group": "workers", "node_ids": ids, "checks": ["InstanceStress"]},
        facts={"nodes": {i: {"group": "workers", "health": "Schedulable"} for i in ids}}))
    assert [(c.action, c.name, c.details["update"]) for c in draft.changes] == [
        ("update", i, "deep health check") for i in ids]
    assert not draft.capacity
    assert any("Unschedulable for about" in w for w in draft.warnings)


def test_the_mcp_view_of_a_finished_check_names_the_failed_nodes() -> None:
    failed = {"check": "InstanceConnectivity", "passed": False, "reason": "EFA down"}
    op = {"id": "op-1", "kind": "nodes.health_check", "status": "SUCCEEDED", "steps": [], "target": {"cluster": "c"},
          "result": {"passed": 1, "failed": 1, "failed_node_ids": ["i-0bad"],
                     "results": [{"node_id": "i-0ok", "passed": True, "checks": []},
                                 {"node_id": "i-0bad", "passed": False,
                                  "checks": [failed]}]}}
    assert operation(op)["results"] == {"passed": 1, "failed": 1, "failed_nodes": [
        {"node_id": "i-0bad", "failed": ["InstanceConnectivity: EFA down"]}]}
    assert "results" not in operation({**op, "kind": "nodes.reboot"})
