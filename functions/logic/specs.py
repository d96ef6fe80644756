"""Spec documents against the live state: export a cluster, plan documents (a diff per document plus the dry-run
plans of the child operations), apply them as one `spec.apply` operation, and run its phases.

Everything here goes through the use cases the REST routes call: a child operation is started by the same
function its route calls (same admission, same idempotency, same plan), so a spec can do nothing a REST client
could not. The diff reads what the read routes read: the cluster's view (EKS, HyperPod), its instance groups as
HyperPod describes them, its storage list, the features document, the jobs' live objects and the endpoints' live
state; never the create request PodStart stored.

spec.apply's steps are the phases (functions.domain.specs.PHASES): each starts its child operations one at a
time, with an Idempotency-Key derived from the parent's id, the phase and the child's position (a step that
runs again finds the same operation instead of starting another), watches each to its end, and fails naming
the child that failed. A retried apply resumes a failed child (POST .../retry) instead of starting a new one.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from functions.domain import features as fdom
from functions.domain import storage as st
from functions.domain import training
from functions.domain.cluster_record import ClusterRecord, ClusterStatus
from functions.domain.clusters import (
    ClusterCreate,
    InstanceGroupAdd,
    InstanceGroupPatch,
    default_health_checks,
)
from functions.domain.endpoint_record import EndpointRecord, EndpointRecords
from functions.domain.errors import Conflict, Forbidden, InvalidInput, PermanentStepError, Problem
from functions.domain.features import FeaturesDocument, FeaturesPatch, FeaturesUnchanged
from functions.domain.inference import EndpointCreate, EndpointPatch
from functions.domain.kinds import required_role
from functions.domain.manifests import DATA_VOLUME, FSX_VOLUME
from functions.domain.operations import Actor, Operation, OperationStatus, Target
from functions.domain.plans import HOURS_PER_MONTH, Cost, Plan
from functions.domain.principal import Principal, Role
from functions.domain.specs import (
    API_VERSION,
    PHASES,
    AnyDocument,
    ChildAction,
    ChildOperation,
    ClusterDocument,
    DocumentPlan,
    EndpointDocument,
    FieldDiff,
    SpecExport,
    SpecPlan,
    SpecRequest,
    SpecUnchanged,
    TrainingJobDocument,
    parse_documents,
    target_of,
)
from functions.domain.storage import StorageAdd, StorageItem
from functions.domain.views import ClusterDetail, EndpointView, GroupView, NoChange
from functions.domain.workflow import Done, Outcome, Wait
from functions.logic import (
    cluster_create,
    cluster_views,
    endpoints,
    group_add,
    group_delete,
    group_scale,
    jobs,
    storage,
)
from functions.logic import features as features_logic
from functions.logic.deps import Deps
from functions.logic.plans import Started, replay_of, start_or_plan

KIND = "spec.apply"
RESOURCE = "specs/apply"  # the parent's lock: its children take the cluster's own (Target.lock_key)
JOB_PATHS = {"pytorch": "/apis/sagemaker.amazonaws.com/v1/hyperpodpytorchjobs", "ray": "/apis/ray.io/v1/rayjobs"}


def action_role(a: ChildAction) -> Role:
    """The role a child operation needs: its kind's; removing an FSx file system deletes its data, and
    anything that destroys data needs an admin (ARCHITECTURE, tenancy)."""
    role = required_role(a.kind)
    if a.kind == "storage.remove" and a.args.get("kind") == "fsx_lustre":
        role = max(role, Role.admin)
    return role


def child_key(parent_id: str, phase: str, index: int) -> str:
    return f"{parent_id}/{phase}/{index}"


def is_child(op: Operation, parent_id: str) -> bool:
    return (op.idempotency_key or "").startswith(parent_id + "/")


# -- documents -----------------------------------------------------------------------------------------------
@dataclass
class Parsed:
    cluster: str
    region: str | None
    docs: list[AnyDocument]
    cluster_doc: tuple[int, ClusterDocument] | None = None
    jobs: list[tuple[int, TrainingJobDocument]] = field(default_factory=list)
    endpoints: list[tuple[int, EndpointDocument]] = field(default_factory=list)


def _doc_loc(i: int, *path: str | int) -> list[str | int]:
    return ["body", "documents", i, *path]


def parse(req: SpecRequest) -> Parsed:
    """The documents, each validated by its kind's request models (422 naming documents[i] and the field), for
    one cluster, with no document named twice."""
    docs, errors = parse_documents(req.documents)
    if errors:
        raise InvalidInput.of(errors)
    first_cluster, _ = target_of(docs[0])
    regions: dict[str, int] = {}
    out = Parsed(cluster=first_cluster, region=None, docs=docs)
    seen: dict[tuple[str, str, str], int] = {}
    for i, d in enumerate(docs):
        cluster, region = target_of(d)
        field_ = "name" if isinstance(d, ClusterDocument) else "cluster"
        if cluster != first_cluster:
            errors.append({"loc": _doc_loc(i, "metadata", field_), "msg": (
                f"one cluster per plan or apply: the documents name {first_cluster!r} first, this one {cluster!r}")})
        if region:
            regions.setdefault(region, i)
        if isinstance(d, ClusterDocument):
            ident = ("Cluster", "", "")
        elif isinstance(d, TrainingJobDocument):
            ident = ("TrainingJob", d.metadata.namespace, d.metadata.name)
        else:
            ident = ("Endpoint", "", d.metadata.name)
        if ident in seen:
            errors.append({"loc": _doc_loc(i, "metadata", "name"),
                           "msg": f"documents[{seen[ident]}] is the same {ident[0]} already"})
            continue
        seen[ident] = i
        if isinstance(d, ClusterDocument):
            out.cluster_doc = (i, d)
        elif isinstance(d, TrainingJobDocument):
            out.jobs.append((i, d))
        else:
            out.endpoints.append((i, d))
    if len(regions) > 1:
        second = sorted(regions.items(), key=lambda kv: kv[1])[1]
        errors.append({"loc": _doc_loc(second[1], "metadata", "region"),
                       "msg": f"the documents name regions {', '.join(sorted(regions))}: one cluster, one region"})
    if errors:
        raise InvalidInput.of(errors)
    out.region = next(iter(regions), None)
    return out


def _resolve(deps: Deps, parsed: Parsed) -> tuple[ClusterRecord | None, str]:
    """The cluster's record (None: the Cluster document creates it) and its region."""
    if parsed.region:
        return deps.records.load(parsed.region, parsed.cluster), parsed.region
    matches = deps.records.named(parsed.cluster)
    if len(matches) > 1:
        raise InvalidInput.field(_doc_loc(0, "metadata", "region"), (
            f"{parsed.cluster!r} exists in {', '.join(r.region for r in matches)}; say which region"))
    if not matches:
        raise InvalidInput.field(_doc_loc(0, "metadata", "cluster"), (
            f"no cluster named {parsed.cluster!r}; add its Cluster document to create it"))
    return matches[0], matches[0].region


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
        state = endpoints._live(deps, rec) if recs and active else None
        live.endpoints = {r.name: (r, endpoints.view(r, state)) for r in recs}
    if not active:
        live.warnings.append(f"cluster {rec.name} is {rec.status.value}: its jobs and endpoints were not read")
    return live


