"""The API's services, built once per container from its settings; clients are lazy."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from functions.adapters.audit import DynamoAuditLog
from functions.adapters.capacity_aws import AwsCapacityFacts
from functions.adapters.cluster_state import AwsClusterReader
from functions.adapters.features_read import AwsFeatureReader
from functions.adapters.idempotency import PowertoolsIdempotencyGuard
from functions.adapters.mlflow_aws import AwsMlflowServers
from functions.adapters.nodes import AwsNodeReader
from functions.adapters.objects import AwsObjectLister
from functions.adapters.prices import AwsPriceList
from functions.adapters.publisher import EventBridgePublisher
from functions.adapters.store import DynamoOperationRepository, DynamoStateStore
from functions.adapters.workflows import StepFunctionsRunner
from functions.domain.kinds import KINDS
from functions.domain.limits import Leases
from functions.domain.ports import AuditLog
from functions.domain.service import OperationService
from functions.logic.deps import Deps
from functions.observability import logger
from functions.settings import ApiSettings, api_settings


@dataclass
class Services(Deps):
    settings: ApiSettings | None = None
    guard: PowertoolsIdempotencyGuard | None = None
    audit: AuditLog | None = None
    leases: Leases | None = None  # fair share of long polls (functions.domain.limits)


@lru_cache(maxsize=1)
def services() -> Services:
    s = api_settings()
    guard = PowertoolsIdempotencyGuard(s.idempotency_table)
    ops = OperationService(
        repo=DynamoOperationRepository(s.operations_table),
        publisher=EventBridgePublisher(s.event_bus_name),
        runner=StepFunctionsRunner(arns=dict(s.workflow_arns)),
        guard=guard,
        correlation_id=lambda: logger.get_correlation_id() or "-",
        steps_for=dict(KINDS),
    )
    from functions.adapters.kube_http import connect

    prices = AwsPriceList()
    state = DynamoStateStore(s.state_table)
    return Services(operations=ops, state=state, reader=AwsClusterReader(), leases=Leases(state),
                    nodes=AwsNodeReader(), objects=AwsObjectLister(), mlflow=AwsMlflowServers(),
                    features=AwsFeatureReader(s.data_bucket), kube=connect, prices=prices, settings=s,
                    guard=guard, capacity=AwsCapacityFacts(prices),
                    audit=DynamoAuditLog(s.audit_table, s.audit_retention_days) if s.audit_table else None)
