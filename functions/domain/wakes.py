"""Who waits for which AWS event: the task tokens of workflow waits an event ends (functions.domain.workflow.WakeOn).

The steps function records a waiting step's token under the resource it waits on (one item per operation, in
the state table); the events function looks the resource up when its event comes and resumes whoever waits for a
status other than the one the event brings. A token that is stale (the wait already timed out into a poll, the
execution ended) is simply refused by Step Functions: resuming is idempotent, and the slow poll catches a missed
event.
"""

from __future__ import annotations

import time

from pydantic import BaseModel, ConfigDict

from functions.domain.ports import StateStore
from functions.domain.workflow import WakeOn

TTL_SECONDS = 2 * 24 * 3600  # an entry outlives any wait (the longest step budget is 4 h)
HYPERPOD = "hyperpod"
OPERATION = "operation"
TERMINAL_EXECUTION = ("SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED")


class Waiter(BaseModel):
    model_config = ConfigDict(frozen=True)

    operation_id: str
    step: str
    token: str
    wake: WakeOn


def key(kind: str, resource: str) -> str:
    return f"WAKE#{kind}#{resource}"


def hyperpod_resource(region: str, name: str) -> str:
    return f"{region}/{name}"


def register(state: StateStore, wake: WakeOn, operation_id: str, step: str, token: str) -> Waiter:
    """Record (or replace) the operation's wait on the resource."""
    waiter = Waiter(operation_id=operation_id, step=step, token=token, wake=wake)
    state.put(key(wake.kind, wake.resource), operation_id, waiter.model_dump(mode="json"),
              ttl=int(time.time()) + TTL_SECONDS)
    return waiter


def due(state: StateStore, kind: str, resource: str, status: str) -> list[Waiter]:
    """Whoever waits on the resource for a status other than `status` (what an event says it is now)."""
    found = [Waiter.model_validate(b) for b in state.query(key(kind, resource))]
    return [w for w in found if w.wake.status != status]


def forget(state: StateStore, waiter: Waiter) -> None:
    state.delete(key(waiter.wake.kind, waiter.wake.resource), waiter.operation_id)
