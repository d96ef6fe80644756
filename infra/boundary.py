"""The permissions boundary on every IAM role PodStart's steps function creates at run time.

The per-cluster roles (EKS cluster role, HyperPod execution role, S3 CSI pod-identity role, and
feature roles to come) are made by the steps function, which may create them only with this
boundary (``iam:PermissionsBoundary`` condition, see :mod:`infra.steps_policy`). A role's
effective permissions are the intersection of its own policies and this boundary, so whatever a
role is given, it can never do more than what is listed here:

* what ``AmazonEKSClusterPolicy`` grants an EKS cluster role (EC2, load balancers, volumes);
* what ``AmazonSageMakerClusterInstanceRolePolicy`` grants HyperPod nodes (cluster logs and
  metrics, SSM sessions, ``sagemaker-*`` buckets of this account), plus what HyperPod-on-EKS nodes
  need beside it (VPC CNI network interfaces, ECR image pulls, EKS Pod Identity);
* the PodStart data bucket (S3 Mountpoint CSI driver) and the assets bucket's lifecycle scripts;
* the MLflow tracking API a training job uses (experiments, runs, metrics, params, tags) on this account's
  SageMaker MLflow tracking servers: a job's role allows ``sagemaker-mlflow:*`` on its one server, and this list
  is what that comes to.

Nothing in it lets a role escalate: no IAM action but the load balancer service-linked role, no
STS action, no service-wide wildcard.
"""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from constructs import Construct

from functions.domain.tenancy import Registration
from infra.checkov import skip
from infra.data import DataConstruct
from infra.nag import acknowledge_wildcards

_P, _A = cdk.Aws.PARTITION, cdk.Aws.ACCOUNT_ID

# AmazonEKSClusterPolicy, as AWS publishes it (the EKS control plane acts with the cluster role).
EKS_CLUSTER_ROLE_ACTIONS = [
    "autoscaling:DescribeAutoScalingGroups",
    "autoscaling:UpdateAutoScalingGroup",
    "ec2:AttachVolume",
    "ec2:AuthorizeSecurityGroupIngress",
    "ec2:CreateRoute",
    "ec2:CreateSecurityGroup",
    "ec2:CreateTags",
    "ec2:CreateVolume",
    "ec2:DeleteRoute",
    "ec2:DeleteSecurityGroup",
    "ec2:DeleteVolume",
    "ec2:DescribeAccountAttributes",
    "ec2:DescribeAddresses",
    "ec2:DescribeAvailabilityZones",
    "ec2:DescribeDhcpOptions",
    "ec2:DescribeInstanceTopology",
    "ec2:DescribeInstances",
    "ec2:DescribeInternetGateways",
    "ec2:DescribeNetworkInterfaces",
    "ec2:DescribeRouteTables",
    "ec2:DescribeSecurityGroups",
    "ec2:DescribeSubnets",
    "ec2:DescribeVolumes",
    "ec2:DescribeVolumesModifications",
    "ec2:DescribeVpcs",
    "ec2:DetachVolume",
    "ec2:ModifyInstanceAttribute",
    "ec2:ModifyVolume",
    "ec2:RevokeSecurityGroupIngress",
    "elasticloadbalancing:AddTags",
    "elasticloadbalancing:ApplySecurityGroupsToLoadBalancer",
    "elasticloadbalancing:AttachLoadBalancerToSubnets",
    "elasticloadbalancing:ConfigureHealthCheck",
    "elasticloadbalancing:CreateListener",
    "elasticloadbalancing:CreateLoadBalancer",
    "elasticloadbalancing:CreateLoadBalancerListeners",
    "elasticloadbalancing:CreateLoadBalancerPolicy",
    "elasticloadbalancing:CreateTargetGroup",
    "elasticloadbalancing:DeleteListener",
    "elasticloadbalancing:DeleteLoadBalancer",
    "elasticloadbalancing:DeleteLoadBalancerListeners",
    "elasticloadbalancing:DeleteTargetGroup",
    "elasticloadbalancing:DeregisterInstancesFromLoadBalancer",
    "elasticloadbalancing:DeregisterTargets",
    "elasticloadbalancing:DescribeListeners",
    "elasticloadbalancing:DescribeLoadBalancerAttributes",
    "elasticloadbalancing:DescribeLoadBalancerPolicies",
    "elasticloadbalancing:DescribeLoadBalancers",
    "elasticloadbalancing:DescribeTargetGroupAttributes",
    "elasticloadbalancing:DescribeTargetGroups",
    "elasticloadbalancing:DescribeTargetHealth",
    "elasticloadbalancing:DetachLoadBalancerFromSubnets",
    "elasticloadbalancing:ModifyListener",
    "elasticloadbalancing:ModifyLoadBalancerAttributes",
    "elasticloadbalancing:ModifyTargetGroup",
    "elasticloadbalancing:ModifyTargetGroupAttributes",
    "elasticloadbalancing:RegisterInstancesWithLoadBalancer",
    "elasticloadbalancing:RegisterTargets",
    "elasticloadbalancing:SetLoadBalancerPoliciesForBackendServer",
    "elasticloadbalancing:SetLoadBalancerPoliciesOfListener",
    "kms:DescribeKey",
]

