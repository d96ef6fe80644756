"""Reads the live state behind the features document: one call per kind of thing, side by side.

A full read (`read`), for a PATCH, a refresh, or a GET whose stored projection is stale:
AWS: HyperPod DescribeCluster, EKS DescribeCluster (endpoint, OIDC issuer), ListAddons and a
DescribeAddon per installed add-on, ListPodIdentityAssociations, and the checkpoint role (GetRole,
GetRolePolicy). Kubernetes (plain HTTPS with an EKS token: the API does not ship the kubernetes
package): the checkpoint service account, and one list each of NodePools, HyperpodNodeClasses and
Nodes launched by Karpenter; the KubeRay operator's Deployment, what `ray.io/v1` serves (discovery) and the
RayJobs (names only). The live part of a GET over the stored projection (`read_live`): ListAddons, HyperPod
DescribeCluster, and Karpenter's nodes and the KubeRay operator's Deployment when those features are there.
"""

from __future__ import annotations

import contextvars
import json
import ssl
import urllib.error
import urllib.request
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from botocore.exceptions import ClientError

from functions.adapters import aws, kube_http
from functions.adapters.eks_auth import _ca_file, eks_token
from functions.domain import iam as iamdoc
from functions.domain.features import document as fdom
from functions.domain.features import kuberay

KUBE_TIMEOUT_S = 5.0
T = TypeVar("T")


def _submit(pool: ThreadPoolExecutor, fn: Callable[..., T], *args: Any) -> Future[T]:
    """Run on the pool in a copy of this context (the request's trace, its id in the call log, its logger keys)."""
    return pool.submit(contextvars.copy_context().run, fn, *args)


def _code(err: ClientError) -> str:
    return str(err.response.get("Error", {}).get("Code", ""))


@dataclass
class KubeReader:
    """GET and list over the Kubernetes REST API with a bearer token (read-only, no client package)."""

    endpoint: str
    token: str
    ca_file: str | None = None

    def _get(self, path: str) -> dict[str, Any] | None:
        req = urllib.request.Request(self.endpoint.rstrip("/") + path,
                                     headers={"Authorization": f"Bearer {self.token}", "Accept": "application/json"})
        ctx = ssl.create_default_context(cafile=self.ca_file) if self.endpoint.startswith("https://") else None
        kube_http.notify("GET", req.full_url)
        try:
            with urllib.request.urlopen(req, timeout=KUBE_TIMEOUT_S, context=ctx) as resp:
                return json.loads(resp.read())  # type: ignore[no-any-return]
        except urllib.error.HTTPError as err:
            if err.code == 404:
                return None
            raise

    def get(self, path: str) -> dict[str, Any] | None:
        return self._get(path)

    def items(self, path: str) -> list[dict[str, Any]]:
        body = self._get(path)
        return list((body or {}).get("items") or [])

    @classmethod
    def for_eks(cls, desc: dict[str, Any], cluster_name: str, region: str) -> KubeReader:
        ca = (desc.get("certificateAuthority") or {}).get("data")
        endpoint = str(desc["endpoint"])
        return cls(endpoint=endpoint, token=eks_token(cluster_name, region),
                   ca_file=_ca_file(ca) if ca and endpoint.startswith("https://") else None)


