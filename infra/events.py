"""EventBridge: the `podstart` bus and the rules that feed the events projector."""

from __future__ import annotations

from collections.abc import Sequence

import aws_cdk as cdk
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

BUS_NAME = "podstart"
HYPERPOD_DETAIL_TYPES = [
    "SageMaker HyperPod Cluster State Change",
    "SageMaker HyperPod Cluster Node Health",
    "SageMaker HyperPod Cluster Event",
]


class EventBusConstruct(Construct):
    """The custom bus (with a 30-day archive for replay). Created first: functions publish to it."""

    bus: events.EventBus

    def __init__(self, scope: Construct, construct_id: str):
        super().__init__(scope, construct_id)
        self._build_bus()
        self._build_archive()

    def _build_bus(self) -> None:
        self.bus = events.EventBus(self, "Bus", event_bus_name=BUS_NAME, description="PodStart domain events")

    def _build_archive(self) -> None:
        self.bus.archive(
            "Archive",
            description="Replay PodStart events (30 days)",
            event_pattern=events.EventPattern(source=["podstart"]),
            retention=cdk.Duration.days(30),
        )


class EventRulesConstruct(Construct):
    """Default-bus rules: PodStart workflow status changes and HyperPod events -> events function."""

    workflow_rule: events.Rule | None
    hyperpod_rule: events.Rule

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        projector: lambda_.IFunction,
        state_machine_arns: Sequence[str],
    ):
        super().__init__(scope, construct_id)
        self._projector = projector
        self._build_workflow_rule(state_machine_arns)
        self._build_hyperpod_rule()

    def _target(self) -> targets.LambdaFunction:
        return targets.LambdaFunction(self._projector, retry_attempts=8, max_event_age=cdk.Duration.hours(2))

    def _build_workflow_rule(self, state_machine_arns: Sequence[str]) -> None:
        self.workflow_rule = None
        if not state_machine_arns:
            return  # an empty stateMachineArn filter would match nothing useful
        self.workflow_rule = events.Rule(
            self,
            "WorkflowStatus",
            description="PodStart Step Functions execution status changes",
            event_pattern=events.EventPattern(
                source=["aws.states"],
                detail_type=["Step Functions Execution Status Change"],
                detail={"stateMachineArn": list(state_machine_arns)},
            ),
            targets=[self._target()],
        )

    def _build_hyperpod_rule(self) -> None:
        self.hyperpod_rule = events.Rule(
            self,
            "HyperPodEvents",
            description="SageMaker HyperPod cluster state, node health and cluster events",
            event_pattern=events.EventPattern(source=["aws.sagemaker"], detail_type=HYPERPOD_DETAIL_TYPES),
            targets=[self._target()],
        )