def _group_view(live: Live, name: str) -> GroupView | None:
    return next((g for g in live.detail.instance_groups if g.name == name), None)


def _volume_size(g: dict[str, Any]) -> int | None:
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


def _volume_body(item: StorageItem) -> dict[str, Any]:
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
        if (size := _volume_size(hp)) is not None:
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
        "volumes": [_volume_body(i) for i in live.storage if i.origin == "added"],
    }
    if live.features is not None:
        spec["features"] = {n: _feature_entry(n, getattr(live.features, n)) for n in FeaturesPatch.model_fields}
    return {k: v for k, v in spec.items() if v is not None}


def job_spec(obj: dict[str, Any]) -> dict[str, Any]:
    """A live job as a TrainingJob document's spec: the request it was submitted with (on the object), else what
    its manifest shows."""
    meta = obj.get("metadata") or {}
    ann = meta.get("annotations") or {}
    raw = ann.get(training.SUBMITTED_ANNOTATION)
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


# -- the diff ---------------------------------------------------------------------------------------------------
@dataclass
class _Plan:
    """What planning builds: the document plans and the child actions, in phase order."""

    cluster: str
    region: str
    prune: bool
    creating: bool
    docs: list[DocumentPlan] = field(default_factory=list)
    actions: list[ChildAction] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    base_locs: dict[int, list[str | int]] = field(default_factory=dict)  # action index -> its body's place

    def act(self, doc: DocumentPlan | None, phase: str, kind: str, resource: str, args: dict[str, Any],
            loc: list[str | int] | None = None) -> None:
        self.actions.append(ChildAction(phase=phase, kind=kind, resource=resource,
                                        document=doc.index if doc else None, args=args))
        self.base_locs[len(self.actions) - 1] = loc or []
        if doc is not None:
            doc.operations.append(ChildOperation(phase=phase, kind=kind, resource=resource))


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        return sorted(map(str, a)) == sorted(map(str, b))
    return bool(a == b)


