"""spec.apply: one step per phase (cluster, instance groups, storage, features, jobs, endpoints, prune); each
starts that phase's child operations through the use cases the REST routes call, and watches them to their end
(functions.logic.specs.run_phase).

Starting a child is what the API does for a request: the same admission against the live state, the same
Idempotency-Key guard (keys derived from this operation's id), the same Step Functions start. So this function
builds the API's services from its own settings (WORKFLOW_ARNS, IDEMPOTENCY_TABLE) and reads clusters'
Kubernetes APIs with the API's client (its reads are the API's reads)."""

from __future__ import annotations

import threading
from typing import Any

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
from functions.domain.specs import PHASES
from functions.domain.workflow import Outcome
from functions.logic.deps import Deps
from functions.logic.specs import run_phase
from functions.observability import logger
from functions.settings import StepsSettings
from functions.workflows.context import StepContext, Workflow

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
        ops = OperationService(
            repo=DynamoOperationRepository(settings.operations_table),
            publisher=EventBridgePublisher(settings.event_bus_name),
            runner=StepFunctionsRunner(arns=dict(settings.workflow_arns)),
            guard=PowertoolsIdempotencyGuard(settings.idempotency_table),
            correlation_id=lambda: logger.get_correlation_id() or "-",
            steps_for=dict(KINDS),
        )
        deps = Deps(operations=ops, state=DynamoStateStore(settings.state_table), reader=AwsClusterReader(),
                    features=AwsFeatureReader(settings.data_bucket), kube=connect, mlflow=AwsMlflowServers())
        _built.clear()
        _built[id(settings)] = (settings, deps)
        return deps


def _phase(name: str) -> Any:
    def step(ctx: StepContext) -> Outcome:
        return run_phase(services(ctx.settings), ctx.operation, name, ctx.record)

    step.__name__ = f"apply_{name}"
    return step


WORKFLOW = Workflow(kind="spec.apply", steps={p: _phase(p) for p in PHASES})
