"""Projects AWS events onto PodStart's records: an execution that died without recording its end
(timeout, abort, a crash in the failure path) still shows as FAILED on its operation."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from functions.domain import operations as ops
from functions.domain.operations import ErrorInfo
from functions.domain.ports import EventPublisher, OperationRepository
from functions.domain.service import OperationService
from functions.workflows import registry

EXECUTION_CHANGE = "Step Functions Execution Status Change"
HYPERPOD_STATE = "SageMaker HyperPod Cluster State Change"


@dataclass
class Projector:
    repo: OperationRepository
    publisher: EventPublisher
    state: Any

    def project(self, event: dict[str, Any]) -> str:
        detail_type = event.get("detail-type")
        detail = event.get("detail") or {}
        if detail_type == EXECUTION_CHANGE:
            return self._execution(detail)
        if detail_type == HYPERPOD_STATE:
            return self._hyperpod(detail)
        return "ignored"

    def _execution(self, detail: dict[str, Any]) -> str:
        status = detail.get("status")
        try:
            op_id = json.loads(detail.get("input") or "{}").get("operation_id")
        except ValueError:
            return "ignored"
        if not op_id or status not in ("FAILED", "TIMED_OUT", "ABORTED"):
            return "ignored"
        op = self.repo.get(op_id)
        if op is None or (op.execution_arn and op.execution_arn != detail.get("executionArn")):
            return "ignored"
        if op.status.terminal:
            if status == "ABORTED":  # a cancel stopped the execution: let the records follow
                hook = registry.status_hook(op.kind)
                if hook is not None:
                    hook(op, self.state)
                return "records updated"
            return "ignored"
        info = ErrorInfo(code=f"Execution{str(status).title().replace('_', '')}",
                         message=str(detail.get("cause") or f"workflow execution {status}"), retryable=True)
        svc = OperationService(repo=self.repo, publisher=self.publisher, runner=None, guard=None)  # type: ignore[arg-type]
        saved = svc.record(op, ops.fail(op, info))
        self.repo.release(saved)
        return "failed"

    def _hyperpod(self, detail: dict[str, Any]) -> str:
        name = detail.get("ClusterName")
        if not name:
            return "ignored"
        self.state.put("HYPERPOD", str(name), {"status": detail.get("ClusterStatus"), "arn": detail.get("ClusterArn")})
        return "recorded"
