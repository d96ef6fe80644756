"""KEDA 2.17.1 (the version the HyperPod inference chart pins), installed once per cluster when an
endpoint asks for KEDA autoscaling and the cluster has none: its ScaledObject CRD (upstream, verbatim)
and the operator with its RBAC. An existing installation is never overwritten (the step checks first)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

VERSION = "2.17.1"
NAMESPACE = "keda"
IMAGE = f"ghcr.io/kedacore/keda:{VERSION}"
_LABELS = {"app.kubernetes.io/managed-by": "podstart", "app.kubernetes.io/name": "keda-operator",
           "app.kubernetes.io/version": VERSION}


def scaledobject_crd() -> dict[str, Any]:
    return json.loads((Path(__file__).parent / f"keda_v{VERSION}_scaledobjects.json").read_text())  # type: ignore[no-any-return]


def install_objects() -> list[dict[str, Any]]:
    meta = {"name": "keda-operator", "namespace": NAMESPACE, "labels": _LABELS}
    return [
        scaledobject_crd(),
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE, "labels": _LABELS}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
         "metadata": {"name": "keda-operator", "labels": _LABELS},
         "rules": [
             {"apiGroups": ["keda.sh"], "resources": ["scaledobjects", "scaledobjects/status",
                                                      "scaledobjects/finalizers"], "verbs": ["*"]},
             {"apiGroups": ["apps"], "resources": ["deployments", "deployments/scale", "statefulsets/scale"],
              "verbs": ["get", "list", "watch", "update", "patch"]},
             {"apiGroups": ["autoscaling"], "resources": ["horizontalpodautoscalers"], "verbs": ["*"]},
             {"apiGroups": [""], "resources": ["pods", "services", "configmaps", "secrets", "events"],
              "verbs": ["get", "list", "watch", "create", "patch"]},
         ]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": {"name": "keda-operator", "labels": _LABELS},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "keda-operator"},
         "subjects": [{"kind": "ServiceAccount", "name": "keda-operator", "namespace": NAMESPACE}]},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
         "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "keda-operator"}},
                  "template": {"metadata": {"labels": {"app": "keda-operator", **_LABELS}},
                               "spec": {"serviceAccountName": "keda-operator", "containers": [{
                                   "name": "keda-operator", "image": IMAGE,
                                   "args": ["--leader-elect", "--zap-log-level=info"],
                                   "env": [{"name": "WATCH_NAMESPACE", "value": ""},
                                           {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {
                                               "fieldPath": "metadata.namespace"}}}],
                                   "resources": {"requests": {"cpu": "100m", "memory": "128Mi"},
                                                 "limits": {"cpu": "1", "memory": "1Gi"}}}]}}}},
    ]
