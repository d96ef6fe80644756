"""What the `steps` function may do: everything the cluster lifecycle needs, and no more.

Boundaries, in the order a cluster is built:

* EC2 networking: created only with the tag ``podstart:managed=true`` (tag-on-create), changed and
  deleted only when it carries that tag; Describe* is read-only and account-wide.
* EKS: clusters, add-ons, access entries and pod identity associations of this account/region.
* IAM: only roles and customer policies named ``podstart-*`` or under the path ``/podstart/``;
  PassRole only to SageMaker, EKS and EKS Pod Identity; managed policies attachable to those roles
  are an allow-list; OIDC providers only for EKS issuers.
* SageMaker HyperPod cluster operations, FSx for Lustre (tag-scoped deletes), the PodStart buckets.
"""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_iam as iam

from infra.data import DataConstruct
from infra.nag import grant

MANAGED_TAG = "podstart:managed"
_P, _R, _A = cdk.Aws.PARTITION, cdk.Aws.REGION, cdk.Aws.ACCOUNT_ID

_EC2_CREATE = [
    "ec2:CreateVpc",
    "ec2:CreateSubnet",
    "ec2:CreateRouteTable",
    "ec2:CreateInternetGateway",
    "ec2:CreateNatGateway",
    "ec2:AllocateAddress",
    "ec2:CreateSecurityGroup",
    "ec2:CreateVpcEndpoint",
]
_EC2_MUTATE = [
    "ec2:ModifyVpcAttribute",
    "ec2:ModifySubnetAttribute",
    "ec2:CreateRoute",
    "ec2:DeleteRoute",
    "ec2:AssociateRouteTable",
    "ec2:DisassociateRouteTable",
    "ec2:AttachInternetGateway",
    "ec2:DetachInternetGateway",
    "ec2:AuthorizeSecurityGroupIngress",
    "ec2:AuthorizeSecurityGroupEgress",
    "ec2:RevokeSecurityGroupIngress",
    "ec2:RevokeSecurityGroupEgress",
    "ec2:ModifyVpcEndpoint",
    "ec2:DeleteVpc",
    "ec2:DeleteSubnet",
    "ec2:DeleteRouteTable",
    "ec2:DeleteInternetGateway",
    "ec2:DeleteNatGateway",
    "ec2:ReleaseAddress",
    "ec2:DisassociateAddress",
    "ec2:DeleteSecurityGroup",
    "ec2:DeleteVpcEndpoints",
]
_PASSABLE_TO = ["sagemaker.amazonaws.com", "eks.amazonaws.com", "pods.eks.amazonaws.com"]
_SERVICE_LINKED = [
    "eks.amazonaws.com",
    "sagemaker.amazonaws.com",
    "fsx.amazonaws.com",
    "s3.data-source.lustre.fsx.amazonaws.com",
]


def _arn(service: str, resource: str, *, region: str = _R) -> str:
    return f"arn:{_P}:{service}:{region}:{_A}:{resource}"


def _podstart_iam(kind: str) -> list[str]:
    return [f"arn:{_P}:iam::{_A}:{kind}/podstart-*", f"arn:{_P}:iam::{_A}:{kind}/podstart/*"]


def add_steps_permissions(role: iam.Role, *, data: DataConstruct) -> None:
    _ec2(role)
    _eks(role)
    _iam(role)
    _sagemaker(role)
    _fsx(role)
    _buckets(role, data)
    grant(
        role,
        sid="WhoAmI",
        actions=["sts:GetCallerIdentity"],
        resources=["*"],
        reason="sts:GetCallerIdentity has no resource; used to build ARNs and EKS tokens.",
    )


def _ec2(role: iam.Role) -> None:
    ec2_any = _arn("ec2", "*")
    grant(
        role,
        sid="Ec2Describe",
        actions=["ec2:Describe*"],
        resources=["*"],
        reason="EC2 Describe* actions are read-only and support no resource-level permissions.",
    )
    grant(
        role,
        sid="Ec2CreateTaggedNetwork",
        actions=_EC2_CREATE,
        resources=[ec2_any],
        conditions={"StringEquals": {f"aws:RequestTag/{MANAGED_TAG}": "true"}},
        reason="Network resources get their ids at creation; creation requires the podstart:managed tag.",
    )
    grant(
        role,
        sid="Ec2CreateReferencedNetwork",
        actions=[
            "ec2:CreateSubnet",
            "ec2:CreateRouteTable",
            "ec2:CreateSecurityGroup",
            "ec2:CreateVpcEndpoint",
            "ec2:CreateNatGateway",
        ],
        resources=[
            _arn("ec2", "vpc/*"),
            _arn("ec2", "subnet/*"),
            _arn("ec2", "elastic-ip/*"),
            _arn("ec2", "route-table/*"),
            _arn("ec2", "security-group/*"),
        ],
        conditions={"StringEquals": {f"aws:ResourceTag/{MANAGED_TAG}": "true"}},
        reason="Subnets, route tables, endpoints and NAT are created inside PodStart-managed (tagged) VPCs.",
    )
    grant(
        role,
        sid="Ec2TagOnCreate",
        actions=["ec2:CreateTags"],
        resources=[ec2_any],
        conditions={"StringEquals": {"ec2:CreateAction": _EC2_CREATE}},
        reason="Tagging allowed only as part of the PodStart create calls (tag-on-create).",
    )
    grant(
        role,
        sid="Ec2ChangeManagedNetwork",
        actions=_EC2_MUTATE,
        resources=[ec2_any],
        conditions={"StringEquals": {f"aws:ResourceTag/{MANAGED_TAG}": "true"}},
        reason="Changes and deletes only resources tagged podstart:managed=true; ids are not known ahead.",
    )