# HyperPod-on-EKS nodes run the VPC CNI and pull images with the execution role (SageMaker HyperPod
# EKS prerequisites, "IAM role for SageMaker HyperPod").
HYPERPOD_NODE_NETWORK_ACTIONS = [
    "ec2:AssignPrivateIpAddresses",
    "ec2:AttachNetworkInterface",
    "ec2:CreateNetworkInterface",
    "ec2:CreateNetworkInterfacePermission",
    "ec2:DeleteNetworkInterface",
    "ec2:DeleteNetworkInterfacePermission",
    "ec2:DescribeTags",
    "ec2:DetachNetworkInterface",
    "ec2:ModifyNetworkInterfaceAttribute",
    "ec2:UnassignPrivateIpAddresses",
]
HYPERPOD_NODE_IMAGE_ACTIONS = [
    "ecr:BatchCheckLayerAvailability",
    "ecr:BatchGetImage",
    "ecr:GetAuthorizationToken",
    "ecr:GetDownloadUrlForLayer",
]
HYPERPOD_LOG_ACTIONS = ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:DescribeLogStreams", "logs:PutLogEvents"]
SSM_SESSION_ACTIONS = [
    "ssmmessages:CreateControlChannel",
    "ssmmessages:CreateDataChannel",
    "ssmmessages:OpenControlChannel",
    "ssmmessages:OpenDataChannel",
]


# What a training job does on its MLflow tracking server (mlflow.start_run, log_metric/log_batch/log_params,
# set_tags; Hugging Face's MLflowCallback and VERL's tracker use the same calls).
MLFLOW_JOB_ACTIONS = [
    "sagemaker-mlflow:CreateExperiment",
    "sagemaker-mlflow:CreateRun",
    "sagemaker-mlflow:GetExperiment",
    "sagemaker-mlflow:GetExperimentByName",
    "sagemaker-mlflow:GetMetricHistory",
    "sagemaker-mlflow:GetRun",
    "sagemaker-mlflow:ListArtifacts",
    "sagemaker-mlflow:LogBatch",
    "sagemaker-mlflow:LogInputs",
    "sagemaker-mlflow:LogMetric",
    "sagemaker-mlflow:LogModel",
    "sagemaker-mlflow:LogParam",
    "sagemaker-mlflow:SearchExperiments",
    "sagemaker-mlflow:SearchRuns",
    "sagemaker-mlflow:SetExperimentTag",
    "sagemaker-mlflow:SetTag",
    "sagemaker-mlflow:UpdateRun",
]


