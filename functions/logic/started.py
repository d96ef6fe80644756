"""What a mutating use case answers when it started (or replayed) an operation: light, so the REST edge can tell it
from a plan without loading the planners."""

from __future__ import annotations

from dataclasses import dataclass

from functions.domain.operations import Operation


@dataclass(frozen=True)
class Started:
    """A real request's answer: the operation, and whether it is a replay of an earlier request (same key)."""

    operation: Operation
    replayed: bool = False
