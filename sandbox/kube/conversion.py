"""Versions of one kind that store differently: objects are stored in the storage version's shape and converted
when another served version reads or writes them, as the API server converts.

Only HorizontalPodAutoscaler needs it: stored as autoscaling/v2, also served as autoscaling/v1 (what `kubectl
autoscale` creates): v1's `targetCPUUtilizationPercentage` is v2's CPU Utilization metric (80% when v1 names
none, as the API server defaults it), v1's `currentCPUUtilizationPercentage` v2's current CPU metric.
"""

from __future__ import annotations

import copy
from typing import Any

Obj = dict[str, Any]
HPA = ("autoscaling", "horizontalpodautoscalers")
DEFAULT_CPU_PERCENT = 80


def _converts(rt: Any) -> bool:
    return bool(rt.storage_key == HPA and rt.version == "v1")


def to_storage(rt: Any, obj: Obj) -> Obj:
    """An object as sent to `rt`'s version, in the stored (v2) shape."""
    if not _converts(rt) or not isinstance(obj, dict):
        return obj
    out = copy.deepcopy(obj)
    out["apiVersion"] = "autoscaling/v2"
    spec = out.get("spec")
    if isinstance(spec, dict):
        percent = spec.pop("targetCPUUtilizationPercentage", None)
        spec["metrics"] = [{"type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": int(percent or DEFAULT_CPU_PERCENT)}}}]
    status = out.get("status")
    if isinstance(status, dict):
        current = status.pop("currentCPUUtilizationPercentage", None)
        if current is not None:
            status["currentMetrics"] = [{"type": "Resource", "resource": {
                "name": "cpu", "current": {"averageUtilization": int(current)}}}]
    return out


def _cpu(metrics: list[Obj], key: str) -> int | None:
    for m in metrics or []:
        resource = m.get("resource") or {}
        if m.get("type") == "Resource" and resource.get("name") == "cpu":
            value = (resource.get(key) or {}).get("averageUtilization")
            if value is not None:
                return int(value)
    return None


def from_storage(rt: Any, obj: Obj) -> Obj:
    """A stored (v2) object in `rt`'s version's shape."""
    if not _converts(rt) or not isinstance(obj, dict):
        return obj
    out = copy.deepcopy(obj)
    spec = out.get("spec")
    if isinstance(spec, dict):
        target = _cpu(spec.pop("metrics", None) or [], "target")
        spec.pop("behavior", None)
        if target is not None:
            spec["targetCPUUtilizationPercentage"] = target
    status = out.get("status")
    if isinstance(status, dict):
        current = _cpu(status.pop("currentMetrics", None) or [], "current")
        status.pop("conditions", None)
        if current is not None:
            status["currentCPUUtilizationPercentage"] = current
    return out