def _diff_cluster(deps: Deps, p: _Plan, i: int, doc: ClusterDocument, live: Live | None) -> None:
    spec = doc.spec
    dp = DocumentPlan(index=i, kind="Cluster", name=doc.metadata.name, action="unchanged")
    p.docs.append(dp)
    if live is None:
        dp.action = "create"
        body = spec.create_body(doc.metadata.name, doc.metadata.region)
        p.act(dp, "cluster", "cluster.create", doc.metadata.name, {"body": body.model_dump(mode="json")}, ["spec"])
        for k, v in enumerate(spec.volumes):
            p.act(dp, "storage", "storage.add", v.name or st.default_name(v),
                  {"body": v.model_dump(mode="json", exclude_unset=True)}, ["spec", "volumes", k])
        if spec.features is not None and spec.features.model_dump(exclude_unset=True):
            p.act(dp, "features", "features.update", "features",
                  {"body": spec.features.model_dump(mode="json", exclude_unset=True)}, ["spec", "features"])
        return
    d = live.detail

    def diff(path: str, loc: list[str | int] | None, old: Any, new: Any, change: str, note: str | None = None) -> None:
        dp.diffs.append(FieldDiff(path=path, loc=loc, old=old, new=new, change=change, note=note))  # type: ignore[arg-type]

    fixed = "no PodStart operation changes it on a live cluster: create a new cluster"
    if spec.kubernetes_version and spec.kubernetes_version != d.kubernetes_version:
        diff("spec.kubernetes_version", ["spec", "kubernetes_version"], d.kubernetes_version,
             spec.kubernetes_version, "replace-needed", fixed)
    if spec.vpc_cidr and spec.vpc_cidr != d.vpc_cidr:
        diff("spec.vpc_cidr", ["spec", "vpc_cidr"], d.vpc_cidr, spec.vpc_cidr, "replace-needed", fixed)
    live_recovery = str(d.node_recovery or "").lower() or None
    if live_recovery and live_recovery != spec.node_recovery.value:
        diff("spec.node_recovery", ["spec", "node_recovery"], live_recovery, spec.node_recovery.value,
             "replace-needed", fixed)
    _diff_groups(deps, p, dp, spec, live, diff)
    _diff_storage(p, dp, spec, live, diff)
    _diff_features(p, dp, spec, live, diff)
    if any(f.change == "replace-needed" for f in dp.diffs):
        dp.action = "replace-needed"
    elif dp.diffs or dp.operations:
        dp.action = "update"


Diff = Callable[..., None]


def _diff_groups(deps: Deps, p: _Plan, dp: DocumentPlan, spec: Any, live: Live, diff: Diff) -> None:
    region = live.rec.region
    wanted = {g.name for g in spec.instance_groups}
    adds, scales = [], []
    for k, g in enumerate(spec.instance_groups):
        base: list[str | int] = ["spec", "instance_groups", k]
        path = f"spec.instance_groups[{g.name}]"
        view = _group_view(live, g.name)
        if view is None:
            diff(path, base, None, g.model_dump(mode="json", exclude_none=True), "create")
            adds.append((g.name, {"body": InstanceGroupAdd.model_validate(g.model_dump()).model_dump(mode="json")},
                         base))
            continue
        hp = live.groups.get(g.name, {})
        info = deps.reader.offered(region, view.availability_zone).get(view.instance_type)
        zones = {view.availability_zone, view.availability_zone_id}
        olds: dict[str, Any] = {
            "instance_type": view.instance_type, "capacity_type": view.capacity_type,
            "training_plan_arn": view.training_plan_arn, "efa_only": view.efa_only,
            "volume_size_gb": _volume_size(hp),
            "deep_health_checks": list(hp.get("OnStartDeepHealthChecks") or []) if hp else None,
        }
        news: dict[str, Any] = {
            "instance_type": g.instance_type, "capacity_type": g.capacity_type.value,
            "training_plan_arn": g.training_plan_arn, "efa_only": g.efa_only, "volume_size_gb": g.volume_size_gb,
            "deep_health_checks": default_health_checks(g, info),
        }
        if g.availability_zone not in zones:
            diff(f"{path}.availability_zone", [*base, "availability_zone"], view.availability_zone,
                 g.availability_zone, "replace-needed", "a group's zone is fixed: add a new group instead")
        for f, new in news.items():
            old = olds[f]
            if old is None and f in ("volume_size_gb", "deep_health_checks"):
                continue  # HyperPod did not say (not read): nothing to compare
            if not _same(old, new):
                diff(f"{path}.{f}", [*base, f], old, new, "replace-needed",
                     "fixed for the group's life: add a new group (and delete this one) instead")
        if g.instance_count != view.target_count:
            diff(f"{path}.instance_count", [*base, "instance_count"], view.target_count, g.instance_count, "update")
            scales.append((g.name, {"group": g.name, "instance_count": g.instance_count}, base))
    for name, args, base in adds:
        p.act(dp, "instance_groups", "instance_group.add", name, args, base)
    for name, args, base in scales:
        p.act(dp, "instance_groups", "instance_group.scale", name, args, base)
    for view in live.detail.instance_groups:
        if view.name in wanted:
            continue
        old = f"{view.target_count} x {view.instance_type} ({view.capacity_type}, {view.availability_zone})"
        if p.prune:
            diff(f"spec.instance_groups[{view.name}]", None, old, None, "delete", "pruned: drained, then deleted")
            p.act(dp, "prune", "instance_group.delete", view.name, {"group": view.name})
        else:
            p.warnings.append(f"instance group {view.name} is not in the Cluster document: kept (prune deletes it)")


