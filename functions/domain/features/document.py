"""Managed features, the read side: the features document `GET /v1/clusters/{cluster}/features` answers, built
purely from what an adapter read (`FeatureInputs`, or a stored projection and the few live reads over it:
`FeatureVolatile`), and the live state a PATCH is compared with (`live_state`). The graph (names, what each needs,
what each is made of: `feature_graph`) is re-exported here.

A feature is a switch in the UI, a field of `GET|PATCH /v1/clusters/{cluster}/features` and a step of
`features.update`; what a PATCH changes is decided in `functions.domain.features.changes`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

from functions.domain.feature_graph import (  # noqa: F401  (the graph, re-exported: one import for callers)
    CHECKPOINT_PREFIX,
    CHECKPOINT_SA,
    FEATURES,
    INFERENCE_OPERATOR_SA,
    NAMES,
    OBSERVABILITY_SA,
    ORDER,
    ROLE_ARN_ANNOTATION,
    S3_CSI_SA,
    STEPS,
    TLS_PREFIX,
    TRAINING_OPERATOR_SA,
    Feature,
    FeatureStatus,
    ServiceAccountRef,
    _topo,
    dependants,
    disable_step,
    prerequisites,
)
from functions.domain.features import kuberay
from functions.domain.features.changes import LiveFeature
from functions.domain.manifests import POOL_GROUP_LABEL


# -- the features document (GET), built purely from what an adapter read -------------------------
class ChainLink(BaseModel):
    name: str = Field(description="service_account | annotation | role | policy | trust")
    intact: bool
    detail: str | None = None


class IdentityView(BaseModel):
    """Tiered checkpointing's identity chain, link by link."""

    service_account: str
    role: str
    role_arn: str | None = None
    bucket: str
    prefix: str
    links: list[ChainLink]


class NodePoolView(BaseModel):
    name: str
    instance_groups: list[str]
    nodes: int = Field(description="Nodes Karpenter launched from this pool")
    cpu_limit: str | None = None


class FeatureView(BaseModel):
    title: str = Field(default="", description="What the UI calls it")
    summary: str = Field(default="", description="What it gives, one line")
    enabled: bool
    status: FeatureStatus
    reason: str | None = Field(default=None, description="Why DEGRADED (the missing part, AWS's message)")
    version: str | None = None
    depends_on: list[str] = Field(default_factory=list)
    required_by: list[str] = Field(default_factory=list, description="Enabled features that need this one")
    memory_percent: int | None = None
    identity: IdentityView | None = None
    instance_groups: list[str] | None = None
    node_pools: list[NodePoolView] | None = None
    cpu_limit: int | None = None
    consolidate_after: str | None = None
    disruption_budget: str | None = None
    read_at: str | None = Field(
        default=None, description="When the state behind it was last read in full (HyperPod, the add-ons present, "
                                  "Karpenter's nodes and the KubeRay operator are read at every request); "
                                  "?refresh=true reads it all now")


class FeaturesDocument(BaseModel):
    """GET /v1/clusters/{cluster}/features: one entry per feature, read live from AWS and Kubernetes."""

    training_operator: FeatureView
    inference_operator: FeatureView
    tiered_checkpointing: FeatureView
    autoscaling: FeatureView
    observability: FeatureView
    kuberay_operator: FeatureView
    cert_manager: FeatureView
    pod_identity_agent: FeatureView
    s3_csi: FeatureView
    fsx_csi: FeatureView
    metrics_server: FeatureView


class FeaturesUnchanged(BaseModel):
    """A PATCH equal to the live state: nothing starts."""

    changed: Literal[False] = False
    features: FeaturesDocument


