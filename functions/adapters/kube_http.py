"""The API's Kubernetes access: a few REST calls over urllib with an IAM-signed EKS token (no kubernetes
package in the API bundle). Reads jobs and pods, follows logs in bounded memory, and writes Secrets by
server-side apply (write-only: a Secret's values are sent, never read back or logged)."""

from __future__ import annotations

import json
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import deque
from dataclasses import dataclass
from typing import Any

from functions.adapters import aws
from functions.adapters.eks_auth import FIELD_MANAGER, _ca_file, eks_token
from functions.domain.errors import NotFound, Problem

TOKEN_TTL_S = 600.0  # EKS tokens live 15 min; renew well before
TIMEOUT_S = 10.0
PLURALS = {"HyperPodPyTorchJob": "hyperpodpytorchjobs", "RayJob": "rayjobs", "Pod": "pods", "Secret": "secrets",
           "Namespace": "namespaces", "Node": "nodes"}


class KubeUnavailable(Problem):
    status = 502
    title = "Kubernetes API unavailable"
    slug = "kubernetes-unavailable"


def _path(api_version: str, plural: str, namespace: str | None, name: str | None = None) -> str:
    base = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
    ns = f"/namespaces/{urllib.parse.quote(namespace)}" if namespace else ""
    return base + ns + f"/{plural}" + (f"/{urllib.parse.quote(name)}" if name else "")


@dataclass
class _Conn:
    endpoint: str
    token: str
    ca: str | None
    made: float


class KubeHttp:
    """One instance per API container; connections per (region, EKS cluster) are cached for TOKEN_TTL_S."""

    def __init__(self) -> None:
        self._conns: dict[tuple[str, str], _Conn] = {}
        self._lock = threading.Lock()

    def _conn(self, region: str, cluster: str) -> _Conn:
        with self._lock:
            c = self._conns.get((region, cluster))
            if c is not None and time.monotonic() - c.made < TOKEN_TTL_S:
                return c
        desc = aws.client("eks", region).describe_cluster(name=cluster)["cluster"]
        ca = (desc.get("certificateAuthority") or {}).get("data")
        c = _Conn(endpoint=desc["endpoint"].rstrip("/"), token=eks_token(cluster, region),
                  ca=_ca_file(ca) if ca and desc["endpoint"].startswith("https://") else None, made=time.monotonic())
        with self._lock:
            self._conns[(region, cluster)] = c
        return c

    def _open(self, region: str, cluster: str, method: str, path: str, query: dict[str, Any] | None = None,
              body: bytes | None = None, ctype: str | None = None) -> Any:
        c = self._conn(region, cluster)
        q = "?" + urllib.parse.urlencode({k: v for k, v in (query or {}).items() if v is not None}) if query else ""
        req = urllib.request.Request(c.endpoint + path + q, data=body, method=method)
        req.add_header("Authorization", "Bearer " + c.token)
        req.add_header("Accept", "application/json")
        if ctype:
            req.add_header("Content-Type", ctype)
        ctx = ssl.create_default_context(cafile=c.ca) if c.ca else None
        try:
            return urllib.request.urlopen(req, timeout=TIMEOUT_S, context=ctx)
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return None
            detail = _status_message(exc)
            if exc.code in (400, 409, 422):
                raise Problem(detail) from None
            raise KubeUnavailable(f"Kubernetes answered {exc.code}: {detail}") from None
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            raise KubeUnavailable(f"cannot reach the cluster's Kubernetes API: {exc}") from None

    def _json(self, region: str, cluster: str, path: str, query: dict[str, Any] | None = None) -> dict[str, Any] | None:
        resp = self._open(region, cluster, "GET", path, query)
        if resp is None:
            return None
        with resp:
            return json.loads(resp.read())  # type: ignore[no-any-return]

    def list(self, region: str, cluster: str, api_version: str, kind: str, namespace: str | None = None,
             label_selector: str | None = None) -> list[dict[str, Any]]:
        out = self._json(region, cluster, _path(api_version, PLURALS[kind], namespace),
                         {"labelSelector": label_selector} if label_selector else None)
        return list((out or {}).get("items") or [])

    def get(self, region: str, cluster: str, api_version: str, kind: str, name: str,
            namespace: str | None = None) -> dict[str, Any] | None:
        return self._json(region, cluster, _path(api_version, PLURALS[kind], namespace, name))

    def apply(self, region: str, cluster: str, manifest: dict[str, Any]) -> None:
        """Server-side apply; the answer is discarded (a Secret's would echo its data)."""
        meta = manifest["metadata"]
        path = _path(manifest["apiVersion"], PLURALS[manifest["kind"]], meta.get("namespace"), meta["name"])
        resp = self._open(region, cluster, "PATCH", path, {"fieldManager": FIELD_MANAGER, "force": "true"},
                          json.dumps(manifest).encode(), "application/apply-patch+yaml")
        if resp is None:
            raise NotFound(f"namespace {meta.get('namespace')!r} does not exist")
        with resp:
            resp.read()

    def logs(self, region: str, cluster: str, namespace: str, pod: str, container: str | None, tail: int,
             since_seconds: int | None, limit_bytes: int) -> tuple[str, bool]:
        """The newest `limit_bytes` of the last `tail` lines, read in chunks: memory stays bounded by
        limit_bytes however large the log is. Returns (text, cut)."""
        query = {"container": container, "tailLines": tail, "sinceSeconds": since_seconds}
        resp = self._open(region, cluster, "GET", _path("v1", "pods", namespace, pod) + "/log", query)
        if resp is None:
            raise NotFound(f"no pod {pod!r} in {namespace}")
        kept: deque[bytes] = deque()
        size, cut = 0, False
        with resp:
            while chunk := resp.read(64 * 1024):
                kept.append(chunk)
                size += len(chunk)
                while size - len(kept[0]) >= limit_bytes:
                    size -= len(kept.popleft())
                    cut = True
        data = b"".join(kept)
        if len(data) > limit_bytes:
            data, cut = data[-limit_bytes:], True
            nl = data.find(b"\n")
            data = data[nl + 1:] if nl >= 0 else data
        return data.decode("utf-8", "replace"), cut


def _status_message(exc: urllib.error.HTTPError) -> str:
    try:
        body = json.loads(exc.read() or b"{}")
        return str(body.get("message") or exc.reason)
    except (ValueError, OSError):
        return str(exc.reason)
