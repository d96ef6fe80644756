"""What a simulated controller sees and how it writes status: the reconcile context and helpers."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from sandbox.kube.store import ClusterStore, Obj, now_rfc3339


@dataclass
class ReconcileContext:
    """What a reconciler sees: one cluster's store and the time scale. A reconciler that waits for time to pass
    says when (`wake_at`; `waited` does it): the loop runs a cluster's reconcilers again when its store changed or
    the earliest such moment came, not on every tick."""

    store: ClusterStore
    time_scale: float
    min_delay: float = 0.1
    marks: dict[tuple[str, str], float] = field(default_factory=dict)
    due: float = math.inf  # time.monotonic() at which some reconciler wants to look again

    def wake_at(self, monotonic: float) -> None:
        self.due = min(self.due, monotonic)

    def delay(self, realistic_seconds: float) -> float:
        """Wall seconds for a realistic delay."""
        return max(realistic_seconds / self.time_scale, self.min_delay)

    def waited(self, obj: Obj, realistic_seconds: float, label: str = "") -> bool:
        """True once `realistic_seconds` (scaled) passed since the object's generation changed,
        or, with a label, since this reconciler first asked about (object, label)."""
        now = time.monotonic()
        if not label:
            left = self.delay(realistic_seconds) - self.store.elapsed(obj)
        else:
            start = self.marks.setdefault((obj["metadata"].get("uid", ""), label), now)
            left = start + self.delay(realistic_seconds) - now
        if left > 0:
            self.wake_at(now + left)
        return left <= 0

    def set_status(self, obj: Obj, status: dict[str, Any]) -> None:
        meta = obj["metadata"]
        self.store.set_status(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace"), status)


Reconciler = Callable[[ReconcileContext], None]


def condition(ctype: str, status: str, reason: str, message: str = "") -> dict[str, Any]:
    now = now_rfc3339()
    return {
        "type": ctype,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": now,
        "lastUpdateTime": now,
    }


def _same_conditions(old: list[dict[str, Any]] | None, new: list[dict[str, Any]]) -> bool:
    def strip(conds: Iterable[dict[str, Any]]) -> list[tuple[Any, Any, Any]]:
        return [(c.get("type"), c.get("status"), c.get("reason")) for c in conds]

    return strip(old or []) == strip(new)


def update_status(ctx: ReconcileContext, obj: Obj, status: dict[str, Any]) -> None:
    """Write status unless only condition timestamps differ."""
    old = obj.get("status") or {}
    if "conditions" in status and _same_conditions(old.get("conditions"), status["conditions"]):
        status = {**status, "conditions": old.get("conditions")}
    if old != status:
        ctx.set_status(obj, status)
