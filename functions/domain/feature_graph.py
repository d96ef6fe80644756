"""The managed features' graph: each feature, what it needs and what it is made of, and the order they are
enabled and disabled in (the steps of `features.update`). Pure data and rules, light to import: the operation
kinds' table reads the steps from here; `functions.domain.features.document`
builds the document and the PATCH rules on it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum


class FeatureStatus(StrEnum):
    """What AWS/Kubernetes say a feature is (ACTIVE/DISABLED are the two resting states)."""

    CREATING = "CREATING"
    ACTIVE = "ACTIVE"
    UPDATING = "UPDATING"
    DEGRADED = "DEGRADED"
    DELETING = "DELETING"
    DISABLED = "DISABLED"


@dataclass(frozen=True)
class ServiceAccountRef:
    namespace: str
    name: str


@dataclass(frozen=True)
class Feature:
    """One managed feature and what it is made of."""

    name: str
    title: str
    summary: str
    depends_on: tuple[str, ...] = ()
    addon: str | None = None  # the EKS add-on it installs
    role: str | None = None  # purpose of the IAM role PodStart makes for it (iam.role_name)
    pod_identity: ServiceAccountRef | None = None  # the service account its role is bound to (EKS Pod Identity)
    made_of: tuple[str, ...] = ()  # human list of parts, shown in the UI and the skill
    base: bool = False  # a base add-on (cluster create installs it)


# The HyperPod operators' service accounts, as their add-ons create them.
TRAINING_OPERATOR_SA = ServiceAccountRef("aws-hyperpod", "hp-training-operator-controller-manager")
INFERENCE_OPERATOR_SA = ServiceAccountRef("hyperpod-inference-system", "hyperpod-inference-operator-controller-manager")
OBSERVABILITY_SA = ServiceAccountRef("hyperpod-observability", "hyperpod-observability-operator-otel-collector")
S3_CSI_SA = ServiceAccountRef("kube-system", "s3-csi-driver-sa")
# Tiered checkpointing's identity chain: the service account training pods run as (IRSA, not Pod Identity).
CHECKPOINT_SA = ServiceAccountRef("default", "podstart-checkpointing")
ROLE_ARN_ANNOTATION = "eks.amazonaws.com/role-arn"
CHECKPOINT_PREFIX = "checkpoints/{cluster}/"  # under PodStart's data bucket
TLS_PREFIX = "inference-tls/{cluster}/"  # the inference operator's TLS certificates, same bucket

FEATURES: dict[str, Feature] = {f.name: f for f in (
    Feature("cert_manager", "cert-manager", "Certificates for the operators' webhooks",
            addon="cert-manager", made_of=("EKS add-on cert-manager",), base=True),
    Feature("pod_identity_agent", "EKS Pod Identity agent", "IAM roles for pods (operators, CSI drivers)",
            addon="eks-pod-identity-agent", made_of=("EKS add-on eks-pod-identity-agent",), base=True),
    Feature("s3_csi", "S3 Mountpoint CSI driver", "S3 buckets mounted as volumes (the shared data bucket)",
            depends_on=("pod_identity_agent",), addon="aws-mountpoint-s3-csi-driver", role="s3-csi",
            pod_identity=S3_CSI_SA,
            made_of=("EKS add-on aws-mountpoint-s3-csi-driver", "IAM role scoped to the data bucket",
                     "Pod Identity association kube-system/s3-csi-driver-sa"), base=True),
    Feature("fsx_csi", "FSx for Lustre CSI driver", "FSx for Lustre file systems as volumes",
            addon="aws-fsx-csi-driver", made_of=("EKS add-on aws-fsx-csi-driver",), base=True),
    Feature("metrics_server", "metrics-server", "Resource metrics (kubectl top, autoscalers)",
            addon="metrics-server", made_of=("EKS add-on metrics-server",), base=True),
    Feature("training_operator", "HyperPod training operator",
            "HyperPodPyTorchJob: process-level recovery, stuck-job and anomaly detection",
            depends_on=("cert_manager", "pod_identity_agent"), addon="amazon-sagemaker-hyperpod-training-operator",
            role="training", pod_identity=TRAINING_OPERATOR_SA,
            made_of=("EKS add-on amazon-sagemaker-hyperpod-training-operator",
                     "IAM role (AmazonSageMakerHyperPodTrainingOperatorAccess, scoped to this cluster)",
                     "Pod Identity association aws-hyperpod/hp-training-operator-controller-manager")),
    Feature("inference_operator", "HyperPod inference operator",
            "InferenceEndpointConfig and JumpStartModel endpoints with managed KV cache and routing",
            depends_on=("cert_manager", "s3_csi", "fsx_csi", "metrics_server", "pod_identity_agent"),
            addon="amazon-sagemaker-hyperpod-inference", role="inference", pod_identity=INFERENCE_OPERATOR_SA,
            made_of=("EKS add-on amazon-sagemaker-hyperpod-inference (with KEDA and the ALB controller)",
                     "IAM execution role scoped to this cluster",
                     "TLS certificates under a prefix of PodStart's bucket (encrypted, no public access)",
                     "load-balancer subnet tags")),
    Feature("tiered_checkpointing", "Managed tiered checkpointing",
            "Checkpoints to instance memory first, then to S3",
            role="checkpoint",
            made_of=("UpdateCluster TieredStorageConfig", "Kubernetes ServiceAccount default/podstart-checkpointing",
                     "IAM role and policy scoped to the checkpoint bucket prefix",
                     "OIDC trust for exactly that service account", "eks.amazonaws.com/role-arn annotation")),
    Feature("autoscaling", "Managed autoscaling (Karpenter)",
            "HyperPod-managed Karpenter scales HyperPod instance groups (never general EC2 capacity)",
            role="autoscale",
            made_of=("UpdateCluster AutoScaling (Karpenter) with its cluster role",
                     "a HyperpodNodeClass and a NodePool per chosen instance group")),
    Feature("observability", "HyperPod observability",
            "Cluster, node and job metrics through the HyperPod observability add-on",
            depends_on=("cert_manager", "pod_identity_agent", "metrics_server"),
            addon="amazon-sagemaker-hyperpod-observability", role="observe", pod_identity=OBSERVABILITY_SA,
            made_of=("EKS add-on amazon-sagemaker-hyperpod-observability", "IAM role for metrics and logs",
                     "Pod Identity association")),
    Feature("kuberay_operator", "KubeRay operator",
            "RayJob, RayCluster and RayService (ray.io/v1): Ray workloads such as the VERL recipe",
            made_of=("KubeRay v1.7.0 CRDs rayclusters, rayjobs, rayservices (kept on disable)",
                     "namespace kuberay-system with ServiceAccount, ClusterRole/Binding and leader-election Role",
                     "Deployment kuberay-operator (quay.io/kuberay/operator:v1.7.0)")),
)}


def _topo(features: Mapping[str, Feature]) -> tuple[str, ...]:
    """Prerequisites before dependants; ties keep the declaration order (stable, deterministic)."""
    out: list[str] = []
    seen: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name in path:
            raise ValueError(f"feature dependency cycle: {' -> '.join((*path, name))}")
        if name in seen:
            return
        for d in features[name].depends_on:
            visit(d, (*path, name))
        seen.add(name)
        out.append(name)

    for n in features:
        visit(n, ())
    return tuple(out)


ORDER: tuple[str, ...] = _topo(FEATURES)
NAMES: tuple[str, ...] = tuple(FEATURES)


def disable_step(name: str) -> str:
    return f"disable_{name}"


# features.update's steps: every disable (dependants first), then every enable (prerequisites first).
# An operation lists only the steps its PATCH needs, in this order (a subsequence).
STEPS: tuple[str, ...] = tuple(disable_step(n) for n in reversed(ORDER)) + ORDER


def prerequisites(name: str) -> list[str]:
    """Every feature `name` needs, transitively, in enable order (not including `name`)."""
    need: set[str] = set()
    stack = list(FEATURES[name].depends_on)
    while stack:
        d = stack.pop()
        if d not in need:
            need.add(d)
            stack.extend(FEATURES[d].depends_on)
    return [n for n in ORDER if n in need]


def dependants(name: str, enabled: Iterable[str]) -> list[str]:
    """Enabled features that need `name` (directly or through another feature)."""
    on = set(enabled)
    return [n for n in ORDER if n in on and n != name and name in prerequisites(n)]
