"""GET|PATCH /v1/clusters/{cluster}/features: the features document, and the diff contract over it.

The PATCH carries only what the caller changed. It is compared with the live document (read now,
not remembered): equal means `changed: false` and nothing starts; otherwise one `features.update`
operation whose steps are exactly the changes (functions.domain.features.changes.plan_changes), with the
prerequisites it enables on the way named in the request (`auto_enabled`) and in their steps.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import asdict, dataclass, fields, replace
from datetime import datetime
from typing import Any

from functions.domain import iam as iamdoc
from functions.domain.clusters.record import ClusterRecord, ClusterStatus
from functions.domain.errors import Conflict, InvalidInput
from functions.domain.features import changes as fchg
from functions.domain.features import document as fdom
from functions.domain.operations import Actor, Operation, Target, now_iso
from functions.domain.plans import Plan
from functions.logic.clusters.views import find_record
from functions.logic.deps import Deps
from functions.logic.plans import Started, replay_of, start_or_plan

KIND = "features.update"


def _read(deps: Deps, rec: ClusterRecord) -> tuple[fdom.FeaturesDocument, fdom.FeatureInputs]:
    if deps.features is None:
        raise RuntimeError("the API was built without a feature reader")
    inputs = deps.features.read(rec.region, rec.name, rec.eks_cluster_name, rec.hyperpod_cluster_name)
    doc = fdom.document(inputs, checkpoint_role=iamdoc.role_name(rec.name, rec.region, "checkpoint"),
                        bucket=deps.features.bucket, prefix=fdom.CHECKPOINT_PREFIX.format(cluster=rec.name))
    return doc, inputs


def get_features(deps: Deps, name: str, region: str | None) -> fdom.FeaturesDocument:
    """Read in full, now (a spec's plan and export: planned against the live state, and a dry run writes nothing)."""
    rec = find_record(deps, name, region)
    return _read(deps, rec)[0]


# -- GET .../features: a stored projection plus the few live reads that say what moves on its own ---------------
PROJECTION_PK = "FEATURES"  # sk: region#name, as the cluster records
MAX_AGE_S = 300.0  # older than this, the next GET reads in full (a change made outside PodStart shows within it)
_KEEP_S = 86_400  # a projection nobody reads any more leaves the table (DynamoDB TTL)
_MAX_BYTES = 300_000  # under DynamoDB's 400 KB item limit with room to spare
_SETTLED = (fdom.FeatureStatus.ACTIVE, fdom.FeatureStatus.DISABLED)
_SHAPE = ("TieredStorageConfig", "AutoScaling", "ClusterRole")  # HyperPod's parts the stored ones were read under


def read_features(deps: Deps, name: str, region: str | None, refresh: bool = False) -> fdom.FeaturesDocument:
    """The features document for GET: from the projection the last full read stored with the cluster's records,
    checked by the few reads that see what changes without PodStart (ListAddons, HyperPod's DescribeCluster,
    Karpenter's nodes, the KubeRay operator's Deployment), at most four calls side by side.

    A full read (and a new projection) instead when `refresh` asks for it, when there is none or it is older than
    MAX_AGE_S, when an operation on the cluster ran since it was read (whatever PodStart changes goes through one),
    when the live reads disagree with it (an add-on made or removed, HyperPod's storage or autoscaling changed),
    or when any feature is not at rest (ACTIVE or DISABLED): what moves, or is broken, is read in full."""
    rec = find_record(deps, name, region)
    if deps.features is None:
        raise RuntimeError("the API was built without a feature reader")
    now = time.time()
    stored = None if refresh else _usable(deps, rec, deps.state.get(*_key(rec)), now)
    if stored is not None:
        read_at, projected = stored
        inputs = _with_live(deps, rec, projected)
        if inputs is not None:
            doc = _document(deps, rec, inputs)
            if all(getattr(doc, n).status in _SETTLED for n in fdom.NAMES):
                return _stamped(doc, read_at)
    read_at = now_iso()
    doc, inputs = _read(deps, rec)
    _remember(deps, rec, read_at, inputs, now)
    return _stamped(doc, read_at)


def _key(rec: ClusterRecord) -> tuple[str, str]:
    return PROJECTION_PK, f"{rec.region}#{rec.name}"


def _document(deps: Deps, rec: ClusterRecord, inputs: fdom.FeatureInputs) -> fdom.FeaturesDocument:
    assert deps.features is not None
    return fdom.document(inputs, checkpoint_role=iamdoc.role_name(rec.name, rec.region, "checkpoint"),
                         bucket=deps.features.bucket, prefix=fdom.CHECKPOINT_PREFIX.format(cluster=rec.name))


def _stamped(doc: fdom.FeaturesDocument, read_at: str) -> fdom.FeaturesDocument:
    return doc.model_copy(update={n: getattr(doc, n).model_copy(update={"read_at": read_at}) for n in fdom.NAMES})


def _usable(deps: Deps, rec: ClusterRecord, body: dict[str, Any] | None,
            now: float) -> tuple[str, fdom.FeatureInputs] | None:
    """The stored projection and when it was read, if nothing since says it may be out of date."""
    if not body or not isinstance(body.get("read_at"), str):
        return None
    read_at = str(body["read_at"])
    try:
        age = now - datetime.fromisoformat(read_at.replace("Z", "+00:00")).timestamp()
        inputs = _inputs(body["inputs"])
    except (ValueError, TypeError, KeyError, AttributeError):
        return None  # written by another version: read in full
    if not 0 <= age <= MAX_AGE_S:
        return None
    ops, _ = deps.operations.list(cluster=rec.name, status=None, limit=20, token=None)  # the newest 20
    if any(op.target.region in (None, rec.region) and (not op.status.terminal or op.updated_at >= read_at)
           for op in ops):
        return None  # PodStart changed (or is changing) something on the cluster since
    return read_at, inputs


def _with_live(deps: Deps, rec: ClusterRecord, p: fdom.FeatureInputs) -> fdom.FeatureInputs | None:
    """The projection with the live reads laid over it; None when they disagree with what it was read under."""
    assert deps.features is not None
    autoscaling = str(((p.hyperpod or {}).get("AutoScaling") or {}).get("Mode", "")).lower() == "enable"
    live: fdom.FeatureVolatile = deps.features.read_live(
        rec.region, rec.eks_cluster_name, rec.hyperpod_cluster_name, p.kube_endpoint, p.kube_ca,
        nodes=autoscaling or bool(p.node_pools), operator=p.kuberay_deployment is not None)
    if live.kube_error or live.addon_names != frozenset(p.addons) or _shape(live.hyperpod) != _shape(p.hyperpod):
        return None
    return replace(p, hyperpod=live.hyperpod, nodes=p.nodes if live.nodes is None else _slim_nodes(live.nodes),
                   kuberay_deployment=live.kuberay_deployment if live.kuberay_read else p.kuberay_deployment)


def _shape(hp: Any) -> dict[str, Any]:
    return {k: (hp or {}).get(k) for k in _SHAPE}


def _slim_nodes(nodes: Any) -> tuple[dict[str, Any], ...]:
    """A node as the document counts it: the pool that launched it (a big cluster's nodes stay small)."""
    return tuple({"metadata": {"labels": {"karpenter.sh/nodepool": ((n.get("metadata") or {}).get("labels") or {})
                                          .get("karpenter.sh/nodepool")}}} for n in nodes)


def _remember(deps: Deps, rec: ClusterRecord, read_at: str, inputs: fdom.FeatureInputs, now: float) -> None:
    body = {"read_at": read_at, "inputs": asdict(replace(inputs, rayjobs=(), nodes=_slim_nodes(inputs.nodes)))}
    if len(json.dumps(body, default=str)) > _MAX_BYTES:
        return  # too big to keep: every GET reads in full
    try:
        deps.state.put(*_key(rec), body, ttl=int(now) + _KEEP_S)
    except Exception:  # a projection not kept costs the next read, never this one
        logging.getLogger(__name__).warning("features projection not stored", exc_info=True)


_TUPLES = ("node_pools", "node_classes", "nodes", "kuberay_served", "rayjobs")


def _inputs(raw: dict[str, Any]) -> fdom.FeatureInputs:
    known = {f.name for f in fields(fdom.FeatureInputs)}
    kw = {k: v for k, v in raw.items() if k in known}
    kw["associations"] = tuple(tuple(a) for a in kw.get("associations") or ())
    kw |= {k: tuple(kw[k]) for k in _TUPLES if k in kw}
    return fdom.FeatureInputs(**kw)


@dataclass
class FeaturesAdmission:
    request: dict[str, Any]

    def normalize(self) -> dict[str, Any]:
        return self.request

    def claim(self, op: Operation) -> None:
        return None

    def unclaim(self, op: Operation) -> None:
        return None


def _check_groups(patch: fchg.FeaturesPatch, inputs: fdom.FeatureInputs, rec: ClusterRecord) -> None:
    groups = (patch.autoscaling.instance_groups if patch.autoscaling else None) or []
    live = {g["InstanceGroupName"] for g in (inputs.hyperpod or {}).get("InstanceGroups", [])}
    for i, g in enumerate(groups):
        if g not in live:
            raise InvalidInput.field(
                ["body", "autoscaling", "instance_groups", i],
                f"{g!r} is not an instance group of {rec.hyperpod_cluster_name}: managed Karpenter scales HyperPod "
                f"instance groups only (never general EC2 capacity); groups: {', '.join(sorted(live)) or 'none'}")


def _check_rayjobs(changes: list[fchg.Change], inputs: fdom.FeatureInputs) -> None:
    """Disabling the KubeRay operator while RayJobs exist would strand them (nothing runs or deletes their pods):
    409 naming them, nothing changed."""
    if inputs.rayjobs and any(c.feature == "kuberay_operator" and not c.enable for c in changes):
        names = ", ".join(inputs.rayjobs[:10]) + (f" and {len(inputs.rayjobs) - 10} more"
                                                  if len(inputs.rayjobs) > 10 else "")
        msg = f"kuberay_operator runs RayJob {names}: delete the job(s) first (DELETE .../jobs/{{job}})"
        raise Conflict(msg, errors=[{"loc": ["body", "kuberay_operator", "enabled"], "msg": msg}],
                       feature="kuberay_operator", rayjobs=list(inputs.rayjobs))


def update_features(deps: Deps, name: str, region: str | None, patch: fchg.FeaturesPatch, actor: Actor,
                    key: str | None, dry_run: bool = False) -> Started | Plan | Operation | fdom.FeaturesUnchanged:
    """A dry run passes the same checks (422 for a group that is not HyperPod's, 409 for disabling a needed
    dependency or a cluster not ACTIVE), answers `changed: false` when nothing differs, else the plan of the
    steps the operation would run, from the live state read here (the features document's inputs)."""
    rec = find_record(deps, name, region)
    doc, inputs = _read(deps, rec)
    _check_groups(patch, inputs, rec)
    try:
        changes = fchg.plan_changes(patch, fdom.live_state(doc))
    except fchg.DependencyConflict as exc:
        raise Conflict(str(exc), errors=[{"loc": ["body", exc.feature, "enabled"], "msg": str(exc)}],
                       feature=exc.feature, required_by=exc.dependants) from None
    _check_rayjobs(changes, inputs)
    sent = patch.model_dump(mode="json", exclude_unset=True)
    target = Target(cluster=rec.name, region=rec.region, resource="features")
    replay = {"cluster": rec.name, "region": rec.region, "patch": sent}  # what a replay of the same key compares
    if not changes:
        # a replay of a key whose operation already made the change returns that operation
        again = None if dry_run else replay_of(deps, kind=KIND, target=target, request=replay, principal=actor,
                                               idempotency_key=key)
        return again.operation if again else fdom.FeaturesUnchanged(features=doc)
    if rec.status is not ClusterStatus.ACTIVE or not rec.hyperpod_cluster_name:
        raise Conflict(f"cluster {rec.name} is {rec.status.value}; features change only on an ACTIVE cluster")
    request = {
        **replay, "eks_cluster": rec.eks_cluster_name, "hyperpod_cluster": rec.hyperpod_cluster_name,
        "changes": {c.step: {"settings": dict(c.settings), "reason": c.reason} for c in changes},
        "auto_enabled": {c.feature: c.reason for c in changes if c.reason != "requested"},
    }
    assert deps.features is not None  # _read needed it
    return start_or_plan(deps, dry_run=dry_run, kind=KIND, target=target, request=replay, principal=actor,
                         idempotency_key=key, admission=FeaturesAdmission(request),
                         steps=tuple(c.step for c in changes),
                         facts={"inputs": inputs, "origin": rec.origin, "bucket": deps.features.bucket})