def _eks(role: iam.Role) -> None:
    grant(
        role,
        sid="EksClusters",
        actions=[
            "eks:CreateCluster",
            "eks:DescribeCluster",
            "eks:DeleteCluster",
            "eks:UpdateClusterConfig",
            "eks:UpdateClusterVersion",
            "eks:DescribeUpdate",
            "eks:TagResource",
            "eks:ListAddons",
            "eks:CreateAddon",
            "eks:ListAccessEntries",
            "eks:CreateAccessEntry",
            "eks:ListPodIdentityAssociations",
            "eks:CreatePodIdentityAssociation",
        ],
        resources=[_arn("eks", "cluster/*")],
        reason="User-named EKS clusters of this account/region, created and orchestrated by PodStart.",
    )
    grant(
        role,
        sid="EksClusterChildren",
        actions=[
            "eks:DescribeAddon",
            "eks:UpdateAddon",
            "eks:DeleteAddon",
            "eks:TagResource",
            "eks:DescribeAccessEntry",
            "eks:DeleteAccessEntry",
            "eks:UpdateAccessEntry",
            "eks:AssociateAccessPolicy",
            "eks:DisassociateAccessPolicy",
            "eks:ListAssociatedAccessPolicies",
            "eks:DescribePodIdentityAssociation",
            "eks:DeletePodIdentityAssociation",
            "eks:UpdatePodIdentityAssociation",
        ],
        resources=[
            _arn("eks", "addon/*/*/*"),
            _arn("eks", "access-entry/*/*/*/*/*"),
            _arn("eks", "podidentityassociation/*/*"),
        ],
        reason="Add-ons, access entries and pod identity associations of the clusters above "
        "(ids assigned by EKS).",
    )
    grant(
        role,
        sid="EksCatalog",
        actions=["eks:ListClusters", "eks:DescribeAddonVersions", "eks:DescribeClusterVersions"],
        resources=["*"],
        reason="Read-only EKS List/Describe-versions calls support no resource-level permissions.",
    )


def _iam(role: iam.Role) -> None:
    roles = _podstart_iam("role")
    grant(
        role,
        sid="IamPodStartRoles",
        actions=[
            "iam:CreateRole",
            "iam:DeleteRole",
            "iam:GetRole",
            "iam:TagRole",
            "iam:UntagRole",
            "iam:UpdateAssumeRolePolicy",
            "iam:PutRolePolicy",
            "iam:GetRolePolicy",
            "iam:DeleteRolePolicy",
            "iam:ListRolePolicies",
            "iam:ListAttachedRolePolicies",
            "iam:DetachRolePolicy",
        ],
        resources=roles,
        reason="Only roles named podstart-* or under /podstart/ (cluster, node and pod identity roles).",
    )
    grant(
        role,
        sid="IamAttachAllowListedPolicies",
        actions=["iam:AttachRolePolicy"],
        resources=roles,
        conditions={
            "ArnLike": {
                "iam:PolicyARN": [
                    f"arn:{_P}:iam::aws:policy/AmazonEKS*",
                    f"arn:{_P}:iam::aws:policy/AmazonSageMakerClusterInstanceRolePolicy",
                    f"arn:{_P}:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly",
                    f"arn:{_P}:iam::aws:policy/CloudWatchAgentServerPolicy",
                    *_podstart_iam("policy"),
                ]
            }
        },
        reason="Attach only the EKS/HyperPod managed policies or PodStart's own policies to PodStart roles.",
    )
    grant(
        role,
        sid="IamPassPodStartRoles",
        actions=["iam:PassRole"],
        resources=roles,
        conditions={"StringEquals": {"iam:PassedToService": _PASSABLE_TO}},
        reason="Pass only PodStart roles, and only to SageMaker, EKS and EKS Pod Identity.",
    )
    grant(
        role,
        sid="IamPodStartPolicies",
        actions=[
            "iam:CreatePolicy",
            "iam:DeletePolicy",
            "iam:GetPolicy",
            "iam:GetPolicyVersion",
            "iam:CreatePolicyVersion",
            "iam:DeletePolicyVersion",
            "iam:ListPolicyVersions",
            "iam:TagPolicy",
        ],
        resources=_podstart_iam("policy"),
        reason="Only customer managed policies named podstart-* or under /podstart/.",
    )
    grant(
        role,
        sid="IamEksOidcProviders",
        actions=[
            "iam:CreateOpenIDConnectProvider",
            "iam:GetOpenIDConnectProvider",
            "iam:DeleteOpenIDConnectProvider",
            "iam:TagOpenIDConnectProvider",
        ],
        resources=[f"arn:{_P}:iam::{_A}:oidc-provider/oidc.eks.*"],
        reason="OIDC providers for EKS cluster issuers only (issuer ids are assigned by EKS).",
    )
    grant(
        role,
        sid="IamServiceLinkedRoles",
        actions=["iam:CreateServiceLinkedRole"],
        resources=[f"arn:{_P}:iam::{_A}:role/aws-service-role/*"],
        conditions={"StringEquals": {"iam:AWSServiceName": _SERVICE_LINKED}},
        reason="First use of EKS, SageMaker and FSx in an account creates their service-linked roles.",
    )


