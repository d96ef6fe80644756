"""What spec.apply's steps run (functions.workflows.specs loads this on a step's first run, so neither the other
workflows nor the events function import the use cases): each phase starts its child operations through the use
cases the REST routes call, and watches them to their end (functions.logic.specs.apply.run_phase).

Starting a child is what the API does for a request: the same admission against the live state, the same
Idempotency-Key guard (keys derived from this operation's id), the same Step Functions start. So this function
builds the API's services from its own settings (WORKFLOW_ARNS, IDEMPOTENCY_TABLE) and reads clusters'
Kubernetes APIs with the API's client (its reads are the API's reads)."""

from __future__ import annotations

import threading

from functions.adapters.cluster_state import AwsClusterReader
from functions.adapters.features_read import AwsFeatureReader
from functions.adapters.idempotency import PowertoolsIdempotencyGuard
from functions.adapters.kube_http import connect
from functions.adapters.mlflow_aws import AwsMlflowServers
from functions.adapters.publisher import EventBridgePublisher
from functions.adapters.store import DynamoOperationRepository, DynamoStateStore
from functions.adapters.workflows import StepFunctionsRunner
from functions.domain.kinds import KINDS
from functions.domain.service import OperationService
from functions.domain.workflow import Outcome
from functions.lambdas import LAMBDAS
from functions.logic.deps import Deps
from functions.logic.specs.apply import run_phase
from functions.observability import logger
from functions.settings import StepsSettings
from functions.workflows.context import StepContext


class _StepWindow:
    """What the idempotency guard asks a Lambda context: how long this invocation may still run. A child start
    that dies half way leaves its key "in progress" only this long (the steps function's timeout), not a day."""

    def get_remaining_time_in_millis(self) -> int:
        return LAMBDAS["steps"].timeout_s * 1000


_lock = threading.Lock()
_built: dict[int, tuple[StepsSettings, Deps]] = {}


def services(settings: StepsSettings) -> Deps:
    """The use cases' ports, built once per settings object (clients are lazy and cached per service)."""
    with _lock:
        hit = _built.get(id(settings))
        if hit is not None and hit[0] is settings:
            return hit[1]
        if not settings.idempotency_table or not settings.workflow_arns:
            raise RuntimeError("spec.apply needs IDEMPOTENCY_TABLE and WORKFLOW_ARNS to start child operations")
        guard = PowertoolsIdempotencyGuard(settings.idempotency_table)
        guard.register_context(_StepWindow())
        ops = OperationService(
            repo=DynamoOperationRepository(settings.operations_table),
            publisher=EventBridgePublisher(settings.event_bus_name),
            runner=StepFunctionsRunner(arns=dict(settings.workflow_arns)),
            guard=guard,
            correlation_id=lambda: logger.get_correlation_id() or "-",
            steps_for=dict(KINDS),
        )
        deps = Deps(operations=ops, state=DynamoStateStore(settings.state_table), reader=AwsClusterReader(),
                    features=AwsFeatureReader(settings.data_bucket), kube=connect, mlflow=AwsMlflowServers())
        _built.clear()
        _built[id(settings)] = (settings, deps)
        return deps


def run(ctx: StepContext, phase: str) -> Outcome:
    return run_phase(services(ctx.settings), ctx.operation, phase, ctx.record)
