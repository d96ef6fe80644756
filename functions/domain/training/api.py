"""The public face of this capability: what other capabilities and the kernel import from it (a contract in
pyproject.toml keeps them to this module; tools/regroup_domain.py writes it)."""

from functions.domain.training.rules import NAME, NAMESPACE, JobSubmit
from functions.domain.training.status import Unreachable

__all__ = ["NAME", "NAMESPACE", "JobSubmit", "Unreachable"]
