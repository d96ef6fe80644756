"""Kubernetes objects PodStart applies (server-side apply, field manager `podstart`), pinned versions.

Pure builders: they return dicts; the steps apply them and watch them to ready.
"""

from __future__ import annotations

from typing import Any

from functions.domain import rbac

HYPERPOD_NAMESPACE = "aws-hyperpod"
MANAGED_LABELS = {"app.kubernetes.io/managed-by": "podstart"}

# Pinned component versions (updated deliberately, with the project).
HEALTH_AGENT_IMAGE = "905418368575.dkr.ecr.{region}.amazonaws.com/hyperpod-health-monitoring-agent:1.0.819.0_1.0.267.0"
NVIDIA_DEVICE_PLUGIN_IMAGE = "nvcr.io/nvidia/k8s-device-plugin:v0.17.1"
EFA_DEVICE_PLUGIN_IMAGE = "602401143452.dkr.ecr.{region}.amazonaws.com/eks/aws-efa-k8s-device-plugin:v0.5.6"
NEURON_DEVICE_PLUGIN_IMAGE = "public.ecr.aws/neuron/neuron-device-plugin:2.24.23.0"
NEURON_SA = "neuron-device-plugin"
# HyperPod instance types with Neuron devices (Trainium, Inferentia): the Neuron plugin runs only there.
NEURON_INSTANCE_TYPES = ("ml.trn1.2xlarge", "ml.trn1.32xlarge", "ml.trn1n.32xlarge", "ml.trn2.3xlarge",
                         "ml.trn2.48xlarge", "ml.inf2.xlarge", "ml.inf2.8xlarge", "ml.inf2.24xlarge",
                         "ml.inf2.48xlarge")
NEURON_NODE_AFFINITY = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": "sagemaker.amazonaws.com/compute-type", "operator": "In", "values": ["hyperpod"]},
                          {"key": "node.kubernetes.io/instance-type", "operator": "In",
                           "values": list(NEURON_INSTANCE_TYPES)}]}]}}}

HYPERPOD_NODE_AFFINITY = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": "sagemaker.amazonaws.com/compute-type", "operator": "In",
                           "values": ["hyperpod"]}]}]}}}

# EKS add-ons a HyperPod cluster needs (name -> why).
ADDONS: dict[str, str] = {
    "eks-pod-identity-agent": "IAM roles for pods (S3 Mountpoint CSI, operators)",
    "aws-mountpoint-s3-csi-driver": "the shared data bucket mounted in pods",
    "vpc-cni": "pod networking",
    "coredns": "cluster DNS",
    "kube-proxy": "service networking",
}
FSX_ADDON = "aws-fsx-csi-driver"


def wanted_addons(storage: dict[str, Any] | None, fsx_csi: bool = False) -> list[str]:
    """The add-ons a `dependencies` step makes sure of: the base set, plus the FSx CSI driver when the cluster
    has (or an added volume needs) FSx for Lustre."""
    return list(ADDONS) + ([FSX_ADDON] if (storage or {}).get("fsx_lustre") or fsx_csi else [])


def api_path(obj: dict[str, Any]) -> str:
    """The Kubernetes API path of one object PodStart applies (its kinds' plurals are the lowercased kind + s)."""
    api_version, meta = obj["apiVersion"], obj["metadata"]
    base = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
    ns = f"/namespaces/{meta['namespace']}" if meta.get("namespace") else ""
    return f"{base}{ns}/{obj['kind'].lower()}s/{meta['name']}"


