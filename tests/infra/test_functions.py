"""Given the synthesized stack, each Lambda runs traced with its own least-privilege role."""

from __future__ import annotations

import json

from functions.lambdas import LAMBDAS


def _functions(synth):
    return {
        fn["Properties"]["FunctionName"]: fn
        for fn in synth.of_type("AWS::Lambda::Function").values()
        if str(fn["Properties"].get("FunctionName", "")).startswith("podstart-")
    }


def test_one_function_per_spec_on_python311_x86_traced(synth):
    functions = _functions(synth)
    assert set(functions) == {spec.function_name for spec in LAMBDAS.values()}
    for spec in LAMBDAS.values():
        props = functions[spec.function_name]["Properties"]
        assert props["Runtime"] == "python3.11"
        assert props["Architectures"] == ["x86_64"]
        assert props["TracingConfig"] == {"Mode": "Active"}
        assert props["Handler"] == spec.handler
        assert props["MemorySize"] == spec.memory_mb
        assert props["Timeout"] == spec.timeout_s
        # Every variable the function's settings model reads is filled
        assert set(props["Environment"]["Variables"]) == set(spec.env)


def test_each_function_has_its_own_role(synth):
    roles = [json.dumps(fn["Properties"]["Role"]) for fn in _functions(synth).values()]
    assert len(set(roles)) == len(roles) == len(LAMBDAS)


def test_api_knows_the_workflows_and_steps_knows_its_role(synth):
    functions = _functions(synth)
    api_env = functions["podstart-api"]["Properties"]["Environment"]["Variables"]
    assert "cluster.create" in json.dumps(api_env["WORKFLOW_ARNS"])
    steps = functions["podstart-steps"]["Properties"]
    assert steps["Environment"]["Variables"]["PODSTART_ROLE_ARN"] == {
        "Fn::GetAtt": [steps["Role"]["Fn::GetAtt"][0], "Arn"]
    }
    assert api_env["EVENT_BUS_NAME"] == "podstart"


def _statements(synth):
    for cfn_type in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"):
        for name, policy in synth.of_type(cfn_type).items():
            for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
                yield name, statement
    for name, role in synth.of_type("AWS::IAM::Role").items():
        for inline in role["Properties"].get("Policies", []):
            for statement in inline["PolicyDocument"]["Statement"]:
                yield name, statement


def _as_list(value):
    return value if isinstance(value, list) else [value]


def test_no_statement_grants_every_action_on_every_resource(synth):
    offenders = [
        name
        for name, s in _statements(synth)
        if s["Effect"] == "Allow" and "*" in _as_list(s["Action"]) and "*" in _as_list(s.get("Resource", []))
    ]
    assert offenders == []
    # And no service-wide wildcard (s3:*, iam:*) at all
    wide = [(n, a) for n, s in _statements(synth) for a in _as_list(s["Action"]) if str(a).endswith(":*")]
    assert wide == []


def test_steps_may_only_manage_podstart_named_iam_roles(synth):
    # Statements may overflow from the default policy into a managed policy: read both
    steps_statements = [
        s
        for cfn_type in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy")
        for p in synth.of_type(cfn_type).values()
        if any("StepsRole" in r["Ref"] for r in p["Properties"].get("Roles", []))
        for s in p["Properties"]["PolicyDocument"]["Statement"]
    ]
    # (service-linked roles and listing OIDC providers are not about PodStart's roles; Deny protects all)
    account_wide = {"iam:CreateServiceLinkedRole", "iam:ListOpenIDConnectProviders"}
    iam_statements = [
        s
        for s in steps_statements
        if s["Effect"] == "Allow"
        and any(str(a).startswith("iam:") and a not in account_wide for a in _as_list(s["Action"]))
    ]
    assert iam_statements
    for statement in iam_statements:
        for resource in _as_list(statement["Resource"]):
            text = json.dumps(resource)
            assert "role/podstart" in text or "policy/podstart" in text or "oidc-provider/oidc.eks." in text
    pass_role = next(s for s in iam_statements if "iam:PassRole" in _as_list(s["Action"]))
    assert "iam:PassedToService" in pass_role["Condition"]["StringEquals"]
