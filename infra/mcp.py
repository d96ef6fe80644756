"""The MCP gateway: the ``mcp`` Lambda (``LAMBDAS["mcp"]``) behind ``/mcp`` on the REST API.

* The function (built by :class:`infra.functions.FunctionsConstruct`; packages ``functions`` +
  ``mcp_gateway``; ``mcp`` is kept out of the other bundles) runs the SDK's stateless
  streamable-HTTP app per invocation, with no AWS permissions beyond its logs and traces: it calls
  the REST API with the caller's own token.
* It finds the REST API from the invoking event (``https://{domainName}/{stage}``), so the
  function's environment does not reference the API that integrates it (no dependency cycle).
* ``/mcp`` (ANY) uses the same Cognito authorizer and scopes as ``/v1``; MCP's streamable HTTP
  transport speaks on that one path, so no ``{proxy+}`` resource. Output: ``McpUrl``.
"""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from infra.api import ApiConstruct


class McpConstruct(Construct):
    """Adds the ``/mcp`` route to ``api``'s RestApi, integrated with ``handler``."""

    resource: apigw.Resource
    method: apigw.Method

    def __init__(self, scope: Construct, construct_id: str, *, api: ApiConstruct, handler: lambda_.IFunction):
        super().__init__(scope, construct_id)
        self.resource = api.rest_api.root.add_resource("mcp")
        self.method = api.add_authorized_method(self.resource, apigw.LambdaIntegration(handler, proxy=True))
        self.url = api.rest_api.url_for_path("/mcp")
        cdk.CfnOutput(cdk.Stack.of(self), "McpUrl", value=self.url, description="MCP gateway (streamable HTTP)")
