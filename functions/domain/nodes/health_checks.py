"""On-demand deep health checks (operation nodes.health_check): the request, the per-node results, and how a
result is read from what HyperPod reports.

HyperPod's StartClusterHealthCheck runs the checks; while they run a node is DeepHealthCheckInProgress and
labelled `sagemaker.amazonaws.com/deep-health-check-status: InProgress` (and `node-health-status:
Unschedulable`: no pod is scheduled on it). It ends Running with the label `Passed` or `Failed` (then
`fault-type` / `fault-reason` labels, and `node-health-status: UnschedulablePendingReplacement`). Each check's
verdict is a cluster event on the instance: `Deep health check <check> passed|failed on instance <id>[: reason]`.
A node that fails a check is news for the user, not an error of PodStart: the operation succeeds and counts them.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field, field_validator

from functions.domain.nodes.models import MAX_IDS, NODE_ID

Check = Literal["InstanceStress", "InstanceConnectivity"]
CHECKS: tuple[str, ...] = ("InstanceStress", "InstanceConnectivity")
DEEP_CHECK_LABEL = "sagemaker.amazonaws.com/deep-health-check-status"
FAULT_REASON_LABEL = "sagemaker.amazonaws.com/fault-reason"
CHECK_SECONDS = 1800.0  # an on-demand deep health check: tens of minutes at real AWS speed
# HyperPod takes at most 500 instance ids per configuration (botocore model: InstanceIds max 500).
MAX_PER_CALL = 500
_EVENT = re.compile(r"^Deep health check (\w+) (passed|failed) on instance (i-[0-9a-f]+)(?::\s*(.*))?$", re.S)


def _all_checks() -> list[Check]:
    return ["InstanceStress", "InstanceConnectivity"]


class HealthCheckStart(BaseModel):
    """Start deep health checks on a group's nodes (operation nodes.health_check)."""

    model_config = {"extra": "forbid"}

    group: str = Field(pattern=r"^[a-z]([-a-z0-9]{0,30}[a-z0-9])?$", description="Instance group")
    node_ids: list[str] | None = Field(default=None, min_length=1, max_length=MAX_IDS,
                                       description="Default: all")
    checks: list[Check] = Field(default_factory=_all_checks, min_length=1, max_length=2, description="Default: both")

    @field_validator("node_ids")
    @classmethod
    def _ids(cls, ids: list[str] | None) -> list[str] | None:
        if ids is None:
            return None
        bad = [i for i in ids if not re.match(NODE_ID, i)]
        if bad:
            raise ValueError(f"not HyperPod instance ids: {', '.join(bad[:5])} (expected i-0123456789abcdef0)")
        if len(set(ids)) != len(ids):
            raise ValueError("each node once")
        return ids

    @field_validator("checks")
    @classmethod
    def _once(cls, checks: list[str]) -> list[str]:
        if len(set(checks)) != len(checks):
            raise ValueError("each check once")
        return checks


class CheckResult(BaseModel):
    check: str
    passed: bool
    reason: str | None = None


class NodeHealthResult(BaseModel):
    node_id: str
    passed: bool
    checks: list[CheckResult]
    health: str | None = Field(default=None, description="node-health-status after the checks")


def parse_event(description: str) -> tuple[str, str, bool, str | None] | None:
    """(check, instance id, passed, reason) of a deep health check verdict event; None for any other event."""
    m = _EVENT.match(description.strip())
    if m is None:
        return None
    return m.group(1), m.group(3), m.group(2) == "passed", (m.group(4) or None)


def node_result(node_id: str, checks: list[str], verdicts: dict[str, tuple[bool, str | None]],
                label: str | None, fallback_reason: str | None, health: str | None) -> NodeHealthResult:
    """One node's result: each check's verdict event; a check with none follows the node's
    deep-health-check-status label (Passed: passed; otherwise failed, with HyperPod's reason)."""
    out = []
    for check in checks:
        if check in verdicts:
            passed, reason = verdicts[check]
        else:
            passed = label == "Passed"
            reason = None if passed else (fallback_reason or f"deep-health-check-status is {label or 'unknown'}")
        out.append(CheckResult(check=check, passed=passed, reason=reason))
    return NodeHealthResult(node_id=node_id, passed=all(c.passed for c in out), checks=out, health=health)
