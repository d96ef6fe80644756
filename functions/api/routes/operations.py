"""/v1/operations: list, read (with long poll), retry, cancel."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from functions.api.context import DryRun, json_response, principal, require, requires, respond, services
from functions.api.schemas import OPERATION_RESPONSES, OperationList, OperationOut
from functions.domain.limits import Limits
from functions.domain.operations import OperationStatus
from functions.domain.principal import Role
from functions.logic import operations as op_logic

router = Router()

OpId = Annotated[str, Path(description="Operation id (op-...)", pattern=r"^op-[a-z0-9]{6,40}$")]


@router.get("/v1/operations", summary="List operations, newest first", tags=["operations"],
            responses={200: {"description": "A page of operations",
                             "content": {"application/json": {"model": OperationList}}}})
def list_operations(
    cluster: Annotated[str | None, Query(description="Only operations on this cluster", max_length=63)] = None,
    status: Annotated[OperationStatus | None, Query(description="Only operations in this status")] = None,
    limit: Annotated[int, Query(ge=1, le=100, description="Page size")] = 25,
    next_token: Annotated[str | None, Query(description="Token from the previous page", max_length=2048)] = None,
) -> Response[str]:
    principal(router)
    items, token = services().operations.list(cluster=cluster, status=status, limit=limit, token=next_token)
    return json_response({"items": [o.public() for o in items], "next_token": token})


@router.get("/v1/operations/<operation_id>", summary="Get an operation; optionally wait for its next change",
            tags=["operations"], responses={200: {"description": "The operation",
                                                  "content": {"application/json": {"model": OperationOut}}}})
def get_operation(
    operation_id: OpId,
    wait: Annotated[int, Query(ge=0, le=20, description=(
        "Long poll: seconds to wait for the operation's next visible change or its end (0-20)"
    ))] = 0,
    version: Annotated[int | None, Query(ge=0, description=(
        "The version you last saw (pass it back); an old version never makes the call return early"
    ))] = None,
) -> Response[str]:
    p = principal(router)
    s = services()
    op, retry_after = op_logic.watch(s, s.leases, _limits(), p, operation_id, wait, version)
    return json_response(op.public(), headers={"Retry-After": str(retry_after)} if retry_after else None)


def _limits() -> Limits:
    from functions.settings import api_settings

    return api_settings().limits


@router.post("/v1/operations/<operation_id>/retry",
             summary="Retry a failed operation from its failed step (needs the role its kind needs)",
             tags=["operations"], responses=OPERATION_RESPONSES)
@requires(Role.operator)
def retry_operation(operation_id: OpId, dry_run: DryRun = False) -> Response[str]:
    p = require(router, Role.operator)
    return respond(op_logic.retry(services(), operation_id, p, dry_run))


@router.post("/v1/operations/<operation_id>/cancel",
             summary="Cancel a pending or running operation (needs the role its kind needs)",
             tags=["operations"], responses=OPERATION_RESPONSES)
@requires(Role.operator)
def cancel_operation(operation_id: OpId, dry_run: DryRun = False) -> Response[str]:
    p = require(router, Role.operator)
    return respond(op_logic.cancel(services(), operation_id, p, dry_run))
