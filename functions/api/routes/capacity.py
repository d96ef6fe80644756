"""/v1/capacity: the capacity advisor, training plan purchases, and a cluster's GPUs per instance group."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from functions.api.context import DryRun, actor, model_response, principal, require, requires, respond, services
from functions.api.routes.clusters import ClusterPath, IdempotencyKey, RegionOpt
from functions.api.schemas import OPERATION_RESPONSES
from functions.domain.capacity.models import Advice, AdviceRequest
from functions.domain.capacity.placement import ClusterGpus
from functions.domain.capacity.purchase import KIND, TrainingPlanPurchase
from functions.domain.kinds import required_role
from functions.logic import capacity

router = Router()

# A POST that only reads (its body is a question too big for a query string): no audit record, no idempotency key,
# no dry run, any signed-in role; MCP lists it as a read-only tool (mcp_gateway.catalog reads the same marker).
READ_ONLY = {"x-podstart-read-only": True}


def _ok(model: type) -> dict[int, Any]:
    return {200: {"description": "OK", "content": {"application/json": {"model": model}}}}


@router.post("/v1/capacity/advice",
             summary="Where the accelerators asked for can run: ranked options (zone, type, capacity type, quota, "
                     "price, start) with the request that creates each, and the near misses with why",
             tags=["capacity"], responses=_ok(Advice), openapi_extensions=READ_ONLY)
def advise_capacity(body: AdviceRequest) -> Response[str]:
    principal(router)
    return model_response(capacity.advise(services(), body))


@router.post("/v1/capacity/training-plans",
             summary="Buy a SageMaker training plan offering: reserved capacity paid upfront (operation "
                     "training_plan.purchase; admin; confirm_upfront_fee repeats the fee the dry run shows)",
             tags=["capacity"], responses=OPERATION_RESPONSES)
@requires(required_role(KIND))
def purchase_training_plan(body: TrainingPlanPurchase, idempotency_key: IdempotencyKey = None,
                           dry_run: DryRun = False) -> Response[str]:
    p = require(router, required_role(KIND))
    return respond(capacity.purchase_plan(services(), body, actor(p), idempotency_key, dry_run))


@router.get("/v1/clusters/<cluster>/gpus",
            summary="GPUs per instance group: total, used by pods, free on schedulable nodes", tags=["capacity"],
            responses=_ok(ClusterGpus))
def get_cluster_gpus(cluster: ClusterPath, region: RegionOpt = None) -> Response[str]:
    principal(router)
    return model_response(capacity.cluster_gpus(services(), cluster, region))
