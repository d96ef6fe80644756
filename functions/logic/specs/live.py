"""A cluster's live state as the read routes read it (its view, HyperPod's groups, storage, features, jobs,
endpoints), and that state written as spec documents (GET /v1/clusters/{cluster}/spec: defaults explicit,
secrets by name only)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from functions.domain.clusters.record import ClusterRecord, ClusterStatus
from functions.domain.features import document as fdom
from functions.domain.features.changes import FeaturesPatch
from functions.domain.features.document import FeaturesDocument
from functions.domain.inference.record import EndpointRecord, EndpointRecords
from functions.domain.manifests import DATA_VOLUME, FSX_VOLUME
from functions.domain.specs.document import API_VERSION, SpecExport
from functions.domain.storage.volumes import StorageItem
from functions.domain.training import manifests as job_manifests
from functions.domain.training import rules as training
from functions.domain.views import ClusterDetail, EndpointView, GroupView
from functions.logic import features as features_logic
from functions.logic.clusters import views as cluster_views
from functions.logic.deps import Deps
from functions.logic.inference import endpoint_views
from functions.logic.storage import volumes as storage

JOB_PATHS = {"pytorch": "/apis/sagemaker.amazonaws.com/v1/hyperpodpytorchjobs", "ray": "/apis/ray.io/v1/rayjobs"}


# -- the live state --------------------------------------------------------------------------------------------
@dataclass
class Live:
    rec: ClusterRecord
    detail: ClusterDetail
    groups: dict[str, dict[str, Any]]  # HyperPod DescribeCluster InstanceGroups by name
    storage: list[StorageItem]
    features: FeaturesDocument | None
    warnings: list[str] = field(default_factory=list)
    jobs: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # (namespace, name) -> object
    endpoints: dict[str, tuple[EndpointRecord, EndpointView]] = field(default_factory=dict)


def read_live(deps: Deps, rec: ClusterRecord, *, want_jobs: bool, want_endpoints: bool) -> Live:
    detail = cluster_views.cluster_detail(deps, rec.name, rec.region, "")
    rec = deps.records.load(rec.region, rec.name) or rec  # the detail read follows the live counts
    hp = deps.reader.describe_hyperpod(rec.region, rec.hyperpod_cluster_name) if rec.hyperpod_cluster_name else None
    groups = {str(g["InstanceGroupName"]): g for g in (hp or {}).get("InstanceGroups", [])}
    live = Live(rec=rec, detail=detail, groups=groups,
                storage=storage.list_storage(deps, rec.name, rec.region).items, features=None)
    try:
        live.features = features_logic.get_features(deps, rec.name, rec.region)
    except Exception as exc:  # a cluster still creating has no add-ons to read yet
        live.warnings.append(f"the features could not be read ({exc}): features are planned when applied")
    active = rec.status is ClusterStatus.ACTIVE
    if want_jobs and active:
        kube = deps.kube(rec.eks_cluster_name, rec.region)
        for path in JOB_PATHS.values():
            try:
                items = kube.list(path, label_selector=training.LABEL_JOB)
            except Exception:
                items = []  # the kind is not served (its operator is off): no such jobs
            for obj in items:
                meta = obj.get("metadata") or {}
                live.jobs[(str(meta.get("namespace") or "default"), str(meta.get("name")))] = obj
    if want_endpoints:
        recs = EndpointRecords(deps.state).of_cluster(rec.region, rec.name)
        state = endpoint_views._live(deps, rec) if recs and active else None
        live.endpoints = {r.name: (r, endpoint_views.view(r, state)) for r in recs}
    if not active:
        live.warnings.append(f"cluster {rec.name} is {rec.status.value}: its jobs and endpoints were not read")
    return live


def group_view(live: Live, name: str) -> GroupView | None:
    return next((g for g in live.detail.instance_groups if g.name == name), None)


def volume_size(g: dict[str, Any]) -> int | None:
    for c in g.get("InstanceStorageConfigs") or []:
        size = (c.get("EbsVolumeConfig") or {}).get("VolumeSizeInGB")
        if size is not None:
            return int(size)
    return None


# -- export ------------------------------------------------------------------------------------------------------
def _feature_entry(name: str, v: fdom.FeatureView) -> dict[str, Any]:
    out: dict[str, Any] = {"enabled": v.enabled}
    if v.enabled and name == "tiered_checkpointing" and v.memory_percent is not None:
        out["memory_percent"] = v.memory_percent
    if v.enabled and name == "autoscaling":
        out["instance_groups"] = sorted(v.instance_groups or [])
        out |= {k: getattr(v, k) for k in ("cpu_limit", "consolidate_after", "disruption_budget")
                if getattr(v, k) is not None}
    return out


def volume_body(item: StorageItem) -> dict[str, Any]:
    body: dict[str, Any] = {"kind": item.kind, "name": item.name,
                            "namespace": item.pvc.namespace if item.pvc else "default"}
    if item.kind == "s3":
        body |= {"bucket": item.bucket, "prefix": item.prefix or "", "read_only": bool(item.read_only)}
    else:
        body |= {"storage_capacity_gib": item.storage_capacity_gib, "throughput_mb_per_tib": item.throughput_mb_per_tib}
    return {k: v for k, v in body.items() if v is not None}


def cluster_spec(live: Live) -> dict[str, Any]:
    """The live cluster as a Cluster document's spec, server-chosen defaults explicit."""
    d = live.detail
    groups = []
    for g in d.instance_groups:
        hp = live.groups.get(g.name, {})
        entry: dict[str, Any] = {"name": g.name, "instance_type": g.instance_type, "instance_count": g.target_count,
                                 "availability_zone": g.availability_zone, "capacity_type": g.capacity_type,
                                 "efa_only": g.efa_only}
        if g.training_plan_arn:
            entry["training_plan_arn"] = g.training_plan_arn
        if (size := volume_size(hp)) is not None:
            entry["volume_size_gb"] = size
        if hp:
            entry["deep_health_checks"] = list(hp.get("OnStartDeepHealthChecks") or [])
        groups.append(entry)
    base = {i.name: i for i in live.storage if i.origin == "cluster"}
    fsx = base.get(FSX_VOLUME)
    spec: dict[str, Any] = {
        "kubernetes_version": d.kubernetes_version, "vpc_cidr": d.vpc_cidr,
        "node_recovery": str(d.node_recovery or "automatic").lower(), "instance_groups": groups,
        "storage": {"s3": DATA_VOLUME in base, **({"fsx_lustre": {
            "storage_capacity_gib": fsx.storage_capacity_gib, "throughput_mb_per_tib": fsx.throughput_mb_per_tib}}
            if fsx and fsx.storage_capacity_gib else {})},
        "volumes": [volume_body(i) for i in live.storage if i.origin == "added"],
    }
    if live.features is not None:
        spec["features"] = {n: _feature_entry(n, getattr(live.features, n)) for n in FeaturesPatch.model_fields}
    return {k: v for k, v in spec.items() if v is not None}


