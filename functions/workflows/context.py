"""What a step implementation receives."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from functions.domain.operations import Operation, Step
from functions.domain.workflow import Outcome
from functions.settings import StepsSettings


@dataclass(frozen=True)
class StepContext:
    operation: Operation
    step: Step
    settings: StepsSettings
    clients: Callable[[str, str | None], Any]  # (service, region) -> boto3 client
    state: Any  # DynamoStateStore-like: get/put/delete/query
    made: dict[str, Any] = field(default_factory=dict)  # ids recorded as they are made, kept even on failure

    def record(self, **outputs: Any) -> None:
        self.made.update(outputs)

    @property
    def request(self) -> dict[str, Any]:
        return self.operation.request

    @property
    def outputs(self) -> dict[str, Any]:
        """What this and earlier steps recorded (resource ids made or adopted)."""
        return {**self.operation.outputs(), **self.step.outputs, **self.made}

    def aws(self, service: str, region: str | None = None) -> Any:
        return self.clients(service, region or self.operation.target.region)


StepFn = Callable[[StepContext], Outcome]
