"""/v1/clusters: create, list, inspect."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Header, Path, Query

from functions.api import cluster_ops
from functions.api.context import accepted, actor, json_response, principal, require
from functions.api.schemas import OPERATION_RESPONSES
from functions.domain.clusters import ClusterCreate
from functions.domain.principal import Role

router = Router()

IdempotencyKey = Annotated[str | None, Header(
    alias="Idempotency-Key", max_length=128,
    description="Same key + same body returns the same operation; retries never repeat the mutation")]
ClusterPath = Annotated[str, Path(description="Cluster name", pattern=r"^[a-z]([-a-z0-9]{0,30}[a-z0-9])?$")]
RegionOpt = Annotated[str | None, Query(description="Region of the cluster (needed if the name is in several)",
                                        pattern=r"^[a-z]{2}(-[a-z]+)+-\d$")]


@router.post("/v1/clusters", summary="Create a HyperPod cluster on a new EKS cluster (operation cluster.create)",
             tags=["clusters"], responses=OPERATION_RESPONSES)
def create_cluster(body: ClusterCreate, idempotency_key: IdempotencyKey = None) -> Response[str]:
    p = require(router, Role.operator)
    return accepted(cluster_ops.create_cluster(body, actor(p), idempotency_key))


@router.get("/v1/clusters", summary="List clusters (all regions), with status and the active marker",
            tags=["clusters"])
def list_clusters(
    limit: Annotated[int, Query(ge=1, le=100, description="Page size")] = 50,
    next_token: Annotated[str | None, Query(description="Token from the previous page",
                                            pattern=r"^\d{1,6}$")] = None,
) -> Response[str]:
    p = principal(router)
    return json_response(cluster_ops.list_view(limit, next_token, p.sub))


@router.get("/v1/clusters/<cluster>", summary="A cluster: EKS, HyperPod, instance groups, dependencies, storage",
            tags=["clusters"])
def get_cluster(cluster: ClusterPath, region: RegionOpt = None) -> Response[str]:
    p = principal(router)
    return json_response(cluster_ops.detail_view(cluster, region, p.sub))
