"""IAM documents for the roles PodStart makes per cluster: least privilege, no `*` on `*`."""

from __future__ import annotations

import json
from typing import Any

PATH = "/podstart/"


def role_name(cluster: str, purpose: str) -> str:
    return f"podstart-{cluster}-{purpose}"[:64]


def trust(service: str, *, tag_session: bool = False) -> str:
    actions: Any = ["sts:AssumeRole", "sts:TagSession"] if tag_session else "sts:AssumeRole"
    return json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"Service": service}, "Action": actions}]})


EKS_CLUSTER_POLICY = "arn:aws:iam::aws:policy/AmazonEKSClusterPolicy"
HYPERPOD_INSTANCE_POLICY = "arn:aws:iam::aws:policy/AmazonSageMakerClusterInstanceRolePolicy"


def lifecycle_read_policy(bucket: str, prefix: str) -> str:
    """HyperPod nodes read only PodStart's lifecycle scripts."""
    return json.dumps({"Version": "2012-10-17", "Statement": [
        {"Sid": "ReadLifecycleScripts", "Effect": "Allow", "Action": ["s3:GetObject"],
         "Resource": [f"arn:aws:s3:::{bucket}/{prefix}*"]},
        {"Sid": "ListLifecycleScripts", "Effect": "Allow", "Action": ["s3:ListBucket"],
         "Resource": [f"arn:aws:s3:::{bucket}"], "Condition": {"StringLike": {"s3:prefix": [f"{prefix}*"]}}},
    ]})


def data_bucket_policy(bucket: str) -> str:
    """The S3 Mountpoint CSI driver's access: the shared data bucket only (no AmazonS3FullAccess)."""
    return json.dumps({"Version": "2012-10-17", "Statement": [
        {"Sid": "ListDataBucket", "Effect": "Allow", "Action": ["s3:ListBucket"],
         "Resource": [f"arn:aws:s3:::{bucket}"]},
        {"Sid": "ReadWriteData", "Effect": "Allow",
         "Action": ["s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"],
         "Resource": [f"arn:aws:s3:::{bucket}/*"]},
    ]})
