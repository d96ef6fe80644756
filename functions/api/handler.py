"""PodStart REST API /v1: one Powertools resolver; the request chain (auth, body, validation) is functions.api.edge."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from functions.adapters.kube_http import KubeUnavailable
from functions.api import edge, openapi, problems
from functions.api.context import json_response
from functions.api.routes import (
    audit,
    capacity,
    catalog,
    clusters,
    features,
    inference,
    jobs,
    namespaces,
    nodes,
    operations,
    preferences,
    recipes,
    specs,
    storage,
)
from functions.domain.errors import Problem
from functions.observability import logger, metrics, tracer

API_TITLE = "PodStart API"
API_VERSION = "1.0.0"

# Validation is on, but composed by edge.middlewares() after authentication (Powertools would run it first).
app = APIGatewayRestResolver(enable_validation=False, json_body_deserializer=edge.strict_json)


def _instance() -> str | None:
    return app.current_event.path if getattr(app, "current_event", None) else None


app.use(middlewares=edge.middlewares())
app.include_router(operations.router)
app.include_router(catalog.router)
app.include_router(preferences.router)
app.include_router(clusters.router)
app.include_router(recipes.router)
app.include_router(jobs.router)
app.include_router(features.router)
app.include_router(storage.router)
app.include_router(inference.router)
app.include_router(audit.router)
app.include_router(nodes.router)
app.include_router(specs.router)
app.include_router(capacity.router)
app.include_router(namespaces.router)


@lru_cache(maxsize=1)
def openapi_document() -> dict[str, Any]:
    doc = json.loads(app.get_openapi_json_schema(
        title=API_TITLE, version=API_VERSION,
        description="PodStart: a serverless control plane for SageMaker HyperPod clusters on EKS.",
    ))
    return openapi.complete(doc)


@app.get("/v1/openapi.json", include_in_schema=False)
def get_openapi() -> Response[str]:
    return json_response(openapi_document())


@app.exception_handler(Problem)
def _problem(exc: Problem) -> Response[str]:
    return problems.from_problem(exc, _instance())


@app.exception_handler(KubeUnavailable)
def _kube_unavailable(exc: KubeUnavailable) -> Response[str]:
    """The cluster's Kubernetes API refused or did not answer: a gateway error naming what to do, not a 500."""
    hint = (" PodStart's access in the cluster lacks a grant it needs: POST /v1/clusters/{cluster}/reconcile "
            "re-applies it." if exc.status == 403 else " Try again; the cluster may be busy or unreachable.")
    return problems.problem_response({
        "type": "https://podstart.dev/problems/cluster-unavailable", "title": "Cluster API unavailable",
        "status": 502, "detail": f"{exc}.{hint}", "instance": _instance()})


@app.exception_handler(RequestValidationError)
def _invalid(exc: RequestValidationError) -> Response[str]:
    return problems.from_validation(list(exc.errors()), _instance())


@app.not_found
def _not_found(exc: NotFoundError) -> Response[str]:
    return problems.problem_response({
        "type": "https://podstart.dev/problems/not-found", "title": "Not found", "status": 404,
        "detail": f"no route {app.current_event.http_method} {app.current_event.path}", "instance": _instance(),
    })


@app.exception_handler(Exception)
def _bug(exc: Exception) -> Response[str]:
    logger.exception("unhandled error")
    metrics.add_metric(name="UnhandledErrors", unit="Count", value=1)
    return problems.internal_error(_instance(), logger.get_correlation_id())


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST, clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    if event.get("httpMethod") in ("POST", "PUT", "PATCH", "DELETE"):
        from functions.api.deps import services

        guard = services().guard
        if guard is not None:
            guard.register_context(context)
    return app.resolve(event, context)
