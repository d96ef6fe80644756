"""The public face of this capability: what other capabilities and the kernel import from it (a contract in
pyproject.toml keeps them to this module; tools/regroup_domain.py writes it)."""

from functions.domain.inference.endpoints import EndpointCreate, EndpointName

__all__ = ["EndpointCreate", "EndpointName"]
