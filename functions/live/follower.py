"""Log follower Lambda (invoked asynchronously per follow): streams one pod's log to one socket for up to
14 minutes (functions.logic.live_socket.follow)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from functions.adapters.live_store import ApiGatewayPoster
from functions.live.handler import deps, leases, store
from functions.logic import live_socket
from functions.observability import logger, tracer


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, str]:
    reason = live_socket.follow(deps(), store(), ApiGatewayPoster(str(event["endpoint"])),
                                str(event["connection_id"]), event["follow"], leases=leases(),
                                lease=event.get("lease") or [])
    logger.info("follow ended", follow=event["follow"].get("id"), reason=reason)
    return {"ended": reason}
