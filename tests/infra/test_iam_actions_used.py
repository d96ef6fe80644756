"""Given the synthesized stack, every IAM action granted to a PodStart Lambda role is one the code calls.

The code is scanned, not imported: every ``.<snake_name>(`` call and every
``get_paginator("<snake_name>")`` under ``functions/`` and ``mcp_gateway/`` counts as a call, and a
granted ``svc:Op`` is used when botocore's name for ``Op`` in that service is among them. Which client
a name was called on is not tracked (``describe_cluster`` serves EKS and SageMaker alike), so the check
is conservative; it still fails for an action nothing calls (see the last test).

Actions the code needs without calling an API of the same name are listed in :data:`INDIRECT`, each
with its reason and, where one exists, the calls that need it (so they fall out when those calls do).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import boto3

REPO = Path(__file__).resolve().parents[2]
SCANNED = ("functions", "mcp_gateway")

# IAM service prefix -> botocore service name, where they differ.
BOTOCORE_NAME = {"states": "stepfunctions", "servicequotas": "service-quotas"}

_CALL = re.compile(r"\.([a-z][a-z0-9_]*)\s*\(")
_PAGINATOR = re.compile(r"""get_paginator\(\s*["']([a-z][a-z0-9_]*)["']""")


@dataclass(frozen=True)
class Indirect:
    reason: str
    calls: tuple[str, ...] = ()  # the code calls that need it; empty = needed by the platform itself
    roles: tuple[str, ...] = ()  # only for these roles (empty = any PodStart Lambda role)


_TAG_ON_CREATE_EC2 = ("create_vpc", "create_subnet", "create_route_table", "create_internet_gateway",
                      "create_nat_gateway", "allocate_address", "create_security_group", "create_vpc_endpoint")

_MLFLOW_UI = Indirect("The MLflow UI session a presigned link opens acts with the API role's MLflow permissions "
                      "(read-only).", calls=("create_presigned_mlflow_tracking_server_url",), roles=("api",))

INDIRECT: dict[str, Indirect] = {
    **{f"sagemaker-mlflow:{a}": _MLFLOW_UI for a in ("AccessUI", "GetExperiment", "GetMetricHistory", "GetRun",
                                                    "SearchExperiments", "SearchRuns")},
    # The Lambda service itself, with the function's role
    "logs:CreateLogStream": Indirect("The Lambda runtime writes the function's own log group with its role."),
    "logs:PutLogEvents": Indirect("The Lambda runtime writes the function's own log group with its role."),
    "xray:PutTraceSegments": Indirect("Active tracing: Lambda sends the function's trace segments with its role."),
    "xray:PutTelemetryRecords": Indirect("Active tracing: Lambda sends X-Ray telemetry with the function's role."),
    "sqs:SendMessage": Indirect(
        "Lambda delivers failed asynchronous invocations to the on-failure destination (SQS) with the function's "
        "role.", roles=("events", "live", "follow")),
    # API Gateway's WebSocket management API (service apigatewaymanagementapi) is authorized as execute-api
    "execute-api:ManageConnections": Indirect(
        "post_to_connection on the live socket's management endpoint is authorized as execute-api:ManageConnections.",
        calls=("post_to_connection",), roles=("live", "follow")),
    "lambda:InvokeFunction": Indirect("Lambda's Invoke API (invoke()) is authorized as lambda:InvokeFunction: the live "
                                      "function starts one follower per log follow.", calls=("invoke",),
                                      roles=("live",)),
    # Tag-on-create: the create call is authorized for the tagging action as well
    "ec2:CreateTags": Indirect("TagSpecifications on the EC2 create calls (tag-on-create) authorize ec2:CreateTags.",
                               calls=_TAG_ON_CREATE_EC2, roles=("steps",)),
    "eks:TagResource": Indirect(
        "EKS authorizes tags passed to CreateCluster/CreateAddon/CreateAccessEntry/CreatePodIdentityAssociation as "
        "eks:TagResource (dependent action); the import workflow tags an imported cluster.",
        calls=("create_cluster", "create_addon", "create_access_entry", "create_pod_identity_association",
               "tag_resource"), roles=("steps",)),
    "sagemaker:AddTags": Indirect("Tags passed to sagemaker CreateCluster are authorized as sagemaker:AddTags.",
                                  calls=("create_cluster",), roles=("steps",)),
    "fsx:TagResource": Indirect("Tags passed to CreateFileSystem are authorized as fsx:TagResource.",
                                calls=("create_file_system",), roles=("steps",)),
    "iam:TagRole": Indirect("Tags passed to CreateRole are authorized as iam:TagRole.", calls=("create_role",),
                            roles=("steps",)),
    "iam:TagOpenIDConnectProvider": Indirect(
        "Tags passed to CreateOpenIDConnectProvider are authorized as iam:TagOpenIDConnectProvider.",
        calls=("create_open_id_connect_provider",), roles=("steps",)),
    # Roles handed to services
    "iam:PassRole": Indirect(
        "EKS CreateCluster, SageMaker CreateCluster/UpdateCluster and CreatePodIdentityAssociation pass PodStart "
        "roles to the service.",
        calls=("create_cluster", "update_cluster", "create_pod_identity_association"), roles=("steps",)),
    "iam:CreateServiceLinkedRole": Indirect(
        "The first EKS/SageMaker cluster or FSx file system in an account makes the service create its "
        "service-linked role on the caller's behalf.",
        calls=("create_cluster", "create_file_system"), roles=("steps",)),
    # S3 actions whose names differ from the API operations that need them
    "s3:ListBucket": Indirect("HeadObject on a missing key answers 404 (not 403) only with s3:ListBucket; "
                              "HeadBucket and ListObjectsV2 are authorized as s3:ListBucket.",
                              calls=("head_object", "head_bucket", "list_objects_v2"), roles=("steps", "api")),
    "s3:GetObject": Indirect("HeadObject is authorized as s3:GetObject.", calls=("head_object", "get_object")),
    # Powertools' idempotency layer (adapters/idempotency.py) calls these on the api role's idempotency table
    "dynamodb:UpdateItem": Indirect("Powertools DynamoDBPersistenceLayer updates idempotency records (the api's, "
                                    "and spec.apply's child starts in the steps function).",
                                    roles=("api", "steps")),
    # DynamoDB TransactWriteItems is authorized per item: Put -> PutItem (already a direct call too)
}


def botocore_names(prefix: str) -> dict[str, str]:
    """API operation name -> botocore method name, for an IAM service prefix."""
    return _botocore_names(BOTOCORE_NAME.get(prefix, prefix))


@cache
def _botocore_names(service: str) -> dict[str, str]:
    client = boto3.session.Session().client(service, region_name="us-east-1")
    return {api: method for method, api in client.meta.method_to_api_mapping.items()}


@cache
def code_calls(roots: tuple[Path, ...] = tuple(REPO / d for d in SCANNED)) -> frozenset[str]:
    names: set[str] = set()
    for root in roots:
        for path in root.rglob("*.py"):
            text = path.read_text()
            names.update(_CALL.findall(text))
            names.update(_PAGINATOR.findall(text))
    return frozenset(names)


def unused_grants(granted: Iterable[tuple[str, str]], calls: frozenset[str],
                  indirect: Mapping[str, Indirect] = INDIRECT) -> list[str]:
    """``(role, action)`` pairs nothing explains: no call of that name, no reasoned indirect need."""
    problems = []
    for role, action in sorted(set(granted)):
        prefix, _, op = action.partition(":")
        if "*" in action:
            problems.append(f"{role}: {action} is a wildcard; grant the actions the code calls")
            continue
        need = indirect.get(action)
        if need is not None and (not need.roles or role in need.roles):
            if need.calls and not calls & set(need.calls):
                problems.append(f"{role}: {action} is granted for {need.calls}, which nothing calls any more")
            continue
        method = botocore_names(prefix).get(op)
        if method is None:
            problems.append(f"{role}: {action} is not an API operation of {prefix}; say why in INDIRECT")
        elif method not in calls:
            problems.append(f"{role}: {action} is granted but nothing calls {method}()")
    return problems


def _as_list(value: object) -> list:
    return value if isinstance(value, list) else [value]


def lambda_role_grants(synth) -> list[tuple[str, str]]:
    """(function name without the prefix, action) for every Allow on a PodStart Lambda role."""
    roles = {
        fn["Properties"]["Role"]["Fn::GetAtt"][0]: fn["Properties"]["FunctionName"].removeprefix("podstart-")
        for fn in synth.of_type("AWS::Lambda::Function").values()
        if str(fn["Properties"].get("FunctionName", "")).startswith("podstart-")
    }
    granted = []
    for cfn_type in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"):
        for policy in synth.of_type(cfn_type).values():
            attached = [roles[r["Ref"]] for r in policy["Properties"].get("Roles", []) if r.get("Ref") in roles]
            for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
                if statement["Effect"] != "Allow":
                    continue
                granted += [(role, action) for role in attached for action in _as_list(statement["Action"])]
    for role_id, name in roles.items():
        role = synth.resources[role_id]["Properties"]
        assert not role.get("ManagedPolicyArns"), f"{name}: managed policies are not scanned; use statements"
        for inline in role.get("Policies", []):
            for statement in inline["PolicyDocument"]["Statement"]:
                granted += [(name, a) for a in _as_list(statement["Action"])]
    return granted


def test_every_action_granted_to_a_lambda_role_is_called_or_explained(synth):
    # Given every Allow statement on the PodStart Lambda roles
    granted = lambda_role_grants(synth)
    assert {role for role, _ in granted} == {"api", "steps", "events", "mcp", "live", "follow", "liveauth"}
    # When each granted action is looked up among the calls the code makes
    problems = unused_grants(granted, code_calls())
    # Then each one is called, or needed indirectly for a stated reason
    assert problems == [], "\n".join(problems)


def test_the_scan_sees_clients_paginators_and_factories():
    calls = code_calls()
    # ctx.aws("ec2") ... ec2.create_vpc(...), aws.client("sagemaker", region).describe_cluster(...)
    assert {"create_vpc", "describe_cluster", "start_execution", "put_events"} <= calls
    # get_paginator("list_clusters")
    assert "list_clusters" in calls


def test_the_check_reports_a_granted_action_the_code_never_calls(tmp_path):
    # Given code that calls only ec2.describe_vpcs and an indirect need whose calls are gone
    (tmp_path / "mod.py").write_text('ec2 = ctx.aws("ec2")\nec2.describe_vpcs()\n')
    calls = code_calls((tmp_path,))
    indirect = {"iam:PassRole": Indirect("passed to CreateCluster", calls=("create_cluster",))}
    # When grants include unused, wildcard, indirect-but-orphaned and non-API actions
    problems = unused_grants(
        [("steps", "ec2:DescribeVpcs"), ("steps", "ec2:RunInstances"), ("steps", "ec2:Describe*"),
         ("steps", "iam:PassRole"), ("steps", "s3:ListBucket")],
        calls, indirect)
    # Then each of them is reported, and the called one is not
    assert len(problems) == 4, problems
    assert not any("DescribeVpcs " in p for p in problems)
    assert any("RunInstances" in p and "run_instances()" in p for p in problems)


def test_indirect_reasons_name_real_calls():
    # An INDIRECT entry's calls are botocore method names of some service (no typos hiding a grant)
    known = set().union(*(_botocore_names(s).values() for s in ("ec2", "eks", "sagemaker", "fsx", "iam", "s3",
                                                                         "apigatewaymanagementapi", "lambda")))
    for action, need in INDIRECT.items():
        assert need.reason, action
        assert set(need.calls) <= known, (action, set(need.calls) - known)
    assert json.dumps(sorted(INDIRECT))  # stable, printable
