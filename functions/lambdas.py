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


_COMMON_ENV = ("OPERATIONS_TABLE", "STATE_TABLE", "EVENT_BUS_NAME", "POWERTOOLS_SERVICE_NAME")

LAMBDAS: dict[str, LambdaSpec] = {
    spec.name: spec
    for spec in (
        LambdaSpec(
            name="api",
            handler="functions.api.handler.handler",
            description="PodStart REST API /v1 (validation, reads, operations)",
            timeout_s=29,
            env=(*_COMMON_ENV, "IDEMPOTENCY_TABLE", "WORKFLOW_ARNS", "DATA_BUCKET", "AUDIT_TABLE",
                 "AUDIT_RETENTION_DAYS", "PODSTART_API_ROLE_ARN"),
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
                 "PODSTART_API_ROLE_ARN", "PERMISSIONS_BOUNDARY_ARN"),
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
            env=("POWERTOOLS_SERVICE_NAME", "PODSTART_MCP_READ_ONLY"),
        ),
    )
}
