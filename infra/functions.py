"""The Lambda functions, one per entry of :data:`functions.lambdas.LAMBDAS`, each with its own role.

Reserved concurrency bounds every function (:data:`RESERVED_CONCURRENCY`, overridable per function
with the context value ``podstart:reservedConcurrency``, e.g. ``{"steps": 40}``; ``null`` leaves a
function unreserved). Reserved concurrency is taken from the account's regional pool (1,000 by
default) and Lambda keeps 100 of it unreserved, so the 65 reserved here (67 with CDK's site
deployment handler, see :mod:`infra.stack`) fit any account at the default quota; an account whose
quota is still 10 must set every value to ``null``.

The ``events`` function is the only one invoked asynchronously (by EventBridge): what it fails to
process after Lambda's retries goes to an on-failure destination (SQS, alarmed). The others are
invoked synchronously (API Gateway, Step Functions), which return the error to their caller.
"""

from __future__ import annotations

from collections.abc import Mapping

import aws_cdk as cdk
import jsii
from aws_cdk import Fn
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from functions.domain.limits import Limits
from functions.domain.tenancy import Registration
from functions.lambdas import LAMBDAS, LIVE_FOLLOWER, LambdaSpec
from infra.bundling import build_bundle, bundle_hash
from infra.checkov import skip, skip_log_group
from infra.data import DataConstruct
from infra.nag import acknowledge, acknowledge_wildcards, grant
from infra.queues import DeadLetterQueue
from infra.steps_policy import add_steps_permissions
from infra.workflows import STATEMACHINES_DIR, state_machine_name, workflow_files, workflow_kind

EVENT_BUS_NAME = "podstart"
# Functions that read clusters' Kubernetes APIs: each role gets an access entry with the podstart-api group
READER_FUNCTIONS = ("api", "live", LIVE_FOLLOWER)
# Functions that touch no PodStart table, bucket or bus: logs and traces only.
_NO_DATA_ACCESS = frozenset({"mcp", "liveauth"})
RUNTIME = lambda_.Runtime.PYTHON_3_11  # the bundle is compiled for CPython 3.11

# Reserved concurrent executions per function (see the module docstring).
RESERVED_CONCURRENCY: dict[str, int | None] = {
    "api": 25,  # API Gateway allows 50 req/s (burst 100); a request takes well under 0.5 s
    "steps": 20,  # one in-flight step per running workflow
    "events": 10,  # throttled asynchronous events wait in Lambda's queue and are retried
    "mcp": 10,  # agents, each a few requests per second at most
    "live": 5,  # socket connects, messages and bus fan-out: each a few milliseconds
    "follow": 20,  # one per followed pod log (at most 4 per user), each up to 14 minutes
    "liveauth": 2,  # one token check per socket connect
}
# invoked asynchronously: by EventBridge (events, live) or by the live function (follow)
ASYNC_FUNCTIONS = frozenset({"events", "live", "follow"})
# set by the constructs built after the functions (infra.live: the socket API, its table, the user pool)
_LATE_ENV = frozenset({"LIVE_TABLE", "LIVE_ENDPOINT", "USER_POOL_ID", "USER_POOL_CLIENT_IDS"})

