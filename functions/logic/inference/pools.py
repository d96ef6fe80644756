"""Model pools: warm GPU workers (pool.create), bound to an endpoint by relabelling (pool.assign) and returned
(pool.release). The endpoint's Service selects pool + model label, so retargeting takes seconds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from functions.domain.clusters.record import ClusterRecord
from functions.domain.errors import Conflict, InvalidInput, NotFound
from functions.domain.inference import manifests as im
from functions.domain.inference.endpoints import NAMESPACE
from functions.domain.inference.record import EndpointRecords, PoolRecord, PoolRecords
from functions.domain.inference.requests import PoolAssign, PoolCreate, PoolRelease
from functions.domain.operations import Actor, Operation, Target, now_iso
from functions.domain.plans import Plan
from functions.domain.views import PoolList, PoolView, PoolWorker
from functions.logic import live_reads
from functions.logic.clusters.views import find_record
from functions.logic.deps import Deps
from functions.logic.inference.endpoint_views import _ready
from functions.logic.inference.endpoints import require_ready_cluster
from functions.logic.plans import Started, start_or_plan


@dataclass
class PoolAdmission:
    deps: Deps
    rec: ClusterRecord
    body: PoolCreate
    actor: Actor
    normalized: dict[str, Any] | None = None

    def normalize(self) -> dict[str, Any]:
        require_ready_cluster(self.rec)
        if PoolRecords(self.deps.state).load(self.rec.region, self.rec.name, self.body.name) is not None:
            raise Conflict(f"{self.rec.name} already has a pool {self.body.name!r}",
                           errors=[{"loc": ["body", "name"], "msg": "a pool with this name exists"}])
        types = sorted({g.instance_type for g in self.rec.instance_groups})
        if self.body.instance_type not in types:
            raise InvalidInput.field(["body", "instance_type"], f"{self.rec.name} has no instance group of "
                                                                 f"{self.body.instance_type}; its types: "
                                                                 f"{', '.join(types) or 'none'}")
        self.normalized = {"cluster": self.rec.name, "region": self.rec.region,
                           "eks_cluster_name": self.rec.eks_cluster_name, "pool": self.body.model_dump(mode="json")}
        return self.normalized

    def claim(self, op: Operation) -> None:
        b = self.body
        rec = PoolRecord(name=b.name, cluster=self.rec.name, region=self.rec.region,
                         eks_cluster_name=self.rec.eks_cluster_name, engine=b.engine, image=b.image,
                         instance_type=b.instance_type, gpus_per_worker=b.gpus_per_worker, workers=b.workers,
                         operation_id=op.id, created_by=self.actor.name, created_at=now_iso())
        if not PoolRecords(self.deps.state).create(rec):
            raise Conflict(f"{self.rec.name} already has a pool {b.name!r}")

    def unclaim(self, op: Operation) -> None:
        PoolRecords(self.deps.state).delete(self.rec.region, self.rec.name, self.body.name)


def create_pool(deps: Deps, cluster: str, region: str | None, body: PoolCreate, actor: Actor,
                key: str | None, dry_run: bool = False) -> Started | Plan:
    rec = find_record(deps, cluster, region)
    facts = None
    if dry_run:  # the free GPUs of the type (the workers stay Pending beyond them)
        require_ready_cluster(rec)
        facts = {"live": live_reads.live_gpus(deps.kube(rec.eks_cluster_name, rec.region), body.instance_type)}
    return start_or_plan(
        deps, dry_run=dry_run, kind="pool.create",
        target=Target(cluster=rec.name, region=rec.region, resource=f"pool/{body.name}"),
        request={"cluster": rec.name, "region": rec.region, "pool": body.model_dump(mode="json")},
        principal=actor, idempotency_key=key, admission=PoolAdmission(deps, rec, body, actor), facts=facts)


def list_pools(deps: Deps, cluster: str, region: str | None) -> PoolList:
    rec = find_record(deps, cluster, region)
    records = PoolRecords(deps.state).of_cluster(rec.region, rec.name)
    pods: list[dict[str, Any]] = []
    if records:
        try:
            pods = deps.kube(rec.eks_cluster_name, rec.region).list(f"/api/v1/namespaces/{NAMESPACE}/pods",
                                                                    im.POOL_LABEL)
        except Exception:
            pods = []
    items = []
    for p in records:
        mine = [x for x in pods if (x["metadata"].get("labels") or {}).get(im.POOL_LABEL) == p.name]
        workers = [PoolWorker(pod=x["metadata"]["name"], model=(x["metadata"].get("labels") or {}).get(
            im.MODEL_LABEL, im.UNASSIGNED), ready=_ready(x), node=(x.get("spec") or {}).get("nodeName"))
            for x in sorted(mine, key=lambda x: x["metadata"]["name"])]
        by_model: dict[str, int] = {}
        for w in workers:
            by_model[w.model] = by_model.get(w.model, 0) + 1
        items.append(PoolView(name=p.name, cluster=p.cluster, region=p.region, engine=p.engine, image=p.image,
                              instance_type=p.instance_type, gpus_per_worker=p.gpus_per_worker, workers=p.workers,
                              by_model=by_model, pods=workers, operation_id=p.operation_id))
    return PoolList(cluster=rec.name, region=rec.region, items=items)


def _bound_endpoint(deps: Deps, rec: ClusterRecord, pool: str, endpoint: str) -> None:
    if PoolRecords(deps.state).load(rec.region, rec.name, pool) is None:
        raise NotFound(f"{rec.name} has no pool {pool!r}")
    ep = EndpointRecords(deps.state).load(rec.region, rec.name, endpoint)
    if ep is None:
        raise InvalidInput.field(["body", "endpoint"], f"{rec.name} has no endpoint {endpoint!r}")
    if ep.request.get("service") != "model_pool" or ep.request.get("pool") != pool:
        raise InvalidInput.field(["body", "endpoint"], f"endpoint {endpoint} is not served by pool {pool} "
                                                       f"(deploy it with service model_pool, pool {pool})")


def _workers_labelled(deps: Deps, rec: ClusterRecord, pool: str, model: str) -> dict[str, Any]:
    """A relabel's dry run reads the pool workers it would choose from (the step's own selector)."""
    pods = deps.kube(rec.eks_cluster_name, rec.region).list(f"/api/v1/namespaces/{NAMESPACE}/pods",
                                                            f"{im.POOL_LABEL}={pool},{im.MODEL_LABEL}={model}")
    return {"pods": pods}


def assign(deps: Deps, cluster: str, region: str | None, pool: str, body: PoolAssign, actor: Actor,
           key: str | None, dry_run: bool = False) -> Started | Plan:
    rec = find_record(deps, cluster, region)
    _bound_endpoint(deps, rec, pool, body.endpoint)
    return start_or_plan(
        deps, dry_run=dry_run, kind="pool.assign",
        target=Target(cluster=rec.name, region=rec.region, resource=f"pool/{pool}"),
        request={"cluster": rec.name, "region": rec.region, "eks_cluster_name": rec.eks_cluster_name,
                 "pool": pool, "endpoint": body.endpoint, "model": body.model.model_dump(mode="json"),
                 "workers": body.workers},
        principal=actor, idempotency_key=key,
        facts=_workers_labelled(deps, rec, pool, im.UNASSIGNED) if dry_run else None)


def release(deps: Deps, cluster: str, region: str | None, pool: str, body: PoolRelease, actor: Actor,
            key: str | None, dry_run: bool = False) -> Started | Plan:
    rec = find_record(deps, cluster, region)
    _bound_endpoint(deps, rec, pool, body.endpoint)
    return start_or_plan(
        deps, dry_run=dry_run, kind="pool.release",
        target=Target(cluster=rec.name, region=rec.region, resource=f"pool/{pool}"),
        request={"cluster": rec.name, "region": rec.region, "eks_cluster_name": rec.eks_cluster_name,
                 "pool": pool, "endpoint": body.endpoint, "workers": body.workers},
        principal=actor, idempotency_key=key,
        facts=_workers_labelled(deps, rec, pool, body.endpoint) if dry_run else None)
