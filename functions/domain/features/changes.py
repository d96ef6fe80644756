"""Managed features, the PATCH side: the contract (`FeaturesPatch`, one optional entry per feature), the pure rules
over it (closure of prerequisites, dependency order, what a PATCH changes: `plan_changes`), and what each step does,
decided purely (create or update an add-on, the checkpointing percentage, Karpenter's groups and pool settings).

- enabling a feature enables its missing prerequisites first (in the same operation, and says so);
- disabling a feature that an enabled feature needs is a 409 naming the dependant;
- disables run dependants first, enables prerequisites first (disables before enables).

The document a GET answers (what each feature is now) is `functions.domain.features.document`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from functions.domain.clusters.api import GroupName
from functions.domain.feature_graph import (
    NAMES,
    ORDER,
    FeatureStatus,
    dependants,
    disable_step,
    prerequisites,
)


# -- the PATCH contract --------------------------------------------------------------------------
class _Toggle(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool | None = Field(default=None, description="On or off; absent: unchanged")


class AddonFeaturePatch(_Toggle):
    pass  # a feature that is an EKS add-on (and its role): only on or off (no docstring: MCP tools/list budget)


class TieredCheckpointingPatch(_Toggle):
    memory_percent: int | None = Field(
        default=None,
        description="InstanceMemoryAllocationPercentage: share of instance memory for checkpoints (AWS accepts 0-100)")

    @field_validator("memory_percent")
    @classmethod
    def _percent(cls, v: int | None) -> int | None:  # checked here, not in the schema: MCP tools/list budget
        if v is not None and not 0 <= v <= 100:
            raise ValueError("memory_percent must be 0-100 (InstanceMemoryAllocationPercentage)")
        return v


class AutoscalingPatch(_Toggle):
    # Bounds checked in validators rather than in the schema: they cost the MCP tools/list budget bytes.
    instance_groups: list[GroupName] | None = Field(
        default=None,
        description="HyperPod instance groups Karpenter manages (one NodePool each, at most 20); nothing else is "
                    "allowed")
    cpu_limit: int | None = Field(default=None,
                                  description="NodePool limit: vCPUs Karpenter may launch per pool (1-1000000)")
    consolidate_after: str | None = Field(default=None, pattern=r"^(\d+(s|m|h))+$|^Never$",
                                          description="Remove empty nodes after this long (e.g. 30s, 5m, Never)")
    disruption_budget: str | None = Field(default=None, pattern=r"^((100|[1-9]?[0-9])%|\d{1,4})$",
                                          description="At most this many nodes (or percent) disrupted at once")

    @field_validator("instance_groups")
    @classmethod
    def _unique(cls, v: list[str] | None) -> list[str] | None:
        if v is not None and len(v) > 20:
            raise ValueError("at most 20 instance groups")
        if v is not None and len(set(v)) != len(v):
            raise ValueError("instance groups must be unique")
        return v

    @field_validator("cpu_limit")
    @classmethod
    def _cpu(cls, v: int | None) -> int | None:
        if v is not None and not 1 <= v <= 1_000_000:
            raise ValueError("cpu_limit must be 1-1000000")
        return v


class FeaturesPatch(BaseModel):
    """PATCH /v1/clusters/{cluster}/features: only the fields the caller changed (the diff contract).

    Absent features and absent fields are never touched; a PATCH equal to the live state starts nothing."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    training_operator: AddonFeaturePatch | None = None
    inference_operator: AddonFeaturePatch | None = None
    tiered_checkpointing: TieredCheckpointingPatch | None = None
    autoscaling: AutoscalingPatch | None = None
    observability: AddonFeaturePatch | None = None
    kuberay_operator: AddonFeaturePatch | None = None
    cert_manager: AddonFeaturePatch | None = None
    pod_identity_agent: AddonFeaturePatch | None = None
    s3_csi: AddonFeaturePatch | None = None
    fsx_csi: AddonFeaturePatch | None = None
    metrics_server: AddonFeaturePatch | None = None


DEFAULT_MEMORY_PERCENT = 20
DEFAULT_CPU_LIMIT = 1000
DEFAULT_CONSOLIDATE_AFTER = "30s"
DEFAULT_DISRUPTION_BUDGET = "10%"


@dataclass(frozen=True)
class LiveFeature:
    """What the API read for one feature: enabled or not, its status, and its settings."""

    enabled: bool
    status: FeatureStatus
    settings: Mapping[str, Any]


@dataclass(frozen=True)
class Change:
    feature: str
    enable: bool
    settings: Mapping[str, Any]
    reason: str  # "requested" or "needed by <feature>"

    @property
    def step(self) -> str:
        return self.feature if self.enable else disable_step(self.feature)


class DependencyConflict(Exception):
    """Disabling a feature that an enabled feature needs (or enabling one while disabling its need)."""

    def __init__(self, feature: str, dependants: list[str]) -> None:
        super().__init__(f"{feature} is needed by {', '.join(dependants)}: disable "
                         f"{' and '.join(dependants)} first (or in the same request)")
        self.feature = feature
        self.dependants = dependants


