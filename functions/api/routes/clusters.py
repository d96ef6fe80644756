"""/v1/clusters: create, list, inspect."""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Header, Path, Query

from functions.api.context import DryRun, actor, model_response, principal, require, requires, respond, services
from functions.api.schemas import OPERATION_RESPONSES, ClusterDetail, ClusterList, GroupList, NoChange
from functions.domain.catalog import REGION_PATTERN
from functions.domain.clusters.groups import DRAIN_TIMEOUT_DEFAULT_S, DRAIN_TIMEOUT_MAX_S
from functions.domain.clusters.models import ClusterCreate, ClusterImport, InstanceGroupAdd, InstanceGroupPatch
from functions.domain.clusters.software_update import SoftwareUpdate
from functions.domain.kinds import required_role
from functions.domain.plans import Plan
from functions.logic.clusters import create as cluster_create
from functions.logic.clusters import delete as cluster_delete
from functions.logic.clusters import group_add, group_delete, group_scale, software_update
from functions.logic.clusters import importing as cluster_import
from functions.logic.clusters import views as cluster_views

router = Router()


def _ok(model: Any) -> dict[int, Any]:
    return {200: {"description": "OK", "content": {"application/json": {"model": model}}}}


IdempotencyKey = Annotated[str | None, Header(
    alias="Idempotency-Key", max_length=128,
    description="Same key + same body returns the same operation; retries never repeat the mutation")]
ClusterPath = Annotated[str, Path(description="Cluster name", pattern=r"^[a-z]([-a-z0-9]{0,30}[a-z0-9])?$")]
RegionOpt = Annotated[str | None, Query(description="Region, if the name is ambiguous",
                                        pattern=REGION_PATTERN)]


@router.post("/v1/clusters", summary="Create a HyperPod cluster on a new EKS cluster (operation cluster.create)",
             tags=["clusters"], responses=OPERATION_RESPONSES)
@requires(required_role("cluster.create"))
def create_cluster(body: ClusterCreate, idempotency_key: IdempotencyKey = None, dry_run: DryRun = False
                   ) -> Response[str]:
    p = require(router, required_role("cluster.create"))
    return respond(cluster_create.create_cluster(services(), body, actor(p), idempotency_key, dry_run))


@router.get("/v1/clusters", summary="List clusters in every region: PodStart's, and HyperPod-on-EKS clusters it "
                                   "could import", tags=["clusters"], responses=_ok(ClusterList))
