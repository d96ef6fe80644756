"""The step contract: what a workflow step returns, and how long the workflow waits before looking again."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Done(BaseModel):
    """The step reached its goal (created, adopted, or found nothing to do)."""

    model_config = ConfigDict(frozen=True)

    message: str
    outputs: dict[str, Any] = Field(default_factory=dict)


class Wait(BaseModel):
    """An AWS/Kubernetes operation is under way: look again later.

    `expected_seconds` is how long the operation usually takes from now at real AWS speed; the
    workflow waits most of that at once, then backs off, instead of polling on a fixed beat.
    """

    model_config = ConfigDict(frozen=True)

    message: str
    outputs: dict[str, Any] = Field(default_factory=dict)
    expected_seconds: float | None = None


class Skip(BaseModel):
    model_config = ConfigDict(frozen=True)

    message: str


Outcome = Done | Wait | Skip

MIN_POLL_SECONDS = 10.0
MAX_POLL_SECONDS = 30.0  # a terminal AWS state shows on the operation within 30 s


def next_wait(polls: int, expected_seconds: float | None, time_scale: float) -> int:
    """Seconds the state machine's Wait state sleeps before the next look (an integer >= 1).

    The first look after a known-long operation waits ~80% of its expected duration; after that the
    wait backs off geometrically from MIN_POLL_SECONDS to MAX_POLL_SECONDS. Real-time seconds are
    divided by the time scale (the sandbox compresses AWS time; AWS uses 1).
    """
    backoff = min(MAX_POLL_SECONDS, MIN_POLL_SECONDS * (2 ** max(0, polls - 1)))
    if expected_seconds and expected_seconds > 0:
        realistic = max(MIN_POLL_SECONDS, 0.8 * expected_seconds) if polls == 0 else min(
            backoff, max(MIN_POLL_SECONDS, expected_seconds))
    else:
        realistic = backoff
    return max(1, round(realistic / max(time_scale, 1e-6)))
