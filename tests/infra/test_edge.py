"""Given the synthesized stack, nothing is anonymous and the UI is served privately and strictly."""

from __future__ import annotations

import json

from aws_cdk.assertions import Match


def test_every_api_method_but_preflight_uses_the_cognito_authorizer(synth):
    methods = synth.of_type("AWS::ApiGateway::Method").values()
    authorizers = list(synth.of_type("AWS::ApiGateway::Authorizer"))
    assert len(authorizers) == 1
    real = [m["Properties"] for m in methods if m["Properties"]["HttpMethod"] != "OPTIONS"]
    assert len(real) >= 2  # /v1 and /v1/{proxy+}
    for method in real:
        assert method["AuthorizationType"] == "COGNITO_USER_POOLS"
        assert method["AuthorizerId"] == {"Ref": authorizers[0]}
    for preflight in (m["Properties"] for m in methods if m["Properties"]["HttpMethod"] == "OPTIONS"):
        assert preflight["Integration"]["Type"] == "MOCK"  # never reaches the function


def test_cors_allows_only_the_ui_origin(synth):
    preflights = [
        m["Properties"]
        for m in synth.of_type("AWS::ApiGateway::Method").values()
        if m["Properties"]["HttpMethod"] == "OPTIONS"
    ]
    assert preflights
    for preflight in preflights:
        origin = preflight["Integration"]["IntegrationResponses"][0]["ResponseParameters"][
            "method.response.header.Access-Control-Allow-Origin"
        ]
        assert "'*'" not in json.dumps(origin)
        assert "DomainName" in json.dumps(origin)  # the CloudFront distribution's domain


def test_stage_prod_is_throttled_logged_and_traced(template):
    template.has_resource_properties(
        "AWS::ApiGateway::Stage",
        {
            "StageName": "prod",
            "TracingEnabled": True,
            "AccessLogSetting": Match.object_like({"DestinationArn": Match.any_value()}),
            "MethodSettings": Match.array_with(
                [
                    Match.object_like(
                        {
                            "MetricsEnabled": True,
                            "ThrottlingRateLimit": Match.any_value(),
                            "ThrottlingBurstLimit": Match.any_value(),
                        }
                    )
                ]
            ),
        },
    )


def test_cloudfront_reads_the_bucket_through_oac_with_security_headers(synth):
    (distribution,) = synth.of_type("AWS::CloudFront::Distribution").values()
    config = distribution["Properties"]["DistributionConfig"]
    assert config["DefaultRootObject"] == "index.html"
    assert config["DefaultCacheBehavior"]["ViewerProtocolPolicy"] == "redirect-to-https"
    assert config["Origins"][0]["OriginAccessControlId"]
    assert config["Origins"][0]["S3OriginConfig"]["OriginAccessIdentity"] == ""
    assert {e["ErrorCode"]: e["ResponsePagePath"] for e in config["CustomErrorResponses"]} == {
        403: "/index.html",
        404: "/index.html",
    }
    assert "Logging" in config
    (policy_id,) = synth.of_type("AWS::CloudFront::ResponseHeadersPolicy")
    assert config["DefaultCacheBehavior"]["ResponseHeadersPolicyId"] == {"Ref": policy_id}
    (policy,) = synth.of_type("AWS::CloudFront::ResponseHeadersPolicy").values()
    headers = policy["Properties"]["ResponseHeadersPolicyConfig"]["SecurityHeadersConfig"]
    assert headers["FrameOptions"]["FrameOption"] == "DENY"
    assert headers["StrictTransportSecurity"]["AccessControlMaxAgeSec"] >= 31536000
    assert "ContentTypeOptions" in headers and "ReferrerPolicy" in headers
    csp = json.dumps(headers["ContentSecurityPolicy"]["ContentSecurityPolicy"])
    assert "default-src 'self'" in csp and "connect-src 'self' https://" in csp and "execute-api" in csp


def test_user_pool_is_invite_only_with_groups_and_two_clients(synth, template):
    template.has_resource_properties(
        "AWS::Cognito::UserPool",
        {
            "AdminCreateUserConfig": {"AllowAdminCreateUserOnly": True},
            "Policies": {"PasswordPolicy": Match.object_like({"MinimumLength": 14})},
        },
    )
    groups = {g["Properties"]["GroupName"] for g in synth.of_type("AWS::Cognito::UserPoolGroup").values()}
    assert groups == {"viewer", "operator", "admin"}
    clients = [c["Properties"] for c in synth.of_type("AWS::Cognito::UserPoolClient").values()]
    web = next(c for c in clients if c["AllowedOAuthFlows"] == ["code"])
    assert not web.get("GenerateSecret")
    machine = next(c for c in clients if c["AllowedOAuthFlows"] == ["client_credentials"])
    assert machine["GenerateSecret"] is True
    template.has_resource_properties("AWS::Cognito::UserPoolResourceServer", {"Identifier": "podstart"})


def test_outputs_tell_the_user_where_things_are(template):
    outputs = template.to_json()["Outputs"]
    assert {"ApiUrl", "WebUrl", "UserPoolId", "WebClientId"} <= set(outputs)
