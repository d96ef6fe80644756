"""Given the synthesized stack, the MCP gateway is its own function behind /mcp, with no data access."""

from __future__ import annotations

import json


def _mcp_function(synth):
    [(name, fn)] = [
        (k, v)
        for k, v in synth.of_type("AWS::Lambda::Function").items()
        if v["Properties"].get("FunctionName") == "podstart-mcp"
    ]
    return name, fn


def test_mcp_function_has_its_own_role(synth):
    _, mcp = _mcp_function(synth)
    role = mcp["Properties"]["Role"]["Fn::GetAtt"][0]
    others = [
        fn["Properties"]["Role"]["Fn::GetAtt"][0]
        for fn in synth.of_type("AWS::Lambda::Function").values()
        if str(fn["Properties"].get("FunctionName", "")).startswith("podstart-")
        and fn["Properties"]["FunctionName"] != "podstart-mcp"
    ]
    assert role in synth.of_type("AWS::IAM::Role")
    assert role not in others
    # The REST base comes from the invoking event: no reference back to the API (no cycle)
    env = mcp["Properties"]["Environment"]["Variables"]
    assert "PODSTART_API_URL" not in env
    assert "RestApi" not in json.dumps(env)


def test_mcp_role_may_only_write_its_logs_and_traces(synth):
    _, mcp = _mcp_function(synth)
    role = mcp["Properties"]["Role"]["Fn::GetAtt"][0]
    actions = set()
    for cfn_type in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"):
        for policy in synth.of_type(cfn_type).values():
            if any(r.get("Ref") == role for r in policy["Properties"].get("Roles", [])):
                for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
                    value = statement["Action"]
                    actions.update(value if isinstance(value, list) else [value])
    assert not synth.of_type("AWS::IAM::Role")[role]["Properties"].get("ManagedPolicyArns")
    assert actions  # logs and X-Ray
    assert not [a for a in actions if a.startswith(("dynamodb:", "states:", "s3:", "events:", "sagemaker:"))]
    assert {a.split(":")[0] for a in actions} <= {"logs", "xray"}


def test_mcp_route_uses_the_cognito_authorizer_and_the_v1_scopes(synth):
    fn_name, _ = _mcp_function(synth)
    [authorizer] = synth.of_type("AWS::ApiGateway::Authorizer")
    resources = synth.of_type("AWS::ApiGateway::Resource")
    mcp_ids = {k for k, r in resources.items() if r["Properties"]["PathPart"] == "mcp"}
    assert len(mcp_ids) == 1
    methods = [m["Properties"] for m in synth.of_type("AWS::ApiGateway::Method").values()]
    [mcp] = [m for m in methods if m.get("ResourceId", {}).get("Ref") in mcp_ids]
    v1 = [m for m in methods if m["HttpMethod"] == "ANY" and m is not mcp]
    assert mcp["HttpMethod"] == "ANY"
    assert mcp["AuthorizationType"] == "COGNITO_USER_POOLS"
    assert mcp["AuthorizerId"] == {"Ref": authorizer}
    assert v1 and all(m["AuthorizationScopes"] == mcp["AuthorizationScopes"] for m in v1)
    assert mcp["Integration"]["Type"] == "AWS_PROXY"
    assert fn_name in json.dumps(mcp["Integration"]["Uri"])


def test_mcp_url_is_an_output(template):
    outputs = template.to_json()["Outputs"]
    assert "/mcp" in json.dumps(outputs["McpUrl"]["Value"])