def _settings_sent(patch: BaseModel) -> dict[str, Any]:
    # a setting sent as null is unchanged, as an absent one is (it never clears what AWS holds)
    sent = {k: v for k, v in patch.model_dump(exclude_unset=True).items() if k != "enabled" and v is not None}
    return {k: sorted(v) if isinstance(v, list) else v for k, v in sent.items()}


def plan_changes(patch: FeaturesPatch, live: Mapping[str, LiveFeature]) -> list[Change]:
    """The changes a PATCH needs against the live state, in step order; [] means nothing to do.

    - only features and fields present in the PATCH are compared (absent means untouched);
    - a feature being enabled pulls in its disabled prerequisites (reason: needed by ...);
    - a disable of a feature an enabled (and staying enabled) feature needs raises DependencyConflict;
    - settings sent for an enabled feature that differ from the live ones are an (idempotent) enable.
    """
    sent: dict[str, BaseModel] = {n: getattr(patch, n) for n in NAMES if getattr(patch, n) is not None}
    wanted_on: dict[str, dict[str, Any]] = {}
    wanted_off: set[str] = set()
    for name, p in sent.items():
        enabled = getattr(p, "enabled", None)
        cur = live[name]
        settings = _settings_sent(p)
        if enabled is False:
            if cur.enabled or cur.status not in (FeatureStatus.DISABLED,):
                wanted_off.add(name)
            continue
        turning_on = enabled is True and not (cur.enabled and cur.status is not FeatureStatus.DEGRADED)
        differs = {k: v for k, v in settings.items() if cur.settings.get(k) != v}
        if turning_on or (differs and (cur.enabled or enabled)):
            wanted_on[name] = settings
    # prerequisites of what turns on
    reasons: dict[str, str] = {n: "requested" for n in wanted_on}
    for name in list(wanted_on):
        for pre in prerequisites(name):
            if pre in wanted_off:
                raise DependencyConflict(pre, [name])
            if pre not in wanted_on and not live[pre].enabled:
                wanted_on[pre] = {}
                reasons[pre] = f"needed by {name}"
    # a disable must leave no enabled dependant behind
    staying_on = {n for n, f in live.items() if f.enabled and n not in wanted_off} | set(wanted_on)
    for name in wanted_off:
        needers = dependants(name, staying_on)
        if needers:
            raise DependencyConflict(name, needers)
    changes = [Change(n, False, {}, "requested") for n in reversed(ORDER) if n in wanted_off]
    changes += [Change(n, True, wanted_on[n], reasons[n]) for n in ORDER if n in wanted_on]
    return changes


# -- what a step does, decided purely (the workflow acts on it; a dry run's plan lists it) ---------
ADDON_CONFIGURABLE = ("ACTIVE", "DEGRADED", "UPDATE_FAILED")


def same(current: Any, wanted: Any) -> bool:
    """`current` already has every field of `wanted` (strings compared case-insensitively, as HyperPod echoes
    `Enable`/`enable`)."""
    if isinstance(wanted, dict):
        cur = current if isinstance(current, dict) else {}
        return all(same(cur.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, str) and isinstance(current, str):
        return wanted.lower() == current.lower()
    return bool(current == wanted)


def addon_config(addon: Mapping[str, Any]) -> dict[str, Any] | None:
    import json

    raw = addon.get("configurationValues")
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return None


def addon_action(found: Mapping[str, Any] | None, config: Mapping[str, Any] | None = None
                 ) -> Literal["create", "update", "none"]:
    """What enabling does to a feature's EKS add-on: create it when missing (or once a DELETING one is gone),
    update its configuration when it differs and the add-on can take it, else nothing."""
    if found is None or found.get("status") == "DELETING":
        return "create"
    if config and addon_config(found) != dict(config) and found.get("status") in ADDON_CONFIGURABLE:
        return "update"
    return "none"


def checkpoint_percent(settings: Mapping[str, Any], current: Mapping[str, Any]) -> int:
    """The InstanceMemoryAllocationPercentage enabling sends: the one asked, else the live one, else 20."""
    percent = settings.get("memory_percent")
    if percent is None and same(current.get("Mode"), "Enable"):
        percent = current.get("InstanceMemoryAllocationPercentage")
    return int(DEFAULT_MEMORY_PERCENT if percent is None else percent)


def autoscaling_groups(current: Iterable[str], settings: Mapping[str, Any]) -> list[str]:
    """The groups Karpenter manages after enabling: those asked, else those PodStart's pools serve now."""
    wanted = settings.get("instance_groups")
    return list(sorted(current) if wanted is None else wanted)


def pool_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    """A NodePool's limits and disruption, defaults filled in."""
    return {"cpu_limit": int(settings.get("cpu_limit") or DEFAULT_CPU_LIMIT),
            "consolidate_after": str(settings.get("consolidate_after") or DEFAULT_CONSOLIDATE_AFTER),
            "disruption_budget": str(settings.get("disruption_budget") or DEFAULT_DISRUPTION_BUDGET)}
