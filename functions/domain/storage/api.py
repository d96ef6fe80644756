"""The public face of this capability: what other capabilities and the kernel import from it (a contract in
pyproject.toml keeps them to this module; tools/regroup_domain.py writes it)."""

from functions.domain.storage import data
from functions.domain.storage.data import DataMap
from functions.domain.storage.volumes import StorageAdd, fsx_capacity_problem

__all__ = ["DataMap", "StorageAdd", "data", "fsx_capacity_problem"]