def job_spec(obj: dict[str, Any]) -> dict[str, Any]:
    """A live job as a TrainingJob document's spec: the request it was submitted with (on the object), else what
    its manifest shows."""
    meta = obj.get("metadata") or {}
    ann = meta.get("annotations") or {}
    raw = ann.get(job_manifests.SUBMITTED_ANNOTATION)
    if raw:
        try:
            return dict(json.loads(raw))
        except ValueError:
            pass
    containers = [c for rs in (obj.get("spec") or {}).get("replicaSpecs") or []
                  for c in ((rs.get("template") or {}).get("spec") or {}).get("containers") or []]
    out: dict[str, Any] = {"recipe": (meta.get("labels") or {}).get(training.LABEL_RECIPE),
                           "recipe_version": ann.get("podstart.dev/recipe-version", "1"),
                           "instance_type": ann.get("podstart.dev/instance-type"),
                           "image": containers[0].get("image") if containers else None}
    for key, k in (("nodes", "podstart.dev/nodes"), ("gpus_per_node", "podstart.dev/gpus-per-node")):
        if str(ann.get(k, "")).isdigit():
            out[key] = int(ann[k])
    return {k: v for k, v in out.items() if v is not None}


def endpoint_spec(rec: EndpointRecord, view: EndpointView) -> dict[str, Any]:
    body = {k: v for k, v in rec.request.items() if k != "name" and v is not None}
    if not body.get("autoscaling") and body.get("service") != "model_pool" and view.live:
        body["replicas"] = view.replicas
    return body


def _document(kind: str, metadata: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": API_VERSION, "kind": kind, "metadata": metadata, "spec": spec}


def export(deps: Deps, name: str, region: str | None, include: set[str]) -> SpecExport:
    rec = cluster_views.find_record(deps, name, region)
    live = read_live(deps, rec, want_jobs="jobs" in include, want_endpoints="endpoints" in include)
    docs = [_document("Cluster", {"name": rec.name, "region": rec.region}, cluster_spec(live))]
    for (ns, job), obj in sorted(live.jobs.items()):
        docs.append(_document("TrainingJob", {"name": job, "namespace": ns, "cluster": rec.name,
                                              "region": rec.region}, job_spec(obj)))
    for ep, (erec, view) in sorted(live.endpoints.items()):
        docs.append(_document("Endpoint", {"name": ep, "cluster": rec.name, "region": rec.region},
                              endpoint_spec(erec, view)))
    return SpecExport(documents=docs)