# Read-only catalog calls; none of these actions supports resource-level permissions.
_CATALOG_ACTIONS = [
    "ec2:DescribeRegions",
    "ec2:DescribeAvailabilityZones",
    "ec2:DescribeInstanceTypeOfferings",
    "ec2:DescribeInstanceTypes",
    "ec2:DescribeVpcs",
    "ec2:DescribeSubnets",  # admission: the cluster's VPC (free addresses, PodStart's compute subnets)
    "ec2:DescribeNatGateways",  # admission: a VPC without a NAT gateway cannot hold a new group
    "ec2:DescribeSpotPriceHistory",  # offerings: spot offered per zone
    "ec2:GetSpotPlacementScores",  # capacity advice: how likely spot capacity is per zone
    "sagemaker:SearchTrainingPlanOfferings",  # capacity advice and a purchase's admission: plans for sale
    "sagemaker:ListClusters",
    "sagemaker:ListTrainingPlans",
    "sagemaker:ListMlflowTrackingServers",  # the job form's tracking servers (no resource-level permissions)
    "servicequotas:ListServiceQuotas",
    "eks:ListClusters",
    "pricing:GetProducts",  # plans: hourly cost lines (the Price List API has no resources)
]
# The MLflow UI a presigned link opens, read-only (the session acts with the API role's MLflow permissions).
MLFLOW_UI_ACTIONS = [
    "sagemaker-mlflow:AccessUI",
    "sagemaker-mlflow:GetExperiment",
    "sagemaker-mlflow:GetMetricHistory",
    "sagemaker-mlflow:GetRun",
    "sagemaker-mlflow:SearchExperiments",
    "sagemaker-mlflow:SearchRuns",
]
SPEC_APPLY = "spec.apply"
# The catalog reads the child operations' admission makes (what the api role reads for the same requests).
SPEC_ADMISSION_READS = [
    "ec2:DescribeRegions",
    "ec2:DescribeInstanceTypeOfferings",
    "ec2:DescribeInstanceTypes",
    "ec2:DescribeSpotPriceHistory",
    "sagemaker:ListTrainingPlans",
    "servicequotas:ListServiceQuotas",
]
# What the functions do with the operations and state tables (and their indexes).
_TABLE_ACTIONS = ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:DeleteItem", "dynamodb:Query"]
# Powertools' DynamoDBPersistenceLayer on the idempotency table.
_IDEMPOTENCY_ACTIONS = ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"]


# The audit trail is append-only for the API: it may put (conditionally: never overwrite) and query.
_AUDIT_ACTIONS = ["dynamodb:PutItem", "dynamodb:Query"]
DEFAULT_AUDIT_RETENTION_DAYS = 400


def _arn(service: str, resource: str, *, region: str | None = None, account: str | None = None) -> str:
    return (
        f"arn:{cdk.Aws.PARTITION}:{service}:{cdk.Aws.REGION if region is None else region}:"
        f"{cdk.Aws.ACCOUNT_ID if account is None else account}:{resource}"
    )


@jsii.implements(lambda_.IDestination)
class _QueueDestination:
    """An SQS on-failure destination; the caller grants sqs:SendMessage (CDK's also grants two reads)."""

    def __init__(self, queue: sqs.IQueue):
        self._queue = queue

    def bind(
        self, scope: Construct, fn: lambda_.IFunction, *, type: lambda_.DestinationType | None = None
    ) -> lambda_.DestinationConfig:
        return lambda_.DestinationConfig(destination=self._queue.queue_arn)


