"""Type registry of the Kubernetes API double: built-in kinds plus kinds registered by CRDs."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True)
class ResourceType:
    """One served group/version/plural. Objects are stored per (group, plural), whatever the version."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    status: bool = False
    scale: bool = False
    spec_replicas_path: str = ".spec.replicas"
    status_replicas_path: str = ".status.replicas"
    label_selector_path: str = ""
    from_crd: str = ""  # name of the CRD that registered this type, "" for built-ins
    printer_columns: tuple[tuple[str, str, str, int], ...] = field(default=())  # (name, jsonPath, type, priority)
    verbs: tuple[str, ...] = ALL_VERBS

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def storage_key(self) -> tuple[str, str]:
        return (self.group, self.plural)

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def qualified(self) -> str:
        """`deployments.apps`, as Kubernetes spells a resource in error messages."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


def _t(
    gv: str, plural: str, kind: str, namespaced: bool = True, short: str = "", sub: str = "", cat: str = "",
    verbs: tuple[str, ...] = ALL_VERBS,
) -> ResourceType:
    group, _, version = gv.rpartition("/")
    return ResourceType(
        verbs=verbs,
        group=group,
        version=version,
        plural=plural,
        kind=kind,
        namespaced=namespaced,
        short_names=tuple(s for s in short.split(",") if s),
        categories=("all",) if cat else (),
        status="status" in sub,
        scale="scale" in sub,
    )


BUILTINS: tuple[ResourceType, ...] = (
    _t("v1", "namespaces", "Namespace", False, "ns", "status"),
    _t("v1", "pods", "Pod", True, "po", "status", cat="all"),
    _t("v1", "services", "Service", True, "svc", "status", cat="all"),
    _t("v1", "configmaps", "ConfigMap", True, "cm"),
    _t("v1", "secrets", "Secret"),
    _t("v1", "serviceaccounts", "ServiceAccount", True, "sa"),
    _t("v1", "persistentvolumes", "PersistentVolume", False, "pv", "status"),
    _t("v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, "pvc", "status"),
    _t("v1", "nodes", "Node", False, "no", "status"),
    _t("v1", "events", "Event", True, "ev"),
    _t("v1", "endpoints", "Endpoints", True, "ep"),
    _t("v1", "limitranges", "LimitRange", True, "limits"),
    _t("v1", "resourcequotas", "ResourceQuota", True, "quota", "status"),
    _t("apps/v1", "deployments", "Deployment", True, "deploy", "status,scale", cat="all"),
    _t("apps/v1", "daemonsets", "DaemonSet", True, "ds", "status", cat="all"),
    _t("apps/v1", "statefulsets", "StatefulSet", True, "sts", "status,scale", cat="all"),
    _t("apps/v1", "replicasets", "ReplicaSet", True, "rs", "status,scale", cat="all"),
    _t("apps/v1", "controllerrevisions", "ControllerRevision"),
    _t("batch/v1", "jobs", "Job", True, "", "status", cat="all"),
    _t("batch/v1", "cronjobs", "CronJob", True, "cj", "status", cat="all"),
    _t("rbac.authorization.k8s.io/v1", "roles", "Role"),
    _t("rbac.authorization.k8s.io/v1", "rolebindings", "RoleBinding"),
    _t("rbac.authorization.k8s.io/v1", "clusterroles", "ClusterRole", False),
    _t("rbac.authorization.k8s.io/v1", "clusterrolebindings", "ClusterRoleBinding", False),
    _t("storage.k8s.io/v1", "storageclasses", "StorageClass", False, "sc"),
    _t("storage.k8s.io/v1", "csidrivers", "CSIDriver", False),
    _t("storage.k8s.io/v1", "csinodes", "CSINode", False),
    _t("storage.k8s.io/v1", "volumeattachments", "VolumeAttachment", False, "", "status"),
    _t(
        "apiextensions.k8s.io/v1",
        "customresourcedefinitions",
        "CustomResourceDefinition",
        False,
        "crd,crds",
        "status",
    ),
    _t("scheduling.k8s.io/v1", "priorityclasses", "PriorityClass", False, "pc"),
    _t(
        "admissionregistration.k8s.io/v1",
        "mutatingwebhookconfigurations",
        "MutatingWebhookConfiguration",
        False,
    ),
    _t(
        "admissionregistration.k8s.io/v1",
        "validatingwebhookconfigurations",
        "ValidatingWebhookConfiguration",
        False,
    ),
    _t("coordination.k8s.io/v1", "leases", "Lease"),
    _t("policy/v1", "poddisruptionbudgets", "PodDisruptionBudget", True, "pdb", "status"),
    _t("networking.k8s.io/v1", "networkpolicies", "NetworkPolicy", True, "netpol"),
    _t("networking.k8s.io/v1", "ingresses", "Ingress", True, "ing", "status"),
    _t("networking.k8s.io/v1", "ingressclasses", "IngressClass", False),
    _t("discovery.k8s.io/v1", "endpointslices", "EndpointSlice"),
    _t("autoscaling/v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", True, "hpa", "status"),
    # stored as v2, also served as v1 (what `kubectl autoscale` creates), converted (conversion.py)
    _t("autoscaling/v1", "horizontalpodautoscalers", "HorizontalPodAutoscaler", True, "hpa", "status"),
    # what `kubectl auth can-i` and `kubectl auth whoami` create (answered from the cluster's RBAC, authz.py)
    _t("authorization.k8s.io/v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview", False, verbs=("create",)),
    _t("authorization.k8s.io/v1", "selfsubjectrulesreviews", "SelfSubjectRulesReview", False, verbs=("create",)),
    _t("authorization.k8s.io/v1", "subjectaccessreviews", "SubjectAccessReview", False, verbs=("create",)),
    _t("authentication.k8s.io/v1", "selfsubjectreviews", "SelfSubjectReview", False, verbs=("create",)),
)
REVIEWS = frozenset({"SelfSubjectAccessReview", "SelfSubjectRulesReview", "SubjectAccessReview", "SelfSubjectReview"})

# metrics-server's aggregated API (`kubectl top`): served while the metrics-server add-on runs (metrics.py)
METRICS = (
    _t("metrics.k8s.io/v1beta1", "nodes", "NodeMetrics", False, verbs=("get", "list")),
    _t("metrics.k8s.io/v1beta1", "pods", "PodMetrics", True, verbs=("get", "list")),
)


def types_from_crd(crd: dict[str, Any]) -> list[ResourceType]:
    """The served versions of a CustomResourceDefinition as resource types."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    out = []
    for ver in spec.get("versions") or []:
        if not ver.get("served", True):
            continue
        sub = ver.get("subresources") or {}
        scale = sub.get("scale")
        cols = tuple(
            (str(c.get("name", "")), str(c.get("jsonPath", "")), str(c.get("type", "string")),
             int(c.get("priority") or 0))
            for c in ver.get("additionalPrinterColumns") or []
        )
        out.append(
            ResourceType(
                group=spec.get("group", ""),
                version=ver["name"],
                plural=names.get("plural", ""),
                kind=names.get("kind", ""),
                namespaced=spec.get("scope", "Namespaced") == "Namespaced",
                short_names=tuple(names.get("shortNames") or ()),
                categories=tuple(names.get("categories") or ()),
                status="status" in sub,
                scale=scale is not None,
                spec_replicas_path=(scale or {}).get("specReplicasPath", ".spec.replicas"),
                status_replicas_path=(scale or {}).get("statusReplicasPath", ".status.replicas"),
                label_selector_path=(scale or {}).get("labelSelectorPath", ""),
                from_crd=crd.get("metadata", {}).get("name", ""),
                printer_columns=cols,
            )
        )
    return out


