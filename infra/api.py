"""REST API Gateway: `/v1` and `/v1/{proxy+}` -> the api function, Cognito on every method.

API Gateway caps payloads at 10 MB; the handler enforces PodStart's smaller body limit.
SigV4 (AuthorizationType.IAM) is not offered yet: it needs a second tree (e.g. `/iam/v1/...`)
and the handler to strip that prefix.
"""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cognito as cognito
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from infra.checkov import skip, skip_log_group
from infra.nag import acknowledge

STAGE = "prod"
THROTTLE_RATE = 50  # requests per second, steady state
THROTTLE_BURST = 100


class ApiConstruct(Construct):
    """The public REST API; the browser origin is the only CORS origin."""

    rest_api: apigw.RestApi
    authorizer: apigw.CognitoUserPoolsAuthorizer
    scopes: list[str]  # OAuth scopes every method requires (reused by the /mcp route)

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        handler: lambda_.IFunction,
        user_pool: cognito.IUserPool,
        scopes: list[str],
        ui_origin: str,
    ):
        super().__init__(scope, construct_id)
        self._ui_origin = ui_origin
        self.scopes = list(scopes)
        self._build_rest_api()
        self._build_authorizer(user_pool)
        self._build_routes(handler, scopes)
        self._build_gateway_responses()
        self._acknowledge()

    @property
    def url(self) -> str:
        return self.rest_api.url_for_path("/v1")

    @property
    def origin(self) -> str:
        """``https://<id>.execute-api.<region>.<suffix>``: depends on the RestApi resource only."""
        return f"https://{self.rest_api.rest_api_id}.execute-api.{cdk.Aws.REGION}.{cdk.Aws.URL_SUFFIX}"

    def _build_rest_api(self) -> None:
        access_logs = logs.LogGroup(
            self,
            "AccessLogs",
            retention=logs.RetentionDays.THREE_MONTHS,
            removal_policy=cdk.RemovalPolicy.DESTROY,
        )
        self.rest_api = apigw.RestApi(
            self,
            "RestApi",
            rest_api_name="podstart",
            description="PodStart control plane REST API",
            endpoint_types=[apigw.EndpointType.REGIONAL],
            cloud_watch_role=True,  # account-level role API Gateway needs for execution logs
            cloud_watch_role_removal_policy=cdk.RemovalPolicy.RETAIN,
            deploy_options=apigw.StageOptions(
                stage_name=STAGE,
                access_log_destination=apigw.LogGroupLogDestination(access_logs),
                access_log_format=apigw.AccessLogFormat.json_with_standard_fields(
                    caller=False,
                    http_method=True,
                    ip=True,
                    protocol=True,
                    request_time=True,
                    resource_path=True,
                    response_length=True,
                    status=True,
                    user=True,
                ),
                throttling_rate_limit=THROTTLE_RATE,
                throttling_burst_limit=THROTTLE_BURST,
                metrics_enabled=True,
                tracing_enabled=True,
                logging_level=apigw.MethodLoggingLevel.ERROR,
                data_trace_enabled=False,  # request bodies may carry secrets
            ),
        )
        skip_log_group(access_logs)
        skip(
            self.rest_api.deployment_stage,
            ("CKV_AWS_120", "No API cache: a cache cluster is billed by the hour even when idle, and responses "
                            "are per caller and live (cluster and operation status)."),
        )

    def _build_authorizer(self, user_pool: cognito.IUserPool) -> None:
        self.authorizer = apigw.CognitoUserPoolsAuthorizer(
            self, "Authorizer", cognito_user_pools=[user_pool], authorizer_name="podstart-cognito"
        )

    def _build_routes(self, handler: lambda_.IFunction, scopes: list[str]) -> None:
        integration = apigw.LambdaIntegration(handler, proxy=True)
        cors = apigw.CorsOptions(
            allow_origins=[self._ui_origin],
            allow_methods=["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
            allow_headers=[
                "Authorization",
                "Content-Type",
                "Idempotency-Key",
                "X-PodStart-Face",  # the audit trail's face: the UI says it is the UI
                "X-Amz-Date",
                "X-Amz-Security-Token",
            ],
            expose_headers=["Location"],
            max_age=cdk.Duration.hours(1),
        )
        v1 = self.rest_api.root.add_resource("v1", default_cors_preflight_options=cors)
        proxy = v1.add_resource("{proxy+}", default_cors_preflight_options=cors)
        for resource in (v1, proxy):
            # Scopes make API Gateway accept access tokens (web PKCE users and client-credentials
            # machines alike); groups (viewer/operator/admin) are checked by the handler.
            self.add_authorized_method(resource, integration)

    def add_authorized_method(self, resource: apigw.IResource, integration: apigw.Integration) -> apigw.Method:
        """``ANY`` on ``resource`` behind the Cognito authorizer with the API's scopes."""
        return resource.add_method(
            "ANY",
            integration,
            authorizer=self.authorizer,
            authorization_type=apigw.AuthorizationType.COGNITO,
            authorization_scopes=self.scopes,
        )

    def _build_gateway_responses(self) -> None:
        # Let the browser read API Gateway's own 4xx/5xx (expired token, throttling) as errors.
        headers = {"Access-Control-Allow-Origin": f"'{self._ui_origin}'", "Vary": "'Origin'"}
        for name, response_type in (
            ("Default4xx", apigw.ResponseType.DEFAULT_4_XX),
            ("Default5xx", apigw.ResponseType.DEFAULT_5_XX),
        ):
            self.rest_api.add_gateway_response(name, type=response_type, response_headers=headers)

    def _acknowledge(self) -> None:
        acknowledge(
            self.rest_api,
            "AwsSolutions-APIG2",
            "Requests are validated by the handler against the pydantic models that also generate the "
            "OpenAPI document (422 problem+json); the proxy resource has no per-route models to validate.",
        )
        acknowledge(
            self.rest_api,
            "AwsSolutions-APIG3",
            "Every method requires a Cognito token and the stage is throttled; WAF (a standing monthly "
            "cost) is left to deployments that need it.",
        )
        for method in self.rest_api.methods:
            if method.http_method == "OPTIONS":
                for rule in ("AwsSolutions-APIG4", "AwsSolutions-COG4"):
                    acknowledge(
                        method,
                        rule,
                        "CORS preflight (OPTIONS, mock integration) cannot carry credentials by the "
                        "Fetch standard; it only returns the CORS headers for the UI origin.",
                    )
        role = self.rest_api.node.try_find_child("CloudWatchRole")
        if role is not None:
            acknowledge(
                role,
                "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/"
                "AmazonAPIGatewayPushToCloudWatchLogs]",
                "AmazonAPIGatewayPushToCloudWatchLogs is the AWS-maintained policy for API Gateway's "
                "account-level logging role.",
            )
