"""Node reads for the API (NodeReader): HyperPod's node and event APIs, and the cluster's Kubernetes nodes
and pods. One call per method. Kubernetes is read over plain HTTP as JSON (kube_http: no kubernetes
package in the API's bundle, no model deserialization, so a page of 500 nodes stays cheap). The
Kubernetes connection (endpoint, CA, token) is kept per cluster for ten minutes, so a page costs its
two calls, not a DescribeCluster more."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from functions.adapters import aws
from functions.adapters.kube_http import KubeHttp, KubeUnavailable
from functions.domain.errors import BadRequest, Conflict

CONNECTION_TTL_S = 600.0  # EKS tokens live 15 minutes


@dataclass
class AwsNodeReader:
    client: Callable[[str, str | None], Any] = aws.client
    _kube: dict[tuple[str, str], tuple[float, Any]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # -- HyperPod --------------------------------------------------------------------------------
    def list_cluster_nodes(self, region: str, cluster: str, group: str | None, limit: int,
                           token: str | None) -> tuple[list[dict[str, Any]], str | None]:
        params: dict[str, Any] = {"ClusterName": cluster, "MaxResults": limit, "SortBy": "Name",
                                  "SortOrder": "Ascending"}
        if group:
            params["InstanceGroupNameContains"] = group
        if token:
            params["NextToken"] = token
        try:
            out = self.client("sagemaker", region).list_cluster_nodes(**params)
        except ClientError as err:
            if token and err.response["Error"]["Code"] in ("ValidationException", "ValidationError"):
                raise BadRequest("next_token: not a token this API issued") from None
            if err.response["Error"]["Code"] in ("ResourceNotFound", "ResourceNotFoundException"):
                raise Conflict(f"HyperPod cluster {cluster} is not there (being deleted, or not created yet): "
                               "it has no nodes to list") from None
            raise
        return list(out.get("ClusterNodeSummaries", [])), out.get("NextToken")

    def describe_cluster_node(self, region: str, cluster: str, node_id: str) -> dict[str, Any] | None:
        try:
            out = self.client("sagemaker", region).describe_cluster_node(ClusterName=cluster, NodeId=node_id)
        except ClientError as err:
            if err.response["Error"]["Code"] in ("ResourceNotFound", "ResourceNotFoundException",
                                                 "ValidationException"):
                return None
            raise
        return out.get("NodeDetails")  # type: ignore[no-any-return]

    def cluster_events(self, region: str, cluster: str, *, node_id: str | None = None, group: str | None = None,
                       since: datetime | None = None, limit: int = 50,
                       token: str | None = None) -> tuple[list[dict[str, Any]], str | None]:
        params: dict[str, Any] = {"ClusterName": cluster, "MaxResults": limit, "SortOrder": "Descending"}
        if node_id:
            params["NodeId"] = node_id
        if group:
            params["InstanceGroupName"] = group
        if since:
            params["EventTimeAfter"] = since
        if token:
            params["NextToken"] = token
        try:
            out = self.client("sagemaker", region).list_cluster_events(**params)
        except ClientError as err:
            code = err.response["Error"]["Code"]
            if token and code in ("ValidationException", "ValidationError"):
                raise BadRequest("next_token: not a token this API issued") from None
            if code in ("ResourceNotFound", "ValidationException"):
                return [], None
            raise
        return list(out.get("Events", [])), out.get("NextToken")

    # -- Kubernetes ------------------------------------------------------------------------------
    def _api(self, region: str, eks: str) -> KubeHttp:
        key = (region, eks)
        with self._lock:
            made = self._kube.get(key)
            if made is not None and time.monotonic() - made[0] < CONNECTION_TTL_S:
                return made[1]  # type: ignore[no-any-return]
        try:
            api = KubeHttp.for_eks(eks, region)
        except ClientError as err:
            if err.response["Error"]["Code"] == "ResourceNotFoundException":
                raise Conflict(f"EKS cluster {eks} is not there (being deleted, or not created yet): "
                               "it has no Kubernetes API to read") from None
            raise
        with self._lock:
            self._kube[key] = (time.monotonic(), api)
        return api

    def _get(self, region: str, eks: str, path: str, query: dict[str, Any]) -> dict[str, Any] | None:
        return self._api(region, eks).get(path, {k: str(v) for k, v in query.items() if v not in (None, "")})

    def kube_nodes(self, region: str, eks: str, selector: str, limit: int = 0,
                   token: str | None = None) -> tuple[list[dict[str, Any]], str | None]:
        try:
            out = self._get(region, eks, "/api/v1/nodes",
                            {"labelSelector": selector, "limit": limit or None, "continue": token}) or {}
        except KubeUnavailable as err:
            if token and err.status in (400, 410):  # a continue token Kubernetes did not issue, or one expired
                raise BadRequest("next_token: not a token this API issued, or expired: list again without it") \
                    from None
            raise
        return list(out.get("items") or []), (out.get("metadata") or {}).get("continue") or None

    def kube_node(self, region: str, eks: str, name: str) -> dict[str, Any] | None:
        return self._get(region, eks, f"/api/v1/nodes/{name}", {})

    def kube_pods_on(self, region: str, eks: str, name: str) -> list[dict[str, Any]]:
        out = self._get(region, eks, "/api/v1/pods", {"fieldSelector": f"spec.nodeName={name}"}) or {}
        return list(out.get("items") or [])

    def kube_pods(self, region: str, eks: str) -> list[dict[str, Any]]:
        out = self._get(region, eks, "/api/v1/pods",
                        {"fieldSelector": "status.phase!=Succeeded,status.phase!=Failed"}) or {}
        return list(out.get("items") or [])
