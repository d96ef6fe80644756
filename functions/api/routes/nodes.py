"""/v1/clusters/{cluster}/nodes and /events: node pages, node detail, reboot / replace (escalation ladder) /
delete as operations, on-demand deep health checks (/health-checks), and HyperPod's cluster events."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from functions.api.context import DryRun, actor, model_response, principal, require, requires, respond, services
from functions.api.routes.clusters import ClusterPath, IdempotencyKey, RegionOpt
from functions.api.schemas import OPERATION_RESPONSES
from functions.domain.errors import InvalidInput
from functions.domain.kinds import required_role
from functions.domain.nodes.health_checks import HealthCheckStart
from functions.domain.nodes.models import (
    NODE_ID,
    EventList,
    NodeDetail,
    NodeList,
    NodesDelete,
    NodesReboot,
    NodesReplace,
)
from functions.logic.nodes import actions as node_actions
from functions.logic.nodes import views as node_views

router = Router()
SINCE = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})?$"


def _ok(model: type) -> dict[int, Any]:
    return {200: {"description": "OK", "content": {"application/json": {"model": model}}}}


GroupOpt = Annotated[str | None, Query(description="Only this instance group",
                                       pattern=r"^[a-z]([-a-z0-9]{0,30}[a-z0-9])?$")]
NodePath = Annotated[str, Path(description="HyperPod instance id (i-...)", pattern=NODE_ID)]
Health = Annotated[str | None, Query(
    description="Only nodes with this health label",
    pattern=r"^(Schedulable|Unschedulable|UnschedulablePendingReboot|UnschedulablePendingReplacement)$")]
Token = Annotated[str | None, Query(description="Token from the previous page", max_length=4096,
                                    pattern=r"^[ak]:[A-Za-z0-9+/=_.\-]{1,4000}$")]


@router.get("/v1/clusters/<cluster>/nodes",
            summary="A page of a cluster's nodes: HyperPod status, health (label, deep health check, Ready), the last "
                    "fault event, GPUs requested and allocatable, the repairs HyperPod made by itself, the last "
                    "action and the ladder's next rung", tags=["nodes"], responses=_ok(NodeList))
def list_nodes(
    cluster: ClusterPath,
    region: RegionOpt = None,
    group: GroupOpt = None,
    health: Health = None,
    unhealthy: Annotated[bool, Query(description="Only nodes that are not healthy (health label, Ready, deep "
                                                 "health check, HyperPod status)")] = False,
    faulted_since: Annotated[str | None, Query(description="Only nodes with a fault event after this ISO 8601 time",
                                               pattern=SINCE)] = None,
    limit: Annotated[int, Query(ge=1, le=500, description="Page size (100 by default)")] = 100,
    next_token: Token = None,
) -> Response[str]:
    principal(router)
    since = _since(faulted_since, "faulted_since")
    return model_response(node_views.list_nodes(services(), cluster, region, group, health, limit, next_token,
                                                unhealthy=unhealthy, faulted_since=since))


def _since(value: str | None, name: str) -> datetime | None:
    try:
        after = datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None
    except ValueError:
        raise InvalidInput.field(["query", name], "not an ISO 8601 time, e.g. 2026-12-01T08:00:00Z") from None
    return after.replace(tzinfo=UTC) if after is not None and after.tzinfo is None else after


@router.get("/v1/clusters/<cluster>/nodes/<node_id>",
            summary="A node: HyperPod detail, Kubernetes conditions, taints, pods, recent events, ladder position",
            tags=["nodes"], responses=_ok(NodeDetail))
def get_node(cluster: ClusterPath, node_id: NodePath, region: RegionOpt = None) -> Response[str]:
    principal(router)
    return model_response(node_views.node_detail(services(), cluster, region, node_id))


@router.post("/v1/clusters/<cluster>/nodes/reboot",
             summary="Reboot nodes (operation nodes.reboot): batches of 25, each node watched back to Ready",
             tags=["nodes"], responses=OPERATION_RESPONSES)
@requires(required_role("nodes.reboot"))
def reboot_nodes(cluster: ClusterPath, body: NodesReboot, region: RegionOpt = None,
                 idempotency_key: IdempotencyKey = None, dry_run: DryRun = False) -> Response[str]:
    p = require(router, required_role("nodes.reboot"))
    return respond(node_actions.reboot_nodes(services(), cluster, region, body, actor(p), idempotency_key, dry_run))


@router.post("/v1/clusters/<cluster>/nodes/replace",
             summary="Replace nodes (operation nodes.replace; wipes instance storage): reboot first, or force + "
                     "reason", tags=["nodes"], responses=OPERATION_RESPONSES)
@requires(required_role("nodes.replace"))
def replace_nodes(cluster: ClusterPath, body: NodesReplace, region: RegionOpt = None,
                  idempotency_key: IdempotencyKey = None, dry_run: DryRun = False) -> Response[str]:
    p = require(router, required_role("nodes.replace"))
    return respond(node_actions.replace_nodes(services(), cluster, region, body, actor(p), idempotency_key, dry_run))


@router.post("/v1/clusters/<cluster>/nodes/delete",
             summary="Delete nodes (operation nodes.delete): instances terminated, their groups shrink",
             tags=["nodes"], responses=OPERATION_RESPONSES)
@requires(required_role("nodes.delete"))
def delete_nodes(cluster: ClusterPath, body: NodesDelete, region: RegionOpt = None,
                 idempotency_key: IdempotencyKey = None, dry_run: DryRun = False) -> Response[str]:
    p = require(router, required_role("nodes.delete"))
    return respond(node_actions.delete_nodes(services(), cluster, region, body, actor(p), idempotency_key, dry_run))


@router.post("/v1/clusters/<cluster>/health-checks",
             summary="Deep health checks on a group's nodes (operation nodes.health_check): results per node and "
                     "check", tags=["nodes"], responses=OPERATION_RESPONSES)
@requires(required_role("nodes.health_check"))
def start_health_check(cluster: ClusterPath, body: HealthCheckStart, region: RegionOpt = None,
                       idempotency_key: IdempotencyKey = None, dry_run: DryRun = False) -> Response[str]:
    p = require(router, required_role("nodes.health_check"))
    return respond(node_actions.start_health_check(services(), cluster, region, body, actor(p), idempotency_key,
                                                   dry_run))


@router.get("/v1/clusters/<cluster>/events", summary="HyperPod cluster events, newest first (ListClusterEvents)",
            tags=["nodes"], responses=_ok(EventList))
def list_events(
    cluster: ClusterPath,
    region: RegionOpt = None,
    node_id: Annotated[str | None, Query(description="Only this node's events", pattern=NODE_ID)] = None,
    group: GroupOpt = None,
    since: Annotated[str | None, Query(description="Only events after this ISO 8601 time",
                                       pattern=SINCE)] = None,
    limit: Annotated[int, Query(ge=1, le=100, description="Page size")] = 50,
    next_token: Annotated[str | None, Query(description="Token from the previous page", max_length=4096,
                                            pattern=r"^[A-Za-z0-9+/=_.\-]{1,4000}$")] = None,
) -> Response[str]:
    principal(router)
    after = _since(since, "since")
    return model_response(node_views.list_events(services(), cluster, region, node_id, group, after, limit,
                                                 next_token))
