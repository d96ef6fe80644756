"""Nodes on one sandbox cluster of two ml.c5.large groups. The sandbox: instances are Kubernetes Nodes, the
scheduler places pods on them, faults show as HyperPod shows them, node recovery (Automatic / None) does
what HyperPod does. The REST API: the paged node list (two calls a page), a node's detail and ladder,
reboot and replace as operations checked the way kubectl and aws would, and the escalation ladder's 409."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from tests.e2e.conftest import eventually, kube_client
from tests.e2e.plan_calls import request_writes

HEALTH = "sagemaker.amazonaws.com/node-health-status"
GROUP = "sagemaker.amazonaws.com/instance-group-name"


@pytest.fixture(scope="module")
def cluster(api: Any) -> str:
    groups = [
        {"name": "workers", "instance_type": "ml.c5.large", "instance_count": 4, "availability_zone": "us-west-2a"},
        {"name": "system", "instance_type": "ml.c5.large", "instance_count": 1, "availability_zone": "us-west-2b"},
    ]
    return api.make_cluster("nodes", groups, node_recovery="none")


@pytest.fixture(scope="module")
def kube(sandbox: Any, cluster: str) -> Any:
    from kubernetes import client

    return client.CoreV1Api(kube_client(sandbox, cluster))


def nodes(kube: Any) -> dict[str, Any]:
    return {n.metadata.name: n for n in kube.list_node().items}


def test_every_instance_is_a_node_with_its_group_health_and_capacity(kube: Any, aws: Any, cluster: str) -> None:
    instances = aws("sagemaker").list_cluster_nodes(ClusterName=cluster)["ClusterNodeSummaries"]
    listed = eventually(lambda: n if len(n := nodes(kube)) == 5 else None)
    assert set(listed) == {f"hyperpod-{i['InstanceId']}" for i in instances}
    by_group = sorted(n.metadata.labels[GROUP] for n in listed.values())
    assert by_group == ["system", "workers", "workers", "workers", "workers"]
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


def workers(aws: Any, cluster: str) -> list[str]:
    return sorted(n["InstanceId"] for n in aws("sagemaker").list_cluster_nodes(ClusterName=cluster)[
        "ClusterNodeSummaries"] if n["InstanceGroupName"] == "workers")


def row(api: Any, cluster: str, node_id: str) -> dict[str, Any]:
    items = api.get(f"/v1/clusters/{cluster}/nodes", params={"limit": 500}).json()["items"]
    return next(r for r in items if r["node_id"] == node_id)


def test_the_node_list_pages_with_four_calls_a_page_and_matches_aws_and_kubernetes(
        api: Any, aws: Any, kube: Any, sandbox: Any, cluster: str) -> None:
    everyone = {n["InstanceId"] for n in aws("sagemaker").list_cluster_nodes(ClusterName=cluster)[
        "ClusterNodeSummaries"]}
    eventually(lambda: len(kube.list_node().items) == 5)
    api.get(f"/v1/clusters/{cluster}/nodes", params={"limit": 1})  # warm: the cluster's Kubernetes connection
    kube_before = sandbox.kube.requests_total
    first = api.get(f"/v1/clusters/{cluster}/nodes", params={"limit": 3})
    assert first.status_code == 200, first.text
    page = first.json()
    assert len(page["items"]) == 3 and page["next_token"]
    aws_calls = len([c for c in api.calls(request_id=first.headers["x-amzn-RequestId"])
                     if c["service"] not in ("dynamodb", "kubernetes")])  # the request's own (not the discovery's)
    kube_calls = sandbox.kube.requests_total - kube_before
    # ListClusterNodes and ListClusterEvents (faults, HyperPod's own repairs); the page's Nodes and the live Pods
    # (the GPUs they request)
    assert (aws_calls, kube_calls) == (2, 2), (aws_calls, kube_calls)
    rest = api.get(f"/v1/clusters/{cluster}/nodes", params={"limit": 3, "next_token": page["next_token"]}).json()
    assert rest["next_token"] is None
    rows = page["items"] + rest["items"]
    assert {r["node_id"] for r in rows} == everyone
    r = rows[0]
    assert r["kubernetes_node"] == f"hyperpod-{r['node_id']}" and r["instance_type"] == "ml.c5.large"
    assert r["health"] == "Schedulable" and r["ready"] is True and r["status"] == "Running" and r["healthy"] is True
    assert (r["gpus_requested"], r["auto_repairs"], r["last_fault"], r["rung"]) == (0, 0, None, "investigate")
    assert r["zone"] in ("us-west-2a", "us-west-2b") and r["launch_time"]
    system = api.get(f"/v1/clusters/{cluster}/nodes", params={"group": "system"}).json()["items"]
    assert [x["group"] for x in system] == ["system"]
    assert api.get(f"/v1/clusters/{cluster}/nodes", params={"health": "Sideways"}).status_code == 422
    assert api.get(f"/v1/clusters/{cluster}/nodes/i-0000000000000dead").status_code == 404


def test_a_fault_shows_in_the_list_and_the_detail_places_it_on_the_ladder(
        api: Any, aws: Any, cluster: str) -> None:
    node_id = workers(aws, cluster)[0]
    assert api.post(f"/v1/sandbox/nodes/{node_id}/fault", json={"kind": "gpu_xid"}).status_code == 201
    unhealthy = api.get(f"/v1/clusters/{cluster}/nodes", params={"health": "UnschedulablePendingReboot"}).json()
    assert [r["node_id"] for r in unhealthy["items"]] == [node_id]
    detail = api.get(f"/v1/clusters/{cluster}/nodes/{node_id}").json()
    assert detail["ladder"]["rung"] == "reboot"
    assert any(c["type"] == "AcceleratedHardwareReady" and c["status"] == "False" for c in detail["conditions"])
    assert any(t["key"] == HEALTH for t in detail["taints"])
    assert any("UnschedulablePendingReboot" in e["description"] for e in detail["events"])


def test_replace_before_a_reboot_is_a_409_naming_the_ladder_and_calls_nothing(api: Any, aws: Any,
                                                                               cluster: str) -> None:
    node_id = workers(aws, cluster)[0]
    # the previous test's fault, put again (the same): this test reads the ladder of a node pending a reboot
    assert api.post(f"/v1/sandbox/nodes/{node_id}/fault", json={"kind": "gpu_xid"}).status_code == 201
    before = api.mark()
    r = api.post(f"/v1/clusters/{cluster}/nodes/replace",
                 json={"node_ids": [node_id], "reason": "xid 79", "confirm": "replace"})
    assert r.status_code == 409, r.text
    assert "reboot first" in r.json()["detail"] and "investigate -> reboot -> replace" in r.json()["detail"]
    dry = api.post(f"/v1/clusters/{cluster}/nodes/replace", params={"dry_run": "true"},
                   json={"node_ids": [node_id], "reason": "xid 79", "confirm": "replace"})
    assert dry.status_code == 409 and dry.json()["detail"] == r.json()["detail"]  # a plan refuses as the run does
    forced = api.post(f"/v1/clusters/{cluster}/nodes/replace", params={"dry_run": "true"},
                      json={"node_ids": [node_id], "reason": "xid 79", "confirm": "replace", "force": True}).json()
    assert [c["action"] for c in forced["changes"]] == ["delete", "create"]
    assert forced["changes"][0]["details"]["instance_storage"] == "wiped"
    assert any("forced past the escalation ladder" in w and "xid 79" in w for w in forced["warnings"])
    assert api.calls("sagemaker", "BatchReplaceClusterNodes", after=before) == []
    bad = api.post(f"/v1/clusters/{cluster}/nodes/replace", json={"node_ids": [node_id], "reason": "x"})
    assert bad.status_code == 422 and ["body", "confirm"] in [e["loc"] for e in bad.json()["errors"]]
    bad = api.post(f"/v1/clusters/{cluster}/nodes/reboot", json={"node_ids": ["node-1"], "reason": "x"})
    assert bad.status_code == 422 and bad.json()["errors"][0]["loc"][:2] == ["body", "node_ids"]
    unknown = api.post(f"/v1/clusters/{cluster}/nodes/reboot",
                       json={"node_ids": [node_id, "i-0000000000000dead"], "reason": "x"})
    assert unknown.status_code == 422 and unknown.json()["errors"][0]["loc"] == ["body", "node_ids", 1]
    assert "i-0000000000000dead" in unknown.json()["detail"]


def test_a_viewer_cannot_reboot(viewer: Any, aws: Any, cluster: str) -> None:
    r = viewer.post(f"/v1/clusters/{cluster}/nodes/reboot", json={"node_ids": workers(aws, cluster)[:1],
                                                                   "reason": "x"})
    assert r.status_code == 403


def test_reboot_brings_the_faulty_node_back_ready_then_replace_is_the_next_rung(
        api: Any, aws: Any, kube: Any, cluster: str) -> None:
    node_id, healthy = workers(aws, cluster)[0], workers(aws, cluster)[1]
    key = uuid.uuid4().hex
    body = {"node_ids": [node_id, healthy], "reason": "GPU XID 79 on the first"}
    dry = api.post(f"/v1/clusters/{cluster}/nodes/reboot", json=body, key=key, params={"dry_run": "true"})
    assert dry.status_code == 200, dry.text
    plan = dry.json()
    assert request_writes(api, dry) == []  # the plan changed nothing, not even PodStart's own tables
    assert plan["kind"] == "nodes.reboot" and plan["cost"]["hourly"] == 0
    assert sorted(c["name"] for c in plan["changes"]) == sorted([node_id, healthy])
    assert {c["details"]["group"] for c in plan["changes"]} == {"workers"}
    before = api.mark()
    op = api.post(f"/v1/clusters/{cluster}/nodes/reboot", json=body, key=key).json()
    again = api.post(f"/v1/clusters/{cluster}/nodes/reboot", json=body, key=key).json()
    assert again["id"] == op["id"]
    done = api.wait_terminal(op["id"])
    assert done["status"] == "SUCCEEDED", done
    calls = api.calls("sagemaker", "BatchRebootClusterNodes", after=before)
    assert [sorted(c["params"]["NodeIds"]) for c in calls] == [sorted([node_id, healthy])]  # one call, once
    assert sorted(calls[0]["params"]["NodeIds"]) == sorted(c["name"] for c in plan["changes"])  # what the plan said
    node = kube.read_node(f"hyperpod-{node_id}")  # as kubectl get node shows it
    assert node.metadata.labels[HEALTH] == "Schedulable" and not node.spec.taints
    assert [c.status for c in node.status.conditions if c.type == "Ready"] == ["True"]
    status = aws("sagemaker").describe_cluster_node(ClusterName=cluster, NodeId=node_id)["NodeDetails"]
    assert status["InstanceStatus"]["Status"] == "Running"
    r = row(api, cluster, node_id)
    assert r["last_action"]["action"] == "reboot" and r["last_action"]["operation_id"] == op["id"]
    detail = api.get(f"/v1/clusters/{cluster}/nodes/{node_id}").json()
    assert detail["ladder"]["rebooted_at"] and detail["ladder"]["rung"] == "investigate"  # healthy again
    # rebooted by PodStart in the last 24 h: a replace is admitted without force
    op = api.post(f"/v1/clusters/{cluster}/nodes/replace",
                  json={"node_ids": [node_id], "reason": "XID again after the reboot", "confirm": "replace"}).json()
    assert op.get("kind") == "nodes.replace", op
    done = api.wait_terminal(op["id"])
    assert done["status"] == "SUCCEEDED", done
    now = workers(aws, cluster)
    assert node_id not in now and len(now) == 4
    names = {n.metadata.name: n for n in kube.list_node(label_selector=f"{GROUP}=workers").items}
    assert f"hyperpod-{node_id}" not in names and len(names) == 4
    assert all(n.metadata.labels[HEALTH] == "Schedulable" for n in names.values())


def test_force_with_a_reason_replaces_a_healthy_node_and_is_recorded(api: Any, aws: Any, kube: Any,
                                                                     cluster: str) -> None:
    node_id = next(n["InstanceId"] for n in aws("sagemaker").list_cluster_nodes(ClusterName=cluster)[
        "ClusterNodeSummaries"] if n["InstanceGroupName"] == "system")
    no_reason = api.post(f"/v1/clusters/{cluster}/nodes/replace",
                         json={"node_ids": [node_id], "confirm": "replace", "force": True})
    assert no_reason.status_code == 422
    op = api.post(f"/v1/clusters/{cluster}/nodes/replace",
                  json={"node_ids": [node_id], "reason": "NCCL hangs only on this host", "confirm": "replace",
                        "force": True}).json()
    done = api.wait_terminal(op["id"])
    assert done["status"] == "SUCCEEDED", done
    assert done["request"]["force"] is True and done["request"]["reason"] == "NCCL hangs only on this host"
    system = kube.list_node(label_selector=f"{GROUP}=system").items
    assert len(system) == 1 and system[0].metadata.name != f"hyperpod-{node_id}"


def test_delete_terminates_the_named_nodes_and_their_group_shrinks(api: Any, aws: Any, kube: Any,
                                                                     cluster: str) -> None:
    node_id = workers(aws, cluster)[-1]
    no_word = api.post(f"/v1/clusters/{cluster}/nodes/delete", json={"node_ids": [node_id]})
    assert no_word.status_code == 422 and ["body", "confirm"] in [e["loc"] for e in no_word.json()["errors"]]
    answer = api.post(f"/v1/clusters/{cluster}/nodes/delete", json={"node_ids": [node_id], "confirm": "delete"},
                      params={"dry_run": "true"})
    dry = answer.json()
    assert request_writes(api, answer) == [] and len(workers(aws, cluster)) == 4
    assert [(c["action"], c["kind"], c["name"]) for c in dry["changes"]] == [
        ("delete", "AWS::SageMaker::ClusterNode", node_id), ("update", "AWS::SageMaker::Cluster", cluster)]
    assert dry["changes"][1]["details"] == {"group": "workers", "instance_count": "-1"}
    assert dry["cost"]["hourly"] < 0 and dry["cost"]["lines"][0]["count"] == -1  # deleting saves money
    op = api.post(f"/v1/clusters/{cluster}/nodes/delete", json={"node_ids": [node_id], "confirm": "delete"}).json()
    done = api.wait_terminal(op["id"])
    assert done["status"] == "SUCCEEDED", done
    assert node_id not in workers(aws, cluster) and len(workers(aws, cluster)) == 3
    live = aws("sagemaker").describe_cluster(ClusterName=cluster)["InstanceGroups"]
    assert [g["TargetCount"] for g in live if g["InstanceGroupName"] == "workers"] == [3]
    assert f"hyperpod-{node_id}" not in nodes(kube)
    groups = api.get(f"/v1/clusters/{cluster}/instance-groups").json()["items"]
    assert [g["target_count"] for g in groups if g["name"] == "workers"] == [3]


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