@dataclass(frozen=True)
class FeatureInputs:
    """What an adapter read for one cluster (one call per kind); `document` turns it into the view."""

    addons: Mapping[str, Mapping[str, Any]]  # add-on name -> DescribeAddon
    associations: tuple[tuple[str, str], ...]  # (namespace, service account) with a Pod Identity association
    hyperpod: Mapping[str, Any] | None  # HyperPod DescribeCluster
    checkpoint_role: Mapping[str, Any] | None  # {"Arn", "AssumeRolePolicyDocument", "policy": doc or None}
    service_account: Mapping[str, Any] | None  # the checkpoint service account
    issuer: str | None  # the EKS OIDC issuer
    node_pools: tuple[Mapping[str, Any], ...] = ()
    node_classes: tuple[Mapping[str, Any], ...] = ()
    nodes: tuple[Mapping[str, Any], ...] = ()
    kube_error: str | None = None
    kuberay_deployment: Mapping[str, Any] | None = None  # the KubeRay operator's Deployment
    kuberay_served: tuple[str, ...] = ()  # the resources the API serves under ray.io/v1 (discovery)
    rayjobs: tuple[str, ...] = ()  # "<namespace>/<name>" of every RayJob (a disable refuses while any exists)
    kube_endpoint: str | None = None  # where a later read reaches Kubernetes (EKS endpoint and CA, kept with it)
    kube_ca: str | None = None


@dataclass(frozen=True)
class FeatureVolatile:
    """What a read takes live over a stored projection of FeatureInputs: the few things that move on their own."""

    addon_names: frozenset[str]  # ListAddons: an add-on made or removed outside PodStart shows here
    hyperpod: Mapping[str, Any] | None  # HyperPod DescribeCluster: status, tiered storage, autoscaling
    nodes: tuple[Mapping[str, Any], ...] | None = None  # Karpenter's nodes (None: not read)
    kuberay_deployment: Mapping[str, Any] | None = None
    kuberay_read: bool = False
    kube_error: str | None = None


_ADDON_STATUS = {"CREATING": FeatureStatus.CREATING, "ACTIVE": FeatureStatus.ACTIVE,
                 "UPDATING": FeatureStatus.UPDATING, "DELETING": FeatureStatus.DELETING}


def _addon_view(f: Feature, inp: FeatureInputs) -> FeatureView:
    a = inp.addons.get(str(f.addon))
    if a is None:
        return FeatureView(enabled=False, status=FeatureStatus.DISABLED)
    raw = str(a.get("status"))
    status = _ADDON_STATUS.get(raw, FeatureStatus.DEGRADED)
    reason = None
    if status is FeatureStatus.DEGRADED:
        issues = "; ".join(i.get("message", "") for i in (a.get("health") or {}).get("issues", []))
        reason = f"add-on {f.addon} is {raw}" + (f": {issues}" if issues else "")
    elif f.pod_identity and f.role and status is FeatureStatus.ACTIVE and \
            (f.pod_identity.namespace, f.pod_identity.name) not in inp.associations:
        status, reason = FeatureStatus.DEGRADED, (f"missing link: Pod Identity association for "
                                                  f"{f.pod_identity.namespace}/{f.pod_identity.name}")
    return FeatureView(enabled=status is not FeatureStatus.DELETING, status=status, reason=reason,
                       version=a.get("addonVersion"))


def _json(doc: Any) -> Any:
    import json
    import urllib.parse

    if isinstance(doc, str):
        return json.loads(urllib.parse.unquote(doc))
    return doc


def chain_links(inp: FeatureInputs, bucket: str, prefix: str) -> list[ChainLink]:
    sa_ref = CHECKPOINT_SA
    role = inp.checkpoint_role
    sa = inp.service_account
    role_arn = str(role.get("Arn")) if role else None
    annotation = ((sa or {}).get("metadata") or {}).get("annotations", {}).get(ROLE_ARN_ANNOTATION)
    policy: dict[str, Any] = _json(role.get("policy")) if role and role.get("policy") else {}
    scoped = bool(policy) and all(
        r != "*" and not str(a).endswith(":*")
        for st in policy.get("Statement", []) for r in _as_list(st.get("Resource"))
        for a in _as_list(st.get("Action"))) and any(
        str(r).endswith(f":::{bucket}/{prefix}*") for st in policy.get("Statement", [])
        for r in _as_list(st.get("Resource")))
    trust_ok = False
    if role and inp.issuer:
        host = inp.issuer.removeprefix("https://")
        for st in _json(role.get("AssumeRolePolicyDocument") or {}).get("Statement", []):
            eq = (st.get("Condition") or {}).get("StringEquals") or {}
            if (eq.get(f"{host}:sub") == f"system:serviceaccount:{sa_ref.namespace}:{sa_ref.name}"
                    and eq.get(f"{host}:aud") == "sts.amazonaws.com"):
                trust_ok = True
    return [
        ChainLink(name="service_account", intact=sa is not None,
                  detail=f"{sa_ref.namespace}/{sa_ref.name}" if sa else "missing"),
        ChainLink(name="annotation", intact=bool(role_arn) and annotation == role_arn,
                  detail=f"{ROLE_ARN_ANNOTATION}={annotation}" if annotation else "missing"),
        ChainLink(name="role", intact=role is not None, detail=role_arn or "missing"),
        ChainLink(name="policy", intact=scoped,
                  detail=f"s3://{bucket}/{prefix}" if scoped
                  else ("not scoped to the prefix" if policy else "missing")),
        ChainLink(name="trust", intact=trust_ok,
                  detail="OIDC sub and aud pinned to the service account" if trust_ok else "missing or too wide"),
    ]


