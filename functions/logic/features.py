"""GET|PATCH /v1/clusters/{cluster}/features: the features document, and the diff contract over it.

The PATCH carries only what the caller changed. It is compared with the live document (read now,
not remembered): equal means `changed: false` and nothing starts; otherwise one `features.update`
operation whose steps are exactly the changes (functions.domain.features.document.plan_changes), with the
prerequisites it enables on the way named in the request (`auto_enabled`) and in their steps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from functions.domain import iam as iamdoc
from functions.domain.clusters.record import ClusterRecord, ClusterStatus
from functions.domain.errors import Conflict, InvalidInput
from functions.domain.features import document as fdom
from functions.domain.operations import Actor, Operation, Target
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
    rec = find_record(deps, name, region)
    return _read(deps, rec)[0]


@dataclass
class FeaturesAdmission:
    request: dict[str, Any]

    def normalize(self) -> dict[str, Any]:
        return self.request

    def claim(self, op: Operation) -> None:
        return None

    def unclaim(self, op: Operation) -> None:
        return None


def _check_groups(patch: fdom.FeaturesPatch, inputs: fdom.FeatureInputs, rec: ClusterRecord) -> None:
    groups = (patch.autoscaling.instance_groups if patch.autoscaling else None) or []
    live = {g["InstanceGroupName"] for g in (inputs.hyperpod or {}).get("InstanceGroups", [])}
    for i, g in enumerate(groups):
        if g not in live:
            raise InvalidInput.field(
                ["body", "autoscaling", "instance_groups", i],
                f"{g!r} is not an instance group of {rec.hyperpod_cluster_name}: managed Karpenter scales HyperPod "
                f"instance groups only (never general EC2 capacity); groups: {', '.join(sorted(live)) or 'none'}")


def _check_rayjobs(changes: list[fdom.Change], inputs: fdom.FeatureInputs) -> None:
    """Disabling the KubeRay operator while RayJobs exist would strand them (nothing runs or deletes their pods):
    409 naming them, nothing changed."""
    if inputs.rayjobs and any(c.feature == "kuberay_operator" and not c.enable for c in changes):
        names = ", ".join(inputs.rayjobs[:10]) + (f" and {len(inputs.rayjobs) - 10} more"
                                                  if len(inputs.rayjobs) > 10 else "")
        msg = f"kuberay_operator runs RayJob {names}: delete the job(s) first (DELETE .../jobs/{{job}})"
        raise Conflict(msg, errors=[{"loc": ["body", "kuberay_operator", "enabled"], "msg": msg}],
                       feature="kuberay_operator", rayjobs=list(inputs.rayjobs))


def update_features(deps: Deps, name: str, region: str | None, patch: fdom.FeaturesPatch, actor: Actor,
                    key: str | None, dry_run: bool = False) -> Started | Plan | Operation | fdom.FeaturesUnchanged:
    """A dry run passes the same checks (422 for a group that is not HyperPod's, 409 for disabling a needed
    dependency or a cluster not ACTIVE), answers `changed: false` when nothing differs, else the plan of the
    steps the operation would run, from the live state read here (the features document's inputs)."""
    rec = find_record(deps, name, region)
    doc, inputs = _read(deps, rec)
    _check_groups(patch, inputs, rec)
    try:
        changes = fdom.plan_changes(patch, fdom.live_state(doc))
    except fdom.DependencyConflict as exc:
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
