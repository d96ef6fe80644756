"""The step contract: what a workflow step returns, and how long the workflow waits before looking again."""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Done(BaseModel):
    """The step reached its goal (created, adopted, or found nothing to do)."""

    model_config = ConfigDict(frozen=True)

    message: str
    outputs: dict[str, Any] = Field(default_factory=dict)


class WakeOn(BaseModel):
    """An AWS event that ends a wait early: the status of `resource` moving away from `status`.

    kind `hyperpod`: a HyperPod cluster (`resource` is `region/name`), woken by its "SageMaker HyperPod Cluster
    State Change" events; kind `operation`: a PodStart operation (`resource` is its id), woken when its Step
    Functions execution ends. The workflow then waits by a task token, with a slow poll as the safety net.
    """

    model_config = ConfigDict(frozen=True)

    kind: str
    resource: str
    status: str  # what the step saw: an event with the same status wakes nothing


class Wait(BaseModel):
    """An AWS/Kubernetes operation is under way: look again later.

    `expected_seconds` is how long the operation usually takes from now at real AWS speed; the
    workflow waits most of that at once, then backs off, instead of polling on a fixed beat.
    `wake_on`: an event that ends the wait as soon as it comes (the poll then only backs it up).
    `from_start`: `expected_seconds` is what remains of a duration counted from AWS's own start time (an EKS
    cluster's createdAt), so the first look waits all of it (see known_end_wait).
    """

    model_config = ConfigDict(frozen=True)

    message: str
    outputs: dict[str, Any] = Field(default_factory=dict)
    expected_seconds: float | None = None
    wake_on: WakeOn | None = None
    from_start: bool = False


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


SAFETY_POLL_SECONDS = 300.0  # a wait an event ends still looks every 5 min, in case the event never comes


def event_wait(polls: int, expected_seconds: float | None, time_scale: float) -> int:
    """Seconds a wait that an event ends (WakeOn) may last before the step looks anyway: the operation's expected
    remaining duration and SAFETY_POLL_SECONDS more the first time (the event normally comes first), then
    SAFETY_POLL_SECONDS."""
    realistic = SAFETY_POLL_SECONDS
    if polls == 0 and expected_seconds and expected_seconds > 0:
        realistic += expected_seconds
    return max(1, math.ceil(realistic / max(time_scale, 1e-6)))


def known_end_wait(polls: int, remaining_seconds: float | None, time_scale: float) -> int:
    """Seconds to wait for an operation whose end AWS does not announce but whose start we know (an EKS control
    plane: CreateCluster's createdAt): until its expected end the first time, then MIN..MAX_POLL_SECONDS backoff.
    Polls once or twice near the end instead of backing off from MIN_POLL_SECONDS after ~80%."""
    if remaining_seconds is not None and remaining_seconds > MIN_POLL_SECONDS:
        realistic = remaining_seconds
    else:
        realistic = min(MAX_POLL_SECONDS, MIN_POLL_SECONDS * (2 ** max(0, polls - 1)))
    return max(1, math.ceil(realistic / max(time_scale, 1e-6)))
