"""/v1/specs and /v1/clusters/{cluster}/spec: spec documents (apiVersion podstart/v1) exported from the live state,
planned against it, and applied as one operation (spec.apply)."""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from functions.api.context import (
    DryRun,
    actor,
    json_response,
    model_response,
    principal,
    require,
    requires,
    respond,
    services,
)
from functions.api.edge import READ_ONLY_EXTENSION
from functions.api.routes.clusters import ClusterPath, IdempotencyKey, RegionOpt
from functions.api.schemas import OPERATION_RESPONSES
from functions.domain.kinds import required_role
from functions.domain.specs import document as sdom
from functions.logic.specs import apply as specs

router = Router()


def _ok(model: Any) -> dict[int, Any]:
    return {200: {"description": "OK", "content": {"application/json": {"model": model}}}}


@router.get("/v1/specs/schema", summary="JSON Schema of a spec document (Cluster, TrainingJob, Endpoint): the REST "
                                        "request models, for editors to validate and complete spec files",
            tags=["specs"], responses=_ok(dict[str, Any]))
def get_spec_schema() -> Response[str]:
    principal(router)
    return json_response(sdom.json_schema())


@router.get("/v1/clusters/<cluster>/spec",
            summary="Export a live cluster as spec documents (defaults explicit, nothing secret); include=jobs,"
                    "endpoints adds its jobs and endpoints", tags=["specs"], responses=_ok(sdom.SpecExport))
def export_spec(
    cluster: ClusterPath,
    region: RegionOpt = None,
    include: Annotated[str | None, Query(pattern=r"^(jobs|endpoints)(,(jobs|endpoints))?$",
                                         description="Also export: jobs, endpoints or jobs,endpoints")] = None,
) -> Response[str]:
    principal(router)
    return model_response(specs.export(services(), cluster, region, set((include or "").split(",")) - {""}))


# a plan: POST only because the documents are a body; not audited, no dry run, a read tool over MCP
@router.post("/v1/specs/plan",
             summary="Diff spec documents against the live cluster: per document create, update (old -> new), "
                     "unchanged or replace-needed, with each child operation's dry-run plan and cost; changes nothing",
             tags=["specs"], responses=_ok(sdom.SpecPlan), openapi_extensions={READ_ONLY_EXTENSION: True})
def plan_spec(body: sdom.SpecRequest) -> Response[str]:
    p = principal(router)
    result, _ = specs.plan(services(), body, actor(p))
    return model_response(result)


@router.post("/v1/specs/apply",
             summary="Apply spec documents: one spec.apply operation runs the child operations in order (cluster, "
                     "groups, storage, features, jobs, endpoints, prune); 200 changed=false when nothing differs",
             tags=["specs"], responses={**OPERATION_RESPONSES, **_ok(sdom.SpecUnchanged | sdom.SpecPlan)})
@requires(required_role("spec.apply"))
def apply_spec(body: sdom.SpecRequest, idempotency_key: IdempotencyKey = None, dry_run: DryRun = False
               ) -> Response[str]:
    p = require(router, required_role("spec.apply"))
    result = specs.apply(services(), body, p, actor(p), idempotency_key, dry_run)
    if isinstance(result, sdom.SpecPlan | sdom.SpecUnchanged):
        return model_response(result)
    return respond(result)