def _diff_storage(p: _Plan, dp: DocumentPlan, spec: Any, live: Live, diff: Diff) -> None:
    base = {i.name: i for i in live.storage if i.origin == "cluster"}
    added = {i.name: i for i in live.storage if i.origin == "added"}
    if spec.storage.s3 != (DATA_VOLUME in base):
        diff("spec.storage.s3", ["spec", "storage", "s3"], DATA_VOLUME in base, spec.storage.s3, "replace-needed",
             "the shared data bucket volume is the cluster's data contract: made at create, kept for its life")
    fsx = base.get(FSX_VOLUME)
    want_fsx = spec.storage.fsx_lustre
    if want_fsx is not None and fsx is None:
        diff("spec.storage.fsx_lustre", ["spec", "storage", "fsx_lustre"], None,
             want_fsx.model_dump(mode="json"), "replace-needed",
             "the cluster's own FSx file system is made at create: add one under volumes (kind fsx_lustre) instead")
    elif want_fsx is not None and fsx is not None:
        for f in ("storage_capacity_gib", "throughput_mb_per_tib"):
            old, new = getattr(fsx, f), getattr(want_fsx, f)
            if old is not None and old != new:
                diff(f"spec.storage.fsx_lustre.{f}", ["spec", "storage", "fsx_lustre", f], old, new,
                     "replace-needed", "an FSx file system keeps its size and throughput here")
    elif want_fsx is None and fsx is not None:
        _prune_volume(p, dp, fsx, "spec.storage.fsx_lustre", diff)
    wanted: set[str] = set()
    for k, v in enumerate(spec.volumes):
        loc: list[str | int] = ["spec", "volumes", k]
        errors, normalized = st.check_add(v)
        if errors:
            raise InvalidInput.of([{"loc": _doc_loc(dp.index or 0, *loc, *e["loc"][1:]), "msg": e["msg"]}
                                   for e in errors])
        name = normalized["name"]
        wanted.add(name)
        path = f"spec.volumes[{name}]"
        item = added.get(name)
        if item is None:
            if name in base:
                raise InvalidInput.field(_doc_loc(dp.index or 0, *loc, "name"),
                                         f"{name} is the cluster's own volume; name this one differently")
            diff(path, loc, None, normalized, "create")
            p.act(dp, "storage", "storage.add", name, {"body": v.model_dump(mode="json", exclude_unset=True)}, loc)
            continue
        have = _volume_body(item)
        for f, new in normalized.items():
            if f == "name":
                continue
            old = have.get(f, "" if f == "prefix" else None)
            if not _same(old, new):
                diff(f"{path}.{f}", [*loc, f], old, new, "replace-needed",
                     "a volume is fixed once made: remove it and add it again (or add one under another name)")
    for name, item in added.items():
        if name not in wanted:
            _prune_volume(p, dp, item, f"spec.volumes[{name}]", diff)


def _prune_volume(p: _Plan, dp: DocumentPlan, item: StorageItem, path: str, diff: Diff) -> None:
    what = f"FSx for Lustre {item.file_system_id or ''}".strip() if item.kind == "fsx_lustre" else \
        f"s3://{item.bucket}/{item.prefix or ''}"
    if not p.prune:
        p.warnings.append(f"volume {item.name} ({what}) is not in the Cluster document: kept (prune removes it)")
        return
    note = "pruned: the file system and every file on it are deleted (admin)" if item.kind == "fsx_lustre" else \
        "pruned: the mount is removed; the bucket and its objects stay"
    diff(path, None, what, None, "delete", note)
    p.act(dp, "prune", "storage.remove", item.name,
          {"name": item.name, "kind": item.kind, "confirm": item.name if item.kind == "fsx_lustre" else None})


def _diff_features(p: _Plan, dp: DocumentPlan, spec: Any, live: Live, diff: Diff) -> None:
    patch: FeaturesPatch | None = spec.features
    if patch is None or not patch.model_dump(exclude_unset=True):
        return
    body = {"body": patch.model_dump(mode="json", exclude_unset=True)}
    if live.features is None:
        p.act(dp, "features", "features.update", "features", body, ["spec", "features"])
        return
    _check_prerequisites(dp, patch, live.features)
    try:
        changes = fdom.plan_changes(patch, fdom.live_state(live.features))
    except fdom.DependencyConflict as exc:
        loc = _doc_loc(dp.index or 0, "spec", "features", exc.feature, "enabled")
        raise Conflict(str(exc), errors=[{"loc": loc, "msg": str(exc)}]) from None
    if not changes:
        return
    sent = patch.model_dump(mode="json", exclude_unset=True)
    for c in changes:
        view: fdom.FeatureView = getattr(live.features, c.feature)
        base: list[str | int] = ["spec", "features", c.feature]
        mine = sent.get(c.feature) or {}
        if c.enable != view.enabled:
            note = None if c.reason == "requested" else c.reason
            diff(f"spec.features.{c.feature}.enabled", [*base, "enabled"] if "enabled" in mine else None,
                 view.enabled, c.enable, "update", note)
        elif c.enable and view.status is not fdom.FeatureStatus.ACTIVE and not c.settings:
            diff(f"spec.features.{c.feature}.enabled", [*base, "enabled"], f"true ({view.status.value})", True,
                 "update", f"enabled again: its status is {view.status.value}")
        for f, new in c.settings.items():
            old = getattr(view, f, None)
            if not _same(old, new):
                diff(f"spec.features.{c.feature}.{f}", [*base, f], old, new, "update")
    p.act(dp, "features", "features.update", "features", body, ["spec", "features"])


