"""Live state the cluster API reads: the snapshot admission checks against, and cluster views."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from functions.adapters import aws
from functions.adapters import catalog_aws as catalog
from functions.domain import catalog as cat
from functions.domain.cluster_record import ClusterRecord, ClusterStatus
from functions.domain.clusters import CapacityType, InstanceGroupSpec, Snapshot


def pending_usage(records: list[ClusterRecord], region: str, hyperpod_names: set[str]) -> dict[str, int]:
    """Instances asked for by clusters still being created (their HyperPod cluster does not exist yet)."""
    used: dict[str, int] = {}
    for r in records:
        if r.region != region or r.status is not ClusterStatus.CREATING or r.name in hyperpod_names:
            continue
        for g in r.instance_groups:
            if g.capacity_type != CapacityType.training_plan.value:
                used[g.instance_type] = used.get(g.instance_type, 0) + g.instance_count
    return used


def hyperpod_clusters(region: str) -> dict[str, dict[str, Any]]:
    """One ListClusters call per page of 100: name -> summary (status, arn, creation time)."""
    sm = aws.client("sagemaker", region)
    out: dict[str, dict[str, Any]] = {}
    for page in sm.get_paginator("list_clusters").paginate():
        for c in page.get("ClusterSummaries", []):
            out[c["ClusterName"]] = c
    return out


def snapshot(region: str, groups: list[InstanceGroupSpec], records: list[ClusterRecord]) -> Snapshot:
    if region not in cat.HYPERPOD_REGIONS:
        return Snapshot(region_ok=False, zones={}, zone_ids={}, offered={}, quotas={}, training_plans={},
                        vpc_cidrs=[], taken_names=set())
    zones_list = catalog.availability_zones(region)
    zones = {z.name: z.name for z in zones_list} | {z.id: z.name for z in zones_list}
    zone_ids = {z.name: z.id for z in zones_list}
    offered: dict[str, dict[str, cat.InstanceType]] = {}
    for g in groups:
        zone = zones.get(g.availability_zone)
        if zone and zone not in offered:
            offered[zone] = {t.name: t for t in catalog.instance_types(region, zone)}
    catalog.clear_cache_key(("quotas", region))
    quotas = {q.instance_type: q for q in catalog.quotas(region)}
    hp = hyperpod_clusters(region)
    pending = pending_usage(records, region, set(hp))
    for itype, n in pending.items():
        if itype in quotas:
            q = quotas[itype]
            quotas[itype] = q.model_copy(update={"in_use": q.in_use + n, "available": max(0, q.available - n)})
    plans: dict[str, cat.TrainingPlan] = {}
    if any(g.capacity_type is CapacityType.training_plan for g in groups):
        catalog.clear_cache_key(("plans", region))
        plans = {p.arn: p for p in catalog.training_plans(region)}
    ec2 = aws.client("ec2", region)
    cidrs: list[str] = []
    for page in ec2.get_paginator("describe_vpcs").paginate():
        for v in page.get("Vpcs", []):
            cidrs += [a["CidrBlock"] for a in v.get("CidrBlockAssociationSet", [])] or [v["CidrBlock"]]
    eks_names: set[str] = set()
    for page in aws.client("eks", region).get_paginator("list_clusters").paginate():
        eks_names.update(page.get("clusters", []))
    taken = {r.name for r in records if r.region == region} | eks_names | set(hp)
    return Snapshot(region_ok=True, zones=zones, zone_ids=zone_ids, offered=offered, quotas=quotas,
                    training_plans=plans, vpc_cidrs=cidrs, taken_names=taken)


def describe_eks(region: str, name: str) -> dict[str, Any] | None:
    try:
        return aws.client("eks", region).describe_cluster(name=name)["cluster"]  # type: ignore[no-any-return]
    except ClientError as err:
        if err.response["Error"]["Code"] == "ResourceNotFoundException":
            return None
        raise


def describe_hyperpod(region: str, name: str) -> dict[str, Any] | None:
    try:
        return aws.client("sagemaker", region).describe_cluster(ClusterName=name)  # type: ignore[no-any-return]
    except ClientError as err:
        if err.response["Error"]["Code"] in ("ResourceNotFound", "ResourceNotFoundException", "ValidationException"):
            return None
        raise


def addons(region: str, name: str) -> list[dict[str, Any]]:
    eks = aws.client("eks", region)
    out = []
    try:
        for addon in eks.list_addons(clusterName=name).get("addons", []):
            a = eks.describe_addon(clusterName=name, addonName=addon)["addon"]
            out.append({"name": addon, "kind": "eks-addon", "status": a.get("status"),
                        "version": a.get("addonVersion")})
    except ClientError as err:
        if err.response["Error"]["Code"] != "ResourceNotFoundException":
            raise
    return out
