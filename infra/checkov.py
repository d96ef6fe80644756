"""checkov skips, written into the template next to the resource, each with its reason.

checkov reads ``Metadata.checkov.skip: [{id, comment}]`` on a CloudFormation resource. Only
choices made on purpose are skipped here (PodStart costs $0 when idle: no WAF, no API cache, no
Lambda in a VPC, no customer managed KMS key where AWS-owned encryption suffices); everything else
is fixed in the resource itself. ``make template-check`` runs checkov on the synthesized template.
"""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
from constructs import IConstruct


def cfn_resource(scope: IConstruct) -> cdk.CfnResource:
    """The CloudFormation resource behind ``scope`` (itself, or an L2 construct's default child)."""
    if isinstance(scope, cdk.CfnResource):
        return scope
    child = scope.node.default_child
    if not isinstance(child, cdk.CfnResource):
        raise TypeError(f"{scope.node.path}: no CloudFormation resource to annotate")
    return child


def skip(scope: IConstruct, *checks: tuple[str, str]) -> None:
    """Skip checkov ``checks`` (``(id, reason)``) on ``scope``'s resource."""
    resource = cfn_resource(scope)
    current: dict[str, Any] = resource.get_metadata("checkov") or {}
    entries = {e["id"]: e for e in current.get("skip", [])}
    for check_id, reason in checks:
        if not reason.strip():
            raise ValueError(f"{check_id}: a checkov skip needs its reason")
        entries[check_id] = {"id": check_id, "comment": reason}
    resource.add_metadata("checkov", {"skip": list(entries.values())})


def skip_log_group(log_group: IConstruct) -> None:
    skip(
        log_group,
        ("CKV_AWS_158", "CloudWatch Logs encrypts log data at rest with service-owned keys; these logs hold no "
                        "request bodies or secrets, and a customer managed key costs $1/month idle."),
    )
