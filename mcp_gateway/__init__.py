"""PodStart's MCP gateway: MCP tools derived from the REST API's OpenAPI document.

Submodules: `catalog` (OpenAPI -> tool specs, pure), `calls` (arguments <-> HTTP, pure), `server`
(the MCP server), `asgi` (stateless streamable HTTP), `lambda_handler`, `__main__` (stdio), `bench`.
Importing this package does not import `mcp`.
"""
