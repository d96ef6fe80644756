"""Cluster requests: the public contract, its validation, and the normalized form a workflow runs.

Format rules live in the pydantic models (one place for every face); rules that need the account's
live state (zones, offerings, quotas, training plans, existing VPCs) live in `check_against`, a pure
function over a snapshot the API gathers first. Either way bad input is refused before anything
is created.
"""

from __future__ import annotations

import ipaddress
import re
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from functions.domain.catalog import InstanceType, Quota, TrainingPlan
from functions.domain.preferences import ClusterName, RegionName

DEFAULT_KUBERNETES_VERSION = "1.33"
SUPPORTED_KUBERNETES_VERSIONS = ("1.30", "1.31", "1.32", "1.33")
DEEP_HEALTH_CHECKS = ("InstanceStress", "InstanceConnectivity")
PRIVATE_NETS = tuple(ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"))

GroupName = Annotated[str, Field(
    pattern=r"^[a-z]([-a-z0-9]{0,30}[a-z0-9])?$", max_length=32,
    description="Instance group name, unique in the cluster: lowercase letters, digits and '-'",
)]


class CapacityType(StrEnum):
    on_demand = "on-demand"
    spot = "spot"
    training_plan = "training-plan"


class NodeRecovery(StrEnum):
    automatic = "automatic"
    none = "none"


class InstanceGroupSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: GroupName
    instance_type: str = Field(pattern=r"^ml\.[a-z0-9-]+\.[a-z0-9]+$", max_length=40,
                               description="HyperPod instance type, e.g. ml.p5.48xlarge (see list_instance_types)")
    instance_count: int = Field(ge=1, le=2000, description="Number of instances (within the cluster-usage quota)")
    availability_zone: str = Field(min_length=4, max_length=32,
                                   description="Zone name (us-west-2a) or zone id (usw2-az1) offering the type")
    capacity_type: CapacityType = Field(default=CapacityType.on_demand,
                                        description="on-demand, spot, or training-plan; fixed for the group's life")
    training_plan_arn: str | None = Field(
        default=None, pattern=r"^arn:aws[a-z-]*:sagemaker:[a-z0-9-]+:\d{12}:training-plan/.+$",
        description="Required when capacity_type is training-plan (find_capacity lists the plans with room)")
    efa_only: bool = Field(default=False, description="EFA-only network interfaces; fixed for the group's life")
    volume_size_gb: int = Field(default=500, ge=50, le=16384, description="Extra EBS volume per instance, GiB")
    deep_health_checks: list[Literal["InstanceStress", "InstanceConnectivity"]] | None = Field(
        default=None, description="Deep health checks before nodes take work; default on accelerated types")

    @model_validator(mode="after")
    def _capacity(self) -> InstanceGroupSpec:
        if self.capacity_type is CapacityType.training_plan and not self.training_plan_arn:
            raise ValueError("training_plan_arn is required when capacity_type is training-plan")
        if self.capacity_type is not CapacityType.training_plan and self.training_plan_arn:
            raise ValueError(f"training_plan_arn only goes with capacity_type training-plan "
                             f"(spot and training plans are exclusive), not {self.capacity_type.value}")
        return self


class FsxLustreSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    storage_capacity_gib: int = Field(default=1200, ge=1200, le=100800,
                                      description="FSx for Lustre capacity: 1200, 2400 or a multiple of 2400 GiB")
    throughput_mb_per_tib: Literal[125, 250, 500, 1000] = Field(default=250, description="PERSISTENT_2 throughput")

    @field_validator("storage_capacity_gib")
    @classmethod
    def _capacity(cls, v: int) -> int:
        from functions.domain.storage.api import fsx_capacity_problem

        if why := fsx_capacity_problem(v):
            raise ValueError(why)
        return v


class StorageSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    s3: bool = Field(default=True, description="Mount the shared data bucket in pods (S3 Mountpoint CSI)")
    fsx_lustre: FsxLustreSpec | None = Field(default=None, description="Also create an FSx for Lustre file system")


def _check_cidr(value: str, loc: str) -> str:
    try:
        net = ipaddress.ip_network(value, strict=True)
    except ValueError as exc:
        raise ValueError(f"{loc} is not a valid CIDR block: {exc}") from None
    if not isinstance(net, ipaddress.IPv4Network) or not any(net.subnet_of(p) for p in PRIVATE_NETS):  # type: ignore[arg-type]
        raise ValueError(f"{value} is not a private IPv4 range (10/8, 172.16/12, 192.168/16)")
    if not 16 <= net.prefixlen <= 20:
        raise ValueError(f"{value}: the VPC needs a /16 to /20 block")
    return str(net)


class ClusterCreate(BaseModel):
    """POST /v1/clusters."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: ClusterName
    region: RegionName
    kubernetes_version: str | None = Field(default=None, pattern=r"^1\.\d{2}$",
                                           description="EKS version; default: the newest HyperPod supports")
    vpc_cidr: str | None = Field(default=None, description="Private /16-/20; default: a free /16")
    node_recovery: NodeRecovery = Field(default=NodeRecovery.automatic,
                                        description="automatic (HyperPod reboots/replaces faulty nodes) or none")
    instance_groups: list[InstanceGroupSpec] = Field(min_length=1, max_length=20,
                                                     description="At least one instance group")
    storage: StorageSpec = Field(default_factory=StorageSpec)

    @field_validator("vpc_cidr")
    @classmethod
    def _cidr(cls, v: str | None) -> str | None:
        return _check_cidr(v, "vpc_cidr") if v is not None else None

    @field_validator("kubernetes_version")
    @classmethod
    def _version(cls, v: str | None) -> str | None:
        if v is not None and v not in SUPPORTED_KUBERNETES_VERSIONS:
            raise ValueError(f"HyperPod supports Kubernetes {', '.join(SUPPORTED_KUBERNETES_VERSIONS)}")
        return v

    @field_validator("instance_groups")
    @classmethod
    def _unique(cls, groups: list[InstanceGroupSpec]) -> list[InstanceGroupSpec]:
        seen: set[str] = set()
        for g in groups:
            if g.name in seen:
                raise ValueError(f"instance group name {g.name!r} is used twice")
            seen.add(g.name)
        return groups


NAME_RE = re.compile(r"^[a-z]([-a-z0-9]{0,30}[a-z0-9])?$")


def suggest_cluster_name(raw: str) -> str:
    """A valid PodStart cluster name close to `raw`: lowercase, '-' for anything else, at most 32."""
    s = re.sub(r"[^a-z0-9-]+", "-", raw.lower())
    s = re.sub(r"-{2,}", "-", s).strip("-")
    if not s or not s[0].isalpha():
        s = "c-" + s
    return s[:32].rstrip("-") or "cluster"


def name_problem(raw: str) -> str | None:
    if NAME_RE.match(raw):
        return None
    return (f"{raw!r} is not a valid cluster name (lowercase letters, digits and '-', starting with a letter, "
            f"at most 32 characters); try {suggest_cluster_name(raw)!r}")


class ClusterImport(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    region: RegionName
    eks_cluster_name: str = Field(pattern=r"^[0-9A-Za-z][A-Za-z0-9\-_]{0,99}$",
                                  description="Name of the existing EKS cluster to adopt")
    name: str | None = Field(default=None, max_length=100, validate_default=True,
                             description="PodStart name (a DNS label, at most 32 characters); default: the EKS name")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str | None, info: ValidationInfo) -> str | None:
        eks = info.data.get("eks_cluster_name")
        if v is None and eks is None:
            return v  # eks_cluster_name is reported invalid on its own
        problem = name_problem(v if v is not None else str(eks))
        if problem:
            raise ValueError(problem if v is not None else f"the EKS name {problem}, or pass `name`")
        return v

    @property
    def podstart_name(self) -> str:
        return self.name if self.name is not None else self.eks_cluster_name


class InstanceGroupAdd(InstanceGroupSpec):
    """POST /v1/clusters/{cluster}/instance-groups."""


class InstanceGroupPatch(BaseModel):
    """PATCH .../instance-groups/{group}: only instance_count can change; the rest is fixed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    instance_count: int | None = Field(default=None, ge=0, le=2000, description="New instance count")
    instance_type: str | None = Field(default=None, description="Immutable: sending a different value is a 409")
    availability_zone: str | None = Field(default=None, description="Immutable")
    capacity_type: CapacityType | None = Field(default=None, description="Immutable")
    efa_only: bool | None = Field(default=None, description="Immutable")
    training_plan_arn: str | None = Field(default=None, description="Immutable")


# -- checks against the account's live state -------------------------------------------------------
class Snapshot(BaseModel):
    """What the API read from AWS before deciding (gathered by an adapter; checked here, purely)."""

    region_ok: bool
    zones: dict[str, str]  # zone name or zone id -> zone name
    zone_ids: dict[str, str]  # zone name -> zone id
    offered: dict[str, dict[str, InstanceType]]  # zone name -> ml type -> info
    quotas: dict[str, Quota]
    training_plans: dict[str, TrainingPlan]
    vpc_cidrs: list[str]
    taken_names: set[str]


Err = dict[str, Any]


def _err(loc: list[str | int], msg: str) -> Err:
    return {"loc": ["body", *loc], "msg": msg}


def check_group(g: InstanceGroupSpec, loc: list[str | int], snap: Snapshot, region: str,
                extra_usage: dict[str, int] | None = None) -> tuple[list[Err], str | None]:
    """Per-group checks; returns (errors, resolved zone name)."""
    errors: list[Err] = []
    zone = snap.zones.get(g.availability_zone)
    if zone is None:
        errors.append(_err([*loc, "availability_zone"],
                           f"{g.availability_zone!r} is not an availability zone of {region}"))
        return errors, None
    info = snap.offered.get(zone, {}).get(g.instance_type)
    if info is None:
        offered = ", ".join(sorted(snap.offered.get(zone, {}))[:8])
        errors.append(_err([*loc, "instance_type"],
                           f"{g.instance_type} is not offered for HyperPod in {zone}; offered there: {offered}"))
        return errors, zone
    if g.efa_only and not info.efa_only_supported:
        errors.append(_err([*loc, "efa_only"], f"{g.instance_type} does not support EFA-only network interfaces"))
    if g.capacity_type is CapacityType.training_plan:
        plan = snap.training_plans.get(g.training_plan_arn or "")
        if plan is None:
            errors.append(_err([*loc, "training_plan_arn"], "no such training plan in this region"))
        else:
            if plan.instance_type != g.instance_type:
                errors.append(_err([*loc, "training_plan_arn"],
                                   f"the plan reserves {plan.instance_type}, not {g.instance_type}"))
            if plan.availability_zone and plan.availability_zone not in (zone, snap.zone_ids.get(zone)):
                errors.append(_err([*loc, "training_plan_arn"],
                                   f"the plan's capacity is in {plan.availability_zone}, not {zone}"))
            if g.instance_count > plan.available_instance_count:
                errors.append(_err([*loc, "instance_count"],
                                   f"the plan has {plan.available_instance_count} instances available"))
    else:
        quota = snap.quotas.get(g.instance_type)
        wanted = g.instance_count + (extra_usage or {}).get(g.instance_type, 0)
        if quota is None or wanted > quota.available:
            avail = quota.available if quota else 0
            errors.append(_err([*loc, "instance_count"],
                               f"{g.instance_count} x {g.instance_type} exceeds the cluster-usage quota: "
                               f"{avail} available (find_capacity shows the quota)"))
    return errors, zone


def overlapping(cidr: str, others: list[str]) -> str | None:
    net = ipaddress.ip_network(cidr)
    for o in others:
        if net.overlaps(ipaddress.ip_network(o)):
            return o
    return None


def free_vpc_cidr(existing: list[str]) -> str:
    """The first private /16 in 10.0.0.0/8 (from 10.90) that overlaps no VPC in the region."""
    for second in [*range(90, 256), *range(1, 90)]:
        candidate = f"10.{second}.0.0/16"
        if overlapping(candidate, existing) is None:
            return candidate
    raise ValueError("no free /16 left in 10.0.0.0/8")


def default_health_checks(g: InstanceGroupSpec, info: InstanceType | None) -> list[str]:
    if g.deep_health_checks is not None:
        return list(g.deep_health_checks)
    return list(DEEP_HEALTH_CHECKS) if info is not None and info.accelerated else []


def check_create(req: ClusterCreate, snap: Snapshot) -> tuple[list[Err], dict[str, Any]]:
    """All live-state checks for a create; returns (errors, the normalized request the workflow runs)."""
    errors: list[Err] = []
    if not snap.region_ok:
        return [_err(["region"], f"{req.region!r} is not a region where SageMaker HyperPod runs")], {}
    usage: dict[str, int] = {}
    groups: list[dict[str, Any]] = []
    for i, g in enumerate(req.instance_groups):
        errs, zone = check_group(g, ["instance_groups", i], snap, req.region, usage)
        errors.extend(errs)
        if g.capacity_type is not CapacityType.training_plan:
            usage[g.instance_type] = usage.get(g.instance_type, 0) + g.instance_count
        info = snap.offered.get(zone or "", {}).get(g.instance_type)
        groups.append({**g.model_dump(mode="json"), "availability_zone": zone or g.availability_zone,
                       "availability_zone_id": snap.zone_ids.get(zone or "", ""),
                       "deep_health_checks": default_health_checks(g, info),
                       "accelerated": bool(info and info.accelerated)})
    if req.vpc_cidr:
        clash = overlapping(req.vpc_cidr, snap.vpc_cidrs)
        if clash:
            errors.append(_err(["vpc_cidr"], f"{req.vpc_cidr} overlaps an existing VPC ({clash})"))
        cidr = req.vpc_cidr
    else:
        cidr = free_vpc_cidr(snap.vpc_cidrs)
    normalized = {
        **req.model_dump(mode="json"),
        "kubernetes_version": req.kubernetes_version or DEFAULT_KUBERNETES_VERSION,
        "vpc_cidr": cidr,
        "instance_groups": groups,
    }
    return errors, normalized