def _as_list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else [v]


def _checkpointing_view(inp: FeatureInputs, role_name: str, bucket: str, prefix: str) -> FeatureView:
    hp = inp.hyperpod or {}
    cfg = hp.get("TieredStorageConfig") or {}
    on = str(cfg.get("Mode", "")).lower() == "enable"
    links = chain_links(inp, bucket, prefix)
    sa = CHECKPOINT_SA
    identity = IdentityView(service_account=f"{sa.namespace}/{sa.name}", role=role_name,
                            role_arn=str(inp.checkpoint_role["Arn"]) if inp.checkpoint_role else None,
                            bucket=bucket, prefix=prefix, links=links)
    broken = [link.name for link in links if not link.intact]
    present = [link.name for link in links if link.intact]
    updating = hp.get("ClusterStatus") == "Updating"
    if on:
        if inp.kube_error and broken:
            status, reason = FeatureStatus.DEGRADED, f"Kubernetes could not be read: {inp.kube_error}"
        elif broken:
            status = FeatureStatus.CREATING if updating else FeatureStatus.DEGRADED
            reason = f"missing link: {', '.join(broken)}"
        else:
            status, reason = (FeatureStatus.UPDATING if updating else FeatureStatus.ACTIVE), None
        return FeatureView(enabled=True, status=status, reason=reason,
                           memory_percent=cfg.get("InstanceMemoryAllocationPercentage"), identity=identity)
    if updating and present:
        return FeatureView(enabled=False, status=FeatureStatus.DELETING, identity=identity)
    if present:
        return FeatureView(enabled=False, status=FeatureStatus.DEGRADED, identity=identity,
                           reason=f"left behind while off: {', '.join(present)} (disable again to remove)")
    return FeatureView(enabled=False, status=FeatureStatus.DISABLED, identity=identity)


_AUTOSCALING_STATUS = {"Creating": FeatureStatus.CREATING, "InService": FeatureStatus.ACTIVE,
                       "Deleting": FeatureStatus.DELETING, "Failed": FeatureStatus.DEGRADED}


def _autoscaling_view(inp: FeatureInputs) -> FeatureView:
    hp = inp.hyperpod or {}
    cfg = hp.get("AutoScaling") or {}
    on = str(cfg.get("Mode", "")).lower() == "enable"
    classes = {str(c["metadata"]["name"]): list((c.get("spec") or {}).get("instanceGroups") or [])
               for c in inp.node_classes}
    pools = []
    for p in inp.node_pools:
        name = str(p["metadata"]["name"])
        ref = (((p.get("spec") or {}).get("template") or {}).get("spec") or {}).get("nodeClassRef") or {}
        launched = sum(1 for n in inp.nodes if (n.get("metadata") or {}).get("labels", {}).get(
            "karpenter.sh/nodepool") == name)
        pools.append(NodePoolView(name=name, instance_groups=classes.get(str(ref.get("name")), []), nodes=launched,
                                  cpu_limit=((p.get("spec") or {}).get("limits") or {}).get("cpu")))
    ours = [p for p in inp.node_pools
            if (p["metadata"].get("labels") or {}).get("app.kubernetes.io/managed-by") == "podstart"]
    groups = sorted(str((p["metadata"].get("labels") or {}).get(POOL_GROUP_LABEL)) for p in ours)
    first = ours[0]["spec"] if ours else {}
    disruption = first.get("disruption") or {}
    if not on:
        status = FeatureStatus.DELETING if cfg.get("Status") == "Deleting" else FeatureStatus.DISABLED
        return FeatureView(enabled=False, status=status, node_pools=pools, instance_groups=groups)
    status = _AUTOSCALING_STATUS.get(str(cfg.get("Status", "InService")), FeatureStatus.DEGRADED)
    reason = cfg.get("FailureMessage") if status is FeatureStatus.DEGRADED else None
    if status is FeatureStatus.ACTIVE and hp.get("ClusterStatus") == "Updating":
        status = FeatureStatus.UPDATING
    return FeatureView(
        enabled=True, status=status, reason=reason, node_pools=pools, instance_groups=groups,
        cpu_limit=int(first["limits"]["cpu"]) if (first.get("limits") or {}).get("cpu") else None,
        consolidate_after=disruption.get("consolidateAfter"),
        disruption_budget=((disruption.get("budgets") or [{}])[0]).get("nodes"))


