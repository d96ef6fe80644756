"""The public face of this capability: what other capabilities and the kernel import from it (a contract in
pyproject.toml keeps them to this module; tools/regroup_domain.py writes it)."""

from functions.domain.features import kuberay
from functions.domain.features.changes import FeaturesPatch
from functions.domain.features.plan import ASSOCIATION, ROLE, ensure_changes

__all__ = ["ASSOCIATION", "ROLE", "FeaturesPatch", "ensure_changes", "kuberay"]
