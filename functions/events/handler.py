"""EventBridge projector Lambda: Step Functions and HyperPod events -> PodStart records; the sweep; the discovery."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from functions.adapters import task_tokens
from functions.adapters.publisher import EventBridgePublisher
from functions.adapters.store import DynamoOperationRepository, DynamoStateStore
from functions.adapters.workflows import StepFunctionsRunner
from functions.events.projector import Projector
from functions.observability import logger, metrics, tracer
from functions.settings import events_settings
from functions.workflows.registry import WORKFLOWS


@lru_cache(maxsize=1)
def projector() -> Projector:
    s = events_settings()
    return Projector(repo=DynamoOperationRepository(s.operations_table),
                     publisher=EventBridgePublisher(s.event_bus_name), state=DynamoStateStore(s.state_table),
                     workflows=WORKFLOWS, runner=StepFunctionsRunner(arns=dict(s.workflow_arns)),
                     describe_hyperpod=_describe_hyperpod, discover=_discover,
                     resume=task_tokens.resume)


# The AWS reads load with the first event that needs them (the catalog behind them is most of a cold start).
def _describe_hyperpod(region: str, name: str) -> dict[str, Any] | None:
    from functions.adapters import cluster_state

    return cluster_state.describe_hyperpod(region, name)


@lru_cache(maxsize=1)
def _reader() -> Any:
    from functions.adapters import cluster_state

    return cluster_state.AwsClusterReader()  # keeps each cluster's orchestrator (immutable) between scans


def _discover() -> str:
    from functions.logic.clusters import discovery  # only the scheduled discovery needs the views and the catalog

    s = events_settings()
    found = discovery.discover(_reader(), DynamoStateStore(s.state_table))
    logger.info("discovered", clusters=len(found.clusters), unavailable=found.unavailable)
    return f"discovered {len(found.clusters)}"


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, str]:
    outcome = projector().project(event)
    logger.info("projected", detail_type=event.get("detail-type"), outcome=outcome)
    metrics.add_metric(name="EventsProjected", unit="Count", value=1)
    return {"outcome": outcome}
