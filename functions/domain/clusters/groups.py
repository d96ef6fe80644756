"""Instance-group rules: what may change (only the count), the diff contract against the live group,
and the capacity checks a change must pass (quota, addresses in the group's compute subnet)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from functions.domain.catalog import InstanceType, Quota
from functions.domain.clusters.network import addresses_per_instance, group_addresses

# instance_group.delete's drain: how long a pod a PodDisruptionBudget keeps may hold the delete before the operation
# fails naming it (seconds; the drain step's own budget is an hour, so the longest wait fits inside it)
DRAIN_TIMEOUT_DEFAULT_S = 600
DRAIN_TIMEOUT_MAX_S = 3000

IMMUTABLE = ("instance_type", "availability_zone", "capacity_type", "efa_only", "training_plan_arn")

Err = dict[str, Any]


class LiveGroup(BaseModel):
    """The group as HyperPod reports it now (DescribeCluster), next to what PodStart recorded."""

    model_config = ConfigDict(frozen=True)

    name: str
    target_count: int
    current_count: int | None = None
    status: str | None = None
    subnet_ids: list[str] = []


def live_group(detail: dict[str, Any]) -> LiveGroup:
    return LiveGroup(name=detail["InstanceGroupName"], target_count=int(detail.get("TargetCount") or 0),
                     current_count=detail.get("CurrentCount"), status=detail.get("Status"),
                     subnet_ids=list((detail.get("OverrideVpcConfig") or {}).get("Subnets") or []))


def immutable_conflicts(sent: dict[str, Any], current: dict[str, Any], zone_aliases: set[str]) -> list[Err]:
    """Fields sent with a value other than the group's: each is a 409 (a zone by name or by id is the same)."""
    errors: list[Err] = []
    for field in IMMUTABLE:
        if field not in sent:
            continue
        value = sent[field]
        same = value in zone_aliases if field == "availability_zone" else value == current.get(field)
        if not same:
            errors.append({"loc": ["body", field], "msg": f"immutable: the group's {field} is "
                                                          f"{current.get(field)!r}; create a new group instead"})
    return errors


def wanted_change(sent_count: int | None, live: LiveGroup) -> int | None:
    """The diff contract: the count to set, or None when the request already matches the live group."""
    if sent_count is None or sent_count == live.target_count:
        return None
    return sent_count


def zero_refusal(group: str, autoscaling_mode: str | None, managed_groups: set[str]) -> str | None:
    """`instance_count: 0` is for a group HyperPod's autoscaling (Karpenter) manages, and only then: it scales
    the group back up from zero when pods need it. Any other group at zero would just be an empty group."""
    if str(autoscaling_mode or "").lower() == "enable" and group in managed_groups:
        return None
    why = ("autoscaling is off on this cluster" if str(autoscaling_mode or "").lower() != "enable"
           else f"autoscaling does not manage {group}")
    return (f"0 instances is only for a group that autoscaling manages ({why}): enable autoscaling for {group} "
            f"in the cluster's features first, or delete the group")


def quota_problem(extra: int, instance_type: str, quota: Quota | None) -> str | None:
    if extra <= 0:
        return None
    available = quota.available if quota else 0
    if extra > available:
        return (f"{extra} more {instance_type} exceed the cluster-usage quota: {available} available "
                f"(find_capacity shows the quota)")
    return None


def addresses_for(count: int, info: InstanceType | None, efa_only: bool) -> int:
    efa = info.efa_max_interfaces if info else 1
    return group_addresses(count, efa, efa_only)


def per_instance(info: InstanceType | None, efa_only: bool) -> int:
    return addresses_per_instance(info.efa_max_interfaces if info else 1, efa_only)
