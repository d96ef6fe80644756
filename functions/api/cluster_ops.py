"""Cluster use cases behind the REST routes: admit (check against live state, claim the name),
start the operation, and build the views. Thin over domain rules and adapters."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from functions.adapters import cluster_state
from functions.api.deps import services
from functions.domain.catalog import HYPERPOD_REGIONS
from functions.domain.cluster_record import ClusterRecord, ClusterStatus, GroupRecord, record_key
from functions.domain.clusters import (
    ClusterCreate,
    ClusterImport,
    InstanceGroupAdd,
    InstanceGroupPatch,
    check_create,
    check_group,
    default_health_checks,
)
from functions.domain.errors import Conflict, InvalidInput, NotFound
from functions.domain.network import plan_fits
from functions.domain.operations import Actor, Operation, Target, now_iso
from functions.domain.preferences import Preferences, prefs_key
from functions.workflows import records


@dataclass
class CreateAdmission:
    req: ClusterCreate
    actor: Actor
    idempotency_key: str | None
    normalized: dict[str, Any] | None = None

    def normalize(self) -> dict[str, Any]:
        state = services().state
        all_records = records.all_records(state)
        snap = cluster_state.snapshot(self.req.region, self.req.instance_groups, all_records)
        if self.req.name in snap.taken_names:
            raise Conflict(f"a cluster named {self.req.name!r} already exists in {self.req.region}",
                           errors=[{"loc": ["body", "name"], "msg": "already taken in this region"}])
        errors, normalized = check_create(self.req, snap)
        if not errors:
            zones = sorted({g["availability_zone"] for g in normalized["instance_groups"]})
            why = plan_fits(normalized["vpc_cidr"], zones[:2] or ["a", "b"], zones)
            if why:
                errors.append({"loc": ["body", "vpc_cidr"], "msg": why})
        if errors:
            raise InvalidInput.of(errors)
        self.normalized = normalized
        return normalized

    def claim(self, op: Operation) -> None:
        assert self.normalized is not None
        n = self.normalized
        rec = ClusterRecord(
            name=n["name"], region=n["region"], status=ClusterStatus.CREATING, eks_cluster_name=n["name"],
            hyperpod_cluster_name=n["name"], kubernetes_version=n["kubernetes_version"],
            node_recovery=n["node_recovery"], vpc_cidr=n["vpc_cidr"], created_by=self.actor.name,
            created_at=now_iso(), operation_id=op.id, idempotency_key=self.idempotency_key,
            instance_groups=[GroupRecord(**{k: g[k] for k in GroupRecord.model_fields if k in g})
                             for g in n["instance_groups"]],
            storage=n.get("storage") or {},
        )
        if not services().state.put_new(*record_key(rec.region, rec.name), rec.model_dump(mode="json")):
            raise Conflict(f"a cluster named {rec.name!r} already exists in {rec.region}",
                           errors=[{"loc": ["body", "name"], "msg": "already taken in this region"}])

    def unclaim(self, op: Operation) -> None:
        services().state.delete(*record_key(self.req.region, self.req.name))


def create_cluster(req: ClusterCreate, actor: Actor, key: str | None) -> Operation:
    op, _ = services().operations.start(
        kind="cluster.create", target=Target(cluster=req.name, region=req.region),
        request=req.model_dump(mode="json"), principal=actor, idempotency_key=key,
        admission=CreateAdmission(req, actor, key),
    )
    return op


def find_record(name: str, region: str | None) -> ClusterRecord:
    state = services().state
    if region:
        rec = records.load(state, region, name)
        if rec is None:
            raise NotFound(f"no cluster {name!r} in {region}")
        return rec
    matches = [r for r in records.all_records(state) if r.name == name]
    if not matches:
        raise NotFound(f"no cluster named {name!r}")
    if len(matches) > 1:
        raise InvalidInput.field(["query", "region"], f"{name!r} exists in {', '.join(r.region for r in matches)}; "
                                                      f"say which region")
    return matches[0]


def _group_view(g: GroupRecord, live: dict[str, Any] | None) -> dict[str, Any]:
    return {**g.model_dump(mode="json"), "target_count": (live or {}).get("TargetCount", g.instance_count),
            "current_count": (live or {}).get("CurrentCount"), "status": (live or {}).get("Status")}


def list_view(limit: int, token: str | None, principal_sub: str) -> dict[str, Any]:
    state = services().state
    all_recs = records.all_records(state)
    start = int(token or 0)
    page = all_recs[start:start + limit]
    nxt = str(start + limit) if start + limit < len(all_recs) else None
    prefs = Preferences.model_validate(state.get(*prefs_key(principal_sub)) or {})
    live: dict[str, dict[str, dict[str, Any]]] = {}
    for region in sorted({r.region for r in page}):
        live[region] = cluster_state.hyperpod_clusters(region)  # one call per region on the page
    items = []
    for r in page:
        hp = live.get(r.region, {}).get(r.hyperpod_cluster_name or r.name)
        items.append({
            "name": r.name, "region": r.region, "status": r.status.value,
            "hyperpod_status": hp.get("ClusterStatus") if hp else None,
            "kubernetes_version": r.kubernetes_version, "managed": r.managed,
            "instance_groups": [_group_view(g, None) for g in r.instance_groups],
            "active": bool(prefs.active_cluster and prefs.active_cluster.name == r.name
                           and prefs.active_cluster.region == r.region),
            "operation_id": r.operation_id, "created_at": r.created_at, "created_by": r.created_by,
        })
    return {"items": items, "next_token": nxt}


def detail_view(name: str, region: str | None, principal_sub: str) -> dict[str, Any]:
    r = find_record(name, region)
    svc = services()
    eks = cluster_state.describe_eks(r.region, r.eks_cluster_name)
    hp = cluster_state.describe_hyperpod(r.region, r.hyperpod_cluster_name) if r.hyperpod_cluster_name else None
    live_groups = {g["InstanceGroupName"]: g for g in (hp or {}).get("InstanceGroups", [])}
    ops, _ = svc.operations.list(cluster=r.name, status=None, limit=10, token=None)
    ops = [o for o in ops if o.target.region == r.region]
    create_op = next((o for o in ops if o.kind == "cluster.create"), None)
    outputs = create_op.outputs() if create_op else {}
    deps = cluster_state.addons(r.region, r.eks_cluster_name) if eks else []
    for comp in outputs.get("components_applied", []):
        step = create_op.step("dependencies") if create_op else None
        deps.append({"name": comp, "kind": "kubernetes", "status": step.status.value if step else None})
    storage = []
    if outputs.get("data_bucket"):
        storage.append({"name": "podstart-data", "kind": "s3-mountpoint", "bucket": outputs["data_bucket"],
                        "status": create_op.step("storage").status.value if create_op else None})
    if outputs.get("fsx_file_system_id"):
        storage.append({"name": "podstart-fsx", "kind": "fsx-lustre", "file_system_id": outputs["fsx_file_system_id"]})
    prefs = Preferences.model_validate(svc.state.get(*prefs_key(principal_sub)) or {})
    return {
        "name": r.name, "region": r.region, "status": r.status.value, "managed": r.managed,
        "active": bool(prefs.active_cluster and prefs.active_cluster.name == r.name
                       and prefs.active_cluster.region == r.region),
        "kubernetes_version": (eks or {}).get("version") or r.kubernetes_version,
        "node_recovery": (hp or {}).get("NodeRecovery") or r.node_recovery,
        "eks": {"name": r.eks_cluster_name, "status": (eks or {}).get("status"), "arn": (eks or {}).get("arn"),
                "endpoint": (eks or {}).get("endpoint"), "version": (eks or {}).get("version")} if eks else None,
        "hyperpod": {"name": hp.get("ClusterName"), "status": hp.get("ClusterStatus"), "arn": hp.get("ClusterArn"),
                     "node_recovery": hp.get("NodeRecovery"),
                     "node_provisioning_mode": hp.get("NodeProvisioningMode")} if hp else None,
        "instance_groups": [_group_view(g, live_groups.get(g.name)) for g in r.instance_groups],
        "vpc_cidr": r.vpc_cidr, "network": {k: outputs[k] for k in (
            "vpc_id", "private_subnet_ids", "public_subnet_ids", "compute_subnets", "security_group_id",
            "nat_gateway_id") if k in outputs},
        "dependencies": deps, "storage": storage,
        "operations": [o.public() for o in ops],
        "created_at": r.created_at, "created_by": r.created_by,
    }


# -- delete ----------------------------------------------------------------------------------------
def delete_cluster(name: str, region: str | None, confirm: str, actor: Actor, key: str | None) -> Operation:
    if confirm != name:
        raise InvalidInput.field(["query", "confirm"], f"type the cluster name ({name}) to confirm the delete")
    rec = find_record(name, region)
    request = {"name": rec.name, "region": rec.region, "managed": rec.managed}
    op, _ = services().operations.start(kind="cluster.delete", target=Target(cluster=rec.name, region=rec.region),
                                        request=request, principal=actor, idempotency_key=key)
    return op


# -- import ----------------------------------------------------------------------------------------
@dataclass
class ImportAdmission:
    req: ClusterImport
    actor: Actor

    @property
    def name(self) -> str:
        return self.req.name or self.req.eks_cluster_name

    def normalize(self) -> dict[str, Any]:
        if self.req.region not in HYPERPOD_REGIONS:
            raise InvalidInput.field(["body", "region"], f"{self.req.region!r} is not a region where HyperPod runs")
        if records.load(services().state, self.req.region, self.name) is not None:
            raise Conflict(f"PodStart already manages a cluster named {self.name!r} in {self.req.region}",
                           errors=[{"loc": ["body", "name"], "msg": "already known to PodStart"}])
        if cluster_state.describe_eks(self.req.region, self.req.eks_cluster_name) is None:
            raise InvalidInput.field(["body", "eks_cluster_name"],
                                     f"no EKS cluster {self.req.eks_cluster_name!r} in {self.req.region}")
        return {"name": self.name, "region": self.req.region, "eks_cluster_name": self.req.eks_cluster_name}

    def claim(self, op: Operation) -> None:
        rec = ClusterRecord(name=self.name, region=self.req.region, status=ClusterStatus.IMPORTING, managed=False,
                            eks_cluster_name=self.req.eks_cluster_name, created_by=self.actor.name,
                            created_at=now_iso(), operation_id=op.id)
        if not services().state.put_new(*record_key(rec.region, rec.name), rec.model_dump(mode="json")):
            raise Conflict(f"PodStart already manages a cluster named {rec.name!r} in {rec.region}")

    def unclaim(self, op: Operation) -> None:
        services().state.delete(*record_key(self.req.region, self.name))


def import_cluster(req: ClusterImport, actor: Actor, key: str | None) -> Operation:
    adm = ImportAdmission(req, actor)
    op, _ = services().operations.start(kind="cluster.import", target=Target(cluster=adm.name, region=req.region),
                                        request=req.model_dump(mode="json"), principal=actor,
                                        idempotency_key=key, admission=adm)
    return op


# -- instance groups -------------------------------------------------------------------------------
def _require_active(rec: ClusterRecord) -> None:
    if rec.status is not ClusterStatus.ACTIVE or not rec.hyperpod_cluster_name:
        raise Conflict(f"cluster {rec.name} is {rec.status.value}"
                       + ("" if rec.hyperpod_cluster_name else " and has no HyperPod cluster")
                       + "; instance groups change only on an ACTIVE HyperPod cluster")


@dataclass
class AddGroupAdmission:
    rec: ClusterRecord
    group: InstanceGroupAdd

    def normalize(self) -> dict[str, Any]:
        _require_active(self.rec)
        if any(g.name == self.group.name for g in self.rec.instance_groups):
            raise Conflict(f"{self.rec.name} already has an instance group {self.group.name!r}",
                           errors=[{"loc": ["body", "name"], "msg": "already exists in this cluster"}])
        snap = cluster_state.snapshot(self.rec.region, [self.group], records.all_records(services().state))
        errors, zone = check_group(self.group, [], snap, self.rec.region)
        if errors:
            raise InvalidInput.of(errors)
        info = snap.offered.get(zone or "", {}).get(self.group.instance_type)
        g = {**self.group.model_dump(mode="json"), "availability_zone": zone,
             "availability_zone_id": snap.zone_ids.get(zone or "", ""),
             "deep_health_checks": default_health_checks(self.group, info),
             "accelerated": bool(info and info.accelerated)}
        return {"cluster": self.rec.name, "region": self.rec.region, "group": g}

    def claim(self, op: Operation) -> None:
        pass

    def unclaim(self, op: Operation) -> None:
        pass


def add_instance_group(name: str, region: str | None, group: InstanceGroupAdd, actor: Actor,
                       key: str | None) -> Operation:
    rec = find_record(name, region)
    op, _ = services().operations.start(
        kind="instance_group.add", target=Target(cluster=rec.name, region=rec.region, resource=group.name),
        request={"cluster": rec.name, "region": rec.region, "group": group.model_dump(mode="json")},
        principal=actor, idempotency_key=key, admission=AddGroupAdmission(rec, group))
    return op


IMMUTABLE = ("instance_type", "availability_zone", "capacity_type", "efa_only", "training_plan_arn")


def patch_instance_group(name: str, region: str | None, group: str, patch: InstanceGroupPatch, actor: Actor,
                         key: str | None) -> Operation | dict[str, Any]:
    """The diff contract: only fields sent are compared with actual state; equal means no operation."""
    rec = find_record(name, region)
    current = next((g for g in rec.instance_groups if g.name == group), None)
    if current is None:
        raise NotFound(f"{rec.name} has no instance group {group!r}")
    sent = patch.model_dump(exclude_unset=True)
    for field in IMMUTABLE:
        if field in sent and sent[field] != getattr(current, field) and not (
                field == "availability_zone" and sent[field] in (current.availability_zone,)):
            raise Conflict(f"{field} is fixed for the instance group's life; create a new group instead",
                           errors=[{"loc": ["body", field], "msg": "immutable"}])
    count = sent.get("instance_count")
    if count is None or count == current.instance_count:
        return {"changed": False, "instance_group": current.model_dump(mode="json")}
    _require_active(rec)
    if count > current.instance_count and current.capacity_type != "training-plan":
        quotas = {q.instance_type: q for q in catalog_quotas(rec.region)}
        q = quotas.get(current.instance_type)
        extra = count - current.instance_count
        if q is None or extra > q.available:
            raise InvalidInput.field(["body", "instance_count"],
                                     f"{extra} more {current.instance_type} exceed the cluster-usage quota: "
                                     f"{q.available if q else 0} available")
    op, _ = services().operations.start(
        kind="instance_group.scale", target=Target(cluster=rec.name, region=rec.region, resource=group),
        request={"cluster": rec.name, "region": rec.region, "group": group, "instance_count": count},
        principal=actor, idempotency_key=key)
    return op


def catalog_quotas(region: str) -> list[Any]:
    from functions.adapters import catalog_aws

    catalog_aws.clear_cache_key(("quotas", region))
    return catalog_aws.quotas(region)


def list_instance_groups(name: str, region: str | None, principal_sub: str) -> dict[str, Any]:
    detail = detail_view(name, region, principal_sub)
    return {"cluster": detail["name"], "region": detail["region"], "items": detail["instance_groups"]}
