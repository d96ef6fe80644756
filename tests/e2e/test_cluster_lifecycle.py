"""The rest of the lifecycle through REST: add and scale instance groups, delete safely, import."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from tests.e2e.conftest import kube_client


def name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def group(**over: Any) -> dict[str, Any]:
    return {"name": "accel", "instance_type": "ml.g5.8xlarge", "instance_count": 1,
            "availability_zone": "us-west-2a", **over}


@pytest.fixture(scope="module")
def cluster(api: Any) -> str:
    cname = name("life")
    op = api.post("/v1/clusters", json={"name": cname, "region": "us-west-2", "instance_groups": [group()]}).json()
    assert api.wait_terminal(op["id"])["status"] == "SUCCEEDED"
    return cname


def test_add_instance_group_places_it_in_its_zone_compute_subnet(api: Any, cluster: str, aws: Any) -> None:
    r = api.post(f"/v1/clusters/{cluster}/instance-groups", json=group(name="more", availability_zone="us-west-2b"))
    assert r.status_code == 202, r.text
    op = api.wait_terminal(r.json()["id"])
    assert op["kind"] == "instance_group.add" and op["status"] == "SUCCEEDED", op["error"]
    subnet_id = op["steps"][0]["outputs"]["subnet_id"]
    sub = aws("ec2").describe_subnets(SubnetIds=[subnet_id])["Subnets"][0]
    assert sub["AvailabilityZone"] == "us-west-2b" and sub["CidrBlock"].endswith("/20")
    tags = {t["Key"]: t["Value"] for t in sub["Tags"]}
    assert tags["karpenter.sh/discovery"] == cluster and tags["kubernetes.io/role/internal-elb"] == "1"
    groups = {g["name"]: g for g in api.get(f"/v1/clusters/{cluster}/instance-groups").json()["items"]}
    assert set(groups) == {"accel", "more"} and groups["more"]["target_count"] == 1
    hp = aws("sagemaker").describe_cluster(ClusterName=cluster)
    more = next(g for g in hp["InstanceGroups"] if g["InstanceGroupName"] == "more")
    assert more["OverrideVpcConfig"]["Subnets"] == [subnet_id]


def test_add_instance_group_is_validated_like_create(api: Any, cluster: str) -> None:
    assert api.post(f"/v1/clusters/{cluster}/instance-groups", json=group()).status_code == 409  # name taken
    r = api.post(f"/v1/clusters/{cluster}/instance-groups", json=group(name="efa", efa_only=True))
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "efa_only"]
    r = api.post(f"/v1/clusters/{cluster}/instance-groups", json=group(name="big", instance_count=99))
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "instance_count"]


def test_scale_follows_the_diff_contract_and_keeps_fixed_fields_fixed(api: Any, cluster: str, aws: Any) -> None:
    path = f"/v1/clusters/{cluster}/instance-groups/accel"
    same = api.http.patch(path, json={"instance_count": 1})
    assert same.status_code == 200 and same.json()["changed"] is False
    fixed = api.http.patch(path, json={"capacity_type": "spot"})
    assert fixed.status_code == 409 and fixed.json()["errors"][0]["loc"] == ["body", "capacity_type"]
    r = api.http.patch(path, json={"instance_count": 3})
    assert r.status_code == 202, r.text
    assert api.wait_terminal(r.json()["id"])["status"] == "SUCCEEDED"
    hp = aws("sagemaker").describe_cluster(ClusterName=cluster)
    accel = next(g for g in hp["InstanceGroups"] if g["InstanceGroupName"] == "accel")
    assert accel["TargetCount"] == 3 and accel["InstanceType"] == "ml.g5.8xlarge"
    listed = {g["name"]: g for g in api.get(f"/v1/clusters/{cluster}/instance-groups").json()["items"]}
    assert listed["accel"]["instance_count"] == 3


def test_delete_needs_the_name_typed_and_removes_only_what_podstart_made(api: Any, cluster: str, aws: Any) -> None:
    ec2 = aws("ec2")
    foreign = ec2.create_vpc(CidrBlock="172.31.0.0/16")["Vpc"]["VpcId"]  # not PodStart's
    r = api.http.delete(f"/v1/clusters/{cluster}", params={"confirm": "nope"})
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["query", "confirm"]
    r = api.http.delete(f"/v1/clusters/{cluster}", params={"confirm": cluster})
    assert r.status_code == 202, r.text
    op = api.wait_terminal(r.json()["id"], timeout=180)
    assert op["kind"] == "cluster.delete" and op["status"] == "SUCCEEDED", op["error"]
    assert [s["name"] for s in op["steps"]] == ["storage", "hyperpod_cluster", "dependencies",
                                                 "eks_control_plane", "network"]
    assert api.get(f"/v1/clusters/{cluster}").status_code == 404
    assert cluster not in aws("eks").list_clusters()["clusters"]
    assert not ec2.describe_vpcs(Filters=[{"Name": "tag:podstart:cluster", "Values": [cluster]}])["Vpcs"]
    assert ec2.describe_vpcs(VpcIds=[foreign])["Vpcs"]
    assert all(c["ClusterName"] != cluster for c in aws("sagemaker").list_clusters()["ClusterSummaries"])


def test_viewer_and_operator_cannot_delete(viewer: Any) -> None:
    assert viewer.http.delete("/v1/clusters/x", params={"confirm": "x"}).status_code == 403


def _cluster_roles(sandbox: Any, eks_name: str) -> set[str]:
    from kubernetes import client

    rbac = client.RbacAuthorizationV1Api(kube_client(sandbox, eks_name))
    return {r.metadata.name for r in rbac.list_cluster_role().items}


def test_import_adopts_an_existing_eks_cluster_and_delete_leaves_it(api: Any, aws: Any, sandbox: Any) -> None:
    eks, ec2 = aws("eks"), aws("ec2")
    vpc = ec2.create_vpc(CidrBlock="172.20.0.0/16")["Vpc"]["VpcId"]
    subs = [ec2.create_subnet(VpcId=vpc, CidrBlock=f"172.20.{i}.0/24", AvailabilityZone=z)["Subnet"]["SubnetId"]
            for i, z in enumerate(("us-west-2a", "us-west-2b"))]
    eks_name = name("legacy")
    eks.create_cluster(name=eks_name, roleArn="arn:aws:iam::123456789012:role/theirs",
                       resourcesVpcConfig={"subnetIds": subs},
                       accessConfig={"authenticationMode": "API_AND_CONFIG_MAP"})
    deadline = time.monotonic() + 60
    while eks.describe_cluster(name=eks_name)["cluster"]["status"] != "ACTIVE":
        assert time.monotonic() < deadline
        time.sleep(0.5)
    bad = api.post("/v1/clusters/import", json={"region": "us-west-2", "eks_cluster_name": "no-such-cluster"})
    assert bad.status_code == 422 and bad.json()["errors"][0]["loc"] == ["body", "eks_cluster_name"]
    r = api.post("/v1/clusters/import", json={"region": "us-west-2", "eks_cluster_name": eks_name})
    assert r.status_code == 202, r.text
    op = api.wait_terminal(r.json()["id"])
    assert op["status"] == "SUCCEEDED", op["error"]
    detail = api.get(f"/v1/clusters/{eks_name}").json()
    assert detail["origin"] == "imported" and detail["managed"] is True and detail["status"] == "ACTIVE"
    # two access entries: the workflows' (cluster admin) and the API function's (only the podstart-api group,
    # whose ClusterRole the import applied)
    entries = eks.list_access_entries(clusterName=eks_name)["accessEntries"]
    assert len(entries) == 2
    api_entry = next(e for e in entries if e.endswith("role/podstart-api"))
    assert eks.describe_access_entry(clusterName=eks_name, principalArn=api_entry)["accessEntry"][
        "kubernetesGroups"] == ["podstart-api"]
    assert eks.list_associated_access_policies(clusterName=eks_name, principalArn=api_entry)[
        "associatedAccessPolicies"] == []
    assert "podstart-api" in _cluster_roles(sandbox, eks_name)
    tags = eks.describe_cluster(name=eks_name)["cluster"]["tags"]
    assert tags["podstart:managed"] == "imported"  # access entries only on clusters marked so (IAM condition)
    d = api.http.delete(f"/v1/clusters/{eks_name}", params={"confirm": eks_name})
    assert api.wait_terminal(d.json()["id"])["status"] == "SUCCEEDED"
    assert eks.describe_cluster(name=eks_name)["cluster"]["status"] == "ACTIVE"  # theirs, left alone
    assert eks.list_access_entries(clusterName=eks_name)["accessEntries"] == []
    assert "podstart-api" not in _cluster_roles(sandbox, eks_name)  # PodStart's RBAC went with its entries
    assert "podstart:managed" not in (eks.describe_cluster(name=eks_name)["cluster"].get("tags") or {})
    assert ec2.describe_vpcs(VpcIds=[vpc])["Vpcs"]
