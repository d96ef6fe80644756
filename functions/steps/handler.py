"""Workflow step Lambda: a thin adapter from the state machine's Task payload to the engine."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from functions.adapters import task_tokens
from functions.adapters.publisher import EventBridgePublisher
from functions.adapters.store import DynamoOperationRepository, DynamoStateStore
from functions.observability import logger, tracer
from functions.settings import steps_settings
from functions.steps.engine import Engine
from functions.workflows.registry import WORKFLOWS


@lru_cache(maxsize=1)
def engine() -> Engine:
    s = steps_settings()
    return Engine(repo=DynamoOperationRepository(s.operations_table), publisher=EventBridgePublisher(s.event_bus_name),
                  settings=s, state=DynamoStateStore(s.state_table), workflows=WORKFLOWS,
                  resume=task_tokens.resume)


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    logger.set_correlation_id(event.get("operation_id"))
    logger.append_keys(action=event.get("action"), step=event.get("step"))
    return engine().handle(event)
