"""On-demand deep health checks (POST /v1/clusters/{cluster}/health-checks, operation nodes.health_check) on a
sandbox cluster with node recovery None: the plan changes nothing, the nodes are Unschedulable and labelled
while checked, a node with a latent fault fails the check that covers it and the operation still succeeds
with per-node results; the verdicts are cluster events; bad input changes nothing."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.e2e.conftest import eventually, kube_client
from tests.e2e.plan_calls import request_writes, unplanned, writes

HEALTH = "sagemaker.amazonaws.com/node-health-status"
DEEP = "sagemaker.amazonaws.com/deep-health-check-status"
GROUP = "sagemaker.amazonaws.com/instance-group-name"


@pytest.fixture(scope="module")
def cluster(api: Any) -> str:
    groups = [
        {"name": "workers", "instance_type": "ml.c5.large", "instance_count": 3, "availability_zone": "us-west-2a"},
        {"name": "system", "instance_type": "ml.c5.large", "instance_count": 1, "availability_zone": "us-west-2b"},
    ]
    return api.make_cluster("dhc", groups, node_recovery="none")


@pytest.fixture(scope="module")
def kube(sandbox: Any, cluster: str) -> Any:
    from kubernetes import client

    return client.CoreV1Api(kube_client(sandbox, cluster))


def aws_writes_of(api: Any, response: Any) -> list[str]:
    """The request's mutating AWS calls, the audit record in PodStart's own table aside."""
    return [w for w in request_writes(api, response) if not w.startswith("dynamodb.")]


def group_nodes(aws: Any, cluster: str, group: str) -> list[str]:
    return sorted(n["InstanceId"] for n in aws("sagemaker").list_cluster_nodes(ClusterName=cluster)[
        "ClusterNodeSummaries"] if n["InstanceGroupName"] == group)


def test_a_dry_run_plans_each_node_and_changes_nothing(api: Any, aws: Any, cluster: str) -> None:
    ids = group_nodes(aws, cluster, "workers")
    dry = api.post(f"/v1/clusters/{cluster}/health-checks", params={"dry_run": "true"},
                   json={"group": "workers", "checks": ["InstanceStress"]})
    assert dry.status_code == 200, dry.text
    plan = dry.json()
    assert request_writes(api, dry) == []
    assert plan["kind"] == "nodes.health_check" and plan["cost"]["hourly"] == 0
    assert sorted(c["name"] for c in plan["changes"]) == ids  # no node_ids: the whole group
    assert {(c["action"], c["details"]["update"]) for c in plan["changes"]} == {("update", "deep health check")}
    assert any("Unschedulable" in w and "minutes" in w for w in plan["warnings"])
    assert all(n["InstanceStatus"]["Status"] == "Running"
               for n in aws("sagemaker").list_cluster_nodes(ClusterName=cluster)["ClusterNodeSummaries"])


def test_two_nodes_one_with_a_latent_fault_succeeds_with_per_node_results(
        api: Any, operator: Any, aws: Any, kube: Any, cluster: str) -> None:
    bad, good = group_nodes(aws, cluster, "workers")[:2]
    fault = api.post(f"/v1/sandbox/nodes/{bad}/fault", json={"kind": "efa_down", "latent": True})
    assert fault.status_code == 201, fault.text
    assert kube.read_node(f"hyperpod-{bad}").metadata.labels[HEALTH] == "Schedulable"  # the agent has not seen it
    body = {"group": "workers", "node_ids": [bad, good], "checks": ["InstanceStress", "InstanceConnectivity"]}
    key = uuid.uuid4().hex
    plan = operator.post(f"/v1/clusters/{cluster}/health-checks", json=body, params={"dry_run": "true"}).json()
    since = api.mark()
    r = operator.post(f"/v1/clusters/{cluster}/health-checks", json=body, key=key)
    assert r.status_code in (200, 201, 202), r.text
    op = r.json()
    assert op["kind"] == "nodes.health_check"
    replayed = operator.post(f"/v1/clusters/{cluster}/health-checks", json=body, key=key)
    assert replayed.status_code in (200, 202), replayed.text
    again = replayed.json()
    assert again["id"] == op["id"]
    # while checked: labelled and unschedulable, as kubectl shows it
    labels = eventually(lambda: (n := kube.read_node(f"hyperpod-{good}").metadata.labels).get(DEEP) == "InProgress"
                        and n)
    assert labels[HEALTH] == "Unschedulable"
    done = api.wait_terminal(op["id"])
    assert done["status"] == "SUCCEEDED", done
    result = done["result"]
    assert result["failed"] == 1 and result["passed"] == 1 and result["failed_node_ids"] == [bad]
    by_node = {x["node_id"]: x for x in result["results"]}
    assert by_node[good]["passed"] and all(c["passed"] for c in by_node[good]["checks"])
    checks = {c["check"]: c for c in by_node[bad]["checks"]}
    assert checks["InstanceStress"]["passed"] and not checks["InstanceConnectivity"]["passed"]
    assert "EFA" in checks["InstanceConnectivity"]["reason"]
    assert "failed InstanceConnectivity" in done["steps"][-1]["message"]
    # one StartClusterHealthCheck, exactly the nodes asked, and nothing the plan did not list
    starts = [c for c in writes(api, since) if c["operation"] == "StartClusterHealthCheck"]
    assert len(starts) == 1
    cfg = starts[0]["params"]["DeepHealthCheckConfigurations"]
    assert [(x["InstanceGroupName"], sorted(x["InstanceIds"])) for x in cfg] == [("workers", sorted([bad, good]))]
    assert unplanned(plan, [c for c in writes(api, since) if c["service"] == "sagemaker"]) == []
    # HyperPod's marks: the failed node is pending replacement, the other Schedulable again
    failed_node = kube.read_node(f"hyperpod-{bad}")
    assert failed_node.metadata.labels[DEEP] == "Failed"
    assert failed_node.metadata.labels[HEALTH] == "UnschedulablePendingReplacement"
    assert kube.read_node(f"hyperpod-{good}").metadata.labels[DEEP] == "Passed"
    assert kube.read_node(f"hyperpod-{good}").metadata.labels[HEALTH] == "Schedulable"
    detail = aws("sagemaker").describe_cluster_node(ClusterName=cluster, NodeId=bad)["NodeDetails"]
    assert "InstanceConnectivity" in detail["InstanceStatus"]["Message"]
    # the verdicts are the node's cluster events
    events = api.get(f"/v1/clusters/{cluster}/events", params={"node_id": bad}).json()["items"]
    text = [e["description"] for e in events]
    assert any(t.startswith("Deep health check InstanceConnectivity failed") for t in text), text
    assert any(t.startswith("Deep health check InstanceStress passed") for t in text), text
    # the Node as HyperPod labels it is a valid Kubernetes Node
    import kubernetes_validate

    kubernetes_validate.validate(kube.api_client.sanitize_for_serialization(failed_node), "1.32.0", strict=True)


def test_a_node_not_schedulable_is_a_409_naming_it(api: Any, aws: Any, cluster: str) -> None:
    node = group_nodes(aws, cluster, "workers")[-1]
    fault = api.post(f"/v1/sandbox/nodes/{node}/fault", json={"kind": "gpu_xid"})  # seen: pending a reboot
    assert fault.status_code == 201, fault.text
    r = api.post(f"/v1/clusters/{cluster}/health-checks", json={"group": "workers", "node_ids": [node]})
    assert r.status_code == 409, r.text
    assert node in r.json()["detail"] and "UnschedulablePendingReboot" in r.json()["detail"]
    assert aws_writes_of(api, r) == []


def test_bad_input_is_a_422_naming_the_field_and_changes_nothing(api: Any, aws: Any, cluster: str) -> None:
    system = group_nodes(aws, cluster, "system")[0]
    worker = group_nodes(aws, cluster, "workers")[-1]
    url = f"/v1/clusters/{cluster}/health-checks"
    unknown = "i-0123456789abcdef0"
    cases = [
        ({"group": "workers", "node_ids": [worker, system]}, "body.node_ids", system),
        ({"group": "workers", "node_ids": [unknown]}, "body.node_ids", unknown),
        ({"group": "workers", "checks": ["CpuBurn"]}, "checks", None),
        ({"group": "nope"}, "body.group", None),
        ({"group": "workers", "node_ids": ["node-1"]}, "node_ids", None),
    ]
    for body, field, named in cases:
        r = api.post(url, json=body)
        assert r.status_code == 422, (body, r.text)
        detail = r.json()["detail"]
        assert field in detail, (body, detail)
        if named:
            assert named in detail, (body, detail)
        assert aws_writes_of(api, r) == []


def test_a_viewer_cannot_start_one(viewer: Any, cluster: str) -> None:
    r = viewer.post(f"/v1/clusters/{cluster}/health-checks", json={"group": "workers"})
    assert r.status_code == 403


def test_without_node_ids_the_whole_group_is_checked_and_passes(api: Any, aws: Any, kube: Any, cluster: str) -> None:
    ids = group_nodes(aws, cluster, "system")
    since = api.mark()
    r = api.post(f"/v1/clusters/{cluster}/health-checks", json={"group": "system", "checks": ["InstanceStress"]},
                 key=uuid.uuid4().hex)
    assert r.status_code == 202, r.text
    done = api.wait_terminal(r.json()["id"])
    assert done["status"] == "SUCCEEDED", done
    assert [(r["node_id"], r["passed"], [c["check"] for c in r["checks"]]) for r in done["result"]["results"]] == [
        (i, True, ["InstanceStress"]) for i in ids]
    assert done["result"]["failed"] == 0
    [start] = [c for c in writes(api, since) if c["operation"] == "StartClusterHealthCheck"]
    assert start["params"]["DeepHealthCheckConfigurations"] == [
        {"InstanceGroupName": "system", "InstanceIds": ids, "DeepHealthChecks": ["InstanceStress"]}]
    node = kube.read_node(f"hyperpod-{ids[0]}")
    assert node.metadata.labels[DEEP] == "Passed" and node.metadata.labels[HEALTH] == "Schedulable"
    assert not node.spec.taints


def test_with_recovery_automatic_hyperpod_replaces_the_node_that_failed(api: Any, aws: Any) -> None:
    name = f"dhca-{uuid.uuid4().hex[:6]}"
    op = api.post("/v1/clusters", json={"name": name, "region": "us-west-2", "node_recovery": "automatic",
                                        "instance_groups": [{"name": "workers", "instance_type": "ml.c5.large",
                                                             "instance_count": 1,
                                                             "availability_zone": "us-west-2a"}]}).json()
    assert api.wait_terminal(op["id"])["status"] == "SUCCEEDED"
    [node] = group_nodes(aws, name, "workers")
    assert api.post(f"/v1/sandbox/nodes/{node}/fault", json={"kind": "gpu_xid", "latent": True}).status_code == 201
    op = api.post(f"/v1/clusters/{name}/health-checks", json={"group": "workers"}).json()
    done = api.wait_terminal(op["id"])
    assert done["status"] == "SUCCEEDED", done
    [result] = done["result"]["results"]
    checks = {c["check"]: c for c in result["checks"]}
    assert not checks["InstanceStress"]["passed"] and "Xid 48" in checks["InstanceStress"]["reason"]
    assert checks["InstanceConnectivity"]["passed"]
    # HyperPod's node recovery replaces it: a new instance in the group, the old one gone
    now = eventually(lambda: (ids := group_nodes(aws, name, "workers")) and node not in ids and ids)
    assert len(now) == 1
    events = api.get(f"/v1/clusters/{name}/events", params={"node_id": node}).json()["items"]
    assert any("replacing instance" in e["description"] for e in events)
