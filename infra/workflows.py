"""Workflows: one per ``statemachines/*.asl.json`` (``cluster.create.asl.json`` -> kind ``cluster.create``)."""

from __future__ import annotations

from pathlib import Path

import aws_cdk as cdk
from aws_cdk import aws_events as events
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from functions.domain.kinds import kind_of_file
from infra.bundling import REPO_ROOT
from infra.checkov import skip_log_group
from infra.nag import acknowledge_wildcards

STATEMACHINES_DIR = REPO_ROOT / "statemachines"
ASL_SUFFIX = ".asl.json"
# The definitions name service integrations in the aws partition (the sandbox runs them as they
# are); deployed, they take the stack's partition (aws-cn, aws-us-gov): AWS::Partition.
_INTEGRATION = "arn:aws:states:::"  # partition-literal: rewritten by deployed_definition()
_PUT_EVENTS = _INTEGRATION + "events:putEvents"


def deployed_definition(text: str) -> str:
    """An ASL definition with its integration ARNs in the stack's partition (a CDK token)."""
    return text.replace(_INTEGRATION, f"arn:{cdk.Aws.PARTITION}:states:::")


def workflow_kind(path: Path) -> str:
    """``cluster.create.asl.json`` -> ``cluster.create``."""
    return kind_of_file(path.name)


def state_machine_name(kind: str) -> str:
    """``cluster.create`` -> ``podstart-cluster-create``: fixed, so an ARN can be built without the resource
    (spec.apply's steps start child workflows; a reference to the machines would be a dependency cycle)."""
    return "podstart-" + kind.replace(".", "-").replace("_", "-")


def workflow_files(directory: Path) -> list[Path]:
    return sorted(directory.glob(f"*{ASL_SUFFIX}")) if directory.is_dir() else []


class WorkflowsConstruct(Construct):
    """Standard state machines with logging (ALL, no execution data) and X-Ray, one role each.

    Each role may invoke the steps function and nothing else (plus log delivery and X-Ray, and
    PutEvents on the podstart bus for a definition that publishes there itself).
    """

    state_machines: dict[str, sfn.StateMachine]

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        steps_function: lambda_.IFunction,
        event_bus: events.IEventBus,
        directory: Path = STATEMACHINES_DIR,
    ):
        super().__init__(scope, construct_id)
        self._steps = steps_function
        self._bus = event_bus
        self.state_machines = {}
        for path in workflow_files(directory):
            self._build_state_machine(path)

    @property
    def arns(self) -> dict[str, str]:
        return {kind: sm.state_machine_arn for kind, sm in self.state_machines.items()}

    def _build_state_machine(self, path: Path) -> None:
        kind = workflow_kind(path)
        name = state_machine_name(kind)
        construct_id = "".join(p.capitalize() for p in kind.replace(".", "_").split("_"))
        role = iam.Role(
            self,
            f"{construct_id}Role",
            assumed_by=iam.ServicePrincipal("states.amazonaws.com"),
            description=f"PodStart workflow {kind}: invoke the steps function only",
        )
        self._steps.grant_invoke(role)
        text = path.read_text()
        if _PUT_EVENTS in text:
            self._bus.grant_put_events_to(role)  # only workflows that publish to the bus themselves
        log_group = logs.LogGroup(
            self,
            f"{construct_id}Logs",
            log_group_name=f"/aws/vendedlogs/states/{name}",
            retention=logs.RetentionDays.ONE_MONTH,
            removal_policy=cdk.RemovalPolicy.DESTROY,
        )
        state_machine = sfn.StateMachine(
            self,
            construct_id,
            state_machine_name=name,
            state_machine_type=sfn.StateMachineType.STANDARD,
            definition_body=sfn.DefinitionBody.from_string(deployed_definition(text)),
            definition_substitutions={
                "StepsFunctionArn": self._steps.function_arn,
                "EventBusName": self._bus.event_bus_name,
            },
            role=role,
            tracing_enabled=True,
            logs=sfn.LogOptions(destination=log_group, level=sfn.LogLevel.ALL, include_execution_data=False),
        )
        self.state_machines[kind] = state_machine
        skip_log_group(log_group)
        acknowledge_wildcards(
            role,
            resources=["*", cdk.Fn.join("", [self._steps.function_arn, ":*"])],
            reason="Resource '*' only for CloudWatch Logs vended-delivery and X-Ray actions (no "
            "resource-level "
            "permissions); '<steps>:*' is the steps function's own versions/aliases.",
        )
