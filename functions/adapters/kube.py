"""Kubernetes adapter: a client for an EKS cluster from its endpoint, CA and an IAM-signed token,
and server-side apply. Imports the kubernetes package lazily (only the steps function needs it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from functions.adapters import aws
from functions.adapters.eks_auth import _ca_file, eks_token

__all__ = ["FIELD_MANAGER", "KubeCluster", "_ca_file", "eks_token"]

FIELD_MANAGER = "podstart"


def _discovery_cache_file(host: str) -> str:
    """The dynamic client's discovery cache, private to this process (the client's default file in /tmp is shared by
    every process talking to the same host: another process's stale answer would be taken as this server's)."""
    import hashlib
    import os
    import tempfile

    digest = hashlib.sha256(host.encode()).hexdigest()[:16]
    return os.path.join(tempfile.gettempdir(), f"podstart-kube-discovery-{os.getpid()}-{digest}.json")


@dataclass
class KubeCluster:
    """A connection to one EKS cluster's Kubernetes API."""

    api: Any  # kubernetes.client.ApiClient

    @classmethod
    def for_eks(cls, cluster_name: str, region: str) -> KubeCluster:
        from kubernetes import client as k8s

        desc = aws.client("eks", region).describe_cluster(name=cluster_name)["cluster"]
        cfg = k8s.Configuration()
        cfg.host = desc["endpoint"]
        cfg.api_key = {"authorization": "Bearer " + eks_token(cluster_name, region)}
        ca = (desc.get("certificateAuthority") or {}).get("data")
        if cfg.host.startswith("https://") and ca:
            cfg.ssl_ca_cert = _ca_file(ca)
        cfg.retries = 2
        return cls(api=k8s.ApiClient(cfg))

    def version(self) -> dict[str, Any]:
        from kubernetes import client as k8s

        info = k8s.VersionApi(self.api).get_code()
        return {"git_version": info.git_version, "platform": info.platform}

    def _resource(self, api_version: str, kind: str) -> Any:
        from kubernetes import dynamic

        dyn = dynamic.DynamicClient(self.api, cache_file=_discovery_cache_file(self.api.configuration.host))
        return dyn.resources.get(api_version=api_version, kind=kind)

    def apply(self, manifest: dict[str, Any], dry_run: bool = False) -> dict[str, Any]:
        """Server-side apply (create or update), owned by the `podstart` field manager; with dry_run the
        API server validates and answers the result without storing it."""
        res = self._resource(manifest["apiVersion"], manifest["kind"])
        ns = manifest.get("metadata", {}).get("namespace")
        extra = {"dry_run": "All"} if dry_run else {}
        out = res.server_side_apply(body=manifest, namespace=ns, field_manager=FIELD_MANAGER, force_conflicts=True,
                                    **extra)
        return out.to_dict()  # type: ignore[no-any-return]

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        from kubernetes.dynamic.exceptions import NotFoundError

        try:
            return self._resource(api_version, kind).get(name=name, namespace=namespace).to_dict()  # type: ignore[no-any-return]
        except NotFoundError:
            return None

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> bool:
        from kubernetes.dynamic.exceptions import NotFoundError

        try:
            self._resource(api_version, kind).delete(name=name, namespace=namespace)
        except NotFoundError:
            return False
        return True

    def list(self, api_version: str, kind: str, namespace: str | None = None,
             label_selector: str | None = None) -> list[dict[str, Any]]:
        from kubernetes.dynamic.exceptions import NotFoundError, ResourceNotFoundError

        try:
            res = self._resource(api_version, kind)
        except ResourceNotFoundError:
            return []
        try:
            out = res.get(namespace=namespace, label_selector=label_selector).to_dict()
        except NotFoundError:
            return []
        return list(out.get("items") or [])

    def logs(self, pod: str, namespace: str, tail_lines: int = 20) -> str:
        """The last lines of a pod's log ("" when it has none yet or is gone)."""
        from kubernetes import client as k8s
        from kubernetes.client.exceptions import ApiException

        try:
            return str(k8s.CoreV1Api(self.api).read_namespaced_pod_log(pod, namespace, tail_lines=tail_lines))
        except ApiException:
            return ""

    def patch(self, api_version: str, kind: str, name: str, namespace: str | None,
              body: dict[str, Any]) -> dict[str, Any] | None:
        """JSON merge patch (only the fields given change); None when the object is gone."""
        from kubernetes.dynamic.exceptions import NotFoundError

        try:
            out = self._resource(api_version, kind).patch(body=body, name=name, namespace=namespace,
                                                          content_type="application/merge-patch+json")
        except NotFoundError:
            return None
        return out.to_dict()  # type: ignore[no-any-return]

    def evict(self, name: str, namespace: str) -> str | None:
        """Evict a pod through the Eviction API (policy/v1): None when evicted or already gone, else why the
        API server refused (429: a PodDisruptionBudget allows no disruption now)."""
        from kubernetes import client as k8s
        from kubernetes.client.exceptions import ApiException

        from functions.domain.manifests import eviction

        body = eviction(name, namespace)
        try:
            k8s.CoreV1Api(self.api).create_namespaced_pod_eviction(
                name=name, namespace=namespace, body=body)  # type: ignore[arg-type]  # a dict body is sent as is
        except ApiException as e:
            if e.status == 404:
                return None
            if e.status in (429, 500):
                return str(e.body or e.reason)
            raise
        return None

    def has_kind(self, api_version: str, kind: str) -> bool:
        """True when the API server serves the kind now (its CRD is installed): asked of the server's discovery for
        that group/version, never answered from the discovery cache (which only learns of a kind that appeared, not
        of one that went: a CRD removed since, or a cluster made again behind the same endpoint)."""
        from kubernetes import client as k8s
        from kubernetes.client.exceptions import ApiException

        group, _, version = api_version.rpartition("/")
        try:
            found = (k8s.CustomObjectsApi(self.api).get_api_resources(group, version) if group
                     else k8s.CoreV1Api(self.api).get_api_resources())
        except ApiException as e:
            if e.status == 404:
                return False
            raise
        return any(r.kind == kind and "/" not in r.name for r in found.resources or [])
