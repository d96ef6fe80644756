"""PodStartStack: composes one construct per capability; cdk-nag runs on the app (see app.py)."""

from __future__ import annotations

import json
from pathlib import Path

import aws_cdk as cdk
from constructs import Construct, IConstruct

from functions.domain.identifiers import key_problem
from functions.domain.limits import Limits
from functions.domain.storage.volumes import bucket_problem
from functions.domain.tenancy import Registration, parse_registrations
from infra.api import STAGE, ApiConstruct
from infra.auth import AuthConstruct
from infra.boundary import RolesBoundaryConstruct
from infra.checkov import skip
from infra.data import DataConstruct
from infra.events import EventBusConstruct, EventRulesConstruct
from infra.functions import RESERVED_CONCURRENCY, FunctionsConstruct
from infra.live import LiveConstruct
from infra.mcp import McpConstruct
from infra.nag import acknowledge, nag_resource
from infra.web import WebConstruct
from infra.workflows import STATEMACHINES_DIR, WorkflowsConstruct

WEB_DEPLOY = "web-deploy"  # CDK's BucketDeployment handler, in podstart:reservedConcurrency
BUCKET_DEPLOYMENT_CONCURRENCY = 2  # one site deployment at a time, plus a retry


def reserved_concurrency_overrides(value: object) -> dict[str, int | None]:
    """Context ``podstart:reservedConcurrency``: ``{"<function>": <positive int> | null}``, or its JSON text.

    Overrides :data:`infra.functions.RESERVED_CONCURRENCY` per function (and ``"web-deploy"``, the
    site deployment handler, :data:`BUCKET_DEPLOYMENT_CONCURRENCY`); ``null`` leaves it unreserved.
    """
    overrides = json.loads(value) if isinstance(value, str) else dict(value or {})  # type: ignore[call-overload]
    for name, count in overrides.items():
        known = [*RESERVED_CONCURRENCY, WEB_DEPLOY]
        if name not in known:
            raise ValueError(f"podstart:reservedConcurrency: no function {name!r} ({sorted(known)})")
        if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
            raise ValueError(f"podstart:reservedConcurrency.{name} must be a positive integer or null")
    return overrides


def registered_buckets(raw: object) -> list[Registration]:
    """Context ``podstart:registeredBuckets``: buckets PodStart may read besides its own, each ``bucket`` or
    ``bucket/prefix/``, as a list, JSON text or comma-separated text. Names are checked by S3's rules."""
    if raw is None or raw == "":
        return []
    if isinstance(raw, str):
        raw = json.loads(raw) if raw.strip().startswith("[") else raw
    if not isinstance(raw, list | str):
        raise ValueError("podstart:registeredBuckets: a list of bucket or bucket/prefix/ strings")
    regs = parse_registrations(raw if isinstance(raw, str) else [str(x) for x in raw])
    for r in regs:
        why = bucket_problem(r.bucket) or (key_problem(r.prefix) if r.prefix else None)
        if why:
            raise ValueError(f"podstart:registeredBuckets: {r.bucket}/{r.prefix}: {why}")
    return regs