class FunctionsConstruct(Construct):
    """`api`, `steps`, `events` and `mcp` Lambdas: bundled offline, traced, logged, least privilege.

    The `mcp` gateway gets no AWS data permissions (only its log group and X-Ray): it calls the
    REST API over HTTPS with each caller's own token.

    The workflow ARNs reach the api function later (:meth:`allow_workflows`) because the state
    machines themselves need the steps function's ARN first.
    """

    functions: dict[str, lambda_.Function]
    roles: dict[str, iam.Role]

    failures: DeadLetterQueue  # what the asynchronous (events) function failed to process

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        data: DataConstruct,
        event_bus_arn: str,
        boundary_arn: str,
        reserved_concurrency: Mapping[str, int | None] | None = None,
        registered: list[Registration] | None = None,
        limits: Limits | None = None,
    ):
        super().__init__(scope, construct_id)
        self._data = data
        self._registered = list(registered or [])
        self._limits = limits or Limits()
        self._event_bus_arn = event_bus_arn
        self._boundary_arn = boundary_arn
        self._reserved = {**RESERVED_CONCURRENCY, **(reserved_concurrency or {})}
        self.functions = {}
        self.roles = {}
        self._build_roles()
        self._build_functions()
        self._build_failure_destination()
        self._build_common_permissions()
        self._build_api_permissions()
        self._build_steps_permissions()
        self._build_events_permissions()
        self._skip_checkov()

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
            "AUDIT_TABLE": data.audit.table_name,
            "AUDIT_RETENTION_DAYS": str(self.node.try_get_context("podstart:auditRetentionDays")
                                        or DEFAULT_AUDIT_RETENTION_DAYS),
            "EVENT_BUS_NAME": EVENT_BUS_NAME,
            "POWERTOOLS_SERVICE_NAME": spec.function_name,
            "DATA_BUCKET": data.data_bucket.bucket_name,
            "ASSETS_BUCKET": data.assets_bucket.bucket_name,
            "TIME_SCALE": "1",
            "PODSTART_ROLE_ARN": self.roles["steps"].role_arn,
            "PODSTART_READER_ROLE_ARNS": cdk.Fn.join(",", [self.roles[n].role_arn for n in READER_FUNCTIONS]),
            "LIVE_FOLLOWER_FUNCTION": LAMBDAS[LIVE_FOLLOWER].function_name,
            "PERMISSIONS_BOUNDARY_ARN": self._boundary_arn,
            # the api's and events' are replaced by allow_workflows(); the steps function's are built from the
            # state machines' fixed names (they reference the steps function: a reference back would be a cycle)
            "WORKFLOW_ARNS": cdk.Stack.of(self).to_json_string(self._child_workflows()) if spec.name == "steps"
            else "{}",
            "PODSTART_MCP_READ_ONLY": "false",
            # no pydantic plugin is shipped: skip pydantic's scan of every package's entry points on a cold start
            "PYDANTIC_DISABLE_PLUGINS": "__all__",
            "REGISTERED_BUCKETS": ",".join(f"{r.bucket}/{r.prefix}" if r.prefix else r.bucket
                                           for r in self._registered),
            "LIMITS": self._limits.model_dump_json(),
        }
        unknown = set(spec.env) - set(values) - _LATE_ENV
        if unknown:
            raise ValueError(f"{spec.name}: no value for environment variables {sorted(unknown)}")
        return {name: values[name] for name in spec.env if name in values}

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
                reserved_concurrent_executions=self._reserved.get(spec.name),
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

    def _build_failure_destination(self) -> None:
        """Asynchronous invocations that still fail after Lambda's retries land in an alarmed queue."""
        self.failures = DeadLetterQueue(
            self, "EventsFailures", purpose="events function: asynchronous invocations that failed after retries"
        )
        for name in sorted(ASYNC_FUNCTIONS):
            fn = self.functions[name]
            fn.configure_async_invoke(
                on_failure=_QueueDestination(self.failures.queue),
                retry_attempts=2,
                max_event_age=cdk.Duration.hours(6),
            )
            grant(self.roles[name], sid="OnFailureDestination", actions=["sqs:SendMessage"],
                  resources=[self.failures.queue.queue_arn])

    # -- permissions ----------------------------------------------------------------------------

    def _build_common_permissions(self) -> None:
        data = self._data
        tables = [data.operations, data.state]
        for name, role in self.roles.items():
            if name in _NO_DATA_ACCESS:
                acknowledge_wildcards(
                    role,
                    resources=["*"],
                    reason="Only X-Ray PutTraceSegments/PutTelemetryRecords (active tracing), which "
                    "support no resource-level permissions, use Resource '*'.",
                )
                continue
            grant(
                role,
                sid="OperationsAndState",
                actions=_TABLE_ACTIONS,
                resources=[t.table_arn for t in tables] + [Fn.join("", [t.table_arn, "/index/*"]) for t in tables],
                reason="The operations and state tables and their own GSIs (by_created, by_target, by_status).",
            )
            if name == "api":
                grant(role, sid="Idempotency", actions=_IDEMPOTENCY_ACTIONS, resources=[data.idempotency.table_arn])
                grant(role, sid="AuditAppendAndRead", actions=_AUDIT_ACTIONS,
                      resources=[data.audit.table_arn, Fn.join("", [data.audit.table_arn, "/index/*"])],
                      reason="The audit table and its own GSIs (by_actor, by_cluster): append and read, never "
                             "update or delete.")
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
            actions=["sagemaker:DescribeCluster", "eks:DescribeCluster", "eks:ListAddons",
                     "eks:ListPodIdentityAssociations", "eks:ListAccessEntries"],
            resources=[_arn("sagemaker", "cluster/*", region="*"), _arn("eks", "cluster/*", region="*")],
            reason="Users browse any HyperPod cluster (and its EKS orchestrator) of this account, in any region; "
            "read-only.",
        )
        grant(
            role,
            sid="ReadClusterNodes",
            actions=["sagemaker:ListClusterNodes", "sagemaker:DescribeClusterNode", "sagemaker:ListClusterEvents"],
            resources=[_arn("sagemaker", "cluster/*", region="*")],
            reason="The nodes page, a node's detail and the events timeline read any HyperPod cluster of this "
            "account, in any region; read-only.",
        )
        grant(
            role,
            sid="MlflowTrackingServers",
            actions=["sagemaker:DescribeMlflowTrackingServer", "sagemaker:CreatePresignedMlflowTrackingServerUrl"],
            resources=[_arn("sagemaker", "mlflow-tracking-server/*", region="*")],
            reason="The tracking-server catalog and job admission describe this account's MLflow tracking servers "
            "(any region a cluster runs in); an operator's job page gets a presigned MLflow UI link (made on read, "
            "expiring in 5 minutes, never stored).",
        )
        grant(
            role,
            sid="MlflowUiSession",
            actions=MLFLOW_UI_ACTIONS,
            resources=[_arn("sagemaker", "mlflow-tracking-server/*", region="*")],
            reason="The MLflow UI session a presigned link opens acts with the identity that made the link: it may "
            "open the UI and read experiments, runs and metrics, nothing else (no writes, no model registry).",
        )
        grant(
            role,
            sid="DescribeFileSystems",
            actions=["fsx:DescribeFileSystems"],
            resources=[_arn("fsx", "file-system/*", region="*")],
            reason="A cluster's page shows its FSx file system's lifecycle; read-only.",
        )
        grant(
            role,
            sid="DescribeAddons",
            actions=["eks:DescribeAddon"],
            resources=[_arn("eks", "addon/*/*/*", region="*")],
            reason="Add-on status on a cluster's page; read-only.",
        )
        grant(
            role,
            sid="ReadFeatureRoles",
            actions=["iam:GetRole", "iam:GetRolePolicy"],
            resources=[f"arn:{cdk.Aws.PARTITION}:iam::{cdk.Aws.ACCOUNT_ID}:role/podstart/*"],
            reason="The features document shows each link of tiered checkpointing's identity chain (the role PodStart "
            "made, its trust and policy); PodStart's roles only (path /podstart/), read-only.",
        )
        grant(
            role,
            sid="ListMountedBuckets",
            actions=["s3:ListBucket"],
            resources=[self._data.data_bucket.bucket_arn,
                       *sorted({f"arn:{cdk.Aws.PARTITION}:s3:::{r.bucket}" for r in self._registered})],
            reason="Adding S3 storage checks the bucket exists (HeadBucket) and the storage page lists a mounted "
            "bucket's keys (ListObjectsV2), both authorized as s3:ListBucket: PodStart's data bucket and the buckets "
            "an admin registered (context podstart:registeredBuckets) only; read-only.",
        )
        grant(
            role,
            sid="ReadDownloadManifests",
            actions=["s3:GetObject"],
            resources=[self._data.data_bucket.arn_for_objects("models/*/_podstart_manifest.json")],
            reason="The models list shows a download in progress from its script's manifest object (files done of "
            "files total); the data bucket's download manifests only, read-only.",
        )
        grant(
            role,
            sid="ReadDatasetIndexes",
            actions=["s3:GetObject"],
            resources=[self._data.data_bucket.arn_for_objects("*/dataset_info.json"),
                       *sorted({f"arn:{cdk.Aws.PARTITION}:s3:::{r.bucket}/{r.prefix}*dataset_info.json"
                                for r in self._registered})],
            reason="A LLaMA-Factory job's admission reads its dataset folder's dataset_info.json (does it define the "
            "datasets the job names, and do their files exist) before the job starts; that index file only, in the "
            "data bucket and under each registered prefix, read-only.",
        )

    def allow_workflows(self, workflows: Mapping[str, sfn.StateMachine]) -> None:
        """Give the api function its workflows (env WORKFLOW_ARNS, start and stop rights), the events function the
        right to look an execution up by its derived name (the sweep of orphan operations), and the events and
        steps functions the right to end a task-token wait (functions.domain.wakes)."""
        arns = {kind: sm.state_machine_arn for kind, sm in workflows.items()}
        self.api.add_environment("WORKFLOW_ARNS", cdk.Stack.of(self).to_json_string(arns))
        self.events.add_environment("WORKFLOW_ARNS", cdk.Stack.of(self).to_json_string(arns))
        if not workflows:
            return
        grant(
            self.roles["events"],
            sid="FindExecutions",
            actions=["states:DescribeExecution"],
            resources=[_arn("states", f"execution:{sm.state_machine_name}:*") for sm in workflows.values()],
            reason="The sweep looks up the execution an orphan operation may have started (name derived from "
            "the operation id, not known at deploy time); read-only.",
        )
        for name in ("events", "steps"):
            grant(
                self.roles[name],
                sid="ResumeWorkflowWaits",
                actions=["states:SendTaskSuccess"],
                resources=["*"],
                reason="Ends a workflow's task-token wait when the AWS event it waits for comes (events function) or "
                "had already come when the wait began (steps function). SendTaskSuccess supports no resource-level "
                "permissions (the task token names the execution); this one action only, never SendTaskFailure.",
            )
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
            actions=["states:StopExecution"],
            resources=[_arn("states", f"execution:{sm.state_machine_name}:*") for sm in workflows.values()],
            reason="Executions of the PodStart workflows only; execution names are operation ids, "
            "not known at deploy time.",
        )

    def _build_events_permissions(self) -> None:
        grant(
            self.roles["events"],
            sid="DescribeHyperPodClusters",
            actions=["sagemaker:DescribeCluster"],
            resources=[_arn("sagemaker", "cluster/*", region="*")],
            reason="A HyperPod event names a cluster; the projector reads its counts once per event; read-only.",
        )
        grant(
            self.roles["events"],
            sid="DiscoverHyperPodClusters",
            actions=["sagemaker:ListClusters", "ec2:DescribeRegions"],
            resources=["*"],
            reason="The scheduled discovery lists the HyperPod clusters of every enabled region (neither List nor "
            "DescribeRegions supports resource-level permissions); read-only.",
        )

    def _child_workflows(self) -> dict[str, str]:
        """The workflows spec.apply's steps start (every kind but spec.apply itself), by their fixed names."""
        kinds = [workflow_kind(p) for p in workflow_files(STATEMACHINES_DIR)]
        return {k: _arn("states", f"stateMachine:{state_machine_name(k)}") for k in kinds if k != SPEC_APPLY}

    def _build_steps_permissions(self) -> None:
        role = self.roles["steps"]
        add_steps_permissions(role, data=self._data, boundary_arn=self._boundary_arn,
                              reader_roles=[self.roles[n] for n in READER_FUNCTIONS])
        # spec.apply's steps start child operations as the API does: the same admission reads, the same
        # Idempotency-Key guard, the same StartExecution (never its own workflow's)
        grant(role, sid="SpecChildIdempotency", actions=_IDEMPOTENCY_ACTIONS,
              resources=[self._data.idempotency.table_arn])
        children = self._child_workflows()
        if children:
            grant(role, sid="SpecStartChildWorkflows", actions=["states:StartExecution"],
                  resources=sorted(children.values()))
        grant(role, sid="SpecAdmissionCatalogReads", actions=SPEC_ADMISSION_READS, resources=["*"],
              reason="spec.apply admits its child operations as the API does (zones, offerings, quotas, training "
              "plans, tracking servers); these Describe/List actions support no resource-level permissions.")
        grant(role, sid="SpecAdmissionBucketCheck", actions=["s3:ListBucket"],
              resources=[f"arn:{cdk.Aws.PARTITION}:s3:::*"],
              reason="A volume in a spec names a bucket: its admission checks the bucket exists and where (HeadBucket, "
              "authorized as s3:ListBucket), as POST .../storage does; read-only.")

    def _skip_checkov(self) -> None:
        for name, fn in self.functions.items():
            skips = [
                ("CKV_AWS_117", "Not in a VPC: PodStart costs $0 when idle, and a VPC would need NAT gateways or "
                                "interface endpoints (hourly cost) to reach the AWS and EKS APIs."),
                ("CKV_AWS_173", "The environment holds resource names and ARNs, no secrets; Lambda encrypts it at "
                                "rest with an AWS-owned key, and a customer managed key costs $1/month idle."),
            ]
            if name in ASYNC_FUNCTIONS:
                skips.append(("CKV_AWS_116", "Failed asynchronous invocations go to an on-failure destination "
                                             "(AWS::Lambda::EventInvokeConfig -> SQS, alarmed), which keeps the "
                                             "error with the event; checkov reads only DeadLetterConfig."))
            else:
                skips.append(("CKV_AWS_116", "Invoked synchronously only (API Gateway, Step Functions), where a "
                                             "dead-letter queue never receives anything: the caller gets the error "
                                             "(HTTP 5xx, or the state machine's Retry/Catch)."))
            skip(fn, *skips)
            skip_log_group(self.node.find_child(f"{name.capitalize()}Logs"))
