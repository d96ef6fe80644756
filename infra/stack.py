"""PodStartStack: composes one construct per capability; cdk-nag runs on the app (see app.py)."""

from __future__ import annotations

from pathlib import Path

import aws_cdk as cdk
from constructs import Construct

from infra.api import ApiConstruct
from infra.auth import AuthConstruct
from infra.data import DataConstruct
from infra.events import EventBusConstruct, EventRulesConstruct
from infra.functions import FunctionsConstruct
from infra.mcp import McpConstruct
from infra.nag import acknowledge
from infra.web import WebConstruct
from infra.workflows import STATEMACHINES_DIR, WorkflowsConstruct


class PodStartStack(cdk.Stack):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        statemachines_dir: Path = STATEMACHINES_DIR,
        **kwargs: object,
    ):
        super().__init__(scope, construct_id, **kwargs)  # type: ignore[arg-type]
        domain_prefix = (
            self.node.try_get_context("podstart:cognitoDomainPrefix") or f"podstart-{self.account}"
        )

        self.data = DataConstruct(self, "Data")
        self.bus = EventBusConstruct(self, "Events")
        self.functions = FunctionsConstruct(
            self, "Functions", data=self.data, event_bus_arn=self.bus.bus.event_bus_arn
        )
        self.workflows = WorkflowsConstruct(
            self,
            "Workflows",
            steps_function=self.functions.steps,
            event_bus=self.bus.bus,
            directory=statemachines_dir,
        )
        self.functions.allow_workflows(self.workflows.state_machines)
        self.rules = EventRulesConstruct(
            self,
            "EventRules",
            projector=self.functions.events,
            state_machine_arns=list(self.workflows.arns.values()),
        )
        # The web distribution comes first (CORS and OAuth callbacks need its domain); its CSP
        # connect-src is resolved lazily from the API and hosted-UI origins built after it.
        self.web = WebConstruct(
            self,
            "Web",
            logs_bucket=self.data.logs_bucket,
            connect_origins=lambda: [self.api.origin, self.auth.hosted_ui_origin],
        )
        self.auth = AuthConstruct(self, "Auth", web_url=self.web.url, domain_prefix=domain_prefix)
        self.api = ApiConstruct(
            self,
            "Api",
            handler=self.functions.api,
            user_pool=self.auth.user_pool,
            scopes=[self.auth.read_scope.scope_name, self.auth.write_scope.scope_name],
            ui_origin=self.web.url,
        )
        self.mcp = McpConstruct(self, "Mcp")
        self._acknowledge_cdk_singletons()
        self._outputs()

    def _outputs(self) -> None:
        cdk.CfnOutput(self, "ApiUrl", value=self.api.url, description="REST API base (/v1)")
        cdk.CfnOutput(self, "WebUrl", value=self.web.url, description="Web UI")
        cdk.CfnOutput(self, "UserPoolId", value=self.auth.user_pool.user_pool_id)
        cdk.CfnOutput(self, "WebClientId", value=self.auth.web_client.user_pool_client_id)
        cdk.CfnOutput(self, "MachineClientId", value=self.auth.machine_client.user_pool_client_id)
        cdk.CfnOutput(self, "HostedUiUrl", value=self.auth.hosted_ui_origin)

    def _acknowledge_cdk_singletons(self) -> None:
        """Functions CDK itself adds at stack level (BucketDeployment, log retention)."""
        for child in self.node.children:
            if child.node.id.startswith("Custom::CDKBucketDeployment"):
                for rule, reason in (
                    (
                        "AwsSolutions-IAM4",
                        "CDK BucketDeployment handler uses AWSLambdaBasicExecutionRole "
                        "for its own logs (CDK-managed).",
                    ),
                    (
                        "AwsSolutions-IAM5",
                        "CDK BucketDeployment handler reads the CDK asset bucket and "
                        "writes the destination bucket's objects (CDK-managed grants).",
                    ),
                    ("AwsSolutions-L1", "Runtime chosen by aws-cdk-lib for its BucketDeployment handler."),
                ):
                    acknowledge(child, rule, reason)