class TypeRegistry:
    """Thread-safe lookup of resource types by (group, version, plural) and by (apiVersion, kind)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._types: dict[tuple[str, str, str], ResourceType] = {}
        for rt in BUILTINS:
            self.register(rt)

    def register(self, rt: ResourceType) -> None:
        with self._lock:
            self._types[(rt.group, rt.version, rt.plural)] = rt

    def unregister(self, group: str, version: str, plural: str) -> None:
        with self._lock:
            self._types.pop((group, version, plural), None)

    def unregister_crd(self, crd_name: str) -> None:
        with self._lock:
            for key in [k for k, rt in self._types.items() if rt.from_crd == crd_name]:
                del self._types[key]

    def lookup(self, group: str, version: str, plural: str) -> ResourceType | None:
        with self._lock:
            return self._types.get((group, version, plural))

    def by_kind(self, api_version: str, kind: str) -> ResourceType | None:
        group, _, version = api_version.rpartition("/")
        with self._lock:
            for rt in self._types.values():
                if rt.group == group and rt.version == version and rt.kind == kind:
                    return rt
        return None

    def all(self) -> list[ResourceType]:
        with self._lock:
            return list(self._types.values())

    def groups(self) -> dict[str, list[str]]:
        """group -> versions, in registration order (the first is the preferred version)."""
        out: dict[str, list[str]] = {}
        with self._lock:
            for rt in self._types.values():
                versions = out.setdefault(rt.group, [])
                if rt.version not in versions:
                    versions.append(rt.version)
        return out

    def in_group_version(self, group: str, version: str) -> list[ResourceType]:
        with self._lock:
            return [rt for rt in self._types.values() if rt.group == group and rt.version == version]
