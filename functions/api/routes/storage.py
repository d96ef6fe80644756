"""/v1/clusters/{cluster}/storage and /reconcile: volumes after create, dependencies again."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from functions.api.context import DryRun, actor, model_response, principal, require, requires, respond, services
from functions.api.routes.clusters import ClusterPath, IdempotencyKey, RegionOpt, _ok
from functions.api.schemas import OPERATION_RESPONSES
from functions.domain.kinds import required_role
from functions.domain.storage.volumes import NAME_PATTERN, ObjectList, StorageAdd, StorageList
from functions.domain.tenancy import BucketList
from functions.logic import live_reads
from functions.logic.storage import data
from functions.logic.storage import volumes as storage
from functions.logic.storage.data import DataListing

router = Router()

VolumePath = Annotated[str, Path(description="Volume name (its PersistentVolumeClaim's name)", pattern=NAME_PATTERN)]


@router.post("/v1/clusters/<cluster>/reconcile",
             summary="Re-run the create's dependencies and storage steps (add-ons, health agent, NVIDIA/Neuron/EFA "
                     "device plugins, volumes); idempotent, also for imported clusters (operation cluster.reconcile)",
             tags=["clusters"], responses=OPERATION_RESPONSES)
@requires(required_role("cluster.reconcile"))
def reconcile_cluster(cluster: ClusterPath, region: RegionOpt = None,
                      idempotency_key: IdempotencyKey = None, dry_run: DryRun = False) -> Response[str]:
    p = require(router, required_role("cluster.reconcile"))
    return respond(storage.reconcile_cluster(services(), cluster, region, actor(p), idempotency_key, dry_run))


@router.get("/v1/buckets", summary="Buckets PodStart may read and mount: its data bucket (operators mount it) and "
                                  "the ones an admin registered (admins mount them)", tags=["storage"],
            responses=_ok(BucketList))
def list_buckets() -> Response[str]:
    principal(router)
    return model_response(BucketList(items=live_reads.registrations(services())))


@router.get("/v1/data", summary="Your data and models: without uri, the buckets PodStart may read (its data bucket at "
                               "/data in every pod, the registered ones and where each is mounted); with a /data path "
                               "or s3:// URI, one level under it (folders and files)", tags=["storage"],
            responses=_ok(DataListing))
def list_data(
    uri: Annotated[str | None, Query(description="A folder: /data/... or s3://bucket/prefix/ (omit: the buckets)",
                                     max_length=1100)] = None,
    cluster: Annotated[str | None, Query(description="Show where registered buckets are mounted on this cluster",
                                         pattern=r"^[a-z]([-a-z0-9]{0,30}[a-z0-9])?$")] = None,
    region: RegionOpt = None,
    limit: Annotated[int, Query(ge=1, le=1000, description="At most this many entries")] = 200,
    next_token: Annotated[str | None, Query(description="Token from the previous page", max_length=1024)] = None,
) -> Response[str]:
    principal(router)
    return model_response(data.list_data(services(), uri, cluster, region, limit, next_token))


@router.get("/v1/clusters/<cluster>/storage", summary="A cluster's volumes: S3 mounts and FSx file systems, with "
                                                    "their claims' phase and FSx lifecycle", tags=["storage"],
            responses=_ok(StorageList))
def list_storage(cluster: ClusterPath, region: RegionOpt = None) -> Response[str]:
    principal(router)
    return model_response(storage.list_storage(services(), cluster, region))


@router.post("/v1/clusters/<cluster>/storage",
             summary="Mount an existing S3 bucket/prefix (role scoped to it) or create an FSx for Lustre file "
                     "system, each with a PVC in the namespace you name (operation storage.add)",
             tags=["storage"], responses=OPERATION_RESPONSES)
@requires(required_role("storage.add"))
def add_storage(cluster: ClusterPath, body: StorageAdd, region: RegionOpt = None,
                idempotency_key: IdempotencyKey = None, dry_run: DryRun = False) -> Response[str]:
    p = require(router, required_role("storage.add"))
    return respond(storage.add_storage(services(), cluster, region, body, actor(p), idempotency_key, dry_run))


@router.delete("/v1/clusters/<cluster>/storage/<name>",
               summary="Remove a volume and what PodStart made for it (a bucket is never deleted; an FSx file "
                       "system only with confirm=<name>) (operation storage.remove)",
               tags=["storage"], responses=OPERATION_RESPONSES)
@requires(required_role("storage.remove"))
def remove_storage(
    cluster: ClusterPath,
    name: VolumePath,
    confirm: Annotated[str | None, Query(description="The volume name again; required for FSx (deletes its data)",
                                         max_length=40)] = None,
    region: RegionOpt = None,
    idempotency_key: IdempotencyKey = None,
    dry_run: DryRun = False,
) -> Response[str]:
    p = require(router, required_role("storage.remove"))
    return respond(storage.remove_storage(services(), cluster, region, name, confirm, actor(p), idempotency_key,
                                          dry_run))


@router.get("/v1/clusters/<cluster>/storage/<name>/objects",
            summary="List objects under an S3 volume's prefix (one level, bounded)", tags=["storage"],
            responses=_ok(ObjectList))
def list_storage_objects(
    cluster: ClusterPath,
    name: VolumePath,
    prefix: Annotated[str, Query(description="Under the volume's own prefix, e.g. 'datasets/'", max_length=512)] = "",
    limit: Annotated[int, Query(ge=1, le=1000, description="At most this many objects")] = 100,
    next_token: Annotated[str | None, Query(description="Token from the previous page", max_length=1024)] = None,
    region: RegionOpt = None,
) -> Response[str]:
    principal(router)
    return model_response(storage.list_objects(services(), cluster, region, name, prefix, limit, next_token))