def list_clusters(
    limit: Annotated[int, Query(ge=1, le=100, description="Page size")] = 50,
    next_token: Annotated[str | None, Query(description="Token from the previous page",
                                            pattern=r"^\d{1,6}$")] = None,
    region: RegionOpt = None,
    name: Annotated[str | None, Query(description="Only clusters of this name (is it taken?)",
                                      pattern=r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$")] = None,
) -> Response[str]:
    p = principal(router)
    return model_response(cluster_views.list_clusters(services(), p.sub, limit, next_token, region, name))


@router.get("/v1/clusters/<cluster>", summary="A cluster: EKS, HyperPod, instance groups, dependencies, storage",
            tags=["clusters"], responses=_ok(ClusterDetail))
def get_cluster(cluster: ClusterPath, region: RegionOpt = None) -> Response[str]:
    p = principal(router)
    return model_response(cluster_views.cluster_detail(services(), cluster, region, p.sub))


@router.delete("/v1/clusters/<cluster>",
               summary="Delete a cluster and everything PodStart created for it (operation cluster.delete)",
               tags=["clusters"], responses=OPERATION_RESPONSES)
@requires(required_role("cluster.delete"))
def delete_cluster(
    cluster: ClusterPath,
    confirm: Annotated[str, Query(description="The cluster name again, to confirm", max_length=32)],
    region: RegionOpt = None,
    idempotency_key: IdempotencyKey = None,
    dry_run: DryRun = False,
) -> Response[str]:
    p = require(router, required_role("cluster.delete"))
    return respond(cluster_delete.delete_cluster(services(), cluster, region, confirm, actor(p), idempotency_key,
                                                 dry_run))


@router.post("/v1/clusters/import",
             summary="Adopt an existing EKS cluster and its HyperPod cluster (admin: grants PodStart cluster-admin)",
             tags=["clusters"], responses=OPERATION_RESPONSES)
@requires(required_role("cluster.import"))
def import_cluster(body: ClusterImport, idempotency_key: IdempotencyKey = None, dry_run: DryRun = False
                   ) -> Response[str]:
    p = require(router, required_role("cluster.import"))
    return respond(cluster_import.import_cluster(services(), body, actor(p), idempotency_key, dry_run))


GroupPath = Annotated[str, Path(description="Instance group name", pattern=r"^[a-z]([-a-z0-9]{0,30}[a-z0-9])?$")]


@router.get("/v1/clusters/<cluster>/instance-groups", summary="A cluster's instance groups with counts",
            tags=["instance-groups"], responses=_ok(GroupList))
def list_instance_groups(cluster: ClusterPath, region: RegionOpt = None) -> Response[str]:
    p = principal(router)
    return model_response(cluster_views.list_groups(services(), cluster, region, p.sub))


@router.post("/v1/clusters/<cluster>/instance-groups",
             summary="Add an instance group: capacity type, EFA-only mode and subnet resolved together",
             tags=["instance-groups"], responses=OPERATION_RESPONSES)
@requires(required_role("instance_group.add"))
def add_instance_group(cluster: ClusterPath, body: InstanceGroupAdd, region: RegionOpt = None,
                       idempotency_key: IdempotencyKey = None, dry_run: DryRun = False) -> Response[str]:
    p = require(router, required_role("instance_group.add"))
    return respond(group_add.add_instance_group(services(), cluster, region, body, actor(p), idempotency_key,
                                                dry_run))


@router.patch("/v1/clusters/<cluster>/instance-groups/<group>",
              summary="Scale an instance group (send only instance_count); other fields are fixed",
              tags=["instance-groups"], responses={**OPERATION_RESPONSES, **_ok(NoChange | Plan)})
@requires(required_role("instance_group.scale"))
def scale_instance_group(cluster: ClusterPath, group: GroupPath, body: InstanceGroupPatch,
                         region: RegionOpt = None, idempotency_key: IdempotencyKey = None,
                         dry_run: DryRun = False) -> Response[str]:
    p = require(router, required_role("instance_group.scale"))
    return respond(group_scale.scale_instance_group(services(), cluster, region, group, body, actor(p),
                                                    idempotency_key, dry_run))


@router.delete("/v1/clusters/<cluster>/instance-groups/<group>",
               summary="Delete an instance group: drain its nodes (PDBs respected), then remove it (admin)",
               tags=["instance-groups"], responses=OPERATION_RESPONSES)
@requires(required_role("instance_group.delete"))
def delete_instance_group(cluster: ClusterPath, group: GroupPath,
                          confirm: Annotated[str, Query(description="The group name, to confirm",
                                                        max_length=32)],
                          drain_timeout_s: Annotated[int, Query(
                              description="How long (seconds) a pod a PodDisruptionBudget keeps may block the drain "
                                          "before the operation fails naming it", ge=0,
                              le=DRAIN_TIMEOUT_MAX_S)] = DRAIN_TIMEOUT_DEFAULT_S,
                          region: RegionOpt = None, idempotency_key: IdempotencyKey = None,
                          dry_run: DryRun = False) -> Response[str]:
    p = require(router, required_role("instance_group.delete"))
    return respond(group_delete.delete_instance_group(services(), cluster, region, group, confirm, actor(p),
                                                      idempotency_key, dry_run, drain_timeout_s))


@router.post("/v1/clusters/<cluster>/software-update",
             summary="Update the HyperPod platform software (AMI) of instance groups, rolling batch by batch; nodes "
                     "restart (operation cluster.software_update)", tags=["clusters"], responses=OPERATION_RESPONSES)
@requires(required_role("cluster.software_update"))
def update_cluster_software(cluster: ClusterPath, body: SoftwareUpdate, region: RegionOpt = None,
                            idempotency_key: IdempotencyKey = None, dry_run: DryRun = False) -> Response[str]:
    p = require(router, required_role("cluster.software_update"))
    return respond(software_update.update_software(services(), cluster, region, body, actor(p), idempotency_key,
                                                   dry_run))
