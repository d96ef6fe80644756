"""What a step implementation receives, and what a workflow module exports."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from functions.domain.operations import Operation, Step
from functions.domain.ports import StateStore
from functions.domain.workflow import Outcome
from functions.settings import StepsSettings


@dataclass(frozen=True)
class StepContext:
    operation: Operation
    step: Step
    settings: StepsSettings
    clients: Callable[[str, str | None], Any]  # (service, region) -> boto3 client
    state: StateStore
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

    @property
    def region(self) -> str:
        return str(self.operation.target.region or self.settings.aws_region)

    def aws(self, service: str, region: str | None = None) -> Any:
        return self.clients(service, region or self.operation.target.region)


StepFn = Callable[[StepContext], Outcome]
StatusHook = Callable[[Operation, StateStore], None]  # (the operation as it is about to be saved, state store)

@dataclass(frozen=True)
class Workflow:
    """One operation kind: its steps in order, and how records follow it. Step names and budgets are
    the kind's contract in `functions.domain.kinds` (a test keeps them equal)."""

    kind: str
    steps: Mapping[str, StepFn]
    on_status: StatusHook | None = None

    @property
    def step_names(self) -> tuple[str, ...]:
        return tuple(self.steps)
