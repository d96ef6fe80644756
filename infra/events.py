"""EventBridge: the `podstart` bus and the rules that feed the events function.

Four default-bus rules target the events function: PodStart workflow status changes, HyperPod
cluster events, a 5-minute schedule (``detail-type`` "Scheduled Event", ``source``
"aws.events") on which it sweeps orphan operations, and a 10-minute one (the same event with
``detail.podstart`` "discover") on which it scans every HyperPod region for clusters PodStart does
not track (so the clusters list need not ask every region per request). Every target retries for 2 hours and then
hands the event to a dead-letter queue (alarmed), so no AWS event is lost silently.
"""

from __future__ import annotations

from collections.abc import Sequence

import aws_cdk as cdk
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from infra.queues import DeadLetterQueue

BUS_NAME = "podstart"
SWEEP_EVERY = cdk.Duration.minutes(5)
DISCOVER_EVERY = cdk.Duration.minutes(10)  # functions.logic.clusters.discovery.DISCOVER_EVERY_MINUTES
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
    """Default-bus rules: workflow status changes, HyperPod events and the sweeper -> events function."""

    workflow_rule: events.Rule | None
    hyperpod_rule: events.Rule
    sweeper_rule: events.Rule
    discovery_rule: events.Rule
    undelivered: DeadLetterQueue  # events EventBridge could not deliver to the function

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
        self._build_dead_letter_queue()
        self._build_workflow_rule(state_machine_arns)
        self._build_hyperpod_rule()
        self._build_sweeper_rule()
        self._build_discovery_rule()

    def _build_dead_letter_queue(self) -> None:
        self.undelivered = DeadLetterQueue(
            self, "Undelivered", purpose="EventBridge could not deliver these events to the events function"
        )

    def _target(self, event: events.RuleTargetInput | None = None) -> targets.LambdaFunction:
        return targets.LambdaFunction(
            self._projector,
            event=event,
            retry_attempts=8,
            max_event_age=cdk.Duration.hours(2),
            dead_letter_queue=self.undelivered.queue,
        )

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

    def _build_sweeper_rule(self) -> None:
        self.sweeper_rule = events.Rule(
            self,
            "Sweeper",
            description="Every 5 minutes: fail PENDING operations that never started, releasing their locks",
            schedule=events.Schedule.rate(SWEEP_EVERY),
            targets=[self._target()],
        )

    def _build_discovery_rule(self) -> None:
        self.discovery_rule = events.Rule(
            self,
            "Discovery",
            description="Every 10 minutes: find the HyperPod-on-EKS clusters PodStart does not track, in every region",
            schedule=events.Schedule.rate(DISCOVER_EVERY),
            targets=[self._target(events.RuleTargetInput.from_object(
                {"source": "aws.events", "detail-type": "Scheduled Event", "detail": {"podstart": "discover"}}))],
        )