class RolesBoundaryConstruct(Construct):
    """One customer managed policy, ``policy``, used only as a permissions boundary."""

    policy: iam.ManagedPolicy

    def __init__(self, scope: Construct, construct_id: str, *, data: DataConstruct,
                 registered: list[Registration] | None = None):
        super().__init__(scope, construct_id)
        self._data = data
        self._registered = list(registered or [])
        self.policy = iam.ManagedPolicy(
            self,
            "Policy",
            path="/podstart/",
            description="PodStart: permissions boundary of every role the steps function creates",
            document=iam.PolicyDocument(statements=self._statements()),
        )
        self._acknowledge()
        reason = ("A permissions boundary grants nothing by itself: it caps the roles the steps function creates. "
                  "Their EKS and HyperPod actions support no resource-level permissions, hence '*'.")
        skip(self.policy, ("CKV_AWS_111", reason), ("CKV_AWS_109", reason))

    @property
    def arn(self) -> str:
        return self.policy.managed_policy_arn

    def _statements(self) -> list[iam.PolicyStatement]:
        data, assets = self._data.data_bucket, self._data.assets_bucket
        return [
            iam.PolicyStatement(
                sid="EksClusterRoleAndNodeNetworking",
                actions=sorted({*EKS_CLUSTER_ROLE_ACTIONS, *HYPERPOD_NODE_NETWORK_ACTIONS}),
                resources=["*"],
            ),
            iam.PolicyStatement(
                sid="LoadBalancerServiceLinkedRole",
                actions=["iam:CreateServiceLinkedRole"],
                resources=["*"],
                conditions={"StringEquals": {"iam:AWSServiceName": "elasticloadbalancing.amazonaws.com"}},
            ),
            iam.PolicyStatement(sid="NodeImages", actions=HYPERPOD_NODE_IMAGE_ACTIONS, resources=["*"]),
            iam.PolicyStatement(
                sid="NodePodIdentity",
                actions=["eks-auth:AssumeRoleForPodIdentity", "eks:DescribeCluster"],
                resources=[f"arn:{_P}:eks:*:{_A}:cluster/*"],
            ),
            iam.PolicyStatement(
                sid="HyperPodClusterLogs",
                actions=HYPERPOD_LOG_ACTIONS,
                resources=[f"arn:{_P}:logs:*:{_A}:log-group:/aws/sagemaker/Clusters/*"],
            ),
            iam.PolicyStatement(
                sid="HyperPodClusterMetrics",
                actions=["cloudwatch:PutMetricData"],
                resources=["*"],
                conditions={"StringEquals": {"cloudwatch:namespace": "/aws/sagemaker/Clusters"}},
            ),
            iam.PolicyStatement(sid="HyperPodNodeSessions", actions=SSM_SESSION_ACTIONS, resources=["*"]),
            iam.PolicyStatement(
                sid="SageMakerBucketsOfThisAccount",
                actions=["s3:ListBucket", "s3:GetObject"],
                resources=[f"arn:{_P}:s3:::sagemaker-*"],
                conditions={"StringEquals": {"aws:ResourceAccount": _A}},
            ),
            iam.PolicyStatement(
                sid="PodStartBuckets",
                actions=["s3:ListBucket"],
                resources=[data.bucket_arn, assets.bucket_arn],
            ),
            iam.PolicyStatement(
                sid="SharedData",
                actions=["s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"],
                resources=[data.arn_for_objects("*")],
            ),
            iam.PolicyStatement(
                sid="LifecycleScripts", actions=["s3:GetObject"], resources=[assets.arn_for_objects("lifecycle/*")]
            ),
            *self._registered_statements(),
            iam.PolicyStatement(
                sid="JobsLogToMlflow",
                actions=MLFLOW_JOB_ACTIONS,
                resources=[f"arn:{_P}:sagemaker:*:{_A}:mlflow-tracking-server/*"],
            ),
        ]

    def _registered_statements(self) -> list[iam.PolicyStatement]:
        """The buckets an admin registered (context podstart:registeredBuckets): a volume's role may list them and
        read/write under their registered prefix (its own policy narrows to its prefix and read_only)."""
        if not self._registered:
            return []
        return [
            iam.PolicyStatement(sid="RegisteredBuckets", actions=["s3:ListBucket"],
                                resources=sorted({f"arn:{_P}:s3:::{r.bucket}" for r in self._registered})),
            iam.PolicyStatement(sid="RegisteredBucketObjects",
                                actions=["s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"],
                                resources=sorted({f"arn:{_P}:s3:::{r.bucket}/{r.prefix}*" for r in self._registered})),
        ]

    def _acknowledge(self) -> None:
        acknowledge_wildcards(
            self.policy,
            actions=[],
            resources=[
                "*",
                f"arn:{_P}:eks:*:{_A}:cluster/*",
                f"arn:{_P}:logs:*:{_A}:log-group:/aws/sagemaker/Clusters/*",
                f"arn:{_P}:s3:::sagemaker-*",
                self._data.data_bucket.arn_for_objects("*"),
                self._data.assets_bucket.arn_for_objects("lifecycle/*"),
                f"arn:{_P}:sagemaker:*:{_A}:mlflow-tracking-server/*",
                *sorted({f"arn:{_P}:s3:::{r.bucket}/{r.prefix}*" for r in self._registered}),
            ],
            reason="A permissions boundary is a ceiling, not a grant: it lists what the roles PodStart makes may "
            "ever do (AmazonEKSClusterPolicy's and HyperPod node actions, which support no resource-level "
            "permissions, on '*'; cluster logs, this account's sagemaker-* and PodStart buckets by ARN; the MLflow "
            "tracking API on this account's tracking servers: each job's own role names its one server).",
        )