def _check_prerequisites(dp: DocumentPlan, patch: FeaturesPatch, doc: FeaturesDocument) -> None:
    """A document that turns a feature off while a feature it keeps on needs it says two things at once: the
    PATCH route would enable the prerequisite anyway, and the next plan would then want it off again."""
    sent = patch.model_dump(exclude_unset=True)
    def on(name: str) -> bool:
        mine = sent.get(name) or {}
        return bool(mine["enabled"]) if mine.get("enabled") is not None else getattr(doc, name).enabled
    for name in fdom.NAMES:
        if not on(name):
            continue
        for pre in fdom.prerequisites(name):
            if (sent.get(pre) or {}).get("enabled") is False:
                loc = _doc_loc(dp.index or 0, "spec", "features", pre, "enabled")
                msg = f"{name} is enabled and needs {pre}: set {pre} enabled: true (or leave {pre} out)"
                raise Conflict(msg, errors=[{"loc": loc, "msg": msg}], feature=pre, required_by=[name])


def _jobs_of(live: Live | None) -> dict[tuple[str, str], dict[str, Any]]:
    return live.jobs if live is not None else {}


def _diff_job(p: _Plan, i: int, doc: TrainingJobDocument, live: Live | None) -> None:
    m = doc.metadata
    dp = DocumentPlan(index=i, kind="TrainingJob", name=m.name, namespace=m.namespace, action="unchanged")
    p.docs.append(dp)
    body = doc.spec.submit_body(m.name, m.namespace)
    obj = _jobs_of(live).get((m.namespace, m.name))
    if obj is None:
        dp.action = "create"
        p.act(dp, "jobs", "job.submit", f"{m.namespace}/{m.name}", {"body": body.model_dump(mode="json",
                                                                                              exclude_none=True)},
              ["spec"])
        return
    have = job_spec(obj)
    exact = training.SUBMITTED_ANNOTATION in ((obj.get("metadata") or {}).get("annotations") or {})
    want = body.model_dump(mode="json", exclude={"name", "namespace"}, exclude_none=True)
    fields = sorted(set(want) | set(have)) if exact else sorted(have)
    defaults = training.JobSubmit.model_fields
    for f in fields:
        old = have.get(f, _default_json(defaults[f]) if f in defaults else None)
        new = want.get(f, _default_json(defaults[f]) if f in defaults else None)
        if not _same_json(old, new):
            dp.diffs.append(FieldDiff(path=f"spec.{f}", loc=["spec", f], old=old, new=new, change="replace-needed",
                                      note="a submitted job does not change: delete it (or prune) and apply "
                                           "again, or give it another name"))
    if not exact:
        dp.warnings.append("submitted before specs: its parameters, env and secrets are not on the job to compare")
    if dp.diffs:
        dp.action = "replace-needed"


def _default_json(f: Any) -> Any:
    if f.default_factory is not None:
        return f.default_factory()
    return f.default


