"""/v1/clusters/{cluster}/endpoints, /pools, /models: inference deployment, model pools, model downloads."""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from functions.api.context import DryRun, actor, model_response, principal, require, requires, respond, services
from functions.api.routes.clusters import ClusterPath, IdempotencyKey, RegionOpt
from functions.api.schemas import OPERATION_RESPONSES, NoChange
from functions.domain.inference.endpoints import EndpointCreate, EndpointPatch
from functions.domain.inference.requests import InvokeRequest, ModelDownload, PoolAssign, PoolCreate, PoolRelease
from functions.domain.kinds import required_role
from functions.domain.principal import Role
from functions.domain.views import ClusterEndpointList, EndpointList, EndpointView, InvokeResult, ModelList, PoolList
from functions.logic import everywhere
from functions.logic.inference import endpoint_views, endpoints, models, pools

router = Router()

EndpointPath = Annotated[str, Path(description="Endpoint name", pattern=r"^[a-z]([-a-z0-9]{0,30}[a-z0-9])?$")]
PoolPath = Annotated[str, Path(description="Pool name", pattern=r"^[a-z]([-a-z0-9]{0,22}[a-z0-9])?$")]


def _ok(model: type) -> dict[int, Any]:
    return {200: {"description": "OK", "content": {"application/json": {"model": model}}}}


@router.get("/v1/clusters/<cluster>/endpoints", summary="A cluster's inference endpoints (both paths), status live",
            tags=["endpoints"], responses=_ok(EndpointList))
def list_endpoints(
    cluster: ClusterPath, region: RegionOpt = None,
    limit: Annotated[int, Query(ge=1, le=100, description="Page size")] = 50,
    next_token: Annotated[str | None, Query(description="Token from the previous page", pattern=r"^\d{1,6}$")] = None,
) -> Response[str]:
    principal(router)
    return model_response(endpoint_views.list_endpoints(services(), cluster, region, limit, next_token))


@router.get("/v1/endpoints", summary="Inference endpoints across clusters (or cluster=), status live; clusters not "
                                   "read are listed with why", tags=["endpoints"],
            responses=_ok(ClusterEndpointList))
def list_all_endpoints(
    cluster: Annotated[str | None, Query(description="Only this cluster", pattern=r"^[a-z]([-a-z0-9]{0,30}[a-z0-9])?$")]
    = None,
    region: RegionOpt = None,
    limit: Annotated[int, Query(ge=1, le=100, description="Page size")] = 50,
    next_token: Annotated[str | None, Query(description="Token from the previous page", pattern=r"^\d{1,6}$")] = None,
) -> Response[str]:
    principal(router)
    return model_response(everywhere.all_endpoints(services(), cluster, region, limit, next_token))


@router.post("/v1/clusters/<cluster>/endpoints",
             summary="Deploy an inference endpoint, managed or self-managed (operation endpoint.deploy)",
             tags=["endpoints"], responses=OPERATION_RESPONSES)
@requires(required_role("endpoint.deploy"))
def deploy_endpoint(cluster: ClusterPath, body: EndpointCreate, region: RegionOpt = None,
                    idempotency_key: IdempotencyKey = None, dry_run: DryRun = False) -> Response[str]:
    p = require(router, required_role("endpoint.deploy"))
    return respond(endpoints.deploy_endpoint(services(), cluster, region, body, actor(p), idempotency_key, dry_run))


@router.get("/v1/clusters/<cluster>/endpoints/<endpoint>", summary="One endpoint: request, live status, objects",
            tags=["endpoints"], responses=_ok(EndpointView))
def get_endpoint(cluster: ClusterPath, endpoint: EndpointPath, region: RegionOpt = None) -> Response[str]:
    principal(router)
    return model_response(endpoint_views.get_endpoint(services(), cluster, region, endpoint))


@router.patch("/v1/clusters/<cluster>/endpoints/<endpoint>",
              summary="Scale an endpoint: replicas or autoscaling bounds; send only what changes",
              tags=["endpoints"], responses={**OPERATION_RESPONSES, 200: {
                  "description": "Nothing differs (changed: false); with dry_run=true, the plan instead",
                  "content": {"application/json": {"model": NoChange}}}})
@requires(required_role("endpoint.update"))
def update_endpoint(cluster: ClusterPath, endpoint: EndpointPath, body: EndpointPatch, region: RegionOpt = None,
                    idempotency_key: IdempotencyKey = None, dry_run: DryRun = False) -> Response[str]:
    p = require(router, required_role("endpoint.update"))
    return respond(endpoints.update_endpoint(services(), cluster, region, endpoint, body, actor(p), idempotency_key,
                                             dry_run))


