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
