"""cdk-nag 3 helpers: grants that acknowledge their own wildcards, with the reason next to them.

cdk-nag 3 is a CDK validation plugin (``Validations.of(app).add_plugins(AwsSolutionsChecks(app))``);
a finding is acknowledged with ``Validations.of(construct).acknowledge(Acknowledgment(...))`` on
the resource or an ancestor. Wildcard findings (AwsSolutions-IAM5) are reported per wildcard as
``AwsSolutions-IAM5[Action::ec2:Describe*]`` / ``AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:...]``,
so :func:`grant` acknowledges exactly the wildcards of the statement it adds, with its reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from constructs import IConstruct

_PSEUDO = {
    cdk.Aws.PARTITION: "<AWS::Partition>",
    cdk.Aws.REGION: "<AWS::Region>",
    cdk.Aws.ACCOUNT_ID: "<AWS::AccountId>",
    cdk.Aws.URL_SUFFIX: "<AWS::URLSuffix>",
}


def acknowledge(scope: IConstruct, rule_id: str, reason: str) -> None:
    cdk.Validations.of(scope).acknowledge(cdk.Acknowledgment(id=rule_id, reason=reason))


def nag_resource(scope: IConstruct, resource: str) -> str:
    """How cdk-nag prints ``resource`` in a finding id (``<Logical.Arn>``, ``<AWS::Region>``...)."""
    resolved = cdk.Stack.of(scope).resolve(resource)
    return _flatten(resolved)


def _flatten(value: Any) -> str:
    # Mirrors cdk-nag's utils/flatten-cfn-reference.
    if isinstance(value, str):
        for token, text in _PSEUDO.items():
            value = value.replace(token, text)
        return value
    if isinstance(value, Mapping):
        if "Fn::Join" in value:
            sep, parts = value["Fn::Join"]
            return str(sep).join(_flatten(p) for p in parts)
        if "Ref" in value:
            return f"<{value['Ref']}>"
        if "Fn::GetAtt" in value:
            attr = value["Fn::GetAtt"]
            return f"<{attr[0]}.{attr[1]}>" if isinstance(attr, list) else f"<{attr}>"
        if "Fn::ImportValue" in value:
            return _flatten(value["Fn::ImportValue"])
    return str(value)


def grant(
    principal: iam.Role,
    *,
    sid: str,
    actions: Sequence[str],
    resources: Sequence[str],
    reason: str | None = None,
    conditions: Mapping[str, Mapping[str, Any]] | None = None,
) -> iam.PolicyStatement:
    """Add one statement to ``principal`` and acknowledge its wildcards with ``reason``.

    A statement with a wildcard action or resource must say why (``reason``).
    """
    if "*" in actions or ("*" in resources and any(a.endswith(":*") for a in actions)):
        raise ValueError(f"{sid}: refusing a full-access wildcard statement")
    statement = iam.PolicyStatement(
        sid=sid, actions=list(actions), resources=list(resources), conditions=dict(conditions or {}) or None
    )
    principal.add_to_principal_policy(statement)
    if reason is None:
        if any("*" in a for a in actions) or any("*" in nag_resource(principal, r) for r in resources):
            raise ValueError(f"{sid}: a statement with wildcards needs a reason")
        return statement
    acknowledge_wildcards(principal, actions=actions, resources=resources, reason=reason)
    return statement


def acknowledge_wildcards(
    scope: IConstruct, *, actions: Iterable[str] = (), resources: Iterable[str] = (), reason: str
) -> None:
    findings = [f"Action::{a}" for a in actions if "*" in a]
    findings += [f"Resource::{r}" for r in (nag_resource(scope, r) for r in resources) if "*" in r]
    for finding in dict.fromkeys(findings):
        acknowledge(scope, f"AwsSolutions-IAM5[{finding}]", reason)
