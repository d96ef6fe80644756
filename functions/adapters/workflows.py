"""Step Functions adapter: one state machine per operation kind."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from functions.adapters import aws
from functions.domain.operations import Operation, execution_name

__all__ = ["StepFunctionsRunner", "execution_name"]


@dataclass
class StepFunctionsRunner:
    arns: dict[str, str] = field(default_factory=dict)  # kind -> state machine ARN
    region: str | None = None

    def has_workflow(self, kind: str) -> bool:
        return kind in self.arns

    def start(self, op: Operation) -> str:
        """Start the attempt's execution under a name derived from the operation (Step Functions keeps
        names unique per state machine), so a second start of the same attempt starts nothing."""
        sfn: Any = aws.client("stepfunctions", self.region)
        try:
            resp = sfn.start_execution(stateMachineArn=self.arns[op.kind], name=execution_name(op),
                                       input=json.dumps({"operation_id": op.id}))
        except ClientError as err:
            if err.response.get("Error", {}).get("Code") != "ExecutionAlreadyExists":
                raise
            return self.execution_arn(op)
        return str(resp["executionArn"])

    def execution_arn(self, op: Operation) -> str:
        machine = self.arns[op.kind]
        return machine.replace(":stateMachine:", ":execution:", 1) + ":" + execution_name(op)

    def find(self, op: Operation) -> str | None:
        if op.kind not in self.arns:
            return None
        sfn: Any = aws.client("stepfunctions", self.region)
        arn = self.execution_arn(op)
        try:
            sfn.describe_execution(executionArn=arn)
        except ClientError as err:
            if err.response.get("Error", {}).get("Code") in ("ExecutionDoesNotExist", "ResourceNotFound"):
                return None
            raise
        return arn

    def stop(self, execution_arn: str, cause: str) -> None:
        sfn: Any = aws.client("stepfunctions", self.region)
        sfn.stop_execution(executionArn=execution_arn, error="OperationCancelled", cause=cause)
