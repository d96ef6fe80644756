"""PodStart's MCP gateway: MCP tools derived from the REST API's OpenAPI document.

Submodules: `catalog` (OpenAPI -> tool specs, pure), `calls` (arguments <-> HTTP, pure), `gateway` (catalog
fetch, role, forwarding; no SDK), `server` (the MCP server), `asgi` (stateless streamable HTTP), `fast` (the
Lambda's plain tools/list without the SDK), `lambda_handler`, `__main__` (stdio), `bench`.
Importing this package does not import `mcp`.
"""
