"""Given the synthesized stack, every role the steps function creates is capped by PodStart's boundary."""

from __future__ import annotations

import json
from fnmatch import fnmatchcase

from functions.domain import iam as iamdoc

ROLE_WRITES = ("iam:CreateRole", "iam:PutRolePolicy", "iam:AttachRolePolicy", "iam:DeleteRolePolicy",
               "iam:DetachRolePolicy")
BOUNDARY_CHANGES = ("iam:DeleteRolePermissionsBoundary", "iam:PutRolePermissionsBoundary")
POLICY_CHANGES = ("iam:CreatePolicyVersion", "iam:DeletePolicy", "iam:SetDefaultPolicyVersion")


def _as_list(value):
    return value if isinstance(value, list) else [value]


def _boundary(synth):
    [(policy_id, policy)] = [
        (k, v) for k, v in synth.of_type("AWS::IAM::ManagedPolicy").items() if k.startswith("RolesBoundary")
    ]
    return policy_id, policy["Properties"]


def _allows(statements, action):
    return [s for s in statements if s["Effect"] == "Allow" and any(
        fnmatchcase(action, pattern) for pattern in _as_list(s["Action"]))]


def test_steps_knows_the_boundary_arn(synth):
    policy_id, _ = _boundary(synth)
    env = synth.function("steps")[1]["Properties"]["Environment"]["Variables"]
    assert env["PERMISSIONS_BOUNDARY_ARN"] == {"Ref": policy_id}


def test_roles_are_created_and_changed_only_with_the_boundary(synth):
    # Given the steps role's statements and the boundary policy
    policy_id, _ = _boundary(synth)
    statements = synth.role_statements("steps")
    for action in ROLE_WRITES:
        # Then every Allow of a role-writing action requires iam:PermissionsBoundary = the boundary
        allows = _allows(statements, action)
        assert allows, action
        for statement in allows:
            assert statement["Condition"]["StringEquals"]["iam:PermissionsBoundary"] == {"Ref": policy_id}, action
            assert all("podstart" in json.dumps(r) for r in _as_list(statement["Resource"])), action


def test_nothing_may_remove_or_rewrite_the_boundary(synth):
    policy_id, _ = _boundary(synth)
    for name in ("api", "steps", "events", "mcp"):
        statements = synth.role_statements(name)
        # No Allow lets a role lose or change its boundary, or the boundary policy change
        for action in (*BOUNDARY_CHANGES, *POLICY_CHANGES, "iam:DeletePolicyVersion"):
            assert not _allows(statements, action), (name, action)
    # And the steps role denies it explicitly, on every role and on the boundary policy
    denies = [s for s in synth.role_statements("steps") if s["Effect"] == "Deny"]
    on_roles = [s for s in denies if set(BOUNDARY_CHANGES) <= set(_as_list(s["Action"]))]
    assert on_roles and on_roles[0]["Resource"] == "*"
    on_policy = [s for s in denies if set(POLICY_CHANGES) <= set(_as_list(s["Action"]))]
    assert on_policy and on_policy[0]["Resource"] == {"Ref": policy_id}


def test_the_boundary_cannot_be_attached_as_a_permission(synth):
    # AttachRolePolicy is limited to the AWS managed policies the code attaches
    [attach] = _allows(synth.role_statements("steps"), "iam:AttachRolePolicy")
    arns = json.dumps(attach["Condition"]["ArnEquals"]["iam:PolicyARN"])
    assert "AmazonEKSClusterPolicy" in arns and "AmazonSageMakerClusterInstanceRolePolicy" in arns
    assert "RolesBoundary" not in arns and "policy/podstart" not in arns and "*" not in arns


def _boundary_actions(properties):
    return [a for s in properties["PolicyDocument"]["Statement"] for a in _as_list(s["Action"])]


def _aws_managed(name):
    from moto.iam.aws_managed_policies import aws_managed_policies_data

    return json.loads(aws_managed_policies_data)[name]["Document"]


def test_the_boundary_allows_what_the_per_cluster_roles_are_given(synth):
    # Given the policies the code attaches (AWS managed) and writes inline for its roles
    managed = [iamdoc.eks_cluster_policy("us-west-2"), iamdoc.hyperpod_instance_policy("us-west-2")]
    documents = [_aws_managed(arn.rpartition("/")[2]) for arn in managed]
    documents += [json.loads(iamdoc.lifecycle_read_policy("us-west-2", "assets", "lifecycle/abc/")),
                  json.loads(iamdoc.data_bucket_policy("us-west-2", "data"))]
    needed = {a for d in documents for s in d["Statement"] if s["Effect"] == "Allow" for a in _as_list(s["Action"])}
    # Then the boundary allows each of their actions (a role is capped, never broken, by it)
    allowed = _boundary_actions(_boundary(synth)[1])
    missing = sorted(a for a in needed if not any(fnmatchcase(a, pattern) for pattern in allowed))
    assert missing == []


def test_the_boundary_lets_no_role_escalate(synth):
    properties = _boundary(synth)[1]
    statements = properties["PolicyDocument"]["Statement"]
    for statement in statements:
        assert statement["Effect"] == "Allow"
        for action in _as_list(statement["Action"]):
            # No wildcard action, no STS, and of IAM only the load balancer service-linked role
            assert "*" not in action, action
            assert not action.startswith("sts:"), action
            if action.startswith("iam:"):
                assert action == "iam:CreateServiceLinkedRole"
                assert statement["Condition"] == {
                    "StringEquals": {"iam:AWSServiceName": "elasticloadbalancing.amazonaws.com"}
                }
    # S3 only on PodStart's buckets and this account's sagemaker-* buckets
    s3 = [s for s in statements if any(a.startswith("s3:") for a in _as_list(s["Action"]))]
    for statement in s3:
        text = json.dumps(statement["Resource"])
        assert "DataDataBucket" in text or "DataAssetsBucket" in text or ":s3:::sagemaker-*" in text, text
    # And it fits IAM's 6,144-character limit for a managed policy (whitespace not counted)
    assert len(json.dumps(properties["PolicyDocument"], separators=(",", ":"))) < 6144


def test_the_boundary_lets_a_job_log_to_its_mlflow_server_only(synth):
    # Given a job's MLflow role: sagemaker-mlflow:* on one tracking server (functions.domain.training.mlflow.policy)
    statements = _boundary(synth)[1]["PolicyDocument"]["Statement"]
    mlflow = [s for s in statements if any(a.startswith("sagemaker-mlflow:") for a in _as_list(s["Action"]))]
    # Then the boundary caps it to the tracking API a training job uses, on tracking servers of this account
    assert len(mlflow) == 1
    actions = set(_as_list(mlflow[0]["Action"]))
    assert {"sagemaker-mlflow:CreateRun", "sagemaker-mlflow:LogBatch", "sagemaker-mlflow:LogMetric"} <= actions
    assert "sagemaker-mlflow:AccessUI" not in actions and "sagemaker-mlflow:DeleteExperiment" not in actions
    assert "mlflow-tracking-server/*" in json.dumps(mlflow[0]["Resource"])
