"""The one mapping of PodStart's Lambda functions.

Read by the CDK stack (to deploy each function with its handler and settings) and by the sandbox
(to dispatch Step Functions Task states and API requests to the same Python callables), so local
and cloud cannot drift.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class LambdaSpec:
    name: str  # logical name; CDK construct id and sandbox function name (podstart-<name>)
    handler: str  # dotted path "package.module.function"
    description: str
    memory_mb: int = 512
    timeout_s: int = 30
    # Top-level packages the bundle needs besides `functions` (e.g. "mcp_gateway").
    packages: tuple[str, ...] = ("functions",)
    # Third-party distributions bundled with the function (resolved with their dependencies).
    requirements: tuple[str, ...] = ("aws-lambda-powertools", "aws-xray-sdk", "pydantic", "pydantic-settings")
    # Environment variable names the function reads (its settings model); CDK fills the values.
    env: tuple[str, ...] = field(default_factory=tuple)

    @property
    def function_name(self) -> str:
        return f"podstart-{self.name}"

    def load(self) -> Callable[[dict[str, Any], Any], Any]:
        module_name, _, attr = self.handler.rpartition(".")
        return getattr(importlib.import_module(module_name), attr)  # type: ignore[no-any-return]


_COMMON_ENV = ("OPERATIONS_TABLE", "STATE_TABLE", "EVENT_BUS_NAME", "POWERTOOLS_SERVICE_NAME",
               "PYDANTIC_DISABLE_PLUGINS")

LAMBDAS: dict[str, LambdaSpec] = {
    spec.name: spec
    for spec in (
        LambdaSpec(
            name="api",
            handler="functions.api.handler.handler",
            description="PodStart REST API /v1 (validation, reads, operations)",
            timeout_s=29,
            env=(*_COMMON_ENV, "IDEMPOTENCY_TABLE", "WORKFLOW_ARNS", "DATA_BUCKET", "AUDIT_TABLE",
                 "REGISTERED_BUCKETS", "LIMITS",
                 "AUDIT_RETENTION_DAYS", "PODSTART_READER_ROLE_ARNS"),
        ),
        LambdaSpec(
            name="steps",
            handler="functions.steps.handler.handler",
            description="Workflow steps: record phase, ensure, watch",
            memory_mb=1024,
            timeout_s=300,
            requirements=(
                "aws-lambda-powertools", "aws-xray-sdk", "pydantic", "pydantic-settings", "kubernetes",
            ),
            env=(*_COMMON_ENV, "DATA_BUCKET", "ASSETS_BUCKET", "TIME_SCALE", "PODSTART_ROLE_ARN",
                 "PODSTART_READER_ROLE_ARNS", "PERMISSIONS_BOUNDARY_ARN",
                 # spec.apply starts its child operations through the use cases, as the API does
                 "IDEMPOTENCY_TABLE", "WORKFLOW_ARNS"),
        ),
        LambdaSpec(
            name="events",
            handler="functions.events.handler.handler",
            description="Projects Step Functions and HyperPod events onto records; sweeps orphan operations",
            env=(*_COMMON_ENV, "WORKFLOW_ARNS"),
        ),
        LambdaSpec(
            name="mcp",
            handler="mcp_gateway.lambda_handler.handler",
            description="PodStart MCP gateway /mcp (stateless streamable HTTP over the REST API)",
            timeout_s=29,
            packages=("functions", "mcp_gateway"),
            # `mcp` brings anyio, starlette, httpx2, mcp-types, pydantic (resolved transitively); extras are not
            # followed, so pyjwt[crypto]'s cryptography (imported by mcp.server) is listed explicitly.
            requirements=("mcp", "mcp-types", "anyio", "starlette", "httpx2", "cryptography"),
            # No PODSTART_API_URL: the handler derives the REST base from the invoking event.
            env=("POWERTOOLS_SERVICE_NAME", "PYDANTIC_DISABLE_PLUGINS", "PODSTART_MCP_READ_ONLY"),
        ),
        LambdaSpec(
            name="live",
            handler="functions.live.handler.handler",
            description="Live socket: WebSocket $connect/$disconnect/messages, podstart bus events to every socket",
            env=("STATE_TABLE", "LIVE_TABLE", "LIVE_ENDPOINT", "LIVE_FOLLOWER_FUNCTION", "POWERTOOLS_SERVICE_NAME",
                 "PYDANTIC_DISABLE_PLUGINS", "LIMITS"),
        ),
        LambdaSpec(
            name="follow",
            handler="functions.live.follower.handler",
            description="Live socket: follows one pod's log to one socket (up to 14 minutes)",
            memory_mb=256,
            timeout_s=900,
            env=("STATE_TABLE", "LIVE_TABLE", "POWERTOOLS_SERVICE_NAME", "PYDANTIC_DISABLE_PLUGINS", "LIMITS"),
        ),
        LambdaSpec(
            name="liveauth",
            handler="functions.live.authorizer.handler",
            description="Live socket: $connect authorizer (the Cognito access token offered as a sub-protocol)",
            memory_mb=256,
            timeout_s=10,
            requirements=("aws-lambda-powertools", "aws-xray-sdk", "pydantic", "pydantic-settings", "pyjwt",
                          "cryptography"),
            env=("USER_POOL_ID", "USER_POOL_CLIENT_IDS", "POWERTOOLS_SERVICE_NAME", "PYDANTIC_DISABLE_PLUGINS"),
        ),
    )
}
LIVE_FOLLOWER = "follow"
