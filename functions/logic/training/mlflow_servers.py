"""The MLflow tracking servers a job may report to: one page of a region's servers with status and URL."""

from __future__ import annotations

from functions.domain.errors import InvalidInput
from functions.domain.training import mlflow as mlf
from functions.logic.deps import Deps


def servers_page(deps: Deps, region: str, limit: int, next_token: str | None) -> mlf.TrackingServerPage:
    if deps.mlflow is None:
        raise InvalidInput.field(["query", "region"], "MLflow tracking servers cannot be read here")
    items, token = deps.mlflow.list_servers(region, limit, next_token)
    return mlf.TrackingServerPage(region=region, items=[mlf.server_view(d) for d in items], next_token=token)
