"""Reads the live state behind the features document: one call per kind of thing.

AWS: HyperPod DescribeCluster, EKS DescribeCluster (endpoint, OIDC issuer), ListAddons and a
DescribeAddon per installed add-on, ListPodIdentityAssociations, and the checkpoint role (GetRole,
GetRolePolicy). Kubernetes (plain HTTPS with an EKS token: the API does not ship the kubernetes
package): the checkpoint service account, and one list each of NodePools, HyperpodNodeClasses and
Nodes launched by Karpenter; the KubeRay operator's Deployment, what `ray.io/v1` serves (discovery) and the
RayJobs (names only).
"""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from functions.adapters import aws, kube_http
from functions.adapters.eks_auth import _ca_file, eks_token
from functions.domain import iam as iamdoc
from functions.domain.features import document as fdom
from functions.domain.features import kuberay

KUBE_TIMEOUT_S = 5.0


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
        eks = self.client("eks", region)
        desc = eks.describe_cluster(name=eks_name)["cluster"]
        addons: dict[str, dict[str, Any]] = {}
        for name in eks.list_addons(clusterName=eks_name).get("addons", []):
            try:
                addons[name] = eks.describe_addon(clusterName=eks_name, addonName=name)["addon"]
            except ClientError as err:
                if _code(err) != "ResourceNotFoundException":
                    raise
        assocs = tuple((a["namespace"], a["serviceAccount"]) for a in
                       eks.list_pod_identity_associations(clusterName=eks_name).get("associations", []))
        hp = None
        if hyperpod_name:
            try:
                hp = self.client("sagemaker", region).describe_cluster(ClusterName=hyperpod_name)
            except ClientError as err:
                if _code(err) not in ("ResourceNotFound", "ValidationException"):
                    raise
        role = self._role(region, iamdoc.role_name(cluster, region, "checkpoint"))
        inputs: dict[str, Any] = {}
        try:
            kube = KubeReader.for_eks(desc, eks_name, region)
            sa = fdom.CHECKPOINT_SA
            inputs["service_account"] = kube.get(f"/api/v1/namespaces/{sa.namespace}/serviceaccounts/{sa.name}")
            inputs["node_pools"] = tuple(kube.items("/apis/karpenter.sh/v1/nodepools"))
            inputs["node_classes"] = tuple(kube.items("/apis/karpenter.sagemaker.amazonaws.com/v1/hyperpodnodeclasses"))
            inputs["nodes"] = tuple(kube.items("/api/v1/nodes?labelSelector=karpenter.sh%2Fnodepool"))
            inputs["kuberay_deployment"] = kube.get(
                f"/apis/apps/v1/namespaces/{kuberay.NAMESPACE}/deployments/{kuberay.NAME}")
            served = kube.get("/apis/ray.io/v1") or {}
            inputs["kuberay_served"] = tuple(str(r.get("name")) for r in served.get("resources") or [])
            inputs["rayjobs"] = tuple(
                f"{(j.get('metadata') or {}).get('namespace')}/{(j.get('metadata') or {}).get('name')}"
                for j in (kube.items("/apis/ray.io/v1/rayjobs") if "rayjobs" in inputs["kuberay_served"] else []))
        except (OSError, urllib.error.URLError, ValueError, KeyError) as exc:
            inputs = {"service_account": None, "kube_error": str(exc)[:200]}
        return fdom.FeatureInputs(addons=addons, associations=assocs, hyperpod=hp, checkpoint_role=role,
                                  issuer=((desc.get("identity") or {}).get("oidc") or {}).get("issuer"), **inputs)

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
