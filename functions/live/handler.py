"""Live socket Lambda: the WebSocket API's $connect / $disconnect / $default routes, and `podstart` bus events
(an EventBridge rule) fanned out to every socket. Thin: the use cases are functions.logic.live_socket."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, cast

from aws_lambda_powertools.utilities.typing import LambdaContext

from functions.adapters import aws
from functions.adapters.kube_http import connect as kube_connect
from functions.adapters.live_store import ApiGatewayPoster, DynamoLiveConnections
from functions.adapters.store import DynamoStateStore
from functions.domain.limits import Leases
from functions.logic import live_socket
from functions.logic.deps import Deps
from functions.observability import logger, tracer
from functions.settings import live_settings

SUBPROTOCOL = "podstart"  # the browser offers ["podstart", <token>]; the answer names the first


@lru_cache(maxsize=1)
def store() -> DynamoLiveConnections:
    return DynamoLiveConnections(live_settings().live_table)


@lru_cache(maxsize=1)
def deps() -> Deps:
    """What a follow reads: the cluster's record and its Kubernetes API (no operation starts, no AWS catalog or
    cluster read: find_record reads records only)."""
    return Deps(operations=cast(Any, None), state=DynamoStateStore(live_settings().state_table),
                reader=cast(Any, None), kube=kube_connect)


@lru_cache(maxsize=1)
def leases() -> Leases:
    """Fair-share leases (sockets, follows) in the live table, whose items expire on `expires_at`."""
    return Leases(DynamoStateStore(live_settings().live_table, ttl_attribute="expires_at"))


def _endpoint(ctx: dict[str, Any]) -> str:
    return f"https://{ctx['domainName']}/{ctx['stage']}" if ctx.get("domainName") else live_settings().live_endpoint


def _start_follower(payload: dict[str, Any]) -> None:
    aws.client("lambda").invoke(FunctionName=live_settings().live_follower_function, InvocationType="Event",
                                Payload=json.dumps(payload).encode())


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    ctx = event.get("requestContext") or {}
    route = ctx.get("routeKey")
    if route is None:  # an EventBridge event from the podstart bus
        detail = {"detail_type": event.get("detail-type"), **(event.get("detail") or {})}
        sent = live_socket.broadcast(store(), ApiGatewayPoster(live_settings().live_endpoint), detail)
        logger.info("broadcast", detail_type=event.get("detail-type"), sockets=sent)
        return {"sent": sent}
    connection_id = str(ctx["connectionId"])
    sub = str((ctx.get("authorizer") or {}).get("sub") or "")
    if route == "$connect":
        refused = live_socket.connect(store(), leases(), live_settings().limits, connection_id, sub)
        if refused is not None:  # over the user's (or everybody's) share of sockets: the handshake answers 429
            return {"statusCode": 429, "headers": {"Retry-After": str(refused.retry_after)},
                    "body": json.dumps(refused.to_problem())}
        offered = (event.get("headers") or {}).get("Sec-WebSocket-Protocol", "")
        headers = {"Sec-WebSocket-Protocol": SUBPROTOCOL} if SUBPROTOCOL in offered.split(", ") else {}
        return {"statusCode": 200, "headers": headers}
    if route == "$disconnect":
        live_socket.disconnect(store(), leases(), connection_id)
        return {"statusCode": 200}
    endpoint = _endpoint(ctx)
    live_socket.message(deps(), store(), ApiGatewayPoster(endpoint),
                        lambda p: _start_follower({**p, "endpoint": endpoint}),
                        connection_id, sub, str(event.get("body") or ""), leases(), live_settings().limits)
    return {"statusCode": 200}
