"""The Lambda functions, one per entry of :data:`functions.lambdas.LAMBDAS`, each with its own role."""

from __future__ import annotations

from collections.abc import Mapping

import aws_cdk as cdk
from aws_cdk import Fn
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from functions.lambdas import LAMBDAS, LambdaSpec
from infra.bundling import build_bundle, bundle_hash
from infra.data import DataConstruct
from infra.nag import acknowledge, acknowledge_wildcards, grant
from infra.steps_policy import add_steps_permissions

EVENT_BUS_NAME = "podstart"
# Functions that touch no PodStart table, bucket or bus: logs and traces only.
_NO_DATA_ACCESS = frozenset({"mcp"})
RUNTIME = lambda_.Runtime.PYTHON_3_11  # the bundle is compiled for CPython 3.11

# Read-only catalog calls; none of these actions supports resource-level permissions.
_CATALOG_ACTIONS = [
    "ec2:DescribeRegions",
    "ec2:DescribeAvailabilityZones",
    "ec2:DescribeInstanceTypeOfferings",
    "ec2:DescribeInstanceTypes",
    "ec2:DescribeVpcs",
    "ec2:DescribeSubnets",
    "sagemaker:ListClusters",
    "sagemaker:ListTrainingPlans",
    "servicequotas:ListServiceQuotas",
    "servicequotas:GetServiceQuota",
    "eks:ListClusters",
]


def _arn(service: str, resource: str, *, region: str | None = None, account: str | None = None) -> str:
    return (
        f"arn:{cdk.Aws.PARTITION}:{service}:{cdk.Aws.REGION if region is None else region}:"
        f"{cdk.Aws.ACCOUNT_ID if account is None else account}:{resource}"
    )


