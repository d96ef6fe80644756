"""A cluster create's Step Functions transitions (issue #29: <= 30 at realistic durations), counted from its
execution history on the session's sandbox (AWS durations scaled uniformly: EKS ~10 min, HyperPod ~20 min).

The HyperPod wait is one task-token wait its state change event ends (or its slow poll); the EKS wait looks once
near its expected end instead of backing off from 10 s; no other step polls more than once or twice."""

from __future__ import annotations

import uuid
from typing import Any

from tests.transitions import CREATE_GOAL, states_entered


def test_a_cluster_create_takes_at_most_30_transitions(api: Any, sandbox: Any) -> None:
    name = f"trans-{uuid.uuid4().hex[:6]}"
    r = api.post("/v1/clusters", json={"name": name, "region": "us-west-2", "instance_groups": [
        {"name": "cpu", "instance_type": "ml.c5.large", "instance_count": 1, "availability_zone": "us-west-2a"}]})
    assert r.status_code == 202, r.text
    op = api.wait_terminal(r.json()["id"])
    assert op["status"] == "SUCCEEDED", op
    assert [s["status"] for s in op["steps"]] == ["SUCCEEDED"] * 5  # every step still a visible, recorded phase
    states = states_entered(sandbox, op)
    assert sum(states.values()) <= CREATE_GOAL, states
    assert states["hyperpod_cluster~event"] == 1 and states["hyperpod_cluster~wait"] == 0, states
    assert states["eks_control_plane~wait"] <= 2, states
    assert all(states[s] == 1 for s in ("Begin", "Finish")), states
    d = api.http.delete(f"/v1/clusters/{name}", params={"confirm": name})
    assert d.status_code == 202 and api.wait_terminal(d.json()["id"])["status"] == "SUCCEEDED"
