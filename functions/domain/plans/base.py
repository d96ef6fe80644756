"""What a planner receives."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from functions.domain.operations import Target


@dataclass(frozen=True)
class PlanInput:
    kind: str
    target: Target
    request: dict[str, Any]  # the normalized request, as the operation would store it
    facts: dict[str, Any] = field(default_factory=dict)  # what admission read (quotas, VPC view, live group...)
    skip_steps: frozenset[str] = frozenset()  # steps already done (a retry resumes after them)
