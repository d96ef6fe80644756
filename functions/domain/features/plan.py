"""Plan for features.update: one block of changes per step the operation runs, in step order (disables
dependants first, then enables prerequisites first), from the live state admission read.

Admission (functions.logic.features) already diffed the PATCH with the live document
(`features.plan_changes`: which steps, which prerequisites come along) and put the steps in the request;
this planner says, step by step, which parts each one makes, changes or removes, with the same decisions
the steps take (`features.addon_action`, `features.same`, `features.checkpoint_percent`,
`features.autoscaling_groups`, the identity chain's links). `facts["inputs"]` is the FeatureInputs the
features document was built from (add-ons, Pod Identity associations, HyperPod, the checkpoint role and
service account, Karpenter's pools); `facts["origin"]` says whether PodStart created the EKS cluster
(its IAM OIDC provider exists then)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from functions.domain import iam as iamdoc
from functions.domain import manifests
from functions.domain.features import changes as fchg
from functions.domain.features import document as fdom
from functions.domain.features import kuberay
from functions.domain.plans import Change, Draft, create, delete, none, update
from functions.domain.plans.base import PlanInput

ADDON = "eks-addon"
ROLE = "AWS::IAM::Role"
ASSOCIATION = "AWS::EKS::PodIdentityAssociation"
HYPERPOD = "AWS::SageMaker::Cluster"


def _empty() -> fdom.FeatureInputs:
    return fdom.FeatureInputs(addons={}, associations=(), hyperpod=None, checkpoint_role=None,
                              service_account=None, issuer=None)


def plan_features_update(p: PlanInput) -> Draft:
    r = p.request
    inp: fdom.FeatureInputs = p.facts.get("inputs") or _empty()
    changes: list[Change] = []
    warnings: list[str] = []
    for step, change in (r.get("changes") or {}).items():
        feature = step.removeprefix("disable_")
        on = not step.startswith("disable_")
        settings: dict[str, Any] = dict(change.get("settings") or {})
        if feature == "tiered_checkpointing":
            made = (_checkpointing_on(p, inp, step, settings) if on else _checkpointing_off(p, inp, step))
        elif feature == "autoscaling":
            made = _autoscaling_on(p, inp, step, settings) if on else _autoscaling_off(p, inp, step)
        elif feature == "kuberay_operator":
            made = kuberay_on(inp, step) if on else kuberay_off(inp, step)
        else:
            made = _addon_on(p, inp, step, fdom.FEATURES[feature]) if on else _addon_off(p, inp, step,
                                                                                        fdom.FEATURES[feature])
        changes += made
        reason = change.get("reason") or "requested"
        if on and reason != "requested":
            warnings.append(f"{feature} is enabled first, automatically: {reason} (prerequisites come first, in "
                            f"dependency order)")
        if not on:
            warnings.append(f"disabling {feature} removes what PodStart made for it; workloads that use it stop "
                            "working")
    return Draft(changes=[c.model_copy(update={"action": "none"}) if c.step in p.skip_steps else c for c in changes],
                 warnings=warnings)


def ensure_changes(p: PlanInput, feature: str, step: str) -> list[Change]:
    """What a job's or an endpoint's operator step changes when its kind is not served: `ensure_feature` enables
    each feature of the chain (prerequisites first) as the features workflow does, so the same lines; those in
    place are `none`. `p.facts["feature_inputs"]` is what the features document reads (add-ons, associations)."""
    inp: fdom.FeatureInputs = p.facts.get("feature_inputs") or _empty()
    if feature == "kuberay_operator":
        return kuberay_on(inp, step)
    return [c for name in [*fdom.prerequisites(feature), feature] for c in _addon_on(p, inp, step, fdom.FEATURES[name])]


# -- the KubeRay operator (server-side apply, no add-on) --------------------------------------------
def kuberay_on(inp: fdom.FeatureInputs, step: str) -> list[Change]:
    """Every object the step applies, in order: a CRD the API already serves and the operator's objects while its
    Deployment exists are re-applied unchanged (`none`); the rest are created."""
    served = set(inp.kuberay_served)
    have = inp.kuberay_deployment is not None
    out: list[Change] = []
    for obj in kuberay.objects():
        kind, name = f"Kubernetes {obj['kind']}", kuberay.label(obj)
        if obj["kind"] == "CustomResourceDefinition":
            plural = obj["spec"]["names"]["plural"]
            out.append(none(kind, name, step, version=kuberay.VERSION) if plural in served
                       else create(kind, name, step, version=kuberay.VERSION, apply="server-side, field manager "
                                   "podstart"))
        elif have:
            out.append(none(kind, name, step))
        elif obj["kind"] == "Deployment":
            out.append(create(kind, name, step, image=kuberay.IMAGE, replicas=1))
        else:
            out.append(create(kind, name, step))
    return out


def kuberay_off(inp: fdom.FeatureInputs, step: str) -> list[Change]:
    have = inp.kuberay_deployment is not None
    out = [delete(f"Kubernetes {o['kind']}", kuberay.label(o), step) if have
           else none(f"Kubernetes {o['kind']}", kuberay.label(o), step, note="none to remove")
           for o in kuberay.removed_on_disable()]
    out += [none("Kubernetes CustomResourceDefinition", n, step, note="kept: deleting it would delete every Ray "
                 "object with it") for n in kuberay.CRD_NAMES]
    return out


# -- add-on features -------------------------------------------------------------------------------
def _has_association(inp: fdom.FeatureInputs, sa: fdom.ServiceAccountRef) -> bool:
    return (sa.namespace, sa.name) in inp.associations


def _addon_on(p: PlanInput, inp: fdom.FeatureInputs, step: str, f: fdom.Feature) -> list[Change]:
    r = p.request
    out: list[Change] = []
    if f.role and f.pod_identity:
        role = iamdoc.role_name(r["cluster"], r["region"], f.role)
        linked = _has_association(inp, f.pod_identity)
        sa = f"{f.pod_identity.namespace}/{f.pod_identity.name}"
        out.append(none(ROLE, role, step, note="in place (its policy is put back if it drifted)") if linked
                   else create(ROLE, role, step, trust="pods.eks.amazonaws.com", scoped_to=r["cluster"]))
        out.append(none(ASSOCIATION, sa, step) if linked else create(ASSOCIATION, sa, step, role=role))
        if f.name == "inference_operator":
            out.append(update("AWS::EC2::Subnet", "the EKS cluster's subnets", step,
                              add_tags="kubernetes.io/role/elb (public) or kubernetes.io/role/internal-elb "
                                       "(private) = 1, where missing"))
    found = inp.addons.get(str(f.addon))
    action = fchg.addon_action(found)
    if action == "create":
        extra = {"then": "recreated once the DELETING one is gone"} if found else {}
        out.append(create(ADDON, str(f.addon), step, **extra))
    elif found is not None and found.get("status") in ("DEGRADED", "CREATE_FAILED", "UPDATE_FAILED"):
        out.append(none(ADDON, str(f.addon), step, status=found.get("status"),
                        note="the step fails on a failed add-on: remove it first"))
    else:
        out.append(none(ADDON, str(f.addon), step, status=(found or {}).get("status"),
                        version=(found or {}).get("addonVersion")))
    return out


def _addon_off(p: PlanInput, inp: fdom.FeatureInputs, step: str, f: fdom.Feature) -> list[Change]:
    r = p.request
    found = inp.addons.get(str(f.addon))
    out = [delete(ADDON, str(f.addon), step) if found is not None and found.get("status") != "DELETING"
           else none(ADDON, str(f.addon), step, note="already gone" if found is None else "already DELETING")]
    if f.role and f.pod_identity:
        sa = f"{f.pod_identity.namespace}/{f.pod_identity.name}"
        out.append(delete(ASSOCIATION, sa, step) if _has_association(inp, f.pod_identity)
                   else none(ASSOCIATION, sa, step, note="none to remove"))
        out.append(delete(ROLE, iamdoc.role_name(r["cluster"], r["region"], f.role), step, if_present=True))
    return out


# -- tiered checkpointing --------------------------------------------------------------------------
def _links(p: PlanInput, inp: fdom.FeatureInputs) -> dict[str, bool]:
    r = p.request
    bucket = str(p.facts.get("bucket") or "")
    links = fdom.chain_links(inp, bucket, fdom.CHECKPOINT_PREFIX.format(cluster=r["cluster"]))
    return {link.name: link.intact for link in links}


def _checkpointing_on(p: PlanInput, inp: fdom.FeatureInputs, step: str, settings: Mapping[str, Any]) -> list[Change]:
    r = p.request
    links = _links(p, inp)
    sa = fdom.CHECKPOINT_SA
    role = iamdoc.role_name(r["cluster"], r["region"], "checkpoint")
    out: list[Change] = []
    if p.facts.get("origin") == "created":
        out.append(none("AWS::IAM::OIDCProvider", f"{r['cluster']}-oidc", step, note="made with the cluster"))
    else:
        out.append(create("AWS::IAM::OIDCProvider", "the EKS cluster's OIDC issuer", step, if_missing=True))
    prefix = fdom.CHECKPOINT_PREFIX.format(cluster=r["cluster"])
    if not links["role"]:
        out.append(create(ROLE, role, step, trust=f"OIDC, only {sa.namespace}/{sa.name}",
                          policy=f"checkpoints: s3 under {prefix}"))
    elif not (links["policy"] and links["trust"]):
        out.append(update(ROLE, role, step, fix=[n for n in ("policy", "trust") if not links[n]]))
    else:
        out.append(none(ROLE, role, step))
    if not links["service_account"]:
        out.append(create("Kubernetes ServiceAccount", f"{sa.namespace}/{sa.name}", step,
                          annotation=fdom.ROLE_ARN_ANNOTATION))
    elif not links["annotation"]:
        out.append(update("Kubernetes ServiceAccount", f"{sa.namespace}/{sa.name}", step,
                          annotation=fdom.ROLE_ARN_ANNOTATION))
    else:
        out.append(none("Kubernetes ServiceAccount", f"{sa.namespace}/{sa.name}", step))
    hp = inp.hyperpod or {}
    current = hp.get("TieredStorageConfig") or {}
    wanted = {"Mode": "Enable", "InstanceMemoryAllocationPercentage": fchg.checkpoint_percent(settings, current)}
    out.append(none(HYPERPOD, r["hyperpod_cluster"], step, TieredStorageConfig=wanted) if fchg.same(current, wanted)
               else update(HYPERPOD, r["hyperpod_cluster"], step, call="UpdateCluster", TieredStorageConfig=wanted,
                           takes="about 10 minutes"))
    return out


def _checkpointing_off(p: PlanInput, inp: fdom.FeatureInputs, step: str) -> list[Change]:
    r = p.request
    links = _links(p, inp)
    hp = inp.hyperpod or {}
    sa = fdom.CHECKPOINT_SA
    role = iamdoc.role_name(r["cluster"], r["region"], "checkpoint")
    on = fchg.same((hp.get("TieredStorageConfig") or {}).get("Mode"), "Enable")
    return [
        update(HYPERPOD, r["hyperpod_cluster"], step, call="UpdateCluster", TieredStorageConfig={"Mode": "Disable"})
        if on else none(HYPERPOD, r["hyperpod_cluster"], step, TieredStorageConfig={"Mode": "Disable"}),
        delete("Kubernetes ServiceAccount", f"{sa.namespace}/{sa.name}", step) if links["service_account"]
        else none("Kubernetes ServiceAccount", f"{sa.namespace}/{sa.name}", step, note="none to remove"),
        delete(ROLE, role, step) if links["role"] else none(ROLE, role, step, note="none to remove"),
    ]


# -- autoscaling -----------------------------------------------------------------------------------
def _pools(inp: fdom.FeatureInputs) -> dict[str, Mapping[str, Any]]:
    """PodStart's NodePools by the group they serve."""
    out: dict[str, Mapping[str, Any]] = {}
    for pool in inp.node_pools:
        labels = (pool.get("metadata") or {}).get("labels") or {}
        if labels.get("app.kubernetes.io/managed-by") == "podstart":
            out[str(labels.get(manifests.POOL_GROUP_LABEL))] = pool
    return out


