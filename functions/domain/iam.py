"""IAM documents and names for the roles PodStart makes per cluster: least privilege, no `*` on `*`.

Role names carry a short hash of region + cluster, so same-named clusters in two regions share no
role: deleting one leaves the other whole. Every role is created under PodStart's permissions
boundary (the steps function may create roles only with it).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from functions.domain import arns

PATH = "/podstart/"


def scope_hash(region: str, cluster: str) -> str:
    return hashlib.sha256(f"{region}/{cluster}".encode()).hexdigest()[:6]


def role_name(cluster: str, region: str, purpose: str) -> str:
    """`podstart-<cluster>-<purpose>-<hash6>`: at most 9 + 32 + 1 + 10 + 7 = 59 characters."""
    return f"podstart-{cluster}-{purpose[:10]}-{scope_hash(region, cluster)}"[:64]


def trust(service: str, *, tag_session: bool = False) -> str:
    actions: Any = ["sts:AssumeRole", "sts:TagSession"] if tag_session else "sts:AssumeRole"
    return json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"Service": service}, "Action": actions}]})


def eks_cluster_policy(region: str) -> str:
    return arns.aws_managed_policy(region, "AmazonEKSClusterPolicy")


def hyperpod_instance_policy(region: str) -> str:
    return arns.aws_managed_policy(region, "AmazonSageMakerClusterInstanceRolePolicy")


def lifecycle_read_policy(region: str, bucket: str, prefix: str) -> str:
    """HyperPod nodes read only PodStart's lifecycle scripts."""
    b = arns.s3_bucket(region, bucket)
    return json.dumps({"Version": "2012-10-17", "Statement": [
        {"Sid": "ReadLifecycleScripts", "Effect": "Allow", "Action": ["s3:GetObject"],
         "Resource": [f"{b}/{prefix}*"]},
        {"Sid": "ListLifecycleScripts", "Effect": "Allow", "Action": ["s3:ListBucket"],
         "Resource": [b], "Condition": {"StringLike": {"s3:prefix": [f"{prefix}*"]}}},
    ]})


def data_bucket_policy(region: str, bucket: str) -> str:
    """The S3 Mountpoint CSI driver's access: the shared data bucket only (no AmazonS3FullAccess)."""
    b = arns.s3_bucket(region, bucket)
    return json.dumps({"Version": "2012-10-17", "Statement": [
        {"Sid": "ListDataBucket", "Effect": "Allow", "Action": ["s3:ListBucket"], "Resource": [b]},
        {"Sid": "ReadWriteData", "Effect": "Allow",
         "Action": ["s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"],
         "Resource": [f"{b}/*"]},
    ]})


# -- managed features ------------------------------------------------------------------------------
def oidc_trust(provider_arn: str, issuer: str, namespace: str, service_account: str) -> str:
    """IRSA trust for exactly one service account: `<issuer>:sub` and `<issuer>:aud` both pinned."""
    host = issuer.removeprefix("https://")
    return json.dumps({"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": {"Federated": provider_arn}, "Action": "sts:AssumeRoleWithWebIdentity",
        "Condition": {"StringEquals": {f"{host}:sub": f"system:serviceaccount:{namespace}:{service_account}",
                                       f"{host}:aud": "sts.amazonaws.com"}}}]})


def checkpoint_policy(region: str, bucket: str, prefix: str) -> str:
    """Tiered checkpointing's S3 tier: one bucket prefix, object actions only (never s3:*, never `*`)."""
    b = arns.s3_bucket(region, bucket)
    return json.dumps({"Version": "2012-10-17", "Statement": [
        {"Sid": "ListCheckpoints", "Effect": "Allow", "Action": ["s3:ListBucket"], "Resource": [b],
         "Condition": {"StringLike": {"s3:prefix": [f"{prefix}*"]}}},
        {"Sid": "ReadWriteCheckpoints", "Effect": "Allow",
         "Action": ["s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"],
         "Resource": [f"{b}/{prefix}*"]},
    ]})