def _sagemaker(role: iam.Role) -> None:
    grant(
        role,
        sid="HyperPodClusters",
        actions=[
            "sagemaker:CreateCluster",
            "sagemaker:DescribeCluster",
            "sagemaker:UpdateCluster",
            "sagemaker:DeleteCluster",
            "sagemaker:UpdateClusterSoftware",
            "sagemaker:ListClusterNodes",
            "sagemaker:DescribeClusterNode",
            "sagemaker:BatchDeleteClusterNodes",
            "sagemaker:BatchRebootClusterNodes",
            "sagemaker:BatchReplaceClusterNodes",
            "sagemaker:BatchAddClusterNodes",
            "sagemaker:StartClusterHealthCheck",
            "sagemaker:ListClusterEvents",
            "sagemaker:DescribeClusterEvent",
            "sagemaker:AddTags",
            "sagemaker:ListTags",
        ],
        resources=[_arn("sagemaker", "cluster/*")],
        reason="User-named HyperPod clusters of this account/region; PodStart's lifecycle operations.",
    )
    grant(
        role,
        sid="HyperPodTrainingPlans",
        actions=["sagemaker:DescribeTrainingPlan"],
        resources=[_arn("sagemaker", "training-plan/*")],
        reason="Instance groups may reference any of the account's training plans (read-only).",
    )
    grant(
        role,
        sid="HyperPodList",
        actions=["sagemaker:ListClusters"],
        resources=["*"],
        reason="sagemaker:ListClusters supports no resource-level permissions.",
    )


def _fsx(role: iam.Role) -> None:
    grant(
        role,
        sid="FsxCreateTagged",
        actions=["fsx:CreateFileSystem", "fsx:CreateDataRepositoryAssociation", "fsx:TagResource"],
        resources=[_arn("fsx", "file-system/*"), _arn("fsx", "association/*")],
        conditions={"StringEquals": {f"aws:RequestTag/{MANAGED_TAG}": "true"}},
        reason="FSx for Lustre shared storage, created only with the podstart:managed tag.",
    )
    grant(
        role,
        sid="FsxChangeTagged",
        actions=["fsx:DeleteFileSystem", "fsx:UpdateFileSystem", "fsx:DeleteDataRepositoryAssociation"],
        resources=[_arn("fsx", "file-system/*"), _arn("fsx", "association/*")],
        conditions={"StringEquals": {f"aws:ResourceTag/{MANAGED_TAG}": "true"}},
        reason="Deletes and updates only PodStart-tagged file systems and associations.",
    )
    grant(
        role,
        sid="FsxDescribe",
        actions=["fsx:DescribeFileSystems", "fsx:DescribeDataRepositoryAssociations"],
        resources=["*"],
        reason="FSx Describe* calls are read-only and list across the account.",
    )


def _buckets(role: iam.Role, data: DataConstruct) -> None:
    buckets = (data.data_bucket, data.assets_bucket)
    grant(
        role,
        sid="PodStartBuckets",
        actions=["s3:ListBucket", "s3:GetBucketLocation", "s3:GetObject", "s3:PutObject", "s3:DeleteObject"],
        resources=[b.bucket_arn for b in buckets] + [b.arn_for_objects("*") for b in buckets],
        reason="Objects of the PodStart data and assets buckets only (lifecycle scripts, model downloads).",
    )
