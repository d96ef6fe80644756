"""PodStart REST API /v1: one Powertools resolver; the request chain (auth, body, validation) is functions.api.edge."""

from __future__ import annotations

import importlib
import json
import threading
from functools import lru_cache
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from functions.api import edge, problems
from functions.api.context import json_response
from functions.domain.errors import ClusterApiUnavailable, Problem
from functions.observability import logger, metrics, tracer

API_TITLE = "PodStart API"
API_VERSION = "1.0.0"

# Validation is on, but composed by edge.middlewares() after authentication (Powertools would run it first).
app = APIGatewayRestResolver(enable_validation=False, json_body_deserializer=edge.strict_json)


def _instance() -> str | None:
    return app.current_event.path if getattr(app, "current_event", None) else None


app.use(middlewares=edge.middlewares())
# Routes load with the first request that needs them (a cold start pays for its own route's models and planners,
# not every route's): a request's path names its module, by the segment after /v1/ or after /v1/clusters/{c}/.
# tests/unit/test_lazy_routes.py keeps this table equal to where each route is defined.
TOP_LEVEL = {"operations": "operations", "catalog": "catalog", "preferences": "preferences", "me": "preferences",
             "recipes": "recipes", "audit": "audit", "buckets": "storage", "data": "storage", "capacity": "capacity",
             "specs": "specs", "clusters": "clusters", "jobs": "jobs", "endpoints": "inference"}
ON_A_CLUSTER = {"jobs": "jobs", "secrets": "jobs", "features": "features", "storage": "storage",
                "reconcile": "storage", "endpoints": "inference", "pools": "inference", "models": "inference",
                "nodes": "nodes", "health-checks": "nodes", "events": "nodes", "namespaces": "namespaces",
                "gpus": "capacity", "spec": "specs", "instance-groups": "clusters", "software-update": "clusters"}
ROUTE_MODULES = tuple(sorted(set(TOP_LEVEL.values()) | set(ON_A_CLUSTER.values())))
_loaded: set[str] = set()
_loading = threading.Lock()


def module_for(path: str) -> str | None:
    """The routes module that serves `path` (None: no module does; every module is loaded to answer the 404)."""
    parts = [p for p in path.split("/") if p]
    if len(parts) < 2 or parts[0] != "v1":
        return None
    if parts[1] == "clusters" and len(parts) >= 4 and parts[2] != "import":
        return ON_A_CLUSTER.get(parts[3])
    return TOP_LEVEL.get(parts[1])


def load_routes(*modules: str) -> None:
    """Include these routes modules' routers (all of them when none is named), once each."""
    wanted = [m for m in (modules or ROUTE_MODULES) if m not in _loaded]
    if not wanted:
        return
    with _loading:
        for name in wanted:
            if name in _loaded:
                continue
            module = importlib.import_module(f"functions.api.routes.{name}")
            app.include_router(module.router)
            _loaded.add(name)


@lru_cache(maxsize=1)
def openapi_document() -> dict[str, Any]:
    from functions.api import openapi

    load_routes()
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


@app.exception_handler(ClusterApiUnavailable)
def _kube_unavailable(exc: ClusterApiUnavailable) -> Response[str]:
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
    module = module_for(str(event.get("path") or ""))
    load_routes(*([module] if module else []))
    if event.get("httpMethod") in ("POST", "PUT", "PATCH", "DELETE"):
        from functions.api.deps import services

        guard = services().guard
        if guard is not None:
            guard.register_context(context)
    return app.resolve(event, context)
