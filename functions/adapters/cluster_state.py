"""Live AWS state the cluster API reads (ClusterReader): the snapshot admission checks against,
and what the views show. Read-only; every client comes from the shared factory."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from functions.adapters import aws
from functions.adapters import catalog_aws as catalog
from functions.domain import catalog as cat
from functions.domain.clusters.models import CapacityType, InstanceGroupSpec, Snapshot
from functions.domain.clusters.network import VpcView, subnet_from_ec2
from functions.domain.clusters.record import ClusterRecord, ClusterStatus
from functions.domain.errors import BadRequest


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


def describe_hyperpod(region: str, name: str) -> dict[str, Any] | None:
    try:
        return aws.client("sagemaker", region).describe_cluster(ClusterName=name)  # type: ignore[no-any-return]
    except ClientError as err:
        if err.response["Error"]["Code"] in ("ResourceNotFound", "ResourceNotFoundException", "ValidationException"):
            return None
        raise


@dataclass
class AwsClusterReader:
    client: Callable[[str, str | None], Any] = aws.client
    _orchestrators: dict[str, str | None] = field(default_factory=dict)  # cluster ARN -> EKS ARN (immutable)

    def hyperpod_clusters(self, region: str, max_age: float = 0.0) -> dict[str, dict[str, Any]]:
        def load() -> dict[str, dict[str, Any]]:
            sm = self.client("sagemaker", region)
            out: dict[str, dict[str, Any]] = {}
            for page in sm.get_paginator("list_clusters").paginate():
                for c in page.get("ClusterSummaries", []):
                    out[c["ClusterName"]] = c
            return out

        if max_age <= 0:
            return load()
        return catalog.cached(("hyperpod-clusters", region), load, ttl=max_age)

    def describe_hyperpod(self, region: str, name: str) -> dict[str, Any] | None:
        try:
            return self.client("sagemaker", region).describe_cluster(ClusterName=name)  # type: ignore[no-any-return]
        except ClientError as err:
            if err.response["Error"]["Code"] in ("ResourceNotFound", "ResourceNotFoundException",
                                                 "ValidationException"):
                return None
            raise

    def eks_orchestrator(self, region: str, summary: dict[str, Any]) -> str | None:
        """The EKS cluster ARN a HyperPod cluster runs on (None: Slurm), described once per cluster."""
        arn = summary["ClusterArn"]
        if arn not in self._orchestrators:
            desc = self.describe_hyperpod(region, summary["ClusterName"]) or {}
            self._orchestrators[arn] = ((desc.get("Orchestrator") or {}).get("Eks") or {}).get("ClusterArn")
        return self._orchestrators[arn]

    def describe_eks(self, region: str, name: str) -> dict[str, Any] | None:
        try:
            return self.client("eks", region).describe_cluster(name=name)["cluster"]  # type: ignore[no-any-return]
        except ClientError as err:
            if err.response["Error"]["Code"] == "ResourceNotFoundException":
                return None
            raise

    def addons(self, region: str, name: str) -> list[dict[str, Any]]:
        eks = self.client("eks", region)
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

    def access_entries(self, region: str, name: str) -> list[str]:
        try:
            return list(self.client("eks", region).list_access_entries(clusterName=name).get("accessEntries", []))
        except ClientError as err:
            if err.response["Error"]["Code"] != "ResourceNotFoundException":
                raise
        return []

    def quotas(self, region: str) -> list[cat.Quota]:
        catalog.clear_cache_key(("quotas", region))
        return catalog.quotas(region)

    def regions(self) -> list[str]:
        return [r.name for r in catalog.regions()]

    def zones(self, region: str) -> dict[str, str]:
        found = catalog.availability_zones(region)
        return {z.name: z.name for z in found} | {z.id: z.name for z in found}

    def offered(self, region: str, zone: str) -> dict[str, cat.InstanceType]:
        return {t.name: t for t in catalog.instance_types(region, zone)}

    def network(self, region: str, subnet_ids: list[str]) -> VpcView:
        ec2 = self.client("ec2", region)
        vpc_id = ec2.describe_subnets(SubnetIds=subnet_ids[:1])["Subnets"][0]["VpcId"]
        vpc = ec2.describe_vpcs(VpcIds=[vpc_id])["Vpcs"][0]
        blocks = [a["CidrBlock"] for a in vpc.get("CidrBlockAssociationSet", [])
                  if a.get("CidrBlockState", {}).get("State", "associated") == "associated"] or [vpc["CidrBlock"]]
        subnets = [subnet_from_ec2(s) for s in ec2.describe_subnets(
            Filters=[{"Name": "vpc-id", "Values": [vpc_id]}])["Subnets"]]
        nats = ec2.describe_nat_gateways(Filters=[{"Name": "vpc-id", "Values": [vpc_id]},
                                                  {"Name": "state", "Values": ["available", "pending"]}])
        return VpcView(vpc_id=vpc_id, blocks=blocks, subnets=subnets, has_nat=bool(nats["NatGateways"]))

    def file_system(self, region: str, file_system_id: str) -> dict[str, Any] | None:
        try:
            found = self.client("fsx", region).describe_file_systems(FileSystemIds=[file_system_id])
        except ClientError as err:
            if err.response["Error"]["Code"] == "FileSystemNotFound":
                return None
            raise
        return (found.get("FileSystems") or [None])[0]

    def bucket_region(self, region: str, bucket: str) -> str | None:
        try:
            head = self.client("s3", region).head_bucket(Bucket=bucket)
        except ClientError as err:
            headers = (err.response.get("ResponseMetadata") or {}).get("HTTPHeaders") or {}
            code = str(err.response["Error"]["Code"])
            if code == "301" or code == "PermanentRedirect":
                return headers.get("x-amz-bucket-region")
            if code in ("404", "NoSuchBucket", "403", "AccessDenied", "Forbidden"):
                return None
            raise
        headers = (head.get("ResponseMetadata") or {}).get("HTTPHeaders") or {}
        return str(head.get("BucketRegion") or headers.get("x-amz-bucket-region") or region)

    def list_objects(self, region: str, bucket: str, prefix: str, limit: int, token: str | None) -> dict[str, Any]:
        args: dict[str, Any] = {"Bucket": bucket, "Prefix": prefix, "Delimiter": "/", "MaxKeys": limit}
        if token:
            args["ContinuationToken"] = token
        try:
            page = self.client("s3", region).list_objects_v2(**args)
        except ClientError as err:  # a continuation token S3 did not issue (or for another listing)
            if token and err.response.get("Error", {}).get("Code") in ("InvalidArgument", "InvalidToken"):
                raise BadRequest.field(["query", "next_token"], "not a token this listing issued: pass back the "
                                                                "next_token of the previous page") from None
            raise
        return {
            "objects": [{"key": o["Key"], "size": int(o.get("Size", 0)),
                         "last_modified": o["LastModified"].isoformat() if o.get("LastModified") else None}
                        for o in page.get("Contents", [])],
            "prefixes": [p["Prefix"] for p in page.get("CommonPrefixes", [])],
            "truncated": bool(page.get("IsTruncated")), "next_token": page.get("NextContinuationToken"),
        }

    def snapshot(self, region: str, groups: list[InstanceGroupSpec], records: list[ClusterRecord]) -> Snapshot:
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
        quotas = {q.instance_type: q for q in self.quotas(region)}
        hp = self.hyperpod_clusters(region)
        pending = pending_usage(records, region, set(hp))
        for itype, n in pending.items():
            if itype in quotas:
                q = quotas[itype]
                quotas[itype] = q.model_copy(update={"in_use": q.in_use + n, "available": max(0, q.available - n)})
        plans: dict[str, cat.TrainingPlan] = {}
        if any(g.capacity_type is CapacityType.training_plan for g in groups):
            catalog.clear_cache_key(("plans", region))
            plans = {p.arn: p for p in catalog.training_plans(region)}
        ec2 = self.client("ec2", region)
        cidrs: list[str] = []
        for page in ec2.get_paginator("describe_vpcs").paginate():
            for v in page.get("Vpcs", []):
                cidrs += [a["CidrBlock"] for a in v.get("CidrBlockAssociationSet", [])] or [v["CidrBlock"]]
        eks_names: set[str] = set()
        for page in self.client("eks", region).get_paginator("list_clusters").paginate():
            eks_names.update(page.get("clusters", []))
        taken = {r.name for r in records if r.region == region} | eks_names | set(hp)
        return Snapshot(region_ok=True, zones=zones, zone_ids=zone_ids, offered=offered, quotas=quotas,
                        training_plans=plans, vpc_cidrs=cidrs, taken_names=taken)