def _kuberay_view(inp: FeatureInputs) -> FeatureView:
    """Enabled while its Deployment exists; ACTIVE once it is Available and the API serves RayJob."""
    dep = inp.kuberay_deployment
    if dep is None and inp.kube_error:
        return FeatureView(enabled=False, status=FeatureStatus.DEGRADED,
                           reason=f"Kubernetes could not be read: {inp.kube_error}")
    if dep is None:
        return FeatureView(enabled=False, status=FeatureStatus.DISABLED)
    version = str(((dep.get("metadata") or {}).get("labels") or {}).get("app.kubernetes.io/version") or "") or None
    if (dep.get("metadata") or {}).get("deletionTimestamp"):
        return FeatureView(enabled=False, status=FeatureStatus.DELETING, version=version)
    missing = [f"{p}.ray.io" for p in kuberay.CRD_PLURALS if p not in inp.kuberay_served]
    if kuberay.deployment_available(dep) and not missing:
        return FeatureView(enabled=True, status=FeatureStatus.ACTIVE, version=version)
    if missing and kuberay.deployment_available(dep):
        return FeatureView(enabled=True, status=FeatureStatus.DEGRADED, version=version,
                           reason=f"missing link: CRD {', '.join(missing)} (enable again to re-apply)")
    return FeatureView(enabled=True, status=FeatureStatus.CREATING, version=version,
                       reason=None if not missing else f"waiting for CRD {', '.join(missing)}")


def document(inp: FeatureInputs, *, checkpoint_role: str, bucket: str, prefix: str) -> FeaturesDocument:
    views: dict[str, FeatureView] = {}
    for name, f in FEATURES.items():
        if name == "tiered_checkpointing":
            v = _checkpointing_view(inp, checkpoint_role, bucket, prefix)
        elif name == "autoscaling":
            v = _autoscaling_view(inp)
        elif name == "kuberay_operator":
            v = _kuberay_view(inp)
        else:
            v = _addon_view(f, inp)
        views[name] = v
    enabled = [n for n, v in views.items() if v.enabled]
    for name, v in views.items():
        views[name] = v.model_copy(update={"title": FEATURES[name].title, "summary": FEATURES[name].summary,
                                           "depends_on": list(FEATURES[name].depends_on),
                                           "required_by": dependants(name, enabled)})
    return FeaturesDocument(**views)


def live_state(doc: FeaturesDocument) -> dict[str, LiveFeature]:
    """The live side of the diff: each feature's on/off, status and comparable settings."""
    out: dict[str, LiveFeature] = {}
    for name in NAMES:
        v: FeatureView = getattr(doc, name)
        settings: dict[str, Any] = {}
        if name == "tiered_checkpointing" and v.enabled:
            settings = {"memory_percent": v.memory_percent}
        elif name == "autoscaling" and v.enabled:
            settings = {"instance_groups": sorted(v.instance_groups or []), "cpu_limit": v.cpu_limit,
                        "consolidate_after": v.consolidate_after, "disruption_budget": v.disruption_budget}
        out[name] = LiveFeature(enabled=v.enabled, status=v.status, settings=settings)
    return out
