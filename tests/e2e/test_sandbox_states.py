"""The sandbox's terminal-failure control (POST /v1/sandbox/states): AWS resources land in the
failed states AWS reports, at once or on their next create, and boto3 sees status and reason."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from tests.e2e.conftest import eventually

GROUP = {"InstanceGroupName": "accel", "InstanceType": "ml.c5.large", "InstanceCount": 1,
         "ExecutionRole": "arn:aws:iam::123456789012:role/hp",
         "LifeCycleConfig": {"SourceS3Uri": "s3://lifecycle/scripts/", "OnCreate": "on_create.sh"}}
ROLE = "arn:aws:iam::123456789012:role/eks"


def name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def states(api: Any, **body: Any) -> Any:
    return api.post("/v1/sandbox/states", json=body)


def _eks_active(aws: Any, cluster: str) -> None:
    aws("eks").create_cluster(name=cluster, roleArn=ROLE, resourcesVpcConfig={"subnetIds": []})
    eventually(lambda: aws("eks").describe_cluster(name=cluster)["cluster"]["status"] == "ACTIVE")


def _file_system(aws: Any) -> str:
    ec2 = aws("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.201.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.201.0.0/20", AvailabilityZone="us-west-2a")["Subnet"]
    return str(aws("fsx").create_file_system(
        FileSystemType="LUSTRE", StorageCapacity=1200, SubnetIds=[subnet["SubnetId"]],
        LustreConfiguration={"DeploymentType": "PERSISTENT_2", "PerUnitStorageThroughput": 250},
    )["FileSystem"]["FileSystemId"])


def test_a_hyperpod_cluster_fails_now_with_its_failure_message(api: Any, aws: Any) -> None:
    cluster = name("hpf")
    aws("sagemaker").create_cluster(ClusterName=cluster, InstanceGroups=[GROUP])
    r = states(api, service="sagemaker", region="us-west-2", cluster=cluster, status="Failed",
               reason="Lifecycle script on_create.sh exited with 1")
    assert r.status_code == 200, r.text
    assert r.json()["ClusterStatus"] == "Failed" and r.json()["ClusterName"] == cluster
    seen = aws("sagemaker").describe_cluster(ClusterName=cluster)
    assert seen["ClusterStatus"] == "Failed"
    assert seen["FailureMessage"] == "Lifecycle script on_create.sh exited with 1"
    time.sleep(1300 / api_time_scale(api))  # past the creation time: it stays Failed
    assert aws("sagemaker").describe_cluster(ClusterName=cluster)["ClusterStatus"] == "Failed"


def api_time_scale(api: Any) -> float:
    return float(api.get("/v1/sandbox").json()["time_scale"])


def test_an_eks_cluster_and_an_add_on_fail_now_with_health_issues(api: Any, aws: Any) -> None:
    cluster = name("eksf")
    _eks_active(aws, cluster)
    eks = aws("eks")
    eks.create_addon(clusterName=cluster, addonName="coredns")
    eventually(lambda: eks.describe_addon(clusterName=cluster, addonName="coredns")["addon"]["status"] == "ACTIVE")

    r = states(api, service="eks", cluster=cluster, addon="coredns", status="DEGRADED",
               reason="2 of 2 replicas are not ready", code="InsufficientNumberOfReplicas")
    assert r.status_code == 200, r.text
    addon = eks.describe_addon(clusterName=cluster, addonName="coredns")["addon"]
    assert addon["status"] == "DEGRADED" == r.json()["addon"]["status"]
    assert addon["health"]["issues"] == [{"code": "InsufficientNumberOfReplicas",
                                          "message": "2 of 2 replicas are not ready", "resourceIds": ["coredns"]}]
    for status in ("UPDATE_FAILED", "CREATE_FAILED"):
        assert states(api, service="eks", cluster=cluster, addon="coredns", status=status,
                      reason=f"{status} here").status_code == 200
        addon = eks.describe_addon(clusterName=cluster, addonName="coredns")["addon"]
        assert addon["status"] == status and addon["health"]["issues"][0]["message"] == f"{status} here"

    r = states(api, service="eks", cluster=cluster, status="FAILED", reason="Subnet subnet-1 was deleted")
    assert r.status_code == 200, r.text
    described = eks.describe_cluster(name=cluster)["cluster"]
    assert described["status"] == "FAILED"
    assert described["health"]["issues"][0]["message"] == "Subnet subnet-1 was deleted"


def test_an_fsx_file_system_fails_now_with_failure_details(api: Any, aws: Any) -> None:
    fs_id = _file_system(aws)
    r = states(api, service="fsx", file_system_id=fs_id, status="FAILED", reason="Insufficient capacity in AZ")
    assert r.status_code == 200, r.text
    fs = aws("fsx").describe_file_systems(FileSystemIds=[fs_id])["FileSystems"][0]
    assert fs["Lifecycle"] == "FAILED" == r.json()["FileSystems"][0]["Lifecycle"]
    assert fs["FailureDetails"] == {"Message": "Insufficient capacity in AZ"}
    time.sleep(800 / api_time_scale(api))  # past the creation time: it stays FAILED
    assert aws("fsx").describe_file_systems(FileSystemIds=[fs_id])["FileSystems"][0]["Lifecycle"] == "FAILED"


def test_the_next_create_fails_part_way_for_each_kind(api: Any, aws: Any) -> None:
    hp, eks_cluster, with_addon = name("arm-hp"), name("arm-eks"), name("arm-addon")
    armed = [
        dict(service="sagemaker", cluster=hp, status="Failed", reason="InsufficientCapacity for ml.g5.8xlarge"),
        dict(service="eks", cluster=eks_cluster, status="FAILED", reason="IAM role not found", code="IamRoleNotFound"),
        dict(service="eks", cluster=with_addon, addon="aws-fsx-csi-driver", status="CREATE_FAILED",
             reason="AccessDenied on fsx:DescribeFileSystems", code="AccessDenied"),
        dict(service="fsx", status="FAILED", reason="The subnet has no free addresses"),
    ]
    for body in armed:
        r = states(api, when="next_create", **body)
        assert r.status_code == 201, r.text
        assert r.json()["armed"]["status"] == body["status"]
    assert len(api.get("/v1/sandbox/states").json()["items"]) >= 4

    sm, eks, fsx = aws("sagemaker"), aws("eks"), aws("fsx")
    _eks_active(aws, with_addon)
    # Each starts as a normal create ...
    sm.create_cluster(ClusterName=hp, InstanceGroups=[GROUP])
    assert sm.describe_cluster(ClusterName=hp)["ClusterStatus"] == "Creating"
    eks.create_cluster(name=eks_cluster, roleArn=ROLE, resourcesVpcConfig={"subnetIds": []})
    assert eks.describe_cluster(name=eks_cluster)["cluster"]["status"] == "CREATING"
    assert eks.create_addon(clusterName=with_addon, addonName="aws-fsx-csi-driver")["addon"]["status"] == "CREATING"
    fs_id = _file_system(aws)
    assert fsx.describe_file_systems(FileSystemIds=[fs_id])["FileSystems"][0]["Lifecycle"] == "CREATING"

    # ... and ends in the failed state with the reason.
    failed = eventually(lambda: (c := sm.describe_cluster(ClusterName=hp))["ClusterStatus"] == "Failed" and c)
    assert failed["FailureMessage"] == "InsufficientCapacity for ml.g5.8xlarge"
    assert {n["InstanceStatus"]["Status"] for n in sm.list_cluster_nodes(ClusterName=hp)["ClusterNodeSummaries"]} \
        == {"Failure"}
    cluster = eventually(lambda: (c := eks.describe_cluster(name=eks_cluster)["cluster"])["status"] == "FAILED" and c)
    assert cluster["health"]["issues"][0]["code"] == "IamRoleNotFound"
    addon = eventually(lambda: (a := eks.describe_addon(clusterName=with_addon, addonName="aws-fsx-csi-driver")
                                ["addon"])["status"] == "CREATE_FAILED" and a)
    assert addon["health"]["issues"][0] == {
        "code": "AccessDenied", "message": "AccessDenied on fsx:DescribeFileSystems",
        "resourceIds": ["aws-fsx-csi-driver"]}
    fs = eventually(lambda: (f := fsx.describe_file_systems(FileSystemIds=[fs_id])["FileSystems"][0])
                    ["Lifecycle"] == "FAILED" and f)
    assert fs["FailureDetails"]["Message"] == "The subnet has no free addresses"

    # Each arm fires once: the next file system is healthy.
    assert api.get("/v1/sandbox/states").json()["items"] == []
    again = _file_system(aws)
    eventually(lambda: fsx.describe_file_systems(FileSystemIds=[again])["FileSystems"][0]["Lifecycle"] == "AVAILABLE")


def test_the_next_add_on_update_fails(api: Any, aws: Any) -> None:
    cluster = name("arm-upd")
    _eks_active(aws, cluster)
    eks = aws("eks")
    eks.create_addon(clusterName=cluster, addonName="vpc-cni")
    eventually(lambda: eks.describe_addon(clusterName=cluster, addonName="vpc-cni")["addon"]["status"] == "ACTIVE")
    assert states(api, when="next_update", service="eks", cluster=cluster, addon="vpc-cni", status="UPDATE_FAILED",
                  reason="ConfigurationConflict on aws-node").status_code == 201
    eks.update_addon(clusterName=cluster, addonName="vpc-cni", addonVersion="v1.19.2-eksbuild.1")
    addon = eventually(lambda: (a := eks.describe_addon(clusterName=cluster, addonName="vpc-cni")["addon"])
                       ["status"] == "UPDATE_FAILED" and a)
    assert addon["health"]["issues"][0]["message"] == "ConfigurationConflict on aws-node"


def test_arms_can_be_listed_and_cleared(api: Any) -> None:
    assert states(api, when="next_create", service="fsx", status="FAILED").status_code == 201
    assert api.get("/v1/sandbox/states").json()["items"][-1]["service"] == "fsx"
    assert api.http.delete("/v1/sandbox/states").status_code == 204
    assert api.get("/v1/sandbox/states").json()["items"] == []


def test_a_missing_resource_is_404(api: Any) -> None:
    for body in (dict(service="sagemaker", cluster="no-such-cluster", status="Failed"),
                 dict(service="eks", cluster="no-such-cluster", status="FAILED"),
                 dict(service="eks", cluster="no-such-cluster", addon="coredns", status="DEGRADED"),
                 dict(service="fsx", file_system_id="fs-0123456789abcdef0", status="FAILED")):
        r = states(api, **body)
        assert r.status_code == 404, (body, r.text)
        assert r.headers["content-type"].startswith("application/problem+json")


BAD = [
    ({"cluster": "x", "status": "Failed"}, "service"),
    ({"service": "s3", "status": "FAILED"}, "service"),
    ({"service": "sagemaker", "cluster": "x", "status": "FAILED"}, "status"),
    ({"service": "eks", "cluster": "x", "addon": "coredns", "status": "FAILED"}, "status"),
    ({"service": "eks", "status": "FAILED"}, "cluster"),
    ({"service": "sagemaker", "cluster": "x", "addon": "coredns", "status": "Failed"}, "addon"),
    ({"service": "fsx", "status": "FAILED"}, "file_system_id"),
    ({"service": "fsx", "file_system_id": "vol-1", "status": "FAILED"}, "file_system_id"),
    ({"service": "eks", "cluster": "x", "status": "FAILED", "region": "mars"}, "region"),
    ({"service": "eks", "cluster": "x", "status": "FAILED", "when": "later"}, "when"),
    ({"service": "eks", "cluster": "x", "status": "FAILED", "when": "next_update"}, "when"),
    ({"service": "eks", "cluster": "x", "status": "FAILED", "code": "Nope"}, "code"),
    ({"service": "eks", "cluster": "x", "status": "FAILED", "colour": "red"}, "colour"),
    ({"service": "eks", "cluster": "x", "status": "FAILED", "reason": ""}, "reason"),
]


@pytest.mark.parametrize(("body", "field"), BAD, ids=[b[1] + "-" + str(i) for i, b in enumerate(BAD)])
def test_bad_requests_are_422_naming_the_field(api: Any, body: dict[str, Any], field: str) -> None:
    r = states(api, **body)
    assert r.status_code == 422, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    assert r.json()["errors"][0]["loc"] == ["body", field], r.json()


def test_a_body_that_is_not_json_is_422(api: Any) -> None:
    r = api.http.post("/v1/sandbox/states", content=b"{not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body"]


def test_only_the_admin_token_may_change_states(operator: Any, viewer: Any, anonymous: Any) -> None:
    body = {"service": "eks", "cluster": "x", "status": "FAILED"}
    assert operator.post("/v1/sandbox/states", json=body).status_code == 403
    assert viewer.post("/v1/sandbox/states", json=body).status_code == 403
    assert anonymous.post("/v1/sandbox/states", json=body).status_code == 401