@dataclass
class AwsFeatureReader:
    data_bucket: str
    client: Callable[[str, str | None], Any] = aws.client

    @property
    def bucket(self) -> str:
        return self.data_bucket

    def read(self, region: str, cluster: str, eks_name: str, hyperpod_name: str | None) -> fdom.FeatureInputs:
        """Every input at once: the EKS reads, HyperPod's, the checkpoint role's and the cluster's own (Kubernetes)
        run side by side (the document waits for the slowest, not for their sum)."""
        eks = self.client("eks", region)

        def associations() -> tuple[tuple[str, str], ...]:
            found = eks.list_pod_identity_associations(clusterName=eks_name).get("associations", [])
            return tuple((a["namespace"], a["serviceAccount"]) for a in found)

        with ThreadPoolExecutor(max_workers=5) as pool:
            desc_f = _submit(pool, lambda: eks.describe_cluster(name=eks_name)["cluster"])
            addons_f = _submit(pool, self._addons, eks, eks_name)
            assocs_f = _submit(pool, associations)
            hp_f = _submit(pool, self._hyperpod, region, hyperpod_name)
            role_f = _submit(pool, self._role, region, iamdoc.role_name(cluster, region, "checkpoint"))
            desc = desc_f.result()
            kube_f = _submit(pool, self._kube, desc, eks_name, region)
            inputs = kube_f.result()
            addons, assocs, hp, role = addons_f.result(), assocs_f.result(), hp_f.result(), role_f.result()
        return fdom.FeatureInputs(addons=addons, associations=assocs, hyperpod=hp, checkpoint_role=role,
                                  issuer=((desc.get("identity") or {}).get("oidc") or {}).get("issuer"),
                                  kube_endpoint=desc.get("endpoint"),
                                  kube_ca=(desc.get("certificateAuthority") or {}).get("data"), **inputs)

    def read_live(self, region: str, eks_name: str, hyperpod_name: str | None, endpoint: str | None,
                  ca: str | None, *, nodes: bool, operator: bool) -> fdom.FeatureVolatile:
        """The volatile few, side by side: ListAddons, HyperPod's DescribeCluster and, when asked, Karpenter's nodes
        and the KubeRay operator's Deployment (at the endpoint a full read stored: no EKS DescribeCluster)."""
        eks = self.client("eks", region)
        kube = None
        error = "no Kubernetes endpoint stored" if (nodes or operator) and not endpoint else None
        with ThreadPoolExecutor(max_workers=4) as pool:
            names_f = _submit(pool, lambda: frozenset(eks.list_addons(clusterName=eks_name).get("addons", [])))
            hp_f = _submit(pool, self._hyperpod, region, hyperpod_name)
            try:
                if endpoint and (nodes or operator):
                    kube = KubeReader.for_eks({"endpoint": endpoint, "certificateAuthority": {"data": ca}},
                                              eks_name, region)
                nodes_f = _submit(pool, kube.items, "/api/v1/nodes?labelSelector=karpenter.sh%2Fnodepool") \
                    if kube and nodes else None
                dep_f = _submit(pool, kube.get, f"/apis/apps/v1/namespaces/{kuberay.NAMESPACE}/deployments/"
                                                f"{kuberay.NAME}") if kube and operator else None
                found = tuple(nodes_f.result()) if nodes_f else None
                dep = dep_f.result() if dep_f else None
            except (OSError, urllib.error.URLError, ValueError, KeyError) as exc:
                found, dep, dep_f, error = None, None, None, str(exc)[:200]
            return fdom.FeatureVolatile(addon_names=names_f.result(), hyperpod=hp_f.result(), nodes=found,
                                        kuberay_deployment=dep, kuberay_read=dep_f is not None, kube_error=error)

    @staticmethod
    def _addons(eks: Any, eks_name: str) -> dict[str, dict[str, Any]]:
        names = eks.list_addons(clusterName=eks_name).get("addons", [])

        def one(name: str) -> tuple[str, dict[str, Any] | None]:
            try:
                return name, eks.describe_addon(clusterName=eks_name, addonName=name)["addon"]
            except ClientError as err:
                if _code(err) != "ResourceNotFoundException":
                    raise
                return name, None

        with ThreadPoolExecutor(max_workers=min(8, max(1, len(names)))) as pool:
            found = [_submit(pool, one, n) for n in names]
            return {n: a for n, a in (f.result() for f in found) if a is not None}

    def _hyperpod(self, region: str, hyperpod_name: str | None) -> dict[str, Any] | None:
        if not hyperpod_name:
            return None
        try:
            return self.client("sagemaker", region).describe_cluster(  # type: ignore[no-any-return]
                ClusterName=hyperpod_name)
        except ClientError as err:
            if _code(err) not in ("ResourceNotFound", "ValidationException"):
                raise
        return None

    @staticmethod
    def _kube(desc: dict[str, Any], eks_name: str, region: str) -> dict[str, Any]:
        """The cluster's own objects (two rounds: what `ray.io/v1` serves decides whether RayJobs are listed)."""
        try:
            kube = KubeReader.for_eks(desc, eks_name, region)
            sa = fdom.CHECKPOINT_SA
            reads = {
                "service_account": lambda: kube.get(f"/api/v1/namespaces/{sa.namespace}/serviceaccounts/{sa.name}"),
                "node_pools": lambda: tuple(kube.items("/apis/karpenter.sh/v1/nodepools")),
                "node_classes": lambda: tuple(
                    kube.items("/apis/karpenter.sagemaker.amazonaws.com/v1/hyperpodnodeclasses")),
                "nodes": lambda: tuple(kube.items("/api/v1/nodes?labelSelector=karpenter.sh%2Fnodepool")),
                "kuberay_deployment": lambda: kube.get(
                    f"/apis/apps/v1/namespaces/{kuberay.NAMESPACE}/deployments/{kuberay.NAME}"),
                "kuberay_served": lambda: tuple(
                    str(r.get("name")) for r in (kube.get("/apis/ray.io/v1") or {}).get("resources") or []),
            }
            with ThreadPoolExecutor(max_workers=len(reads)) as pool:
                futures = {k: _submit(pool, f) for k, f in reads.items()}
                inputs: dict[str, Any] = {k: f.result() for k, f in futures.items()}
            inputs["rayjobs"] = tuple(
                f"{(j.get('metadata') or {}).get('namespace')}/{(j.get('metadata') or {}).get('name')}"
                for j in (kube.items("/apis/ray.io/v1/rayjobs") if "rayjobs" in inputs["kuberay_served"] else []))
        except (OSError, urllib.error.URLError, ValueError, KeyError) as exc:
            inputs = {"service_account": None, "kube_error": str(exc)[:200]}
        return inputs

    def _role(self, region: str, name: str) -> dict[str, Any] | None:
        iam = self.client("iam", region)
        try:
            role = dict(iam.get_role(RoleName=name)["Role"])
        except ClientError as err:
            if _code(err) == "NoSuchEntity":
                return None
            raise
        try:
            role["policy"] = iam.get_role_policy(RoleName=name, PolicyName="checkpoints")["PolicyDocument"]
        except ClientError as err:
            if _code(err) != "NoSuchEntity":
                raise
            role["policy"] = None
        return role
