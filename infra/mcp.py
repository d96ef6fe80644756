"""MCP gateway slot (placeholder).

The MCP gateway (``mcp_gateway/``) will live here:

* a Lambda function built from ``LAMBDAS["mcp"]`` (packages ``functions`` + ``mcp_gateway``; ``mcp``
  is kept out of the other bundles, its import costs ~450 ms), running the SDK's stateless
  streamable-HTTP app per invocation, with no AWS permissions beyond its logs and traces: it calls
  the REST API with the caller's own token;
* a route ``/mcp`` (ANY) on the REST API with the same Cognito authorizer, plus an ``McpUrl`` output.

Until then the construct creates nothing, so the stack already has the seam to plug it into.
"""

from __future__ import annotations

from constructs import Construct


class McpConstruct(Construct):
    """Creates no resources yet; see the module docstring for what goes here."""

    def __init__(self, scope: Construct, construct_id: str):
        super().__init__(scope, construct_id)
