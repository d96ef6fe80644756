"""/v1/clusters: create, list, inspect."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Header, Path, Query

from functions.api import cluster_ops
from functions.api.context import accepted, actor, json_response, principal, require
from functions.api.schemas import OPERATION_RESPONSES
from functions.domain.clusters import ClusterCreate, ClusterImport, InstanceGroupAdd, InstanceGroupPatch
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


@router.delete("/v1/clusters/<cluster>",
               summary="Delete a cluster and everything PodStart created for it (operation cluster.delete)",
               tags=["clusters"], responses=OPERATION_RESPONSES)
def delete_cluster(
    cluster: ClusterPath,
    confirm: Annotated[str, Query(description="The cluster name again, to confirm", max_length=32)],
    region: RegionOpt = None,
    idempotency_key: IdempotencyKey = None,
) -> Response[str]:
    p = require(router, Role.admin)
    return accepted(cluster_ops.delete_cluster(cluster, region, confirm, actor(p), idempotency_key))


@router.post("/v1/clusters/import", summary="Adopt an existing EKS cluster and its HyperPod cluster",
             tags=["clusters"], responses=OPERATION_RESPONSES)
def import_cluster(body: ClusterImport, idempotency_key: IdempotencyKey = None) -> Response[str]:
    p = require(router, Role.operator)
    return accepted(cluster_ops.import_cluster(body, actor(p), idempotency_key))


GroupPath = Annotated[str, Path(description="Instance group name", pattern=r"^[a-z]([-a-z0-9]{0,30}[a-z0-9])?$")]


@router.get("/v1/clusters/<cluster>/instance-groups", summary="A cluster's instance groups with counts",
            tags=["instance-groups"])
def list_instance_groups(cluster: ClusterPath, region: RegionOpt = None) -> Response[str]:
    p = principal(router)
    return json_response(cluster_ops.list_instance_groups(cluster, region, p.sub))


@router.post("/v1/clusters/<cluster>/instance-groups",
             summary="Add an instance group: capacity type, EFA-only mode and subnet resolved together",
             tags=["instance-groups"], responses=OPERATION_RESPONSES)
def add_instance_group(cluster: ClusterPath, body: InstanceGroupAdd, region: RegionOpt = None,
                       idempotency_key: IdempotencyKey = None) -> Response[str]:
    p = require(router, Role.operator)
    return accepted(cluster_ops.add_instance_group(cluster, region, body, actor(p), idempotency_key))


@router.patch("/v1/clusters/<cluster>/instance-groups/<group>",
              summary="Scale an instance group (send only instance_count); other fields are fixed",
              tags=["instance-groups"], responses=OPERATION_RESPONSES)
def scale_instance_group(cluster: ClusterPath, group: GroupPath, body: InstanceGroupPatch,
                         region: RegionOpt = None, idempotency_key: IdempotencyKey = None) -> Response[str]:
    p = require(router, Role.operator)
    result = cluster_ops.patch_instance_group(cluster, region, group, body, actor(p), idempotency_key)
    if isinstance(result, dict):
        return json_response(result)
    return accepted(result)