def model_download_policy(region: str, bucket: str, prefix: str = "models/") -> str:
    """The model download Job: read and write objects under the bucket's models/ prefix (pods see it at
    /data/models/), list only that prefix. No delete, never s3:*, never another bucket."""
    b = arns.s3_bucket(region, bucket)
    return json.dumps({"Version": "2012-10-17", "Statement": [
        {"Sid": "ListModels", "Effect": "Allow", "Action": ["s3:ListBucket"], "Resource": [b],
         "Condition": {"StringLike": {"s3:prefix": [f"{prefix}*"]}}},
        {"Sid": "ReadWriteModels", "Effect": "Allow",
         "Action": ["s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload"],
         "Resource": [f"{b}/{prefix}*"]},
    ]})


def training_operator_policy(hyperpod_cluster_arn: str) -> str:
    """AmazonSageMakerHyperPodTrainingOperatorAccess's permissions, scoped to this cluster only."""
    return json.dumps({"Version": "2012-10-17", "Statement": [
        {"Sid": "DescribeThisClustersNodes", "Effect": "Allow",
         "Action": ["sagemaker:DescribeClusterNode", "sagemaker:ListClusterNodes", "sagemaker:DescribeCluster"],
         "Resource": [hyperpod_cluster_arn]},
    ]})


def inference_operator_policy(region: str, hyperpod_cluster_arn: str, bucket: str, tls_prefix: str) -> str:
    """The inference operator's execution role: this cluster, its TLS prefix, models in the data bucket."""
    b = arns.s3_bucket(region, bucket)
    return json.dumps({"Version": "2012-10-17", "Statement": [
        {"Sid": "DescribeThisClustersNodes", "Effect": "Allow",
         "Action": ["sagemaker:DescribeClusterNode", "sagemaker:ListClusterNodes", "sagemaker:DescribeCluster"],
         "Resource": [hyperpod_cluster_arn]},
        {"Sid": "TlsCertificates", "Effect": "Allow", "Action": ["s3:GetObject", "s3:PutObject"],
         "Resource": [f"{b}/{tls_prefix}*"]},
        {"Sid": "ListModelsAndCertificates", "Effect": "Allow", "Action": ["s3:ListBucket"], "Resource": [b]},
        {"Sid": "ReadModels", "Effect": "Allow", "Action": ["s3:GetObject"], "Resource": [f"{b}/models/*"]},
    ]})


def autoscaling_policy(hyperpod_cluster_arn: str) -> str:
    """HyperPod-managed Karpenter's cluster role: add and remove nodes of this cluster only."""
    return json.dumps({"Version": "2012-10-17", "Statement": [
        {"Sid": "ScaleThisClustersGroups", "Effect": "Allow",
         "Action": ["sagemaker:BatchAddClusterNodes", "sagemaker:BatchDeleteClusterNodes"],
         "Resource": [hyperpod_cluster_arn]},
    ]})


def observability_policy(hyperpod_cluster_arn: str, hyperpod_cluster_name: str) -> str:
    """The observability collector: metrics under HyperPod's namespace and this cluster's log groups."""
    _, p, _, region, account = hyperpod_cluster_arn.split(":")[:5]
    return json.dumps({"Version": "2012-10-17", "Statement": [
        {"Sid": "ClusterMetrics", "Effect": "Allow", "Action": ["cloudwatch:PutMetricData"], "Resource": "*",
         "Condition": {"StringEquals": {"cloudwatch:namespace": "/aws/sagemaker/Clusters"}}},
        {"Sid": "ClusterLogs", "Effect": "Allow",
         "Action": ["logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams"],
         "Resource": [f"arn:{p}:logs:{region}:{account}:log-group:/aws/sagemaker/Clusters/{hyperpod_cluster_name}/*"]},
    ]})
