"""Updating a cluster's HyperPod platform software: the plan names every group's batches and warns that nodes
restart; the real run sends one UpdateClusterSoftware (rolling, percent of each group), the nodes go through
the update batch by batch (never all at once), Kubernetes shows each batch NotReady and unschedulable, the
operation says which batch it is at, and ends SUCCEEDED with every node on the new release. Refusals: a
cluster busy updating (409), a viewer (403), a bad batch percent (422 naming it), a group it does not have."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from tests.e2e.conftest import kube_client
from tests.e2e.plan_calls import request_writes, unplanned, writes

HEALTH = "sagemaker.amazonaws.com/node-health-status"


@pytest.fixture(scope="module")
def cluster(api: Any) -> str:
    groups = [
        {"name": "workers", "instance_type": "ml.c5.large", "instance_count": 4, "availability_zone": "us-west-2a"},
        {"name": "system", "instance_type": "ml.c5.large", "instance_count": 1, "availability_zone": "us-west-2b"},
    ]
    return api.make_cluster("swup", groups, node_recovery="none")


@pytest.fixture(scope="module")
def kube(sandbox: Any, cluster: str) -> Any:
    from kubernetes import client

    return client.CoreV1Api(kube_client(sandbox, cluster))


def _nodes(aws: Any, cluster: str, group: str) -> list[dict[str, Any]]:
    out = aws("sagemaker").list_cluster_nodes(ClusterName=cluster)["ClusterNodeSummaries"]
    return [n for n in out if n["InstanceGroupName"] == group]


def _ready(node: Any) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in node.status.conditions or [])


def test_bad_input_changes_nothing(operator: Any, api: Any, cluster: str) -> None:
    since = api.mark()
    path = f"/v1/clusters/{cluster}/software-update"
    for bad in (0, 101):
        r = operator.post(path, json={"groups": ["workers"], "rolling": {"batch_percent": bad}})
        assert r.status_code == 422, r.text
        assert ["body", "rolling", "batch_percent"] in [e["loc"] for e in r.json()["errors"]]
    r = operator.post(path, json={"groups": ["workers", "nope"]})
    assert r.status_code == 422, r.text
    assert r.json()["errors"][0]["loc"] == ["body", "groups", 1]
    r = operator.post(path, json={"groups": ["workers", "workers"]})
    assert r.status_code == 422 and r.json()["errors"][0]["loc"][:2] == ["body", "groups"], r.text
    r = operator.post(path, json={"groups": []})
    assert r.status_code == 422, r.text
    r = operator.post(path, json={"image_id": "ubuntu-22"})
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "image_id"], r.text
    assert writes(api, since) == []


def test_a_viewer_cannot_update(viewer: Any, cluster: str) -> None:
    r = viewer.post(f"/v1/clusters/{cluster}/software-update", json={"groups": ["workers"]})
    assert r.status_code == 403, r.text


def test_rolling_update_goes_batch_by_batch_to_succeeded(api: Any, operator: Any, aws: Any, kube: Any,
                                                          cluster: str) -> None:
    path = f"/v1/clusters/{cluster}/software-update"
    body = {"groups": ["workers"], "rolling": {"batch_percent": 50}}
    before = {n["InstanceId"]: n for n in _nodes(aws, cluster, "workers")}
    assert len(before) == 4
    old_release = {n.get("CurrentImageReleaseVersion") for n in before.values()}
    # the plan: one UpdateClusterSoftware, the group's 2 batches of 2, from/to image, restart warnings; no write
    r = operator.post(path, json=body, params={"dry_run": "true"})
    assert r.status_code == 200, r.text
    plan = r.json()
    assert request_writes(api, r) == []
    group = next(c for c in plan["changes"] if c["name"] == "workers")
    assert group["action"] == "update"
    assert group["details"]["batches"] == 2 and group["details"]["batch_size"] == 2
    assert group["details"]["from_image"].endswith(f"(release {old_release.pop()})")
    assert any("restart" in w and "disrupted" in w for w in plan["warnings"]), plan["warnings"]
    since = api.mark()
    key = uuid.uuid4().hex
    r = operator.post(path, json=body, key=key)
    assert r.status_code == 202, r.text
    op = r.json()
    assert op["kind"] == "cluster.software_update" and [s["name"] for s in op["steps"]] == ["update", "watch"]
    assert operator.post(path, json=body, key=key).json()["id"] == op["id"]  # same key, same operation
    # while it runs another update is refused (the cluster is busy), and nothing else starts
    busy = operator.post(path, json={"groups": ["system"]})
    assert busy.status_code == 409, busy.text
    # watch the nodes: never more than half of the group updating at once, every node through NotReady
    most, seen_down, messages = 0, set(), set()
    deadline = time.monotonic() + 120
    while True:
        nodes = _nodes(aws, cluster, "workers")
        updating = [n["InstanceId"] for n in nodes if n["InstanceStatus"]["Status"] == "SystemUpdating"]
        most = max(most, len(updating))
        for i in updating:
            k8s = kube.read_node(f"hyperpod-{i}")
            if not _ready(k8s) and k8s.metadata.labels[HEALTH] == "Unschedulable":
                seen_down.add(i)
        now = api.get(f"/v1/operations/{op['id']}").json()
        messages.update(s.get("message") or "" for s in now["steps"] if s["name"] == "watch")
        if now["status"] in ("SUCCEEDED", "FAILED", "CANCELLED"):
            break
        assert time.monotonic() < deadline, now
        time.sleep(0.05)
    assert now["status"] == "SUCCEEDED", now
    assert most == 2, f"at most 2 of 4 nodes update at once at 50% (saw {most})"
    assert seen_down == set(before), f"every node went NotReady/Unschedulable in its batch: {seen_down}"
    assert any("batch " in m and " of 2" in m for m in messages), messages
    # every node Running, Ready and Schedulable on the new release; the other group untouched
    after = {n["InstanceId"]: n for n in _nodes(aws, cluster, "workers")}
    assert set(after) == set(before)
    for i in after:
        detail = aws("sagemaker").describe_cluster_node(ClusterName=cluster, NodeId=i)["NodeDetails"]
        assert detail["InstanceStatus"]["Status"] == "Running"
        assert detail["CurrentImageReleaseVersion"] != before[i]["CurrentImageReleaseVersion"]
        assert detail["CurrentImageId"] == detail["DesiredImageId"] and detail["LastSoftwareUpdateTime"]
        k8s = kube.read_node(f"hyperpod-{i}")
        assert _ready(k8s) and k8s.metadata.labels[HEALTH] == "Schedulable"
    [system] = _nodes(aws, cluster, "system")
    assert "LastSoftwareUpdateTime" not in system
    described = aws("sagemaker").describe_cluster(ClusterName=cluster)
    assert described["ClusterStatus"] == "InService"
    workers = next(g for g in described["InstanceGroups"] if g["InstanceGroupName"] == "workers")
    assert workers["SoftwareUpdateStatus"] == "Succeeded"
    # one call, as planned, with the rolling policy asked
    calls = writes(api, since)
    [call] = [c for c in calls if c["operation"] == "UpdateClusterSoftware"]
    assert call["params"]["InstanceGroups"] == [{"InstanceGroupName": "workers"}]
    assert call["params"]["DeploymentConfig"]["RollingUpdatePolicy"]["MaximumBatchSize"] == {
        "Type": "CAPACITY_PERCENT", "Value": 50}
    assert unplanned(plan, calls) == []
    # HyperPod's events say each batch
    events = aws("sagemaker").list_cluster_events(ClusterName=cluster, MaxResults=100)["Events"]
    text = [e["Description"] for e in events]
    assert sum("batch" in t and "completed" in t for t in text) == 2, text
    # the same key after the end is still the same operation
    assert operator.post(path, json=body, key=key).json()["id"] == op["id"]


def test_refused_while_the_hyperpod_cluster_is_not_in_service(api: Any, operator: Any, aws: Any,
                                                               cluster: str) -> None:
    # changed outside PodStart: HyperPod is SystemUpdating, no PodStart operation holds the cluster
    aws("sagemaker").update_cluster_software(ClusterName=cluster, InstanceGroups=[{"InstanceGroupName": "system"}])
    r = operator.post(f"/v1/clusters/{cluster}/software-update", json={"groups": ["workers"]})
    assert r.status_code == 409 and "SystemUpdating" in r.json()["detail"], r.text
    deadline = time.monotonic() + 60
    while aws("sagemaker").describe_cluster(ClusterName=cluster)["ClusterStatus"] != "InService":
        assert time.monotonic() < deadline
        time.sleep(0.2)
    # a PodStart operation running on the cluster: 409 naming it
    scale = operator.http.patch(f"/v1/clusters/{cluster}/instance-groups/system", json={"instance_count": 2})
    assert scale.status_code == 202, scale.text
    r = operator.post(f"/v1/clusters/{cluster}/software-update", json={})
    assert r.status_code == 409 and r.json().get("running_operation") == scale.json()["id"], r.text
    assert api.wait_terminal(scale.json()["id"])["status"] == "SUCCEEDED"
