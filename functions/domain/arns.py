"""ARNs in the partition of their region: `aws`, `aws-cn` or `aws-us-gov`, never a literal `arn:aws:`."""

from __future__ import annotations


def partition(region: str | None) -> str:
    r = region or ""
    if r.startswith("cn-"):
        return "aws-cn"
    if r.startswith("us-gov-"):
        return "aws-us-gov"
    if r.startswith("us-iso-"):
        return "aws-iso"
    if r.startswith("us-isob-"):
        return "aws-iso-b"
    return "aws"


def partition_of_arn(arn: str) -> str:
    """`arn:aws-cn:...` -> `aws-cn` (the partition an ARN says it lives in)."""
    parts = arn.split(":", 2)
    return parts[1] if len(parts) > 2 and parts[0] == "arn" else "aws"


def aws_managed_policy(region: str | None, name: str) -> str:
    return f"arn:{partition(region)}:iam::aws:policy/{name}"


def s3_bucket(region: str | None, bucket: str) -> str:
    return f"arn:{partition(region)}:s3:::{bucket}"


def eks_access_policy(region: str | None, name: str) -> str:
    return f"arn:{partition(region)}:eks::aws:cluster-access-policy/{name}"