@router.delete("/v1/clusters/<cluster>/endpoints/<endpoint>",
               summary="Delete an endpoint and the objects it made (operation endpoint.delete)",
               tags=["endpoints"], responses=OPERATION_RESPONSES)
@requires(required_role("endpoint.delete"))
def delete_endpoint(cluster: ClusterPath, endpoint: EndpointPath, region: RegionOpt = None,
                    idempotency_key: IdempotencyKey = None, dry_run: DryRun = False) -> Response[str]:
    p = require(router, required_role("endpoint.delete"))
    return respond(endpoints.delete_endpoint(services(), cluster, region, endpoint, actor(p), idempotency_key,
                                             dry_run))


@router.post("/v1/clusters/<cluster>/endpoints/<endpoint>/invoke",
             summary="Send an OpenAI-compatible chat to the endpoint's own Service (operators; 64 KiB in, 1 MiB out)",
             tags=["endpoints"], responses=_ok(InvokeResult))
@requires(Role.operator)
def invoke_endpoint(cluster: ClusterPath, endpoint: EndpointPath, body: InvokeRequest,
                    region: RegionOpt = None) -> Response[str]:
    require(router, Role.operator)
    return model_response(endpoints.invoke_endpoint(services(), cluster, region, endpoint, body))


@router.get("/v1/clusters/<cluster>/pools", summary="Model pools: warm GPU workers by model label (live)",
            tags=["pools"], responses=_ok(PoolList))
def list_pools(cluster: ClusterPath, region: RegionOpt = None) -> Response[str]:
    principal(router)
    return model_response(pools.list_pools(services(), cluster, region))


@router.post("/v1/clusters/<cluster>/pools", summary="Create a pool of warm GPU workers (operation pool.create)",
             tags=["pools"], responses=OPERATION_RESPONSES)
@requires(required_role("pool.create"))
def create_pool(cluster: ClusterPath, body: PoolCreate, region: RegionOpt = None,
                idempotency_key: IdempotencyKey = None, dry_run: DryRun = False) -> Response[str]:
    p = require(router, required_role("pool.create"))
    return respond(pools.create_pool(services(), cluster, region, body, actor(p), idempotency_key, dry_run))


@router.post("/v1/clusters/<cluster>/pools/<pool>/assign",
             summary="Bind N pool workers to an endpoint by relabelling them (operation pool.assign)",
             tags=["pools"], responses=OPERATION_RESPONSES)
@requires(required_role("pool.assign"))
def assign_pool_workers(cluster: ClusterPath, pool: PoolPath, body: PoolAssign, region: RegionOpt = None,
                        idempotency_key: IdempotencyKey = None, dry_run: DryRun = False) -> Response[str]:
    p = require(router, required_role("pool.assign"))
    return respond(pools.assign(services(), cluster, region, pool, body, actor(p), idempotency_key, dry_run))


@router.post("/v1/clusters/<cluster>/pools/<pool>/release",
             summary="Return an endpoint's pool workers to the pool (operation pool.release)",
             tags=["pools"], responses=OPERATION_RESPONSES)
@requires(required_role("pool.release"))
def release_pool_workers(cluster: ClusterPath, pool: PoolPath, body: PoolRelease, region: RegionOpt = None,
                         idempotency_key: IdempotencyKey = None, dry_run: DryRun = False) -> Response[str]:
    p = require(router, required_role("pool.release"))
    return respond(pools.release(services(), cluster, region, pool, body, actor(p), idempotency_key, dry_run))


@router.get("/v1/clusters/<cluster>/models",
            summary="Models in the shared bucket (models/, pods see /data/models/): id, revision, files, bytes; paged, "
                    "from the bucket",
            tags=["models"], responses=_ok(ModelList))
def list_models(
    cluster: ClusterPath, region: RegionOpt = None,
    limit: Annotated[int, Query(ge=1, le=100, description="Models per page")] = 50,
    next_token: Annotated[str | None, Query(description="Token from the previous page",
                                            pattern=r"^[A-Za-z0-9_-]{1,1400}$")] = None,
) -> Response[str]:
    principal(router)
    return model_response(models.list_models(services(), cluster, region, limit, next_token))


@router.post("/v1/clusters/<cluster>/models",
             summary="Download a Hugging Face model into the shared bucket with a Job (operation model.download)",
             tags=["models"], responses=OPERATION_RESPONSES)
@requires(required_role("model.download"))
def download_model(cluster: ClusterPath, body: ModelDownload, region: RegionOpt = None,
                   idempotency_key: IdempotencyKey = None, dry_run: DryRun = False) -> Response[str]:
    p = require(router, required_role("model.download"))
    return respond(models.download_model(services(), cluster, region, body, actor(p), idempotency_key, dry_run))
