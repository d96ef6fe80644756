"""The public face of this capability: what other capabilities and the kernel import from it (a contract in
pyproject.toml keeps them to this module; tools/regroup_domain.py writes it)."""

from functions.domain.clusters.models import CapacityType, ClusterCreate, GroupName, InstanceGroupAdd, InstanceGroupSpec

__all__ = ["CapacityType", "ClusterCreate", "GroupName", "InstanceGroupAdd", "InstanceGroupSpec"]
