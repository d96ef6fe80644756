"""Projects AWS events onto PodStart's records.

- An execution that died without recording its end (timeout, abort, a crash in the failure path)
  still shows as FAILED on its operation.
- HyperPod state changes and cluster events keep each cluster record's last-known status and group
  counts current (one DescribeCluster per event, never one per cluster per list).
- A workflow waiting for one of these events (functions.domain.wakes) resumes: a HyperPod cluster's state change
  ends its watchers' waits, an execution's end its parent spec.apply's.
- The scheduled sweep fails operations the API stored but never started (and frees their targets).
- The scheduled discovery (its own rule; `detail.podstart == "discover"`) scans every HyperPod region for
  clusters PodStart does not track (functions.logic.clusters.discovery), so the clusters list need not.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from functions.domain import operations as ops
from functions.domain import wakes
from functions.domain.clusters.record import ClusterRecord, ClusterRecords
from functions.domain.operations import ErrorInfo, now_iso
from functions.domain.ports import EventPublisher, OperationRepository, StateStore, WorkflowRunner
from functions.domain.service import OperationService
from functions.workflows.context import Workflow

EXECUTION_CHANGE = "Step Functions Execution Status Change"
HYPERPOD_STATE = "SageMaker HyperPod Cluster State Change"
HYPERPOD_EVENT = "SageMaker HyperPod Cluster Event"
HYPERPOD_NODE_HEALTH = ("SageMaker HyperPod Cluster Node Health Event", "SageMaker HyperPod Cluster Node Health")
SCHEDULED = "Scheduled Event"
DISCOVER = "discover"  # the discovery rule's input: {"detail": {"podstart": "discover"}} on a Scheduled Event
ORPHAN_AFTER_SECONDS = 300.0  # an operation still PENDING without a workflow after 5 minutes was orphaned


@dataclass
class Projector:
    repo: OperationRepository
    publisher: EventPublisher
    state: StateStore
    workflows: Mapping[str, Workflow]
    runner: WorkflowRunner
    describe_hyperpod: Callable[[str, str], dict[str, Any] | None]  # (region, name) -> DescribeCluster or None
    discover: Callable[[], str] | None = None  # the scan of every region for untracked clusters; its outcome
    resume: Callable[[str], bool] | None = None  # SendTaskSuccess(token) -> False when the token is stale

    def _service(self) -> OperationService:
        return OperationService(repo=self.repo, publisher=self.publisher, runner=self.runner,
                                guard=None)  # type: ignore[arg-type]

    def project(self, event: dict[str, Any]) -> str:
        detail_type = event.get("detail-type")
        detail = event.get("detail") or {}
        if detail_type == EXECUTION_CHANGE:
            woke = self._wake_parents(detail)
            return self._execution(detail) + woke
        if detail_type in (HYPERPOD_STATE, HYPERPOD_EVENT, *HYPERPOD_NODE_HEALTH):
            woke = self._wake_watchers(str(event.get("region") or ""), detail) if detail_type == HYPERPOD_STATE else ""
            return self._hyperpod(str(event.get("region") or ""), detail) + woke
        if detail_type == SCHEDULED and event.get("source") == "aws.events":
            if isinstance(detail, dict) and detail.get("podstart") == DISCOVER and self.discover is not None:
                return self.discover()
            swept = self._service().sweep(ORPHAN_AFTER_SECONDS, follow=self._hook)
            return f"swept {len(swept)}"
        return "ignored"

    def _hook(self, op: ops.Operation) -> None:
        workflow = self.workflows.get(op.kind)
        if workflow is not None and workflow.on_status is not None:
            workflow.on_status(op, self.state)

    def _wake(self, kind: str, resource: str, status: str) -> str:
        """Resume every workflow waiting on the resource for another status; '' when none waited."""
        if self.resume is None:
            return ""
        resumed = 0
        for waiter in wakes.due(self.state, kind, resource, status):
            if self.resume(waiter.token):
                resumed += 1
            wakes.forget(self.state, waiter)  # resumed, or a stale token (its wait already polled)
        return f"; resumed {resumed}" if resumed else ""

    def _wake_watchers(self, region: str, detail: dict[str, Any]) -> str:
        name = detail.get("ClusterName")
        if not name or not region:
            return ""
        # a state change that does not say the status wakes every watcher (each looks, and waits again if it must)
        return self._wake(wakes.HYPERPOD, wakes.hyperpod_resource(region, str(name)), str(detail.get("ClusterStatus")
                                                                                         or ""))

    def _wake_parents(self, detail: dict[str, Any]) -> str:
        status = str(detail.get("status") or "")
        if status not in wakes.TERMINAL_EXECUTION:
            return ""
        try:
            op_id = json.loads(detail.get("input") or "{}").get("operation_id")
        except ValueError:
            return ""
        return self._wake(wakes.OPERATION, str(op_id), status) if op_id else ""

    def _execution(self, detail: dict[str, Any]) -> str:
        status = detail.get("status")
        try:
            op_id = json.loads(detail.get("input") or "{}").get("operation_id")
        except ValueError:
            return "ignored"
        if not op_id or status not in ("FAILED", "TIMED_OUT", "ABORTED"):
            return "ignored"
        op = self.repo.get(op_id)
        arn = str(detail.get("executionArn") or "")
        # Another attempt's execution (a retry clears the ARN until its own execution begins: the first attempt's
        # FAILED event, delivered late, must not fail the retry)
        if op is None or (op.execution_arn and op.execution_arn != arn) or (
                arn and arn.rsplit(":", 1)[-1] != ops.execution_name(op)):
            return "ignored"
        if op.status.terminal:
            if status == "ABORTED":  # a cancel stopped the execution: let the records follow
                self._hook(op)
                return "records updated"
            return "ignored"
        info = ErrorInfo(code=f"Execution{str(status).title().replace('_', '')}",
                         message=str(detail.get("cause") or f"workflow execution {status}"), retryable=True)
        failed = ops.fail(op, info)
        self._hook(failed)
        saved = self._service().record(op, failed)
        self.repo.release(saved)
        return "failed"

    def _hyperpod(self, region: str, detail: dict[str, Any]) -> str:
        inner = detail.get("EventDetails")
        name = (inner.get("ClusterName") if isinstance(inner, dict) else None) or detail.get("ClusterName")
        if not name or not region:
            return "ignored"
        records = ClusterRecords(self.state)
        matches = [r for r in records.all() if r.region == region and (r.hyperpod_cluster_name or r.name) == name]
        if not matches:
            return "ignored"
        live = self.describe_hyperpod(region, str(name))
        if live is None:
            return "ignored"
        seen = now_iso()
        groups = {g["InstanceGroupName"]: g for g in live.get("InstanceGroups", [])}

        def follow(rec: ClusterRecord) -> ClusterRecord:  # onto the record as it is now, not as first read
            updated = [g.model_copy(update={
                "current_count": groups[g.name].get("CurrentCount"),
                "instance_count": groups[g.name].get("TargetCount", g.instance_count),
                "status": groups[g.name].get("Status"), "counts_as_of": seen,
            }) if g.name in groups else g for g in rec.instance_groups]
            return rec.model_copy(update={"instance_groups": updated, "hyperpod_status": live.get("ClusterStatus")})

        for rec in matches:
            records.mutate(rec.region, rec.name, follow)
        return "recorded"
