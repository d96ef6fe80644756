"""The public face of this capability: what other capabilities and the kernel import from it (a contract in
pyproject.toml keeps them to this module; tools/regroup_domain.py writes it)."""

from functions.domain.capacity.placement import Placement, node_gpus, unscheduled

__all__ = ["Placement", "node_gpus", "unscheduled"]