def _pool_now(pool: Mapping[str, Any]) -> dict[str, Any]:
    spec = pool.get("spec") or {}
    disruption = spec.get("disruption") or {}
    cpu = (spec.get("limits") or {}).get("cpu")
    return {"cpu_limit": int(cpu) if cpu is not None else None, "consolidate_after": disruption.get("consolidateAfter"),
            "disruption_budget": ((disruption.get("budgets") or [{}])[0]).get("nodes")}


def _autoscaling_on(p: PlanInput, inp: fdom.FeatureInputs, step: str, settings: Mapping[str, Any]) -> list[Change]:
    r = p.request
    hp = inp.hyperpod or {}
    role = iamdoc.role_name(r["cluster"], r["region"], "autoscale")
    has_role = str(hp.get("ClusterRole") or "").endswith("/" + role)
    out = [none(ROLE, role, step, note="in place") if has_role
           else create(ROLE, role, step, trust="hyperpod.sagemaker.amazonaws.com", scoped_to=r["hyperpod_cluster"])]
    wanted = {"Mode": "Enable", "AutoScalerType": "Karpenter"}
    if fchg.same(hp.get("AutoScaling") or {}, wanted) and has_role:
        out.append(none(HYPERPOD, r["hyperpod_cluster"], step, AutoScaling=wanted))
    else:
        out.append(update(HYPERPOD, r["hyperpod_cluster"], step, call="UpdateCluster", AutoScaling=wanted,
                          ClusterRole=role, takes="about 10 minutes"))
    pools = _pools(inp)
    groups = fchg.autoscaling_groups(pools, settings)
    wanted_pool = fchg.pool_settings(settings)
    for g in groups:
        name = manifests.pool_name(g)
        if g not in pools:
            out += [create("Kubernetes HyperpodNodeClass", name, step, instance_groups=[g]),
                    create("Kubernetes NodePool", name, step, **wanted_pool)]
        elif _pool_now(pools[g]) != wanted_pool:
            out += [none("Kubernetes HyperpodNodeClass", name, step),
                    update("Kubernetes NodePool", name, step, **wanted_pool)]
        else:
            out += [none("Kubernetes HyperpodNodeClass", name, step), none("Kubernetes NodePool", name, step)]
    for gone in sorted(set(pools) - set(groups)):
        out += [delete("Kubernetes NodePool", manifests.pool_name(gone), step, group=gone),
                delete("Kubernetes HyperpodNodeClass", manifests.pool_name(gone), step, group=gone)]
    return out


def _autoscaling_off(p: PlanInput, inp: fdom.FeatureInputs, step: str) -> list[Change]:
    r = p.request
    hp = inp.hyperpod or {}
    out: list[Change] = []
    for g in sorted(_pools(inp)):
        out += [delete("Kubernetes NodePool", manifests.pool_name(g), step, group=g),
                delete("Kubernetes HyperpodNodeClass", manifests.pool_name(g), step, group=g)]
    on = fchg.same((hp.get("AutoScaling") or {}).get("Mode"), "Enable")
    out.append(update(HYPERPOD, r["hyperpod_cluster"], step, call="UpdateCluster", AutoScaling={"Mode": "Disable"})
               if on else none(HYPERPOD, r["hyperpod_cluster"], step, AutoScaling={"Mode": "Disable"}))
    out.append(delete(ROLE, iamdoc.role_name(r["cluster"], r["region"], "autoscale"), step, if_present=True))
    return out
