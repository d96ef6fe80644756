"""Catalog: what can be asked for, where. Pure shaping of what the AWS APIs answer."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

# Regions where SageMaker HyperPod runs (AWS documentation, 2026).
HYPERPOD_REGIONS: tuple[str, ...] = (
    "us-east-1", "us-east-2", "us-west-1", "us-west-2", "ca-central-1", "sa-east-1",
    "eu-central-1", "eu-west-1", "eu-west-2", "eu-north-1", "eu-south-2",
    "ap-south-1", "ap-southeast-1", "ap-southeast-2", "ap-southeast-3", "ap-northeast-1",
)

# An AWS region name, bounded the way botocore accepts one (us-east-1, us-gov-west-1, ap-southeast-3).
REGION_PATTERN = r"^[a-z]{2}(-[a-z]{1,12}){1,2}-\d{1,2}$"

ML_PREFIX = "ml."


class Region(BaseModel):
    name: str


class AvailabilityZone(BaseModel):
    name: str
    id: str
    state: str


class Accelerator(BaseModel):
    kind: str  # gpu | neuron
    manufacturer: str
    model: str
    count: int
    memory_gib: float | None = None


class InstanceType(BaseModel):
    name: str  # ml.p5.48xlarge
    vcpus: int
    memory_gib: float
    accelerator: Accelerator | None
    efa_supported: bool
    efa_max_interfaces: int
    network_cards: int
    efa_only_supported: bool
    accelerated: bool


class TrainingPlan(BaseModel):
    arn: str
    name: str
    status: str
    instance_type: str | None
    availability_zone: str | None
    total_instance_count: int
    available_instance_count: int
    start_time: str | None
    end_time: str | None


class Quota(BaseModel):
    instance_type: str
    quota_code: str
    quota_name: str
    limit: int
    in_use: int
    available: int


def ec2_name(ml_type: str) -> str:
    return ml_type.removeprefix(ML_PREFIX)


def instance_type_from_ec2(info: dict[str, Any]) -> InstanceType:
    """EC2 DescribeInstanceTypes entry -> the HyperPod view of it."""
    gpus = (info.get("GpuInfo") or {}).get("Gpus") or []
    neurons = (info.get("NeuronInfo") or {}).get("NeuronDevices") or []
    accel: Accelerator | None = None
    if gpus:
        g = gpus[0]
        mem = (g.get("MemoryInfo") or {}).get("SizeInMiB")
        accel = Accelerator(kind="gpu", manufacturer=g.get("Manufacturer", ""), model=g.get("Name", ""),
                            count=sum(int(x.get("Count", 0)) for x in gpus),
                            memory_gib=round(mem / 1024, 1) if mem else None)
    elif neurons:
        n = neurons[0]
        mem = (n.get("MemoryInfo") or {}).get("SizeInMiB")
        accel = Accelerator(kind="neuron", manufacturer="AWS", model=n.get("Name", ""),
                            count=sum(int(x.get("Count", 0)) for x in neurons),
                            memory_gib=round(mem / 1024, 1) if mem else None)
    net = info.get("NetworkInfo") or {}
    efa = bool(net.get("EfaSupported"))
    efa_max = int((net.get("EfaInfo") or {}).get("MaximumEfaInterfaces") or 0) if efa else 0
    cards = int(net.get("MaximumNetworkCards") or 1)
    return InstanceType(
        name=ML_PREFIX + info["InstanceType"],
        vcpus=int((info.get("VCpuInfo") or {}).get("DefaultVCpus") or 0),
        memory_gib=round(int((info.get("MemoryInfo") or {}).get("SizeInMiB") or 0) / 1024, 1),
        accelerator=accel,
        efa_supported=efa,
        efa_max_interfaces=efa_max,
        network_cards=cards,
        # EFA-only interfaces go on secondary network cards: multi-card EFA types only.
        efa_only_supported=efa and efa_max > 1,
        accelerated=accel is not None,
    )


def training_plan_from_api(p: dict[str, Any]) -> TrainingPlan:
    caps = p.get("ReservedCapacitySummaries") or []
    first = caps[0] if caps else {}
    return TrainingPlan(
        arn=p["TrainingPlanArn"], name=p.get("TrainingPlanName", ""), status=p.get("Status", ""),
        instance_type=first.get("InstanceType"), availability_zone=first.get("AvailabilityZone"),
        total_instance_count=int(p.get("TotalInstanceCount") or first.get("TotalInstanceCount") or 0),
        available_instance_count=int(p.get("AvailableInstanceCount") or 0),
        start_time=str(p["StartTime"]) if p.get("StartTime") else None,
        end_time=str(p["EndTime"]) if p.get("EndTime") else None,
    )


QUOTA_SUFFIX = " for cluster usage"


def quotas_from_api(quotas: list[dict[str, Any]], in_use: dict[str, int]) -> list[Quota]:
    out = []
    for q in quotas:
        name = q.get("QuotaName", "")
        if not name.endswith(QUOTA_SUFFIX) or not name.startswith(ML_PREFIX):
            continue
        itype = name.removesuffix(QUOTA_SUFFIX)
        limit = int(q.get("Value") or 0)
        used = in_use.get(itype, 0)
        out.append(Quota(instance_type=itype, quota_code=q.get("QuotaCode", ""), quota_name=name, limit=limit,
                         in_use=used, available=max(0, limit - used)))
    return sorted(out, key=lambda x: x.instance_type)


class PlanCapacity(BaseModel):
    arn: str
    name: str
    available_instance_count: int
    start_time: str | None
    end_time: str | None


class ZoneOffering(BaseModel):
    availability_zone: str
    availability_zone_id: str
    offered: bool
    spot_offered: bool
    quota_available: int
    training_plans: list[PlanCapacity]


class Offerings(BaseModel):
    """Where one instance type can run in a region: the question agents and the wizard ask, in one answer."""

    region: str
    instance_type: str
    known: bool  # a HyperPod instance type at all
    instance: InstanceType | None
    quota: Quota | None
    zones: list[ZoneOffering]
    summary: str


def offerings(region: str, instance_type: str, *, known: bool, zones: list[AvailabilityZone], offered: set[str],
              spot: set[str], quota: Quota | None, plans: list[TrainingPlan], info: InstanceType | None) -> Offerings:
    """Per zone: offered or not, the region's quota left, plans for that type with free capacity there, spot."""
    available = quota.available if quota else 0
    rows = []
    for z in zones:
        matching = [PlanCapacity(arn=p.arn, name=p.name, available_instance_count=p.available_instance_count,
                                 start_time=p.start_time, end_time=p.end_time)
                    for p in plans if p.instance_type == instance_type and p.available_instance_count > 0
                    and p.availability_zone in (z.name, z.id)]
        rows.append(ZoneOffering(availability_zone=z.name, availability_zone_id=z.id, offered=z.name in offered,
                                 spot_offered=z.name in offered and z.name in spot, quota_available=available,
                                 training_plans=matching))
    where = [r.availability_zone for r in rows if r.offered]
    if not known:
        summary = f"{instance_type} is not a HyperPod instance type"
    elif not where:
        summary = f"{instance_type} is not offered in any zone of {region}"
    else:
        plan_zones = [r.availability_zone for r in rows if r.training_plans]
        summary = (f"{instance_type}: offered in {', '.join(where)}; {available} available under the cluster-usage "
                   f"quota" + (f"; training plans with free capacity in {', '.join(plan_zones)}" if plan_zones else ""))
    return Offerings(region=region, instance_type=instance_type, known=known, instance=info, quota=quota, zones=rows,
                     summary=summary)
