"""Step Functions adapter: one state machine per operation kind."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from functions.adapters import aws
from functions.domain.operations import Operation


@dataclass
class StepFunctionsRunner:
    arns: dict[str, str] = field(default_factory=dict)  # kind -> state machine ARN
    region: str | None = None

    def has_workflow(self, kind: str) -> bool:
        return kind in self.arns

    def start(self, op: Operation) -> str:
        sfn: Any = aws.client("stepfunctions", self.region)
        resp = sfn.start_execution(
            stateMachineArn=self.arns[op.kind],
            name=f"{op.id}-{op.attempt}",
            input=json.dumps({"operation_id": op.id}),
        )
        return str(resp["executionArn"])

    def stop(self, execution_arn: str, cause: str) -> None:
        sfn: Any = aws.client("stepfunctions", self.region)
        sfn.stop_execution(executionArn=execution_arn, error="OperationCancelled", cause=cause)
