"""Compare a dry run's plan with the AWS calls the sandbox recorded: a dry run makes no mutating call on the
cluster's services, and every mutating call of the real run is of a kind the plan said it would change."""

from __future__ import annotations

from typing import Any

CLUSTER_SERVICES = ("eks", "iam", "sagemaker", "s3", "fsx", "ec2")
READS = ("Describe", "List", "Get", "Head", "Query", "Scan", "BatchGet")


def writes(api: Any, since: int) -> list[dict[str, Any]]:
    """The mutating calls on the cluster's services since `since` (PodStart's own tables and bus aside)."""
    return [c for c in api.calls()[since:]
            if c["service"] in CLUSTER_SERVICES and not c["operation"].startswith(READS)]


def aws_writes(api: Any, since: int) -> list[str]:
    """The names of the mutating calls on the cluster's services since `since`."""
    return [f"{c['service']}.{c['operation']}" for c in writes(api, since)]


def request_writes(api: Any, response: Any) -> list[str]:
    """Every AWS call but reads made while serving this one request, PodStart's own tables and bus included
    (the sandbox tags each call with the API Gateway request id it answers in `x-amzn-RequestId`), so the
    workflows and sweeps running meanwhile do not count."""
    request_id = response.headers["x-amzn-RequestId"]
    return [f"{c['service']}.{c['operation']}" for c in api.calls(request_id=request_id)
            if not c["operation"].startswith(READS)]


def kind_of(call: dict[str, Any]) -> str:
    """The plan kind (functions.domain.plans.Change.kind) an AWS call changes; unknown calls name themselves."""
    service, op = call["service"], call["operation"]
    if service == "eks" and op.endswith("Addon"):
        return "eks-addon"
    if service == "eks" and op.endswith("PodIdentityAssociation"):
        return "AWS::EKS::PodIdentityAssociation"
    if service == "iam" and op.endswith("OpenIDConnectProvider"):
        return "AWS::IAM::OIDCProvider"
    if service == "iam" and ("Role" in op or op.endswith("RolePolicy")):
        return "AWS::IAM::Role"
    if service == "sagemaker" and op == "UpdateCluster":
        return "AWS::SageMaker::Cluster"
    if service == "sagemaker" and op == "StartClusterHealthCheck":
        return "AWS::SageMaker::ClusterNode"
    if service == "ec2" and op == "CreateTags":
        return "AWS::EC2::Subnet"
    if service == "fsx" and op.endswith("FileSystem"):
        return "AWS::FSx::FileSystem"
    return f"{service}.{op}"


def unplanned(plan: dict[str, Any], calls: list[dict[str, Any]]) -> list[str]:
    """Mutating calls whose kind the plan did not list as a create, update or delete."""
    planned = {c["kind"] for c in plan["changes"] if c["action"] != "none"}
    return [f"{c['service']}.{c['operation']}" for c in calls if kind_of(c) not in planned]
