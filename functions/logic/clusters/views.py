"""Reading clusters: the list (PodStart's records plus HyperPod-on-EKS clusters it does not track) and
one cluster's detail, live where AWS was read, last-known (with its time) where it was not."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from functions.domain import manifests
from functions.domain.clusters.plan import group_capacity
from functions.domain.clusters.record import ClusterRecord, GroupRecord, RecordContended
from functions.domain.errors import InvalidInput, NotFound
from functions.domain.operations import Operation, now_iso
from functions.domain.plans import Capacity
from functions.domain.preferences import Preferences, prefs_key
from functions.domain.views import (
    ClusterDetail,
    ClusterList,
    ClusterSummary,
    DependencyView,
    EksView,
    GroupList,
    GroupView,
    HyperPodView,
    OperationOut,
    PvcView,
    RunningCost,
    StorageView,
)
from functions.logic.clusters import discovery
from functions.logic.deps import Deps
from functions.logic.plans import price_lines

LIST_CACHE_S = 20.0  # a region's live list of HyperPod clusters is reused this long


def find_record(deps: Deps, name: str, region: str | None) -> ClusterRecord:
    if region:
        rec = deps.records.load(region, name)
        if rec is None:
            raise NotFound(f"no cluster {name!r} in {region}")
        return rec
    matches = deps.records.named(name)
    if not matches:
        raise NotFound(f"no cluster named {name!r}")
    if len(matches) > 1:
        raise InvalidInput.field(["query", "region"], f"{name!r} exists in {', '.join(r.region for r in matches)}; "
                                                      f"say which region")
    return matches[0]


def _active(deps: Deps, sub: str) -> tuple[str, str] | None:
    prefs = Preferences.model_validate(deps.state.get(*prefs_key(sub)) or {})
    return (prefs.active_cluster.name, prefs.active_cluster.region) if prefs.active_cluster else None


def group_view(g: GroupRecord, live: dict[str, Any] | None = None, seen: str | None = None) -> GroupView:
    base = GroupView(
        name=g.name, instance_type=g.instance_type, availability_zone=g.availability_zone,
        availability_zone_id=g.availability_zone_id, capacity_type=g.capacity_type, efa_only=g.efa_only,
        training_plan_arn=g.training_plan_arn, instance_count=g.instance_count, target_count=g.instance_count,
        current_count=g.current_count,
        status=g.status, counts_as_of=g.counts_as_of)
    if live is None:
        return base
    target = int(live.get("TargetCount", g.instance_count))
    drift = None if target == g.instance_count else (
        f"changed outside PodStart: recorded {g.instance_count}, HyperPod has {target}")
    return base.model_copy(update={"target_count": target, "current_count": live.get("CurrentCount"),
                                   "status": live.get("Status"), "counts_as_of": seen, "drift": drift})


def summary(rec: ClusterRecord, active: tuple[str, str] | None) -> ClusterSummary:
    return ClusterSummary(
        name=rec.name, region=rec.region, status=rec.status.value, origin=rec.origin, managed=True, importable=False,
        hyperpod_status=rec.hyperpod_status, eks_cluster_name=rec.eks_cluster_name,
        kubernetes_version=rec.kubernetes_version, instance_groups=[group_view(g) for g in rec.instance_groups],
        active=active == (rec.name, rec.region), operation_id=rec.operation_id, created_at=rec.created_at,
        created_by=rec.created_by)


def list_clusters(deps: Deps, sub: str, limit: int, token: str | None, region: str | None = None,
                  name: str | None = None) -> ClusterList:
    """PodStart's records plus the HyperPod-on-EKS clusters it does not track, by (name, region); with `name`, only
    the clusters of that name (one per region it is used in).

    AWS is asked live only in the regions holding a cluster PodStart knows of, or the one named by `region`
    (one list call each, reused for LIST_CACHE_S); every other region's untracked clusters come from the
    periodic discovery (functions.logic.clusters.discovery), with its time in `discovered_at`."""
    recs = [r for r in deps.records.all() if region is None or r.region == region]
    live = sorted({region} if region else {r.region for r in recs})
    known = {(r.region, r.hyperpod_cluster_name or r.name) for r in deps.records.all()}
    with ThreadPoolExecutor(max_workers=min(8, max(1, len(live)))) as pool:
        found = [x for f in pool.map(lambda rg: discovery.hyperpod_on_eks(
            deps.reader, rg, LIST_CACHE_S, frozenset(n for r, n in known if r == rg)), live) for x in f]
    scanned = discovery.load(deps.state) if region is None else None
    if scanned is not None:
        found += [c for c in scanned.clusters if c.region not in live]
    external = [c for c in found if (c.region, c.name) not in known]
    active = _active(deps, sub)
    rows = sorted([summary(r, active) for r in recs] + external, key=lambda c: (c.name, c.region))
    if name is not None:
        rows = [c for c in rows if c.name == name]
    start = int(token or 0)
    nxt = str(start + limit) if start + limit < len(rows) else None
    return ClusterList(items=rows[start:start + limit], next_token=nxt,
                       discovered_at=scanned.at if scanned is not None else None,
                       undiscovered_regions=sorted(scanned.unavailable) if scanned is not None else [])


def _storage(deps: Deps, rec: ClusterRecord, create_op: Operation | None) -> list[StorageView]:
    out = create_op.outputs() if create_op else {}
    views: list[StorageView] = []
    if out.get("data_bucket"):
        pvc = PvcView(name=manifests.DATA_VOLUME, namespace="default", phase=out.get("s3_pvc_phase"),
                      as_of=out.get("storage_checked_at"))
        views.append(StorageView(name=manifests.DATA_VOLUME, kind="s3-mountpoint", bucket=out["data_bucket"],
                                 status=pvc.phase or "Pending", pvc=pvc))
    fs_id = out.get("fsx_file_system_id")
    if fs_id:
        fs = deps.reader.file_system(rec.region, fs_id)
        lifecycle = (fs or {}).get("Lifecycle") or ("DELETED" if fs is None else "UNKNOWN")
        fsx_pvc = PvcView(name=manifests.FSX_VOLUME, namespace="default", phase=out.get("fsx_pvc_phase"),
                          as_of=out.get("storage_checked_at")) if out.get("fsx_pvc_phase") else None
        views.append(StorageView(name=manifests.FSX_VOLUME, kind="fsx-lustre", file_system_id=fs_id,
                                 lifecycle=lifecycle, status=lifecycle, pvc=fsx_pvc))
    return views


def cluster_detail(deps: Deps, name: str, region: str | None, sub: str) -> ClusterDetail:
    rec = find_record(deps, name, region)
    eks = deps.reader.describe_eks(rec.region, rec.eks_cluster_name)
    hp = deps.reader.describe_hyperpod(rec.region, rec.hyperpod_cluster_name) if rec.hyperpod_cluster_name else None
    seen = now_iso()
    live_groups = {g["InstanceGroupName"]: g for g in (hp or {}).get("InstanceGroups", [])}
    if hp is not None:  # the record follows the live state; drift is shown on the view, not hidden
        rec = follow_live(deps, rec, hp, seen)
    ops, _ = deps.operations.list(cluster=rec.name, status=None, limit=10, token=None)
    ops = [o for o in ops if o.target.region == rec.region]
    create_op = next((o for o in ops if o.kind == "cluster.create"), None)
    outputs = create_op.outputs() if create_op else {}
    deps_view = [DependencyView(name=a["name"], kind="eks-addon", status=a.get("status"), version=a.get("version"))
                 for a in (deps.reader.addons(rec.region, rec.eks_cluster_name) if eks else [])]
    dep_step = create_op.step("dependencies") if create_op else None
    deps_view += [DependencyView(name=c, kind="kubernetes", status=dep_step.status.value if dep_step else None)
                  for c in outputs.get("components_applied", [])]
    base = summary(rec, _active(deps, sub))
    return ClusterDetail(
        **base.model_dump(exclude={"instance_groups", "kubernetes_version", "hyperpod_status"}),
        hyperpod_status=(hp or {}).get("ClusterStatus") or rec.hyperpod_status,
        kubernetes_version=(eks or {}).get("version") or rec.kubernetes_version,
        instance_groups=[group_view(g, live_groups.get(g.name), seen) for g in rec.instance_groups],
        node_recovery=(hp or {}).get("NodeRecovery") or rec.node_recovery,
        eks=EksView(name=rec.eks_cluster_name, status=eks.get("status"), arn=eks.get("arn"),
                    endpoint=eks.get("endpoint"), version=eks.get("version")) if eks else None,
        hyperpod=HyperPodView(name=hp.get("ClusterName"), status=hp.get("ClusterStatus"), arn=hp.get("ClusterArn"),
                              node_recovery=hp.get("NodeRecovery"),
                              node_provisioning_mode=hp.get("NodeProvisioningMode"),
                              failure_message=hp.get("FailureMessage")) if hp else None,
        vpc_cidr=rec.vpc_cidr,
        network={k: outputs[k] for k in ("vpc_id", "private_subnet_ids", "public_subnet_ids", "compute_subnets",
                                         "group_subnets", "security_group_id", "nat_gateway_id") if k in outputs},
        dependencies=deps_view, storage=_storage(deps, rec, create_op),
        operations=[OperationOut.model_validate(o.public()) for o in ops],
        cost=running_cost(deps, rec, eks is not None, create_op, seen),
    )


def running_cost(deps: Deps, rec: ClusterRecord, eks_exists: bool, create_op: Operation | None,
                 seen: str) -> RunningCost | None:
    """What the cluster costs per hour now: each group's running instances (its current count; the target when no
    count was observed, said so), the EKS control plane, and what PodStart made for it (the NAT gateway, FSx)."""
    if deps.prices is None:
        return None
    capacity: list[Capacity] = []
    unobserved: list[str] = []
    for g in rec.instance_groups:
        n = g.current_count
        if n is None:
            unobserved.append(g.name)
            n = g.instance_count
        capacity.append(group_capacity({"instance_type": g.instance_type, "capacity_type": g.capacity_type,
                                        "instance_count": n}))
    if eks_exists:
        capacity.append(Capacity(item="EKS control plane", price=("eks", "cluster"), count=1))
    outputs = create_op.outputs() if create_op else {}
    if outputs.get("nat_gateway_id"):
        capacity.append(Capacity(item="NAT gateway", price=("nat", "gateway"), count=1))
    fsx = (rec.storage or {}).get("fsx_lustre") or {}
    if outputs.get("fsx_file_system_id") and fsx.get("storage_capacity_gib"):
        capacity.append(Capacity(item=f"FSx for Lustre {fsx['storage_capacity_gib']} GiB",
                                 price=("fsx", f"PERSISTENT_2/{fsx.get('throughput_mb_per_tib', 250)}"),
                                 count=fsx["storage_capacity_gib"]))
    lines, total, missing = price_lines(deps, rec.region, capacity)
    notes = []
    if unobserved:
        notes.append(f"counts of {', '.join(unobserved)} not observed yet: their target counts are used")
    if missing:
        notes.append(f"no price found for {', '.join(missing)}")
    return RunningCost(hourly=None if missing else round(total, 2), known_hourly=round(total, 2), lines=lines,
                       as_of=seen, note="; ".join(notes) or None)


def follow_live(deps: Deps, rec: ClusterRecord, hp: dict[str, Any], seen: str, save: bool = True) -> ClusterRecord:
    """Write what HyperPod reports (target/current counts, statuses) onto the record, when it differs."""
    live = {g["InstanceGroupName"]: g for g in hp.get("InstanceGroups", [])}

    def follow(r: ClusterRecord) -> ClusterRecord:
        groups = [g.model_copy(update={"instance_count": int(live[g.name].get("TargetCount", g.instance_count)),
                                       "current_count": live[g.name].get("CurrentCount"),
                                       "status": live[g.name].get("Status"), "counts_as_of": seen})
                  if g.name in live else g for g in r.instance_groups]
        return r.model_copy(update={"instance_groups": groups, "hyperpod_status": hp.get("ClusterStatus")})

    updated = follow(rec)
    if updated != rec and save:  # onto the record as it is now: a group added meanwhile stays
        try:
            return deps.records.mutate(rec.region, rec.name, follow) or updated
        except RecordContended:  # many readers at once, each writing what HyperPod said: theirs stands, this
            return updated        # request answers what it saw
    return updated


def list_groups(deps: Deps, name: str, region: str | None, sub: str) -> GroupList:
    d = cluster_detail(deps, name, region, sub)
    return GroupList(cluster=d.name, region=d.region, items=d.instance_groups)
