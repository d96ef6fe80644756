"""Plan, then run, for the cluster-level mutations the other files do not compare: add an instance group, reboot
nodes, update the platform software, retry a failed create, import an EKS cluster, delete a cluster. Each dry run
makes no write of any kind (its own calls, by request id); each real run makes only mutating AWS calls of kinds its
plan listed."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from tests.e2e.plan_calls import request_writes, unplanned, writes
from tests.e2e.test_clusters import body, group, name

DRY = {"dry_run": "true"}


def _run(api: Any, method: str, path: str, payload: dict[str, Any] | None = None,
         params: dict[str, str] | None = None) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    """(the plan, the mutating calls of the real run that followed it, the finished operation)."""
    dry = api.http.request(method, path, json=payload, params={**(params or {}), **DRY})
    assert dry.status_code == 200, dry.text
    assert request_writes(api, dry) == [], request_writes(api, dry)
    since = api.mark()
    real = api.http.request(method, path, json=payload, params=params,
                            headers={"Idempotency-Key": uuid.uuid4().hex})
    assert real.status_code == 202, real.text
    done = api.wait_terminal(real.json()["id"], 180)
    assert done["status"] == "SUCCEEDED", done.get("error")
    return dry.json(), writes(api, since), done


@pytest.fixture(scope="module")
def cluster(api: Any) -> str:
    cname = name("pvr")
    op = api.post("/v1/clusters", json=body(cname, instance_groups=[group(instance_type="ml.c5.large")])).json()
    assert api.wait_terminal(op["id"], 180)["status"] == "SUCCEEDED"
    return cname


def test_adding_an_instance_group_makes_only_what_its_plan_listed(api: Any, cluster: str) -> None:
    more = group(name="more", instance_type="ml.c5.large", instance_count=2)
    plan, made, _ = _run(api, "POST", f"/v1/clusters/{cluster}/instance-groups", more)
    assert any(c["kind"] == "AWS::SageMaker::Cluster" and c["action"] == "update" for c in plan["changes"])
    assert [c["operation"] for c in made if c["service"] == "sagemaker"] == ["UpdateCluster"]
    assert unplanned(plan, made) == [], unplanned(plan, made)


def test_rebooting_nodes_makes_only_what_its_plan_listed(api: Any, aws: Any, cluster: str) -> None:
    nodes = aws("sagemaker").list_cluster_nodes(ClusterName=cluster)["ClusterNodeSummaries"]
    ids = sorted(n["InstanceId"] for n in nodes)[:2]
    plan, made, _ = _run(api, "POST", f"/v1/clusters/{cluster}/nodes/reboot",
                         {"node_ids": ids, "reason": "plan versus run"})
    assert sorted(c["name"] for c in plan["changes"]) == ids
    assert [c["operation"] for c in made] == ["BatchRebootClusterNodes"]
    planned = {c["kind"] for c in plan["changes"]}
    assert planned == {"AWS::SageMaker::ClusterNode"}  # the call acts on those nodes, nothing else


def test_a_software_update_makes_only_what_its_plan_listed(api: Any, aws: Any, cluster: str) -> None:
    groups = sorted(g["InstanceGroupName"] for g in aws("sagemaker").describe_cluster(ClusterName=cluster)[
        "InstanceGroups"])
    plan, made, done = _run(api, "POST", f"/v1/clusters/{cluster}/software-update",
                            {"rolling": {"batch_percent": 100}})
    assert sorted(c["name"] for c in plan["changes"] if c["kind"] == "AWS::SageMaker::ClusterInstanceGroup") == groups
    assert [c["operation"] for c in made] == ["UpdateClusterSoftware"]
    assert unplanned(plan, made) == [], unplanned(plan, made)
    assert done["request"]["groups"] == groups  # no groups sent: every group


def test_retrying_a_failed_create_makes_only_what_its_plan_listed(api: Any) -> None:
    api.post("/v1/sandbox/faults", json={"service": "sagemaker", "operation": "CreateCluster",
                                         "error_code": "ValidationException", "count": 1,
                                         "message": "injected: plan versus run"})
    cname = name("pvrretry")
    failed = api.wait_terminal(api.post("/v1/clusters", json=body(
        cname, instance_groups=[group(instance_type="ml.c5.large")])).json()["id"], 180)
    assert failed["status"] == "FAILED" and failed["phase"] == "hyperpod_cluster"
    plan, made, _ = _run(api, "POST", f"/v1/operations/{failed['id']}/retry")
    assert "AWS::SageMaker::Cluster" in {c["kind"] for c in plan["changes"] if c["action"] == "create"}
    assert "sagemaker.CreateCluster" in {f"{c['service']}.{c['operation']}" for c in made}
    assert unplanned(plan, made) == [], unplanned(plan, made)
    gone = api.http.delete(f"/v1/clusters/{cname}", params={"confirm": cname})
    assert api.wait_terminal(gone.json()["id"], 180)["status"] == "SUCCEEDED"


def test_importing_an_eks_cluster_makes_only_what_its_plan_listed(api: Any, aws: Any) -> None:
    eks, ec2 = aws("eks"), aws("ec2")
    vpc = ec2.create_vpc(CidrBlock="172.21.0.0/16")["Vpc"]["VpcId"]
    subs = [ec2.create_subnet(VpcId=vpc, CidrBlock=f"172.21.{i}.0/24", AvailabilityZone=z)["Subnet"]["SubnetId"]
            for i, z in enumerate(("us-west-2a", "us-west-2b"))]
    eks_name = name("theirs")
    eks.create_cluster(name=eks_name, roleArn="arn:aws:iam::123456789012:role/theirs",
                       resourcesVpcConfig={"subnetIds": subs},
                       accessConfig={"authenticationMode": "API_AND_CONFIG_MAP"})
    deadline = time.monotonic() + 60
    while eks.describe_cluster(name=eks_name)["cluster"]["status"] != "ACTIVE":
        assert time.monotonic() < deadline
        time.sleep(0.5)
    plan, made, _ = _run(api, "POST", "/v1/clusters/import", {"region": "us-west-2", "eks_cluster_name": eks_name})
    assert made and unplanned(plan, made) == [], (unplanned(plan, made), plan["changes"])
    plan, made, _ = _run(api, "DELETE", f"/v1/clusters/{eks_name}", params={"confirm": eks_name})
    assert unplanned(plan, made) == [], (unplanned(plan, made), plan["changes"])
    assert eks.describe_cluster(name=eks_name)["cluster"]["status"] == "ACTIVE"  # theirs: left, as planned


def test_deleting_a_cluster_makes_only_what_its_plan_listed(api: Any, cluster: str) -> None:
    plan, made, _ = _run(api, "DELETE", f"/v1/clusters/{cluster}", params={"confirm": cluster})
    deleted = {c["kind"] for c in plan["changes"] if c["action"] == "delete"}
    assert {"AWS::SageMaker::Cluster", "AWS::EKS::Cluster"} <= deleted
    assert made and unplanned(plan, made) == [], (unplanned(plan, made), plan["changes"])