class FunctionsConstruct(Construct):
    """`api`, `steps`, `events` and `mcp` Lambdas: bundled offline, traced, logged, least privilege.

    The `mcp` gateway gets no AWS data permissions (only its log group and X-Ray): it calls the
    REST API over HTTPS with each caller's own token.

    The workflow ARNs reach the api function later (:meth:`allow_workflows`) because the state
    machines themselves need the steps function's ARN first.
    """

    functions: dict[str, lambda_.Function]
    roles: dict[str, iam.Role]

    def __init__(self, scope: Construct, construct_id: str, *, data: DataConstruct, event_bus_arn: str):
        super().__init__(scope, construct_id)
        self._data = data
        self._event_bus_arn = event_bus_arn
        self.functions = {}
        self.roles = {}
        self._build_roles()
        self._build_functions()
        self._build_common_permissions()
        self._build_api_permissions()
        self._build_steps_permissions()

    @property
    def api(self) -> lambda_.Function:
        return self.functions["api"]

    @property
    def steps(self) -> lambda_.Function:
        return self.functions["steps"]

    @property
    def events(self) -> lambda_.Function:
        return self.functions["events"]

    @property
    def mcp(self) -> lambda_.Function:
        return self.functions["mcp"]

    # -- build ----------------------------------------------------------------------------------

    def _build_roles(self) -> None:
        for spec in LAMBDAS.values():
            self.roles[spec.name] = iam.Role(
                self,
                f"{spec.name.capitalize()}Role",
                assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
                description=f"PodStart {spec.name} function",
            )

    def _environment(self, spec: LambdaSpec) -> dict[str, str]:
        data = self._data
        values: Mapping[str, str] = {
            "OPERATIONS_TABLE": data.operations.table_name,
            "STATE_TABLE": data.state.table_name,
            "IDEMPOTENCY_TABLE": data.idempotency.table_name,
            "EVENT_BUS_NAME": EVENT_BUS_NAME,
            "POWERTOOLS_SERVICE_NAME": spec.function_name,
            "DATA_BUCKET": data.data_bucket.bucket_name,
            "ASSETS_BUCKET": data.assets_bucket.bucket_name,
            "TIME_SCALE": "1",
            "PODSTART_ROLE_ARN": self.roles["steps"].role_arn,
            "WORKFLOW_ARNS": "{}",  # replaced by allow_workflows()
            "PODSTART_MCP_READ_ONLY": "false",
        }
        unknown = set(spec.env) - set(values)
        if unknown:
            raise ValueError(f"{spec.name}: no value for environment variables {sorted(unknown)}")
        return {name: values[name] for name in spec.env}

    def _build_functions(self) -> None:
        for spec in LAMBDAS.values():
            folder = build_bundle(spec)
            log_group = logs.LogGroup(
                self,
                f"{spec.name.capitalize()}Logs",
                log_group_name=f"/aws/lambda/{spec.function_name}",
                retention=logs.RetentionDays.ONE_MONTH,
                removal_policy=cdk.RemovalPolicy.DESTROY,
            )
            self.functions[spec.name] = lambda_.Function(
                self,
                spec.name.capitalize(),
                function_name=spec.function_name,
                description=spec.description,
                runtime=RUNTIME,
                architecture=lambda_.Architecture.X86_64,
                handler=spec.handler,
                code=lambda_.Code.from_asset(
                    str(folder), asset_hash=bundle_hash(spec), asset_hash_type=cdk.AssetHashType.CUSTOM
                ),
                memory_size=spec.memory_mb,
                timeout=cdk.Duration.seconds(spec.timeout_s),
                tracing=lambda_.Tracing.ACTIVE,
                role=self.roles[spec.name],
                log_group=log_group,
                logging_format=lambda_.LoggingFormat.JSON,
                environment=self._environment(spec),
            )
            log_group.grant_write(self.roles[spec.name])
            acknowledge(
                self.functions[spec.name],
                "AwsSolutions-L1",
                "Pinned to python3.11: the bundle ships CPython 3.11 wheels and bytecode built from this "
                "venv (requires-python <3.12); move with the project's Python.",
            )

    # -- permissions ----------------------------------------------------------------------------

    def _build_common_permissions(self) -> None:
        data = self._data
        for name, role in self.roles.items():
            if name in _NO_DATA_ACCESS:
                acknowledge_wildcards(
                    role,
                    resources=["*"],
                    reason="Only X-Ray PutTraceSegments/PutTelemetryRecords (active tracing), which "
                    "support no resource-level permissions, use Resource '*'.",
                )
                continue
            data.operations.grant_read_write_data(role)
            data.state.grant_read_write_data(role)
            if name == "api":
                data.idempotency.grant_read_write_data(role)
            grant(
                role,
                sid="PublishPodStartEvents",
                actions=["events:PutEvents"],
                resources=[self._event_bus_arn],
            )
            self._acknowledge_common(role)

    def _acknowledge_common(self, role: iam.Role) -> None:
        acknowledge_wildcards(
            role,
            resources=["*"],
            reason="Only X-Ray PutTraceSegments/PutTelemetryRecords (active tracing) and catalog "
            "Describe/List actions, which support no resource-level permissions, use Resource '*'.",
        )
        acknowledge_wildcards(
            role,
            resources=[Fn.join("", [t.table_arn, "/index/*"]) for t in self._data.tables],
            reason="Queries on the PodStart tables' own GSIs (by_created, by_target); scoped to each table.",
        )

    def _build_api_permissions(self) -> None:
        role = self.roles["api"]
        grant(
            role,
            sid="CatalogReadOnly",
            actions=_CATALOG_ACTIONS,
            resources=["*"],
            reason="Read-only catalog Describe/List calls; these actions support no resource-level "
            "permissions.",
        )
        grant(
            role,
            sid="DescribeClusters",
            actions=["sagemaker:DescribeCluster", "sagemaker:ListClusterNodes", "eks:DescribeCluster"],
            resources=[_arn("sagemaker", "cluster/*"), _arn("eks", "cluster/*")],
            reason="Users browse any HyperPod cluster (and its EKS orchestrator) in this account and region; "
            "read-only.",
        )
        grant(
            role,
            sid="DescribeTrainingPlans",
            actions=["sagemaker:DescribeTrainingPlan"],
            resources=[_arn("sagemaker", "training-plan/*")],
            reason="Read-only DescribeTrainingPlan on the account's training plans for the catalog.",
        )
        bucket = self._data.data_bucket
        grant(
            role,
            sid="SharedDataBucket",
            actions=["s3:ListBucket", "s3:GetObject", "s3:PutObject"],
            resources=[bucket.bucket_arn, bucket.arn_for_objects("*")],
            reason="Model downloads land in, and are listed from, the shared data bucket (that bucket only).",
        )

    def allow_workflows(self, workflows: Mapping[str, sfn.StateMachine]) -> None:
        """Give the api function its workflows: env WORKFLOW_ARNS and start/stop/describe rights."""
        arns = {kind: sm.state_machine_arn for kind, sm in workflows.items()}
        self.api.add_environment("WORKFLOW_ARNS", cdk.Stack.of(self).to_json_string(arns))
        if not workflows:
            return
        role = self.roles["api"]
        grant(
            role,
            sid="StartWorkflows",
            actions=["states:StartExecution"],
            resources=list(arns.values()),
        )
        grant(
            role,
            sid="ControlWorkflowExecutions",
            actions=["states:StopExecution", "states:DescribeExecution", "states:RedriveExecution"],
            resources=[_arn("states", f"execution:{sm.state_machine_name}:*") for sm in workflows.values()],
            reason="Executions of the PodStart workflows only; execution names are operation ids, "
            "not known at deploy time.",
        )

    def _build_steps_permissions(self) -> None:
        add_steps_permissions(self.roles["steps"], data=self._data)
