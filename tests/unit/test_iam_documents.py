"""IAM names and documents PodStart makes at run time: partition-correct, scoped, region-separated."""

from __future__ import annotations

import json
import re
from pathlib import Path

from functions.domain import arns, iam

ROOT = Path(__file__).resolve().parents[2]


def test_arns_follow_the_partition_of_the_region() -> None:
    assert arns.partition("us-west-2") == "aws" and arns.partition("cn-north-1") == "aws-cn"
    assert arns.partition("us-gov-west-1") == "aws-us-gov"
    assert iam.eks_cluster_policy("cn-northwest-1") == "arn:aws-cn:iam::aws:policy/AmazonEKSClusterPolicy"
    doc = json.loads(iam.data_bucket_policy("us-gov-east-1", "data"))
    assert doc["Statement"][0]["Resource"] == ["arn:aws-us-gov:s3:::data"]
    lifecycle = json.loads(iam.lifecycle_read_policy("cn-north-1", "assets", "lifecycle/abc/"))
    assert lifecycle["Statement"][0]["Resource"] == ["arn:aws-cn:s3:::assets/lifecycle/abc/*"]


def test_no_code_writes_a_literal_aws_partition_arn() -> None:
    """ARN patterns that accept every partition (`arn:aws[a-z-]*:`) are fine; a literal `arn:aws:` is not."""
    offenders = []
    for path in (ROOT / "functions").rglob("*.py"):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if (re.search(r"arn:aws:", line) and "arn:aws[" not in line and not line.lstrip().startswith("#")
                    and "# partition:" not in line):
                offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    docstrings = [o for o in offenders if '"""' in o or "`arn:aws:`" in o]
    assert [o for o in offenders if o not in docstrings] == []


def test_same_named_clusters_in_two_regions_get_different_roles() -> None:
    west, east = iam.role_name("demo", "us-west-2", "hyperpod"), iam.role_name("demo", "us-east-1", "hyperpod")
    assert west != east and west.startswith("podstart-demo-hyperpod-") and len(west) <= 64
    longest = iam.role_name("a" * 32, "ap-northeast-1", "s3-csi")
    assert len(longest) <= 64 and longest.startswith("podstart-")
