"""The KubeRay operator as a managed feature: every object PodStart applies for it (server-side apply, field
manager `podstart`, no helm or kubectl), in apply order, and what its status is read from.

- CRDs: the upstream KubeRay v1.7.0 `rayclusters`, `rayjobs` and `rayservices` CRDs, unchanged, shipped as
  package data (`functions/domain/crds/*.json.gz`: the YAML of ray-project/kuberay
  `helm-chart/kuberay-operator/crds/` @ v1.7.0 as compact JSON, gzipped; a unit test compares them with the
  reference). They are too large for client-side apply's last-applied annotation; KubeRay's own docs install
  them with server-side apply, as PodStart does.
- The operator: namespace `kuberay-system`, a ServiceAccount, a ClusterRole with the rules of the upstream
  chart's `role.yaml` minus OpenShift's (routes, apiservers), its ClusterRoleBinding, the leader-election Role
  and RoleBinding in the namespace, and the Deployment (`quay.io/kuberay/operator:v1.7.0`, the image of the
  CRDs' release; the chart's defaults: one replica, Recreate, probes on :8080/metrics, non-root, read-only root
  file system, no privilege escalation, every capability dropped).

Disable removes the Deployment and RBAC and keeps the CRDs (as `helm uninstall` keeps a chart's `crds/`):
deleting a CRD deletes every RayJob, RayCluster and RayService in the cluster with it. The features workflow
refuses the disable (409) while RayJobs exist, naming them.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

VERSION = "v1.7.0"
IMAGE = f"quay.io/kuberay/operator:{VERSION}"
NAMESPACE = "kuberay-system"
NAME = "kuberay-operator"
LEADER_ELECTION = "kuberay-operator-leader-election"
CRD_PLURALS = ("rayclusters", "rayjobs", "rayservices")
CRD_NAMES = tuple(f"{p}.ray.io" for p in CRD_PLURALS)
RAYJOB = ("ray.io/v1", "RayJob")
RAYCLUSTER = ("ray.io/v1", "RayCluster")
DEPLOYMENT = ("apps/v1", "Deployment")
CRD_API = "apiextensions.k8s.io/v1"
LABELS = {"app.kubernetes.io/name": NAME, "app.kubernetes.io/instance": NAME,
          "app.kubernetes.io/component": NAME, "app.kubernetes.io/version": VERSION,
          "app.kubernetes.io/managed-by": "podstart"}
SELECTOR = {"app.kubernetes.io/name": NAME, "app.kubernetes.io/instance": NAME}

_ALL = ["create", "delete", "get", "list", "patch", "update", "watch"]
# The upstream chart's ClusterRole (ray-operator/config/rbac/role.yaml, v1.7.0) without the OpenShift rules.
CLUSTER_RULES: list[dict[str, Any]] = [
    {"apiGroups": [""], "resources": ["events", "pods/status", "services"], "verbs": _ALL},
    {"apiGroups": [""], "resources": ["pods"], "verbs": [*_ALL[:2], "deletecollection", *_ALL[2:]]},
    {"apiGroups": [""], "resources": ["pods/proxy", "services/status"], "verbs": ["get", "patch", "update"]},
    {"apiGroups": [""], "resources": ["pods/resize"], "verbs": ["patch"]},
    {"apiGroups": [""], "resources": ["secrets"], "verbs": ["create", "get", "list", "watch"]},
    {"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["create", "delete", "get", "list", "watch"]},
    {"apiGroups": [""], "resources": ["services/proxy"], "verbs": ["create", "get", "patch", "update"]},
    {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": _ALL},
    {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create", "get", "list", "update"]},
    {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["extensions", "networking.k8s.io"], "resources": ["ingresses"], "verbs": _ALL},
    {"apiGroups": ["gateway.networking.k8s.io"], "resources": ["gateways", "httproutes"],
     "verbs": ["create", "delete", "get", "list", "update", "watch"]},
    {"apiGroups": ["networking.k8s.io"], "resources": ["ingressclasses"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["networking.k8s.io"], "resources": ["networkpolicies"],
     "verbs": ["create", "delete", "get", "list", "update", "watch"]},
    {"apiGroups": ["ray.io"], "resources": ["rayclusters", "raycronjobs", "rayjobs", "rayservices"], "verbs": _ALL},
    {"apiGroups": ["ray.io"], "resources": ["rayclusters/finalizers", "raycronjobs/finalizers",
                                            "rayjobs/finalizers", "rayservices/finalizers"], "verbs": ["update"]},
    {"apiGroups": ["ray.io"], "resources": ["rayclusters/status", "raycronjobs/status", "rayjobs/status",
                                            "rayservices/status"], "verbs": ["get", "patch", "update"]},
    {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["rolebindings"],
     "verbs": ["create", "delete", "get", "list", "watch"]},
    {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"],
     "verbs": ["create", "delete", "get", "list", "update", "watch"]},
]
# Leader election, in the operator's namespace only (the chart's leader_election_role.yaml).
LEADER_RULES: list[dict[str, Any]] = [
    {"apiGroups": [""], "resources": ["configmaps"], "verbs": _ALL},
    {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": _ALL},
    {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]},
]


@cache
def _crd_bytes(plural: str) -> bytes:
    return (resources.files("functions.domain") / "crds" / f"kuberay_{VERSION}_{plural}.json.gz").read_bytes()


def crd(plural: str) -> dict[str, Any]:
    """The upstream CRD, as shipped (a fresh copy each call: callers may add labels)."""
    return json.loads(gzip.decompress(_crd_bytes(plural)))  # type: ignore[no-any-return]


def crds() -> list[dict[str, Any]]:
    return [crd(p) for p in CRD_PLURALS]


def _meta(name: str, namespace: str | None = None) -> dict[str, Any]:
    m: dict[str, Any] = {"name": name, "labels": dict(LABELS)}
    if namespace:
        m["namespace"] = namespace
    return m


def operator_objects() -> list[dict[str, Any]]:
    """Everything but the CRDs, in apply order (namespace first, Deployment last)."""
    sa = {"kind": "ServiceAccount", "name": NAME, "namespace": NAMESPACE}
    probe = {"httpGet": {"path": "/metrics", "port": "http"}, "initialDelaySeconds": 10, "periodSeconds": 5,
             "failureThreshold": 5}
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(NAMESPACE)},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(NAME, NAMESPACE)},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": _meta(NAME),
         "rules": CLUSTER_RULES},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": _meta(NAME),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": NAME}, "subjects": [sa]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": _meta(LEADER_ELECTION, NAMESPACE),
         "rules": LEADER_RULES},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": _meta(LEADER_ELECTION, NAMESPACE),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": LEADER_ELECTION},
         "subjects": [sa]},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta(NAME, NAMESPACE),
         "spec": {
             "replicas": 1, "strategy": {"type": "Recreate"}, "selector": {"matchLabels": dict(SELECTOR)},
             "template": {
                 "metadata": {"labels": {**SELECTOR, "app.kubernetes.io/component": NAME}},
                 "spec": {
                     "serviceAccountName": NAME,
                     "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
                     "containers": [{
                         "name": NAME, "image": IMAGE, "imagePullPolicy": "IfNotPresent",
                         "command": ["/manager"], "args": ["--enable-leader-election=true"],
                         "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                         "livenessProbe": probe, "readinessProbe": probe,
                         "resources": {"limits": {"cpu": "100m", "memory": "512Mi"},
                                       "requests": {"cpu": "100m", "memory": "512Mi"}},
                         "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                                             "capabilities": {"drop": ["ALL"]}},
                     }],
                 },
             },
         }},
    ]


def objects() -> list[dict[str, Any]]:
    """What enabling applies, in order: the CRDs, then the operator."""
    return [*crds(), *operator_objects()]


def removed_on_disable() -> list[dict[str, Any]]:
    """What disabling deletes, Deployment first (the CRDs and the namespace stay)."""
    return [o for o in reversed(operator_objects()) if o["kind"] != "Namespace"]


def ref(obj: dict[str, Any]) -> tuple[str, str, str, str | None]:
    m = obj["metadata"]
    return obj["apiVersion"], obj["kind"], m["name"], m.get("namespace")


def label(obj: dict[str, Any]) -> str:
    """How a plan names one object: 'Kubernetes <Kind>', '<namespace>/<name>' or '<name>'."""
    m = obj["metadata"]
    return f"{m['namespace']}/{m['name']}" if m.get("namespace") else m["name"]


def deployment_available(dep: Mapping[str, Any] | None) -> bool:
    if not dep:
        return False
    st = dep.get("status") or {}
    if (st.get("observedGeneration") or 0) < ((dep.get("metadata") or {}).get("generation") or 0):
        return False
    return any(c.get("type") == "Available" and c.get("status") == "True" for c in st.get("conditions") or [])


def crd_established(c: Mapping[str, Any] | None) -> bool:
    return bool(c) and any(x.get("type") == "Established" and x.get("status") == "True"
                           for x in ((c or {}).get("status") or {}).get("conditions") or [])
