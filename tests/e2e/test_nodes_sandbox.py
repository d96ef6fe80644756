"""The sandbox's HyperPod nodes: instances are Kubernetes Nodes, the scheduler places pods on them, node
faults show as HyperPod shows them, and node recovery (Automatic / None) does what HyperPod does."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest

HEALTH = "sagemaker.amazonaws.com/node-health-status"
GROUP = "sagemaker.amazonaws.com/instance-group-name"


def eventually(check: Callable[[], Any], timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.1)


@pytest.fixture(scope="module")
def cluster(api: Any) -> str:
    name = f"nodes-{uuid.uuid4().hex[:6]}"
    groups = [
        {"name": "workers", "instance_type": "ml.c5.large", "instance_count": 3, "availability_zone": "us-west-2a"},
        {"name": "system", "instance_type": "ml.c5.large", "instance_count": 1, "availability_zone": "us-west-2b"},
    ]
    op = api.post("/v1/clusters", json={"name": name, "region": "us-west-2", "node_recovery": "none",
                                        "instance_groups": groups}).json()
    assert api.wait_terminal(op["id"])["status"] == "SUCCEEDED"
    return name


@pytest.fixture(scope="module")
def kube(sandbox: Any, cluster: str) -> Any:
    from kubernetes import client

    config = client.Configuration()
    config.host = sandbox.kube.clusters()[cluster]
    return client.CoreV1Api(client.ApiClient(config))


def nodes(kube: Any) -> dict[str, Any]:
    return {n.metadata.name: n for n in kube.list_node().items}


def test_every_instance_is_a_node_with_its_group_health_and_capacity(kube: Any, aws: Any, cluster: str) -> None:
    instances = aws("sagemaker").list_cluster_nodes(ClusterName=cluster)["ClusterNodeSummaries"]
    listed = eventually(lambda: n if len(n := nodes(kube)) == 4 else None)
    assert set(listed) == {f"hyperpod-{i['InstanceId']}" for i in instances}
    by_group = sorted(n.metadata.labels[GROUP] for n in listed.values())
    assert by_group == ["system", "workers", "workers", "workers"]
    node = next(iter(listed.values()))
    labels = node.metadata.labels
    assert labels[HEALTH] == "Schedulable" and labels["node.kubernetes.io/instance-type"] == "ml.c5.large"
    assert labels["topology.kubernetes.io/zone"] in ("us-west-2a", "us-west-2b")
    assert node.status.capacity["cpu"] == "2" and "nvidia.com/gpu" not in node.status.allocatable
    assert [c.status for c in node.status.conditions if c.type == "Ready"] == ["True"]


def test_scaling_adds_and_removes_nodes(api: Any, kube: Any, cluster: str) -> None:
    r = api.http.patch(f"/v1/clusters/{cluster}/instance-groups/system", json={"instance_count": 2})
    assert api.wait_terminal(r.json()["id"])["status"] == "SUCCEEDED"
    eventually(lambda: sum(n.metadata.labels[GROUP] == "system" for n in nodes(kube).values()) == 2)
    r = api.http.patch(f"/v1/clusters/{cluster}/instance-groups/system", json={"instance_count": 1})
    assert api.wait_terminal(r.json()["id"])["status"] == "SUCCEEDED"
    eventually(lambda: sum(n.metadata.labels[GROUP] == "system" for n in nodes(kube).values()) == 1)


def pod(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "main", "image": "busybox"}], **spec}}


def test_the_scheduler_places_pods_by_selector_and_leaves_unfit_ones_pending_with_the_reason(kube: Any) -> None:
    kube.create_namespaced_pod("default", pod("on-system", nodeSelector={GROUP: "system"}))
    gpu = pod("wants-gpu")
    gpu["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": "8"}}
    kube.create_namespaced_pod("default", gpu)
    placed = eventually(lambda: kube.read_namespaced_pod("on-system", "default").spec.node_name)
    assert nodes(kube)[placed].metadata.labels[GROUP] == "system"
    eventually(lambda: kube.read_namespaced_pod("on-system", "default").status.phase == "Running")

    def unschedulable() -> str | None:
        p = kube.read_namespaced_pod("wants-gpu", "default")
        return next((c.message for c in p.status.conditions or [] if c.type == "PodScheduled"
                     and c.status == "False"), None)

    message = eventually(unschedulable)
    assert "Insufficient nvidia.com/gpu" in message and message.startswith("0/")
    assert kube.read_namespaced_pod("wants-gpu", "default").spec.node_name is None


def test_a_fault_shows_on_the_node_and_in_events_and_with_recovery_none_waits_for_a_reboot(
        api: Any, aws: Any, kube: Any, cluster: str) -> None:
    sm = aws("sagemaker")
    node_id = next(n["InstanceId"] for n in sm.list_cluster_nodes(ClusterName=cluster)["ClusterNodeSummaries"]
                   if n["InstanceGroupName"] == "workers")
    r = api.post(f"/v1/sandbox/nodes/{node_id}/fault", json={"kind": "gpu_xid"})
    assert r.status_code == 201 and r.json()["recovery"].startswith("none")
    node = kube.read_node(f"hyperpod-{node_id}")
    assert node.metadata.labels[HEALTH] == "UnschedulablePendingReboot"
    assert any(c.type == "AcceleratedHardwareReady" and c.status == "False" for c in node.status.conditions)
    assert any(t.key == HEALTH and t.effect == "NoSchedule" for t in node.spec.taints)
    events = sm.list_cluster_events(ClusterName=cluster, NodeId=node_id)["Events"]
    assert any("UnschedulablePendingReboot" in e["Description"] and e["EventLevel"] == "Warn" for e in events)
    time.sleep(0.5)  # longer than HyperPod's detection at this time scale: with None nothing happens
    assert sm.describe_cluster_node(ClusterName=cluster, NodeId=node_id)["NodeDetails"]["InstanceStatus"][
        "Status"] == "Running"
    sm.batch_reboot_cluster_nodes(ClusterName=cluster, NodeIds=[node_id])
    eventually(lambda: kube.read_node(f"hyperpod-{node_id}").metadata.labels[HEALTH] == "Schedulable")
    assert not kube.read_node(f"hyperpod-{node_id}").spec.taints


def test_with_recovery_automatic_hyperpod_replaces_a_node_whose_efa_is_down(api: Any, aws: Any, kube: Any,
                                                                            cluster: str) -> None:
    sm = aws("sagemaker")
    sm.update_cluster(ClusterName=cluster, NodeRecovery="Automatic")
    eventually(lambda: sm.describe_cluster(ClusterName=cluster)["ClusterStatus"] == "InService")
    node_id = next(n["InstanceId"] for n in sm.list_cluster_nodes(ClusterName=cluster)["ClusterNodeSummaries"]
                   if n["InstanceGroupName"] == "system")
    r = api.post(f"/v1/sandbox/nodes/{node_id}/fault", json={"kind": "efa_down"})
    assert r.status_code == 201 and r.json()["recovery"] == "replace"
    eventually(lambda: f"hyperpod-{node_id}" not in nodes(kube))
    fresh = eventually(lambda: [n for n in nodes(kube).values() if n.metadata.labels[GROUP] == "system"
                                and n.metadata.labels[HEALTH] == "Schedulable"])
    assert fresh[0].metadata.name != f"hyperpod-{node_id}"
    events = sm.list_cluster_events(ClusterName=cluster, NodeId=node_id)["Events"]
    assert any(e["Description"].startswith("Node recovery: replacing") for e in events)


def test_the_fault_knob_refuses_unknown_kinds_and_nodes(api: Any) -> None:
    r = api.post("/v1/sandbox/nodes/i-0123/fault", json={"kind": "meteor"})
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "kind"]
    assert api.post("/v1/sandbox/nodes/i-0123/fault", json={"kind": "gpu_xid"}).status_code == 404
