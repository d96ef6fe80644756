"""What EKS add-ons and HyperPod-managed features install in a cluster, as the embedded AWS puts it
into the embedded Kubernetes: namespaces, service accounts, controller Deployments (which the
workloads operator then makes ready) and the CRDs they serve.

`install(store, addon, version)` runs when an add-on reaches ACTIVE, `uninstall` when it is gone;
`install_karpenter` when HyperPod turns managed autoscaling on. Objects carry the labels EKS add-ons
carry (`app.kubernetes.io/managed-by: EKS`, `eks.amazonaws.com/addon`), so kubectl shows who made them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sandbox.kube.errors import ApiError
from sandbox.kube.store import ClusterStore

Obj = dict[str, Any]


@dataclass(frozen=True)
class Install:
    namespace: str
    deployments: tuple[str, ...]
    service_accounts: tuple[str, ...] = ()
    crds: tuple[tuple[str, str, str, str], ...] = ()  # (group, version, kind, plural), namespaced
    cluster_crds: tuple[tuple[str, str, str, str], ...] = field(default=())  # cluster-scoped


TRAINING_CRDS = (("sagemaker.amazonaws.com", "v1", "HyperPodPyTorchJob", "hyperpodpytorchjobs"),)
INFERENCE_CRDS = (
    ("inference.sagemaker.aws.amazon.com", "v1", "InferenceEndpointConfig", "inferenceendpointconfigs"),
    ("inference.sagemaker.aws.amazon.com", "v1", "JumpStartModel", "jumpstartmodels"),
    ("keda.sh", "v1alpha1", "ScaledObject", "scaledobjects"),
)
CERT_CRDS = (("cert-manager.io", "v1", "Certificate", "certificates"), ("cert-manager.io", "v1", "Issuer", "issuers"))
KARPENTER_CRDS = (
    ("karpenter.sh", "v1", "NodePool", "nodepools"),
    ("karpenter.sh", "v1", "NodeClaim", "nodeclaims"),
    ("karpenter.sagemaker.amazonaws.com", "v1", "HyperpodNodeClass", "hyperpodnodeclasses"),
)

INSTALLS: dict[str, Install] = {
    "cert-manager": Install("cert-manager", ("cert-manager", "cert-manager-cainjector", "cert-manager-webhook"),
                            ("cert-manager",), CERT_CRDS),
    "eks-pod-identity-agent": Install("kube-system", ("eks-pod-identity-agent",)),
    "aws-mountpoint-s3-csi-driver": Install("kube-system", ("s3-csi-controller",), ("s3-csi-driver-sa",)),
    "aws-fsx-csi-driver": Install("kube-system", ("fsx-csi-controller",), ("fsx-csi-controller-sa",)),
    "metrics-server": Install("kube-system", ("metrics-server",), ("metrics-server",)),
    "amazon-sagemaker-hyperpod-training-operator": Install(
        "aws-hyperpod", ("hp-training-operator-controller-manager",),
        ("hp-training-operator-controller-manager",), TRAINING_CRDS),
    "amazon-sagemaker-hyperpod-inference": Install(
        "hyperpod-inference-system",
        ("hyperpod-inference-operator-controller-manager", "keda-operator", "aws-load-balancer-controller"),
        ("hyperpod-inference-operator-controller-manager",), INFERENCE_CRDS),
    "amazon-sagemaker-hyperpod-observability": Install(
        "hyperpod-observability", ("hyperpod-observability-operator",),
        ("hyperpod-observability-operator-otel-collector",)),
}


def _labels(addon: str, version: str) -> dict[str, str]:
    return {"app.kubernetes.io/managed-by": "EKS", "eks.amazonaws.com/addon": addon,
            "app.kubernetes.io/version": version}


def crd(group: str, version: str, kind: str, plural: str, *, namespaced: bool = True,
        labels: dict[str, str] | None = None) -> Obj:
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}", "labels": labels or {}},
        "spec": {"group": group, "scope": "Namespaced" if namespaced else "Cluster",
                 "names": {"kind": kind, "plural": plural, "singular": kind.lower(), "listKind": kind + "List"},
                 "versions": [{"name": version, "served": True, "storage": True,
                               "subresources": {"status": {}},
                               "schema": {"openAPIV3Schema": {"type": "object",
                                                              "x-kubernetes-preserve-unknown-fields": True}}}]},
    }


def _ensure(store: ClusterStore, obj: Obj) -> None:
    meta = obj["metadata"]
    if store.get(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace")) is None:
        store.create(obj)


def install(store: ClusterStore, addon: str, version: str) -> None:
    spec = INSTALLS.get(addon)
    if spec is None:
        return
    labels = _labels(addon, version)
    _ensure(store, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": spec.namespace}})
    for g, v, k, p in spec.crds:
        if store.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", f"{p}.{g}") is None:
            store.create(crd(g, v, k, p, labels=labels))
    for sa in spec.service_accounts:
        _ensure(store, {"apiVersion": "v1", "kind": "ServiceAccount",
                        "metadata": {"name": sa, "namespace": spec.namespace, "labels": labels}})
    for name in spec.deployments:
        _ensure(store, {
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": spec.namespace, "labels": labels},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name, **labels}},
                                  "spec": {"containers": [{"name": "manager",
                                                           "image": f"public.ecr.aws/eks/{addon}:{version}"}]}}},
        })


def uninstall(store: ClusterStore, addon: str) -> None:
    """Remove what the add-on installed (its CRDs too: EKS deletes them with the add-on)."""
    spec = INSTALLS.get(addon)
    if spec is None:
        return
    for name in spec.deployments:
        store.delete("apps/v1", "Deployment", name, spec.namespace)
    for sa in spec.service_accounts:
        store.delete("v1", "ServiceAccount", sa, spec.namespace)
    for g, _, _, p in spec.crds:
        try:
            store.delete("apiextensions.k8s.io/v1", "CustomResourceDefinition", f"{p}.{g}")
        except ApiError:
            pass


def install_karpenter(store: ClusterStore) -> None:
    """HyperPod-managed Karpenter runs in AWS; the cluster gets its CRDs (NodePool, NodeClaim, HyperpodNodeClass)."""
    labels = {"app.kubernetes.io/managed-by": "sagemaker-hyperpod"}
    for g, v, k, p in KARPENTER_CRDS:
        if store.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", f"{p}.{g}") is None:
            store.create(crd(g, v, k, p, namespaced=False, labels=labels))
