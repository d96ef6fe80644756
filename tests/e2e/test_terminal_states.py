"""Terminal AWS states end steps: a workflow watching a resource that failed in AWS fails at that step
with AWS's reason, instead of polling it for hours (item 9)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def body(name: str) -> dict[str, Any]:
    return {"name": name, "region": "us-west-2", "instance_groups": [
        {"name": "accel", "instance_type": "ml.c5.large", "instance_count": 1, "availability_zone": "us-west-2a"}]}


@pytest.fixture(scope="module")
def cluster(api: Any) -> str:
    name = unique("term")
    op = api.post("/v1/clusters", json=body(name)).json()
    assert api.wait_terminal(op["id"], timeout=180)["status"] == "SUCCEEDED"
    return name


def test_scaling_a_cluster_that_failed_in_aws_fails_with_the_reason(api: Any, cluster: str) -> None:
    r = api.post("/v1/sandbox/states", json={"service": "sagemaker", "region": "us-west-2", "cluster": cluster,
                                             "status": "Failed", "reason": "Insufficient capacity for ml.g5.8xlarge"})
    assert r.status_code == 200, r.text
    scaled = api.http.patch(f"/v1/clusters/{cluster}/instance-groups/accel", json={"instance_count": 2})
    assert scaled.status_code == 202, scaled.text
    op = api.wait_terminal(scaled.json()["id"], timeout=60)
    assert op["status"] == "FAILED" and op["error"]["code"] == "HyperPodClusterFailed"
    assert "Insufficient capacity" in op["error"]["message"]


def test_an_addon_that_fails_to_create_fails_the_dependencies_step_with_the_reason(api: Any) -> None:
    name = unique("addon")
    armed = api.post("/v1/sandbox/states", json={"service": "eks", "region": "us-west-2", "cluster": name,
                                                 "addon": "aws-mountpoint-s3-csi-driver", "status": "CREATE_FAILED",
                                                 "reason": "The IAM role lacks s3:ListBucket", "when": "next_create"})
    assert armed.status_code == 201, armed.text
    op = api.wait_terminal(api.post("/v1/clusters", json=body(name)).json()["id"], timeout=180)
    assert op["status"] == "FAILED" and op["phase"] == "dependencies"
    step = next(s for s in op["steps"] if s["name"] == "dependencies")
    assert step["status"] == "FAILED" and "s3:ListBucket" in step["error"]["message"]


def test_importing_an_eks_cluster_in_failed_state_fails_discover_with_the_reason(api: Any, aws: Any) -> None:
    eks = aws("eks")
    name = unique("broken")
    eks.create_cluster(name=name, roleArn="arn:aws:iam::123456789012:role/theirs", resourcesVpcConfig={"subnetIds": []},
                       accessConfig={"authenticationMode": "API_AND_CONFIG_MAP"})
    r = api.post("/v1/sandbox/states", json={"service": "eks", "region": "us-west-2", "cluster": name,
                                             "status": "FAILED", "reason": "Subnets are out of addresses"})
    assert r.status_code == 200, r.text
    op = api.wait_terminal(api.post("/v1/clusters/import", json={"region": "us-west-2",
                                                                  "eks_cluster_name": name}).json()["id"], timeout=60)
    assert op["status"] == "FAILED" and op["error"]["code"] == "EksClusterNotActive"
    assert "out of addresses" in op["error"]["message"]
