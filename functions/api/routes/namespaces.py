"""/v1/clusters/{cluster}/namespaces: PodStart's namespaces (default and the ones an admin created)."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from functions.api.context import DryRun, actor, model_response, principal, require, requires, respond, services
from functions.api.routes.clusters import ClusterPath, IdempotencyKey, RegionOpt, _ok
from functions.api.schemas import OPERATION_RESPONSES
from functions.domain.kinds import required_role
from functions.domain.namespaces.models import NamespaceCreate, NamespaceList
from functions.domain.tenancy import DNS_LABEL
from functions.logic import namespaces

router = Router()

NamespacePath = Annotated[str, Path(description="Namespace name", pattern=DNS_LABEL, max_length=63)]


@router.get("/v1/clusters/<cluster>/namespaces",
            summary="PodStart's namespaces: default and the ones an admin created (jobs, Secrets and volumes live "
                    "only there)", tags=["namespaces"], responses=_ok(NamespaceList))
def list_namespaces(cluster: ClusterPath, region: RegionOpt = None) -> Response[str]:
    principal(router)
    return model_response(namespaces.list_namespaces(services(), cluster, region))


@router.post("/v1/clusters/<cluster>/namespaces",
             summary="Create a PodStart namespace with its data volume and Secrets access (operation "
                     "namespace.create, admin)", tags=["namespaces"], responses=OPERATION_RESPONSES)
@requires(required_role("namespace.create"))
def create_namespace(cluster: ClusterPath, body: NamespaceCreate, region: RegionOpt = None,
                     idempotency_key: IdempotencyKey = None, dry_run: DryRun = False) -> Response[str]:
    p = require(router, required_role("namespace.create"))
    return respond(namespaces.create_namespace(services(), cluster, region, body, actor(p), idempotency_key, dry_run))


@router.delete("/v1/clusters/<cluster>/namespaces/<namespace>",
               summary="Delete a PodStart namespace and everything in it, with confirm=<name> (operation "
                       "namespace.delete, admin)", tags=["namespaces"], responses=OPERATION_RESPONSES)
@requires(required_role("namespace.delete"))
def delete_namespace(
    cluster: ClusterPath,
    namespace: NamespacePath,
    confirm: Annotated[str | None, Query(description="The namespace's name again (everything in it is deleted)",
                                         max_length=63)] = None,
    region: RegionOpt = None,
    idempotency_key: IdempotencyKey = None,
    dry_run: DryRun = False,
) -> Response[str]:
    p = require(router, required_role("namespace.delete"))
    return respond(namespaces.delete_namespace(services(), cluster, region, namespace, confirm, actor(p),
                                               idempotency_key, dry_run))
