"""The public face of this capability: what other capabilities and the kernel import from it (a contract in
pyproject.toml keeps them to this module; tools/regroup_domain.py writes it)."""

from functions.domain.nodes.models import GPU_RESOURCES, GROUP_LABEL, int_quantity

__all__ = ["GPU_RESOURCES", "GROUP_LABEL", "int_quantity"]
