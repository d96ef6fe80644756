"""Cluster use cases behind the REST routes: admit (check against live state, claim the name),
start the operation, and build the views. Thin over domain rules and adapters."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from functions.adapters import cluster_state
from functions.api.deps import services
from functions.domain.cluster_record import ClusterRecord, ClusterStatus, GroupRecord, record_key
from functions.domain.clusters import ClusterCreate, check_create
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
            raise InvalidInput("; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in errors),
                               errors=errors)
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
