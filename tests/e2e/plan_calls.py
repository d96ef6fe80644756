"""Compare a dry run's plan with the AWS calls the sandbox recorded: a dry run makes no mutating call on the
cluster's services, and every mutating call of the real run is of a kind the plan said it would change."""

from __future__ import annotations

from typing import Any

CLUSTER_SERVICES = ("eks", "iam", "sagemaker", "s3", "fsx", "ec2")
READS = ("Describe", "List", "Get", "Head", "Query", "Scan", "BatchGet", "Search")


def writes(api: Any, since: int) -> list[dict[str, Any]]:
    """The mutating calls on the cluster's services since `since` (PodStart's own tables and bus aside)."""
    return [c for c in api.calls(after=since)
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


# The resource type (as plans name it) each mutating AWS call changes.
CALL_KIND = {
    "ec2.CreateVpc": "AWS::EC2::VPC", "ec2.ModifyVpcAttribute": "AWS::EC2::VPC",
    "ec2.CreateSubnet": "AWS::EC2::Subnet", "ec2.ModifySubnetAttribute": "AWS::EC2::Subnet",
    "ec2.CreateInternetGateway": "AWS::EC2::InternetGateway", "ec2.AttachInternetGateway": "AWS::EC2::InternetGateway",
    "ec2.CreateRouteTable": "AWS::EC2::RouteTable", "ec2.CreateRoute": "AWS::EC2::RouteTable",
    "ec2.AssociateRouteTable": "AWS::EC2::RouteTable", "ec2.AllocateAddress": "AWS::EC2::EIP",
    "ec2.CreateNatGateway": "AWS::EC2::NatGateway", "ec2.CreateVpcEndpoint": "AWS::EC2::VPCEndpoint",
    "ec2.CreateSecurityGroup": "AWS::EC2::SecurityGroup",
    "ec2.AuthorizeSecurityGroupIngress": "AWS::EC2::SecurityGroup",
    "ec2.AuthorizeSecurityGroupEgress": "AWS::EC2::SecurityGroup",
    "iam.CreateRole": "AWS::IAM::Role", "iam.PutRolePolicy": "AWS::IAM::Role", "iam.AttachRolePolicy": "AWS::IAM::Role",
    "iam.TagRole": "AWS::IAM::Role", "iam.CreateOpenIDConnectProvider": "AWS::IAM::OIDCProvider",
    "eks.CreateCluster": "AWS::EKS::Cluster", "eks.TagResource": "AWS::EKS::Cluster",
    "eks.CreateAccessEntry": "AWS::EKS::AccessEntry", "eks.AssociateAccessPolicy": "AWS::EKS::AccessEntry",
    "eks.CreateAddon": "eks-addon", "eks.CreatePodIdentityAssociation": "AWS::EKS::PodIdentityAssociation",
    "s3.PutObject": "AWS::S3::Object", "sagemaker.CreateCluster": "AWS::SageMaker::Cluster",
    "sagemaker.UpdateCluster": "AWS::SageMaker::Cluster", "sagemaker.UpdateClusterSoftware": "AWS::SageMaker::Cluster",
    "sagemaker.CreateTrainingPlan": "AWS::SageMaker::TrainingPlan",
    # and what a delete removes
    "sagemaker.DeleteCluster": "AWS::SageMaker::Cluster", "eks.DeleteCluster": "AWS::EKS::Cluster",
    "eks.UntagResource": "AWS::EKS::Cluster", "eks.DeleteAccessEntry": "AWS::EKS::AccessEntry",
    "eks.DisassociateAccessPolicy": "AWS::EKS::AccessEntry",
    "ec2.DeleteNatGateway": "AWS::EC2::NatGateway", "ec2.ReleaseAddress": "AWS::EC2::EIP",
    "ec2.DeleteVpcEndpoints": "AWS::EC2::VPCEndpoint", "ec2.DisassociateRouteTable": "AWS::EC2::RouteTable",
    "ec2.DeleteRouteTable": "AWS::EC2::RouteTable", "ec2.DeleteRoute": "AWS::EC2::RouteTable",
    "ec2.DetachInternetGateway": "AWS::EC2::InternetGateway", "ec2.DeleteInternetGateway": "AWS::EC2::InternetGateway",
    "ec2.DeleteSubnet": "AWS::EC2::Subnet", "ec2.DeleteSecurityGroup": "AWS::EC2::SecurityGroup",
    "ec2.RevokeSecurityGroupIngress": "AWS::EC2::SecurityGroup",
    "ec2.RevokeSecurityGroupEgress": "AWS::EC2::SecurityGroup", "ec2.DeleteVpc": "AWS::EC2::VPC",
    "iam.DeleteRole": "AWS::IAM::Role", "iam.DeleteRolePolicy": "AWS::IAM::Role",
    "iam.DetachRolePolicy": "AWS::IAM::Role", "iam.UntagRole": "AWS::IAM::Role",
    "s3.DeleteObject": "AWS::S3::Object", "s3.DeleteObjects": "AWS::S3::Object",
}


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
    return CALL_KIND.get(f"{service}.{op}", f"{service}.{op}")


def unplanned(plan: dict[str, Any], calls: list[dict[str, Any]]) -> list[str]:
    """Mutating calls whose kind the plan did not list as a create, update or delete."""
    planned = {c["kind"] for c in plan["changes"] if c["action"] != "none"}
    return [f"{c['service']}.{c['operation']}" for c in calls if kind_of(c) not in planned]
