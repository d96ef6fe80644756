"""Deleting an instance group: a dry run lists the drain and changes nothing, a PodDisruptionBudget that allows
no disruption fails the operation naming it, once relaxed the delete drains (pods evicted through the Eviction
API, not deleted), removes the group from HyperPod and its nodes from Kubernetes."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.e2e.conftest import eventually, kube_client
from tests.e2e.plan_calls import request_writes, unplanned, writes

GROUP = "sagemaker.amazonaws.com/instance-group-name"


@pytest.fixture(scope="module")
def cluster(api: Any) -> str:
    groups = [
        {"name": "workers", "instance_type": "ml.c5.large", "instance_count": 2, "availability_zone": "us-west-2a"},
        {"name": "system", "instance_type": "ml.c5.large", "instance_count": 1, "availability_zone": "us-west-2b"},
    ]
    return api.make_cluster("gdel", groups, node_recovery="none")


@pytest.fixture(scope="module")
def kube(sandbox: Any, cluster: str) -> Any:
    return kube_client(sandbox, cluster)


def _delete(api: Any, cluster: str, group: str, confirm: str, key: str | None = None, **params: Any) -> Any:
    headers = {"Idempotency-Key": key} if key else {}
    return api.http.delete(f"/v1/clusters/{cluster}/instance-groups/{group}",
                           params={"confirm": confirm, **params}, headers=headers)


def test_delete_drains_respecting_a_pdb_then_removes_the_group(api: Any, aws: Any, sandbox: Any, kube: Any,
                                                               cluster: str) -> None:
    from kubernetes import client

    core, policy = client.CoreV1Api(kube), client.PolicyV1Api(kube)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trainer", "labels": {"app": "trainer"}},
           "spec": {"nodeSelector": {GROUP: "workers"}, "containers": [{"name": "main", "image": "busybox"}]}}
    core.create_namespaced_pod("default", pod)
    eventually(lambda: core.read_namespaced_pod("trainer", "default").status.phase == "Running")
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "keep-trainer"},
           "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "trainer"}}}}
    policy.create_namespaced_pod_disruption_budget("default", pdb)

    # wrong confirm: 422 naming query.confirm, nothing starts
    r = _delete(api, cluster, "workers", "system")
    assert r.status_code == 422 and "query.confirm" in r.text
    # a drain timeout past the drain step's hour: 422 naming it, nothing starts
    r = _delete(api, cluster, "workers", "workers", drain_timeout_s=5000)
    assert r.status_code == 422 and "query.drain_timeout_s" in r.text, r.text
    # unknown group: 404
    assert _delete(api, cluster, "nosuch", "nosuch").status_code == 404

    # dry run: the plan lists the cordons, the eviction, the cluster update, capacity removed; no write
    r = _delete(api, cluster, "workers", "workers", dry_run="true", drain_timeout_s=120)
    assert r.status_code == 200, r.text
    plan = r.json()
    assert any("more than 120 s" in w for w in plan["warnings"]), plan["warnings"]
    kinds = {(c["kind"], c["action"]) for c in plan["changes"]}
    assert ("Kubernetes Node", "update") in kinds and ("AWS::SageMaker::Cluster", "update") in kinds
    assert any(c["kind"] == "Pod" and c["name"] == "default/trainer" for c in plan["changes"])
    assert sum(c["kind"] == "Kubernetes Node" for c in plan["changes"]) == 2
    assert any("instance storage" in w for w in plan["warnings"])
    assert request_writes(api, r) == []
    assert not any(n.spec.unschedulable for n in core.list_node(label_selector=f"{GROUP}=workers").items)

    # the PDB allows no disruption: the drain fails naming the pod and the budget
    key = uuid.uuid4().hex
    r = _delete(api, cluster, "workers", "workers", key=key, drain_timeout_s=120)
    assert r.status_code in (200, 201, 202), r.text
    op = api.wait_terminal(r.json()["id"], timeout=180)  # the 2-minute drain timeout asked for, time-scaled
    assert op["status"] == "FAILED", [(s.get("name"), s.get("message")) for s in op.get("steps", [])]
    text = str(op)
    assert "default/trainer" in text and "keep-trainer" in text and "within 120 s" in text
    again = _delete(api, cluster, "workers", "workers", key=key, drain_timeout_s=120)
    assert again.json()["id"] == op["id"]
    store = sandbox.kube.store(cluster)
    assert store.evictions == []
    groups = aws("sagemaker").describe_cluster(ClusterName=cluster)["InstanceGroups"]
    assert "workers" in {g["InstanceGroupName"] for g in groups}

    # relaxed, the failed operation retried: its drain starts afresh (the first attempt's timeout is long past),
    # evicts the pod, and the group and its nodes go
    policy.patch_namespaced_pod_disruption_budget("keep-trainer", "default", {"spec": {"minAvailable": 0}})
    since = api.mark()
    retried = api.post(f"/v1/operations/{op['id']}/retry")
    assert retried.status_code in (200, 202), retried.text
    op = api.wait_terminal(op["id"], timeout=180)
    assert op["status"] == "SUCCEEDED", op
    made = writes(api, since)
    assert [c["operation"] for c in made if c["service"] == "sagemaker"] == ["UpdateCluster"]
    assert unplanned(plan, made) == []
    assert ("default", "trainer") in store.evictions
    groups = aws("sagemaker").describe_cluster(ClusterName=cluster)["InstanceGroups"]
    assert {g["InstanceGroupName"] for g in groups} == {"system"}
    assert core.list_node(label_selector=f"{GROUP}=workers").items == []
    listed = api.get(f"/v1/clusters/{cluster}/instance-groups").json()
    assert "workers" not in str(listed)

    # the last group is refused
    r = _delete(api, cluster, "system", "system")
    assert r.status_code == 409 and "only instance group" in r.text
