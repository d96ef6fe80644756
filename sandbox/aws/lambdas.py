"""Lambda routing: moto's simple Lambda backend invokes PodStart's Python handlers in-process."""

from __future__ import annotations

import json
import time
import traceback
import uuid
from dataclasses import dataclass, field
from typing import Any

from sandbox.aws.runtime import LOG, RUNTIME


@dataclass
class LambdaContext:
    """The parts of the AWS Lambda context object handlers (and Powertools) read."""

    function_name: str
    invoked_function_arn: str
    memory_limit_in_mb: int = 512
    timeout_s: int = 300
    function_version: str = "$LATEST"
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    log_group_name: str = ""
    log_stream_name: str = "sandbox"
    _deadline: float = 0.0

    def __post_init__(self) -> None:
        self.log_group_name = f"/aws/lambda/{self.function_name}"
        self._deadline = time.monotonic() + self.timeout_s

    def get_remaining_time_in_millis(self) -> int:
        return max(int((self._deadline - time.monotonic()) * 1000), 0)


def function_name_of(name_or_arn: str) -> str:
    """'podstart-steps', 'arn:aws:lambda:r:a:function:podstart-steps[:qualifier]' -> 'podstart-steps'."""
    if name_or_arn.startswith("arn:"):
        return name_or_arn.split(":")[6]
    return name_or_arn.split(":")[0]


def call_handler(function_name: str, arn: str, payload: Any) -> tuple[bytes, str | None]:
    """Run the routed handler; (response payload, function error kind or None)."""
    handler = RUNTIME.lambda_handlers[function_name]
    if isinstance(payload, bytes | bytearray):
        payload = payload.decode()
    event = json.loads(payload) if isinstance(payload, str) and payload.strip() else (payload or {})
    try:
        result = handler(event, LambdaContext(function_name, arn))
    except Exception as e:  # becomes a Lambda function error, as in AWS
        LOG.info("lambda %s raised %s: %s", function_name, type(e).__name__, e)
        body = {
            "errorType": type(e).__name__,
            "errorMessage": str(e),
            "stackTrace": traceback.format_tb(e.__traceback__)[-5:],
        }
        return json.dumps(body).encode(), "Unhandled"
    return json.dumps(result, default=str).encode(), None


def patch_lambda_invoke() -> None:
    """Replace LambdaSimpleBackend.invoke with a dispatch to RUNTIME.lambda_handlers."""
    from moto.awslambda_simple.models import LambdaSimpleBackend

    if getattr(LambdaSimpleBackend.invoke, "_podstart", False):
        return
    original = LambdaSimpleBackend.invoke

    def invoke(
        self: Any, function_name: str, qualifier: str | None, body: Any, headers: Any, response_headers: Any
    ) -> str | bytes | None:
        name = function_name_of(function_name)
        if name not in RUNTIME.lambda_handlers:
            return original(self, function_name, qualifier, body, headers, response_headers)
        fn = self.get_function(name, qualifier)
        payload, error = call_handler(name, fn.function_arn, body)
        if error:
            response_headers["x-amz-function-error"] = error
        return payload

    invoke._podstart = True  # type: ignore[attr-defined]
    LambdaSimpleBackend.invoke = invoke  # type: ignore[method-assign]