def _meta(name: str, namespace: str | None = None, **labels: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": {**MANAGED_LABELS, **labels}}
    if namespace:
        meta["namespace"] = namespace
    return meta


def _daemonset(name: str, namespace: str, image: str, *, sa: str | None = None, tolerations: list[dict[str, Any]],
               container: dict[str, Any], volumes: list[dict[str, Any]] | None = None,
               affinity: dict[str, Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "affinity": affinity or HYPERPOD_NODE_AFFINITY,
        "tolerations": tolerations,
        "priorityClassName": "system-node-critical",
        "containers": [{"name": name, "image": image, **container}],
    }
    if sa:
        spec["serviceAccountName"] = sa
    if volumes:
        spec["volumes"] = volumes
    return {
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": _meta(name, namespace),
        "spec": {
            "selector": {"matchLabels": {"name": name}},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {"metadata": {"labels": {"name": name, **MANAGED_LABELS}}, "spec": spec},
        },
    }


def dependency_components(region: str) -> list[dict[str, Any]]:
    """HyperPod's dependency components: namespace, health-monitoring agent with its RBAC, device plugins
    (NVIDIA GPUs, Neuron for Trainium/Inferentia, EFA), and the ClusterRole of PodStart's API function."""
    tolerate_all = [{"operator": "Exists"}]
    return [
        *rbac.manifests(MANAGED_LABELS),  # what PodStart's API function may do in the cluster
        {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(HYPERPOD_NAMESPACE)},
        {"apiVersion": "v1", "kind": "ServiceAccount",
         "metadata": _meta("health-monitoring-agent", HYPERPOD_NAMESPACE)},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
         "metadata": _meta("podstart-health-monitoring-agent"),
         "rules": [
             {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch", "patch"]},
             {"apiGroups": [""], "resources": ["nodes/status"], "verbs": ["patch", "update"]},
             {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]},
         ]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": _meta("podstart-health-monitoring-agent"),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                     "name": "podstart-health-monitoring-agent"},
         "subjects": [{"kind": "ServiceAccount", "name": "health-monitoring-agent",
                       "namespace": HYPERPOD_NAMESPACE}]},
        _daemonset(
            "health-monitoring-agent", HYPERPOD_NAMESPACE, HEALTH_AGENT_IMAGE.format(region=region),
            sa="health-monitoring-agent", tolerations=tolerate_all,
            container={"args": ["--enable-k8s-exporter=false",
                                "--config.system-log-monitor=/config/system-message-monitor.json"],
                       "resources": {"limits": {"cpu": "500m", "memory": "512Mi"},
                                     "requests": {"cpu": "100m", "memory": "128Mi"}},
                       "securityContext": {"privileged": True},
                       "volumeMounts": [{"name": "log", "mountPath": "/var/log", "readOnly": True}]},
            volumes=[{"name": "log", "hostPath": {"path": "/var/log"}}],
        ),
        _daemonset(
            "nvidia-device-plugin-daemonset", "kube-system", NVIDIA_DEVICE_PLUGIN_IMAGE,
            tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                         {"key": "sagemaker.amazonaws.com/node-health-status", "operator": "Exists"}],
            container={"env": [{"name": "FAIL_ON_INIT_ERROR", "value": "false"}],
                       "securityContext": {"allowPrivilegeEscalation": False,
                                           "capabilities": {"drop": ["ALL"]}},
                       "volumeMounts": [{"name": "device-plugin", "mountPath": "/var/lib/kubelet/device-plugins"}]},
            volumes=[{"name": "device-plugin", "hostPath": {"path": "/var/lib/kubelet/device-plugins"}}],
        ),
        # Trainium/Inferentia: advertises aws.amazon.com/neuron(core) and annotates pods with their devices.
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(NEURON_SA, "kube-system")},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
         "metadata": _meta("podstart-" + NEURON_SA),
         "rules": [
             {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]},
             {"apiGroups": [""], "resources": ["nodes/status"], "verbs": ["patch", "update"]},
             {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]},
             {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch", "update", "patch"]},
         ]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": _meta("podstart-" + NEURON_SA),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "podstart-" + NEURON_SA},
         "subjects": [{"kind": "ServiceAccount", "name": NEURON_SA, "namespace": "kube-system"}]},
        _daemonset(
            "neuron-device-plugin-daemonset", "kube-system", NEURON_DEVICE_PLUGIN_IMAGE, sa=NEURON_SA,
            affinity=NEURON_NODE_AFFINITY,
            tolerations=[{"key": "aws.amazon.com/neuron", "operator": "Exists", "effect": "NoSchedule"},
                         {"key": "CriticalAddonsOnly", "operator": "Exists"},
                         {"key": "sagemaker.amazonaws.com/node-health-status", "operator": "Exists"}],
            container={"env": [{"name": "KUBECONFIG", "value": "/etc/kubernetes/kubelet.conf"},
                               {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
                       "securityContext": {"allowPrivilegeEscalation": False,
                                           "capabilities": {"drop": ["ALL"]}},
                       "volumeMounts": [{"name": "device-plugin", "mountPath": "/var/lib/kubelet/device-plugins"},
                                        {"name": "infa-map", "mountPath": "/run"}]},
            volumes=[{"name": "device-plugin", "hostPath": {"path": "/var/lib/kubelet/device-plugins"}},
                     {"name": "infa-map", "hostPath": {"path": "/run"}}],
        ),
        _daemonset(
            "aws-efa-k8s-device-plugin-daemonset", "kube-system", EFA_DEVICE_PLUGIN_IMAGE.format(region=region),
            tolerations=[{"key": "vpc.amazonaws.com/efa", "operator": "Exists", "effect": "NoSchedule"},
                         {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
            container={"securityContext": {"allowPrivilegeEscalation": False,
                                           "capabilities": {"drop": ["ALL"]}},
                       "volumeMounts": [{"name": "device-plugin", "mountPath": "/var/lib/kubelet/device-plugins"}]},
            volumes=[{"name": "device-plugin", "hostPath": {"path": "/var/lib/kubelet/device-plugins"}}],
        ),
    ]


def daemonset_ready(obj: dict[str, Any] | None) -> bool:
    if not obj:
        return False
    st = obj.get("status") or {}
    gen = (obj.get("metadata") or {}).get("generation")
    observed = st.get("observedGeneration") or st.get("observed_generation")
    desired = st.get("desiredNumberScheduled", st.get("desired_number_scheduled"))
    ready = st.get("numberReady", st.get("number_ready"))
    if desired is None or ready is None:
        return False
    return (observed is None or gen is None or observed >= gen) and ready >= desired


S3_CSI_DRIVER = "s3.csi.aws.com"
DATA_VOLUME = "podstart-data"


def s3_volume(bucket: str, region: str, namespace: str = "default") -> list[dict[str, Any]]:
    """A static S3 Mountpoint PersistentVolume on the shared data bucket and the PVC bound to it."""
    pv = {
        "apiVersion": "v1", "kind": "PersistentVolume", "metadata": _meta(DATA_VOLUME),
        "spec": {
            "capacity": {"storage": "1200Gi"},
            "accessModes": ["ReadWriteMany"],
            "persistentVolumeReclaimPolicy": "Retain",
            "storageClassName": "",
            "claimRef": {"namespace": namespace, "name": DATA_VOLUME},
            "mountOptions": ["allow-delete", "allow-other", f"region {region}"],
            "csi": {"driver": S3_CSI_DRIVER, "volumeHandle": f"s3-{bucket}",
                    "volumeAttributes": {"bucketName": bucket}},
        },
    }
    pvc = {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": _meta(DATA_VOLUME, namespace),
        "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "", "volumeName": DATA_VOLUME,
                 "resources": {"requests": {"storage": "1200Gi"}}},
    }
    return [pv, pvc]


FSX_VOLUME = "podstart-fsx"


def fsx_volume(fs_id: str, dns_name: str, mount_name: str, capacity_gib: int,
               namespace: str = "default") -> list[dict[str, Any]]:
    pv = {
        "apiVersion": "v1", "kind": "PersistentVolume", "metadata": _meta(FSX_VOLUME),
        "spec": {
            "capacity": {"storage": f"{capacity_gib}Gi"},
            "accessModes": ["ReadWriteMany"],
            "persistentVolumeReclaimPolicy": "Retain",
            "storageClassName": "",
            "claimRef": {"namespace": namespace, "name": FSX_VOLUME},
            "mountOptions": ["flock"],
            "csi": {"driver": "fsx.csi.aws.com", "volumeHandle": fs_id,
                    "volumeAttributes": {"dnsname": dns_name, "mountname": mount_name}},
        },
    }
    pvc = {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": _meta(FSX_VOLUME, namespace),
        "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "", "volumeName": FSX_VOLUME,
                 "resources": {"requests": {"storage": f"{capacity_gib}Gi"}}},
    }
    return [pv, pvc]


# -- managed features ------------------------------------------------------------------------------
KARPENTER_NODEPOOL = ("karpenter.sh/v1", "NodePool")
HYPERPOD_NODECLASS = ("karpenter.sagemaker.amazonaws.com/v1", "HyperpodNodeClass")
POOL_PREFIX = "podstart-"
POOL_GROUP_LABEL = "podstart.dev/instance-group"


def checkpoint_service_account(namespace: str, name: str, role_arn: str) -> dict[str, Any]:
    """Tiered checkpointing's service account, bound to its IAM role by the IRSA annotation."""
    meta = _meta(name, namespace, **{"podstart.dev/feature": "tiered_checkpointing"})
    meta["annotations"] = {"eks.amazonaws.com/role-arn": role_arn}
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta}


