"""EventBridge projector Lambda: Step Functions and HyperPod events -> PodStart records."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from functions.adapters.publisher import EventBridgePublisher
from functions.adapters.store import DynamoOperationRepository, DynamoStateStore
from functions.events.projector import Projector
from functions.observability import logger, metrics, tracer
from functions.settings import common_settings


@lru_cache(maxsize=1)
def projector() -> Projector:
    s = common_settings()
    return Projector(repo=DynamoOperationRepository(s.operations_table),
                     publisher=EventBridgePublisher(s.event_bus_name), state=DynamoStateStore(s.state_table))


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, str]:
    outcome = projector().project(event)
    logger.info("projected", detail_type=event.get("detail-type"), outcome=outcome)
    metrics.add_metric(name="EventsProjected", unit="Count", value=1)
    return {"outcome": outcome}
