"""`podstart`: PodStart's command line, a client of the REST API (/v1) like the web UI and the MCP gateway."""

__version__ = "0.1.0"
