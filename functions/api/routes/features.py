"""/v1/clusters/{cluster}/features: the managed features document and its PATCH (the diff contract)."""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from functions.api.context import DryRun, actor, model_response, principal, require, requires, respond, services
from functions.api.routes.clusters import ClusterPath, IdempotencyKey, RegionOpt
from functions.api.schemas import OPERATION_RESPONSES
from functions.domain.features.changes import FeaturesPatch
from functions.domain.features.document import FeaturesDocument, FeaturesUnchanged
from functions.domain.kinds import required_role
from functions.domain.plans import Plan
from functions.logic import features

router = Router()
Refresh = Annotated[bool, Query(description="true: read every part live now (after a change made outside PodStart)")]


def _ok(model: Any) -> dict[int, Any]:
    return {200: {"description": "OK", "content": {"application/json": {"model": model}}}}


@router.get("/v1/clusters/<cluster>/features",
            summary="Managed features: on/off, status (from AWS and Kubernetes), version, dependencies, settings",
            tags=["features"], responses=_ok(FeaturesDocument))
def get_features(cluster: ClusterPath, region: RegionOpt = None, refresh: Refresh = False) -> Response[str]:
    principal(router)
    return model_response(features.read_features(services(), cluster, region, refresh))


@router.patch("/v1/clusters/<cluster>/features",
              summary="Turn managed features on/off or change their settings: send only what changed "
                      "(operation features.update; 200 changed=false when nothing differs)",
              tags=["features"], responses={**OPERATION_RESPONSES, **_ok(FeaturesUnchanged | Plan)})
@requires(required_role("features.update"))
def update_features(cluster: ClusterPath, body: FeaturesPatch, region: RegionOpt = None,
                    idempotency_key: IdempotencyKey = None, dry_run: DryRun = False) -> Response[str]:
    p = require(router, required_role("features.update"))
    result = features.update_features(services(), cluster, region, body, actor(p), idempotency_key, dry_run)
    if isinstance(result, FeaturesUnchanged):
        return model_response(result)
    return respond(result)
