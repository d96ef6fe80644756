"""Spec documents against the live state: each document validated by its route's models, diffed field by field
(create, update old -> new, unchanged, replace-needed, and with prune the deletions), and the child operations an
apply would start, in phase order (functions.domain.specs.document.PHASES)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from functions.domain.clusters.models import InstanceGroupAdd, default_health_checks
from functions.domain.clusters.record import ClusterRecord
from functions.domain.errors import Conflict, InvalidInput
from functions.domain.features import changes as fchg
from functions.domain.features import document as fdom
from functions.domain.features.changes import FeaturesPatch
from functions.domain.features.document import FeaturesDocument
from functions.domain.manifests import DATA_VOLUME, FSX_VOLUME
from functions.domain.specs.document import (
    PHASES,
    AnyDocument,
    ChildAction,
    ChildOperation,
    ClusterDocument,
    DocumentPlan,
    EndpointDocument,
    FieldDiff,
    SpecRequest,
    TrainingJobDocument,
    parse_documents,
    target_of,
)
from functions.domain.storage import volumes as st
from functions.domain.storage.volumes import StorageItem
from functions.logic.deps import Deps
from functions.logic.specs.live import Live, group_view, volume_body, volume_size


# -- documents -----------------------------------------------------------------------------------------------
@dataclass
class Parsed:
    cluster: str
    region: str | None
    docs: list[AnyDocument]
    cluster_doc: tuple[int, ClusterDocument] | None = None
    jobs: list[tuple[int, TrainingJobDocument]] = field(default_factory=list)
    endpoints: list[tuple[int, EndpointDocument]] = field(default_factory=list)


def doc_loc(i: int, *path: str | int) -> list[str | int]:
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
            errors.append({"loc": doc_loc(i, "metadata", field_), "msg": (
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
            errors.append({"loc": doc_loc(i, "metadata", "name"),
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
        errors.append({"loc": doc_loc(second[1], "metadata", "region"),
                       "msg": f"the documents name regions {', '.join(sorted(regions))}: one cluster, one region"})
    if errors:
        raise InvalidInput.of(errors)
    out.region = next(iter(regions), None)
    return out


def resolve(deps: Deps, parsed: Parsed) -> tuple[ClusterRecord | None, str]:
    """The cluster's record (None: the Cluster document creates it) and its region."""
    if parsed.region:
        return deps.records.load(parsed.region, parsed.cluster), parsed.region
    matches = deps.records.named(parsed.cluster)
    if len(matches) > 1:
        raise InvalidInput.field(doc_loc(0, "metadata", "region"), (
            f"{parsed.cluster!r} exists in {', '.join(r.region for r in matches)}; say which region"))
    if not matches:
        raise InvalidInput.field(doc_loc(0, "metadata", "cluster"), (
            f"no cluster named {parsed.cluster!r}; add its Cluster document to create it"))
    return matches[0], matches[0].region


# -- the diff ---------------------------------------------------------------------------------------------------
@dataclass
class PlanBuilder:
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


def diff_cluster(deps: Deps, p: PlanBuilder, i: int, doc: ClusterDocument, live: Live | None) -> None:
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


def _diff_groups(deps: Deps, p: PlanBuilder, dp: DocumentPlan, spec: Any, live: Live, diff: Diff) -> None:
    region = live.rec.region
    wanted = {g.name for g in spec.instance_groups}
    adds, scales = [], []
    for k, g in enumerate(spec.instance_groups):
        base: list[str | int] = ["spec", "instance_groups", k]
        path = f"spec.instance_groups[{g.name}]"
        view = group_view(live, g.name)
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
            "volume_size_gb": volume_size(hp),
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


def _diff_storage(p: PlanBuilder, dp: DocumentPlan, spec: Any, live: Live, diff: Diff) -> None:
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
            raise InvalidInput.of([{"loc": doc_loc(dp.index or 0, *loc, *e["loc"][1:]), "msg": e["msg"]}
                                   for e in errors])
        name = normalized["name"]
        wanted.add(name)
        path = f"spec.volumes[{name}]"
        item = added.get(name)
        if item is None:
            if name in base:
                raise InvalidInput.field(doc_loc(dp.index or 0, *loc, "name"),
                                         f"{name} is the cluster's own volume; name this one differently")
            diff(path, loc, None, normalized, "create")
            p.act(dp, "storage", "storage.add", name, {"body": v.model_dump(mode="json", exclude_unset=True)}, loc)
            continue
        have = volume_body(item)
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


def _prune_volume(p: PlanBuilder, dp: DocumentPlan, item: StorageItem, path: str, diff: Diff) -> None:
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


def _diff_features(p: PlanBuilder, dp: DocumentPlan, spec: Any, live: Live, diff: Diff) -> None:
    patch: FeaturesPatch | None = spec.features
    if patch is None or not patch.model_dump(exclude_unset=True):
        return
    body = {"body": patch.model_dump(mode="json", exclude_unset=True)}
    if live.features is None:
        p.act(dp, "features", "features.update", "features", body, ["spec", "features"])
        return
    _check_prerequisites(dp, patch, live.features)
    try:
        changes = fchg.plan_changes(patch, fdom.live_state(live.features))
    except fchg.DependencyConflict as exc:
        loc = doc_loc(dp.index or 0, "spec", "features", exc.feature, "enabled")
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
                loc = doc_loc(dp.index or 0, "spec", "features", pre, "enabled")
                msg = f"{name} is enabled and needs {pre}: set {pre} enabled: true (or leave {pre} out)"
                raise Conflict(msg, errors=[{"loc": loc, "msg": msg}], feature=pre, required_by=[name])


def ordered(p: PlanBuilder) -> None:
    """Actions in phase order; the pruning deletes workloads before the volumes and groups they use."""
    prune_order = {"endpoint.delete": 0, "job.delete": 1, "storage.remove": 2, "instance_group.delete": 3}
    keyed = sorted(enumerate(p.actions), key=lambda ia: (PHASES.index(ia[1].phase),
                                                         prune_order.get(ia[1].kind, 0), ia[0]))
    p.base_locs = {new: p.base_locs[old] for new, (old, _) in enumerate(keyed)}
    p.actions = [a for _, a in keyed]
