"""Idempotency-Key handling on Powertools' idempotency utility (DynamoDB persistence, TTL'd records)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from aws_lambda_powertools.utilities.idempotency import (
    DynamoDBPersistenceLayer,
    IdempotencyConfig,
    idempotent_function,
)
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyAlreadyInProgressError,
    IdempotencyValidationError,
)

from functions.adapters import aws
from functions.domain.ports import IdempotencyInProgress, IdempotencyMismatch

KEY_TTL_SECONDS = 24 * 3600


@dataclass
class PowertoolsIdempotencyGuard:
    table: str

    @cached_property
    def _config(self) -> IdempotencyConfig:
        return IdempotencyConfig(
            event_key_jmespath="[scope, key]",
            payload_validation_jmespath="request_hash",
            expires_after_seconds=KEY_TTL_SECONDS,
            raise_on_no_idempotency_key=True,
        )

    def register_context(self, context: Any) -> None:
        """Lets an in-progress key expire with the invocation instead of blocking for a day."""
        self._config.register_lambda_context(context)

    @cached_property
    def _once(self) -> Callable[..., Any]:
        persistence = DynamoDBPersistenceLayer(table_name=self.table, boto3_client=aws.client("dynamodb"))
        config = self._config

        @idempotent_function(data_keyword_argument="call", persistence_store=persistence, config=config,
                             key_prefix="podstart-operation")
        def once(*, call: dict[str, str], create: Callable[[], str]) -> dict[str, str]:
            return {"operation_id": create()}

        return once

    def once(self, *, scope: str, key: str, request_hash: str, create: Callable[[], str]) -> str:
        try:
            result = self._once(call={"scope": scope, "key": key, "request_hash": request_hash}, create=create)
        except IdempotencyValidationError:
            raise IdempotencyMismatch(key) from None
        except IdempotencyAlreadyInProgressError:
            raise IdempotencyInProgress(key) from None
        return str(result["operation_id"])
