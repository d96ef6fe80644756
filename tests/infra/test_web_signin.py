"""Given the synthesized stack, the deployed UI can sign in, and a browser never gets the write scope."""

from __future__ import annotations

import json
import re


def _clients(synth):
    clients = [c["Properties"] for c in synth.of_type("AWS::Cognito::UserPoolClient").values()]
    web = next(c for c in clients if c["AllowedOAuthFlows"] == ["code"])
    machine = next(c for c in clients if c["AllowedOAuthFlows"] == ["client_credentials"])
    return web, machine


def _scope(value) -> str:
    """'openid' or 'podstart/read' from a literal or the resource server's Fn::Join."""
    if isinstance(value, str):
        return value
    parts = value["Fn::Join"][1]
    return "podstart" + "".join(p for p in parts if isinstance(p, str))


def test_browser_client_reads_and_machine_client_writes(synth):
    web, machine = _clients(synth)
    assert sorted(map(_scope, web["AllowedOAuthScopes"])) == ["email", "openid", "podstart/read", "profile"]
    assert "podstart/write" in map(_scope, machine["AllowedOAuthScopes"])


def _deployed_config(synth):
    """(deployment properties, config.json with each value as CloudFormation renders it)."""
    import aws_cdk as cdk

    [deploy] = [r["Properties"] for r in synth.of_type("Custom::CDKBucketDeployment").values()]
    stack = cdk.Stack.of(synth.stack.web)
    config = {k: stack.resolve(v) for k, v in synth.stack.web.config.items()}
    return deploy, config


def test_the_site_is_deployed_with_its_sign_in_config(synth):
    deploy, config = _deployed_config(synth)
    # What web/src/auth.ts reads, plus the pool id and region
    assert set(config) == {"auth", "apiUrl", "userPoolDomain", "clientId", "scopes", "userPoolId", "region", "wsUrl"}
    assert config["auth"] == "cognito"
    web_client_id = next(k for k, r in synth.of_type("AWS::Cognito::UserPoolClient").items()
                         if r["Properties"]["AllowedOAuthFlows"] == ["code"])
    assert config["clientId"] == {"Ref": web_client_id}
    api = json.dumps(config["apiUrl"])
    assert "RestApi" in api and api.endswith('/prod"]]}')  # the stage URL; the UI appends /v1/...
    assert "amazoncognito.com" in json.dumps(config["userPoolDomain"])
    assert "/read" in json.dumps(config["scopes"]) and "write" not in json.dumps(config["scopes"])
    # The deployment writes config.json with those values (CDK fills deploy-time values in as markers)
    [markers] = [m for m in deploy["SourceMarkers"] if m]
    rendered = [json.dumps(v) for v in markers.values()]
    for key in ("apiUrl", "userPoolDomain", "userPoolId", "clientId", "scopes", "region"):
        value = json.dumps(config[key])
        assert any(_same_join(value, r) for r in rendered), key
    # And a new deployment is seen at once (CloudFront caches files for a day)
    distribution_paths = deploy["DistributionPaths"]
    assert "/config.json" in distribution_paths and "/index.html" in distribution_paths


def _same_join(value: str, rendered: str) -> bool:
    """A marker renders the value as a JSON string: the same Fn::Join/Ref, wrapped in quotes."""
    inner = re.sub(r'\\"', "", rendered)
    return all(ref in inner for ref in re.findall(r'"Ref": "[^"]+"', value))


def test_the_ui_may_fetch_its_config(synth):
    # Same origin: CSP connect-src 'self' covers /config.json; the hosted UI origin is there for the token call
    (policy,) = synth.of_type("AWS::CloudFront::ResponseHeadersPolicy").values()
    csp = json.dumps(policy["Properties"]["ResponseHeadersPolicyConfig"]["SecurityHeadersConfig"]
                     ["ContentSecurityPolicy"]["ContentSecurityPolicy"])
    assert "connect-src 'self'" in csp and "amazoncognito.com" in csp