def pool_name(group: str) -> str:
    return f"{POOL_PREFIX}{group}"[:63]


def hyperpod_node_class(group: str) -> dict[str, Any]:
    """A HyperpodNodeClass naming exactly one HyperPod instance group (never general EC2 capacity)."""
    return {"apiVersion": HYPERPOD_NODECLASS[0], "kind": HYPERPOD_NODECLASS[1],
            "metadata": _meta(pool_name(group), **{POOL_GROUP_LABEL: group}),
            "spec": {"instanceGroups": [group]}}


def node_pool(group: str, *, cpu_limit: int, consolidate_after: str, budget: str,
              labels: dict[str, str] | None = None, taints: list[dict[str, str]] | None = None) -> dict[str, Any]:
    """A Karpenter NodePool over the group's HyperpodNodeClass: limits, disruption budget, labels/taints."""
    template_spec: dict[str, Any] = {
        "nodeClassRef": {"group": HYPERPOD_NODECLASS[0].split("/")[0], "kind": HYPERPOD_NODECLASS[1],
                         "name": pool_name(group)},
        "expireAfter": "Never",
        "requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "Exists"}],
    }
    if taints:
        template_spec["taints"] = taints
    disruption: dict[str, Any] = {"consolidationPolicy": "WhenEmpty", "consolidateAfter": consolidate_after,
                                  "budgets": [{"nodes": budget}]}
    return {"apiVersion": KARPENTER_NODEPOOL[0], "kind": KARPENTER_NODEPOOL[1],
            "metadata": _meta(pool_name(group), **{POOL_GROUP_LABEL: group}),
            "spec": {"template": {"metadata": {"labels": {**MANAGED_LABELS, POOL_GROUP_LABEL: group,
                                                          **(labels or {})}},
                                  "spec": template_spec},
                     "limits": {"cpu": str(cpu_limit)},
                     "disruption": disruption}}


def eviction(name: str, namespace: str) -> dict[str, Any]:
    """The Eviction (policy/v1) a drain POSTs to a pod's `eviction` subresource: the API server checks the
    pod's PodDisruptionBudgets before deleting it (429 when one allows no disruption now)."""
    return {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": namespace}}