def _same_json(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


ENDPOINT_SCALABLE = ("replicas", "autoscaling")


def _diff_endpoint(p: _Plan, i: int, doc: EndpointDocument, live: Live | None) -> None:
    m = doc.metadata
    dp = DocumentPlan(index=i, kind="Endpoint", name=m.name, action="unchanged")
    p.docs.append(dp)
    body = doc.spec.deploy_body(m.name)
    found = live.endpoints.get(m.name) if live is not None else None
    if found is None:
        dp.action = "create"
        p.act(dp, "endpoints", "endpoint.deploy", m.name, {"body": body.model_dump(mode="json", exclude_none=True)},
              ["spec"])
        return
    rec, view = found
    want = {k: v for k, v in body.normalized().items() if k != "name"}
    have = {k: v for k, v in rec.request.items() if k != "name" and v is not None}
    for f in sorted(set(want) | set(have)):
        if f in ENDPOINT_SCALABLE:
            continue
        if not _same_json(have.get(f), want.get(f)):
            dp.diffs.append(FieldDiff(path=f"spec.{f}", loc=["spec", f], old=have.get(f), new=want.get(f),
                                      change="replace-needed",
                                      note="only replicas and autoscaling bounds change on a live endpoint: delete "
                                           "it (or prune) and apply again, or give it another name"))
    patch: dict[str, Any] = {}
    auto_have, auto_want = have.get("autoscaling") or {}, want.get("autoscaling") or {}
    if bool(auto_have) != bool(auto_want) or bool(auto_have.get("keda")) != bool(auto_want.get("keda")):
        dp.diffs.append(FieldDiff(path="spec.autoscaling", loc=["spec", "autoscaling"], old=auto_have or None,
                                  new=auto_want or None, change="replace-needed",
                                  note="autoscaling is chosen at deploy"))
    elif auto_want:
        bounds_have = auto_have.get("keda") or auto_have
        bounds_want = auto_want.get("keda") or auto_want
        sub = ["autoscaling", "keda"] if auto_want.get("keda") else ["autoscaling"]
        for f, key in (("min", "autoscaling_min"), ("max", "autoscaling_max")):
            old, new = bounds_have.get(f, 1 if f == "min" else None), bounds_want.get(f, 1 if f == "min" else None)
            if old != new:
                dp.diffs.append(FieldDiff(path=f"spec.{'.'.join(sub)}.{f}", loc=["spec", *sub, f], old=old, new=new,
                                          change="update"))
                patch[key] = new
        rest = {k for k in set(bounds_have) | set(bounds_want) if k not in ("min", "max")}
        for f in sorted(rest):
            if not _same_json(bounds_have.get(f), bounds_want.get(f)):
                dp.diffs.append(FieldDiff(path=f"spec.{'.'.join(sub)}.{f}", loc=["spec", *sub, f],
                                          old=bounds_have.get(f), new=bounds_want.get(f), change="replace-needed",
                                          note="only the autoscaling bounds change on a live endpoint"))
    elif want.get("service") != "model_pool":
        old_r = view.replicas if view.live else int(have.get("replicas", 1))
        if old_r != want.get("replicas", 1):
            dp.diffs.append(FieldDiff(path="spec.replicas", loc=["spec", "replicas"], old=old_r,
                                      new=want.get("replicas", 1), change="update"))
            patch["replicas"] = want.get("replicas", 1)
    if any(f.change == "replace-needed" for f in dp.diffs):
        dp.action = "replace-needed"
    elif patch:
        dp.action = "update"
        p.act(dp, "endpoints", "endpoint.update", m.name, {"name": m.name, "body": patch}, ["spec"])


def _prune_workloads(p: _Plan, parsed: Parsed, live: Live | None) -> None:
    if live is None:
        return
    if parsed.jobs:
        named = {(d.metadata.namespace, d.metadata.name) for _, d in parsed.jobs}
        for (ns, name), _obj in sorted(live.jobs.items()):
            if (ns, name) in named:
                continue
            if p.prune:
                dp = DocumentPlan(index=None, kind="TrainingJob", name=name, namespace=ns, action="delete")
                p.docs.append(dp)
                p.act(dp, "prune", "job.delete", f"{ns}/{name}", {"name": name, "namespace": ns})
            else:
                p.warnings.append(f"job {ns}/{name} is not in the documents: kept (prune deletes it)")
    if parsed.endpoints:
        named_eps = {d.metadata.name for _, d in parsed.endpoints}
        for name in sorted(live.endpoints):
            if name in named_eps:
                continue
            if p.prune:
                dp = DocumentPlan(index=None, kind="Endpoint", name=name, action="delete")
                p.docs.append(dp)
                p.act(dp, "prune", "endpoint.delete", name, {"name": name})
            else:
                p.warnings.append(f"endpoint {name} is not in the documents: kept (prune deletes it)")


def _ordered(p: _Plan) -> None:
    """Actions in phase order; the pruning deletes workloads before the volumes and groups they use."""
    prune_order = {"endpoint.delete": 0, "job.delete": 1, "storage.remove": 2, "instance_group.delete": 3}
    keyed = sorted(enumerate(p.actions), key=lambda ia: (PHASES.index(ia[1].phase),
                                                         prune_order.get(ia[1].kind, 0), ia[0]))
    p.base_locs = {new: p.base_locs[old] for new, (old, _) in enumerate(keyed)}
    p.actions = [a for _, a in keyed]


# -- child operations: the use cases the routes call --------------------------------------------------------------
Result = Started | Plan | Operation | NoChange | FeaturesUnchanged


def run_child(deps: Deps, cluster: str, region: str, a: ChildAction, actor: Actor, key: str | None,
              dry_run: bool) -> Result:
    k, args = a.kind, a.args
    if k == "cluster.create":
        return cluster_create.create_cluster(deps, ClusterCreate.model_validate(args["body"]), actor, key, dry_run)
    if k == "instance_group.add":
        return group_add.add_instance_group(deps, cluster, region, InstanceGroupAdd.model_validate(args["body"]),
                                            actor, key, dry_run)
    if k == "instance_group.scale":
        return group_scale.scale_instance_group(deps, cluster, region, args["group"],
                                                InstanceGroupPatch(instance_count=args["instance_count"]), actor,
                                                key, dry_run)
    if k == "instance_group.delete":
        return group_delete.delete_instance_group(deps, cluster, region, args["group"], args["group"], actor, key,
                                                  dry_run)
    if k == "storage.add":
        return storage.add_storage(deps, cluster, region, StorageAdd.model_validate(args["body"]), actor, key,
                                   dry_run)
    if k == "storage.remove":
        return storage.remove_storage(deps, cluster, region, args["name"], args.get("confirm"), actor, key, dry_run)
    if k == "features.update":
        return features_logic.update_features(deps, cluster, region, FeaturesPatch.model_validate(args["body"]),
                                              actor, key, dry_run)
    if k == "job.submit":
        return jobs.submit_job(deps, cluster, region, training.JobSubmit.model_validate(args["body"]), actor, key,
                               dry_run)
    if k == "job.delete":
        return jobs.remove_job(deps, cluster, region, args["name"], args["namespace"], actor, key, dry_run)
    if k == "endpoint.deploy":
        return endpoints.deploy_endpoint(deps, cluster, region, EndpointCreate.model_validate(args["body"]), actor,
                                         key, dry_run)
    if k == "endpoint.update":
        return endpoints.update_endpoint(deps, cluster, region, args["name"],
                                         EndpointPatch.model_validate(args["body"]), actor, key, dry_run)
    if k == "endpoint.delete":
        return endpoints.delete_endpoint(deps, cluster, region, args["name"], actor, key, dry_run)
    raise ValueError(f"spec.apply has no child operation {k!r}")


def _started(result: Result) -> Operation | None:
    if isinstance(result, Started):
        return result.operation
    if isinstance(result, Operation):
        return result
    return None


METADATA_FIELDS = {"cluster.create": {"name", "region"}, "job.submit": {"name", "namespace"},
                   "endpoint.deploy": {"name"}}


def _child_locs(errors: list[dict[str, Any]], a: ChildAction, base: list[str | int]) -> list[dict[str, Any]]:
    """A child's field errors located in the document: body.x -> documents[i].<base>.x (names: metadata)."""
    out = []
    for e in errors:
        loc = list(e.get("loc") or [])
        if loc[:1] == ["body"] and len(loc) > 1 and loc[1] in METADATA_FIELDS.get(a.kind, set()):
            where = ["metadata", *loc[1:]]
        elif loc[:1] == ["body"]:
            where = [*base, *loc[1:]]
        else:
            where = list(base)
        out.append({"loc": _doc_loc(a.document if a.document is not None else 0, *where), "msg": e.get("msg", "")})
    return out


def _child_plans(deps: Deps, p: _Plan, actor: Actor) -> Cost:
    """Each child operation's dry-run plan, from the same use case (same checks, same 4xx). A check that an earlier
    phase of this apply may change (a group it adds, the cluster it creates) is a note, checked again on apply."""
    hourly = 0.0
    ops = [o for d in p.docs for o in d.operations]
    for n, a in enumerate(p.actions):
        child = next((o for o in ops if o.phase == a.phase and o.kind == a.kind and o.resource == a.resource
                      and o.plan is None and o.note is None), None)
        earlier = any(PHASES.index(b.phase) < PHASES.index(a.phase) for b in p.actions)
        if p.creating and a.kind != "cluster.create":
            if child is not None:
                child.note = "planned once the cluster exists (this apply creates it first)"
            continue
        try:
            result = run_child(deps, p.cluster, p.region, a, actor, None, dry_run=True)
        except Problem as exc:
            if isinstance(exc, Conflict) and exc.extra.get("running_operation"):
                if child is not None:
                    child.note = f"{exc.detail}; apply waits for it"
                continue
            if earlier and isinstance(exc, InvalidInput | Conflict):
                if child is not None:
                    child.note = f"checked again when applied, after the earlier phases: {exc.detail}"
                continue
            if exc.errors:
                mapped = _child_locs(exc.errors, a, p.base_locs.get(n, []))
                detail = "; ".join(f"{'.'.join(str(x) for x in e['loc'][1:])}: {e['msg']}" for e in mapped)
                raise type(exc)(f"{a.kind} {a.resource}: {detail}", errors=mapped, **exc.extra) from None
            raise
        if isinstance(result, Plan):
            if child is not None:
                child.plan = result
            hourly += result.cost.hourly
        elif child is not None:
            child.note = "nothing differs now: it starts nothing"
    return Cost(hourly=round(hourly, 2), monthly_estimate=round(hourly * HOURS_PER_MONTH, 2))


def plan(deps: Deps, req: SpecRequest, actor: Actor, *, child_plans: bool = True) -> tuple[SpecPlan, list[ChildAction]]:
    parsed = parse(req)
    rec, region = _resolve(deps, parsed)
    if rec is None and parsed.cluster_doc is None:
        raise InvalidInput.field(_doc_loc(0, "metadata", "cluster"),
                                 f"no cluster {parsed.cluster!r} in {region}; add its Cluster document to create it")
    live = read_live(deps, rec, want_jobs=bool(parsed.jobs), want_endpoints=bool(parsed.endpoints)) if rec else None
    p = _Plan(cluster=parsed.cluster, region=region, prune=req.prune, creating=rec is None)
    if live is not None:
        p.warnings += live.warnings
    if parsed.cluster_doc is not None:
        _diff_cluster(deps, p, parsed.cluster_doc[0], parsed.cluster_doc[1], live)
    for i, jdoc in parsed.jobs:
        _diff_job(p, i, jdoc, live)
    for i, edoc in parsed.endpoints:
        _diff_endpoint(p, i, edoc, live)
    _prune_workloads(p, parsed, live)
    _ordered(p)
    cost = _child_plans(deps, p, actor) if child_plans else Cost(hourly=0.0, monthly_estimate=0.0)
    summary = {k: 0 for k in ("create", "update", "unchanged", "replace-needed", "delete")}
    for d in p.docs:
        summary[d.action] += 1
        summary["delete"] += sum(1 for f in d.diffs if f.change == "delete")
    changed = bool(p.actions) or summary["replace-needed"] > 0
    out = SpecPlan(changed=changed, cluster=p.cluster, region=region, prune=req.prune, documents=p.docs,
                   summary=summary, cost=cost, warnings=p.warnings)
    return out, p.actions


# -- apply -------------------------------------------------------------------------------------------------------
@dataclass
class _ApplyAdmission:
    normalized: dict[str, Any]

    def normalize(self) -> dict[str, Any]:
        return self.normalized

    def claim(self, op: Operation) -> None:
        return None

    def unclaim(self, op: Operation) -> None:
        return None


def apply(deps: Deps, req: SpecRequest, principal: Principal, actor: Actor, key: str | None,
          dry_run: bool = False) -> Started | SpecPlan | SpecUnchanged:
    """One spec.apply operation running the child operations the plan lists; 200 `changed: false` when nothing
    differs; 409 for a field no operation can change (nothing starts); 403 when a child needs a stronger role."""
    splan, actions = plan(deps, req, actor, child_plans=dry_run)
    if dry_run:
        return splan
    if splan.replace_needed:
        errors: list[dict[str, Any]] = [
            {"loc": _doc_loc(d.index, *(f.loc or [])) if d.index is not None else ["body", "documents"],
             "msg": f"{f.path}: {f.old!r} -> {f.new!r} cannot change in place ({f.note})"}
            for d, f in splan.replace_needed]
        raise Conflict("; ".join(str(e["msg"]) for e in errors) + ". Nothing was started.", errors=errors)
    target = Target(cluster=splan.cluster, region=splan.region, resource=RESOURCE)
    request = {"cluster": splan.cluster, "region": splan.region, "prune": req.prune, "documents": req.documents}
    if not actions:
        again = replay_of(deps, kind=KIND, target=target, request=request, principal=actor, idempotency_key=key)
        return again or SpecUnchanged(plan=splan)
    need = max((action_role(a) for a in actions), default=Role.operator)
    for a in actions:
        if principal.role < action_role(a):
            raise Forbidden(f"{a.kind} {a.resource} needs the {action_role(a).name} role; you are "
                            f"{principal.role.name}. Nothing was started.")
    phases = tuple(ph for ph in PHASES if any(a.phase == ph for a in actions))
    normalized = {**request, "required_role": need.name, "actions": [a.model_dump(mode="json") for a in actions],
                  "summary": splan.summary}
    result = start_or_plan(deps, dry_run=False, kind=KIND, target=target, request=request, principal=actor,
                           idempotency_key=key, admission=_ApplyAdmission(normalized), steps=phases)
    assert isinstance(result, Started)
    return result


# -- spec.apply's steps ------------------------------------------------------------------------------------------
def run_phase(deps: Deps, op: Operation, phase: str, record: Callable[..., None]) -> Outcome:
    """Start this phase's child operations one at a time and watch each to its end (they share the cluster's
    lock); `record(**outputs)` keeps what was started even when the step then fails."""
    step = op.step(phase)
    out_key = f"{phase}_operations"
    actor = op.attempts[-1].principal if op.attempts else op.principal
    role = Role[actor.role] if actor.role and actor.role in Role.__members__ else Role.viewer
    cluster, region = str(op.target.cluster), str(op.target.region)
    children: dict[str, dict[str, Any]] = {str(k): dict(v) for k, v in (step.outputs.get(out_key) or {}).items()}
    actions = [(n, ChildAction.model_validate(a)) for n, a in enumerate(op.request.get("actions") or [])]
    mine = [(n, a) for n, a in actions if a.phase == phase]
    done = 0
    for n, a in mine:
        label = f"{a.kind} {a.resource}"
        entry = children.get(str(n))
        if entry is None:
            if role < action_role(a):
                raise PermanentStepError("Forbidden", f"{label} needs the {action_role(a).name} role; "
                                                      f"{actor.name} is {actor.role}")
            try:
                result = run_child(deps, cluster, region, a, actor, child_key(op.id, phase, n), dry_run=False)
            except Conflict as exc:
                if exc.extra.get("running_operation") or exc.extra.get("idempotency_key_in_progress"):
                    return Wait(message=f"{label}: waiting: {exc.detail}", outputs={out_key: children})
                raise PermanentStepError("Conflict", f"{label}: {exc.detail}") from None
            except Problem as exc:
                raise PermanentStepError(type(exc).__name__, f"{label}: {exc.detail}") from None
            child = _started(result)
            children[str(n)] = {"kind": a.kind, "resource": a.resource,
                                "operation_id": child.id if child else None, "attempt": step.attempts}
            record(**{out_key: children})
            if child is None:
                done += 1
                continue  # the live state already is what the document says
            return Wait(message=f"{label}: started {child.id}", outputs={out_key: children})
        if entry.get("operation_id") is None:
            done += 1
            continue
        child = deps.operations.get(str(entry["operation_id"]))
        if not child.status.terminal:
            return Wait(message=f"{label}: {child.id} {child.status.value}" + (f" at {child.phase}" if child.phase
                                                                                  else ""),
                        outputs={out_key: children})
        if child.status is OperationStatus.SUCCEEDED:
            done += 1
            continue
        if step.attempts > int(entry.get("attempt") or 0):  # this apply was retried: resume its failed child
            try:
                deps.operations.retry(child.id, actor)
            except Problem as exc:
                raise PermanentStepError(type(exc).__name__, f"{label}: retrying {child.id}: {exc.detail}") from None
            children[str(n)] = {**entry, "attempt": step.attempts}
            record(**{out_key: children})
            return Wait(message=f"{label}: retrying {child.id}", outputs={out_key: children})
        why = child.error.message if child.error else child.status.value
        raise PermanentStepError("ChildOperationFailed",
                                 f"{label}: operation {child.id} {child.status.value} at {child.phase}: {why}")
    return Done(message=f"{done} of {len(mine)} operation(s) done", outputs={out_key: children})


def export_request_documents(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Validate an export against the document models (a document it cannot read back is a bug)."""
    parsed, errors = parse_documents(docs)
    if errors:
        raise RuntimeError(f"the export does not validate: {errors}")
    return docs if parsed else []