def limits_override(raw: object) -> Limits:
    """Context ``podstart:limits``: the fair-share limits (functions.domain.limits.Limits), as an object or JSON."""
    if raw is None or raw == "":
        return Limits()
    return Limits.model_validate(json.loads(raw) if isinstance(raw, str) else raw)


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
        self._reserved = reserved_concurrency_overrides(self.node.try_get_context("podstart:reservedConcurrency"))
        domain_prefix = (
            self.node.try_get_context("podstart:cognitoDomainPrefix") or f"podstart-{self.account}"
        )

        self.data = DataConstruct(self, "Data")
        self.bus = EventBusConstruct(self, "Events")
        registered = registered_buckets(self.node.try_get_context("podstart:registeredBuckets"))
        self.boundary = RolesBoundaryConstruct(self, "RolesBoundary", data=self.data, registered=registered)
        self.functions = FunctionsConstruct(
            self,
            "Functions",
            data=self.data,
            event_bus_arn=self.bus.bus.event_bus_arn,
            boundary_arn=self.boundary.arn,
            reserved_concurrency={k: v for k, v in self._reserved.items() if k != WEB_DEPLOY},
            registered=registered,
            limits=limits_override(self.node.try_get_context("podstart:limits")),
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
        self.mcp = McpConstruct(self, "Mcp", api=self.api, handler=self.functions.mcp)
        self.live = LiveConstruct(self, "Live", functions=self.functions, event_bus=self.bus.bus,
                                  user_pool_id=self.auth.user_pool.user_pool_id,
                                  client_ids=[self.auth.web_client.user_pool_client_id])
        self.web.deploy(self._web_config())
        self._acknowledge_cdk_singletons()
        self._outputs()

    def _web_config(self) -> dict[str, str]:
        """What the UI reads from /config.json to sign in (web/src/auth.ts)."""
        return {
            "auth": "cognito",
            "apiUrl": f"{self.api.origin}/{STAGE}",
            "userPoolDomain": self.auth.hosted_ui_origin,
            "userPoolId": self.auth.user_pool.user_pool_id,
            "clientId": self.auth.web_client.user_pool_client_id,
            "scopes": self.auth.web_scopes,
            "region": self.region,
            "wsUrl": self.live.url,
        }

    def _outputs(self) -> None:
        cdk.CfnOutput(self, "ApiUrl", value=self.api.url, description="REST API base (/v1)")
        cdk.CfnOutput(self, "WebUrl", value=self.web.url, description="Web UI")
        cdk.CfnOutput(self, "UserPoolId", value=self.auth.user_pool.user_pool_id)
        cdk.CfnOutput(self, "WebClientId", value=self.auth.web_client.user_pool_client_id)
        cdk.CfnOutput(self, "MachineClientId", value=self.auth.machine_client.user_pool_client_id)
        cdk.CfnOutput(self, "HostedUiUrl", value=self.auth.hosted_ui_origin)

    def _acknowledge_bucket_deployment(self, handler: IConstruct) -> None:
        """The granular findings of CDK's BucketDeployment handler role (CDK writes these grants)."""
        reason = ("CDK BucketDeployment handler: reads the CDK asset bucket, writes and prunes the web bucket's "
                  "objects, and invalidates the CloudFront distribution (grants generated by aws-cdk-lib).")
        acknowledge(handler, "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/"
                             "AWSLambdaBasicExecutionRole]", "CDK BucketDeployment handler's own logs.")
        actions = ["s3:GetObject*", "s3:GetBucket*", "s3:List*", "s3:DeleteObject*", "s3:Abort*"]
        resources = ["*", "arn:<AWS::Partition>:s3:::cdk-hnb659fds-assets-<AWS::AccountId>-<AWS::Region>/*",
                     nag_resource(self, self.web.bucket.bucket_arn) + "/*"]
        for finding in [*(f"Action::{a}" for a in actions), *(f"Resource::{r}" for r in resources)]:
            acknowledge(handler, f"AwsSolutions-IAM5[{finding}]", reason)

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
                self._acknowledge_bucket_deployment(child)
                self._bound_bucket_deployment(child, self._reserved.get(WEB_DEPLOY, BUCKET_DEPLOYMENT_CONCURRENCY))
                role_policy = child.node.try_find_child("ServiceRole")
                policy = role_policy.node.try_find_child("DefaultPolicy") if role_policy else None
                if policy is not None:
                    skip(policy, ("CKV_AWS_111", "Written by aws-cdk-lib for its BucketDeployment handler: "
                                                 "CloudFront invalidations, which it grants on '*'."))

    @staticmethod
    def _bound_bucket_deployment(handler: IConstruct, reserved: int | None) -> None:
        """CDK's BucketDeployment handler runs once per deployment: bound it, and say why the rest is fine."""
        function = handler.node.default_child
        assert isinstance(function, cdk.CfnResource)
        if reserved is None:
            skip(function, ("CKV_AWS_115", "Left unreserved by the podstart:reservedConcurrency context value "
                                           "(the account's Lambda concurrency quota has no room to reserve)."))
        else:
            function.add_property_override("ReservedConcurrentExecutions", reserved)
        skip(
            function,
            ("CKV_AWS_116", "CDK's BucketDeployment custom-resource handler, invoked by CloudFormation: a failure "
                            "fails and rolls back the stack deployment, where it is seen and retried."),
            ("CKV_AWS_117", "CDK's BucketDeployment handler copies the site from the CDK asset bucket; a VPC would "
                            "need NAT or endpoints (hourly cost) for nothing."),
            ("CKV_AWS_173", "CDK's BucketDeployment handler: its environment holds no secrets."),
        )
