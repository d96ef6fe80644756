"""A small read-and-proxy Kubernetes client for the API function (no `kubernetes` package in its bundle):
GET objects and lists, and POST through the API server's service proxy to an endpoint's own Service.

The proxy path is built from a namespace, a Service name and a port taken from PodStart's endpoint
record: no caller-given URL or host reaches it (the SSRF guard is the signature)."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

from functions.adapters import aws
from functions.adapters.eks_auth import _ca_file, eks_token

_NAME_OK = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-.")


class KubeUnavailable(Exception):
    """The cluster's Kubernetes API could not be reached or refused us."""


def _segment(value: str) -> str:
    if not value or not set(value) <= _NAME_OK:
        raise ValueError(f"not a Kubernetes object name: {value!r}")
    return value


@dataclass
class KubeHttp:
    host: str
    token: str
    ca_file: str | None = None
    timeout: float = 10.0

    @classmethod
    def for_eks(cls, eks_name: str, region: str) -> KubeHttp:
        desc = aws.client("eks", region).describe_cluster(name=eks_name)["cluster"]
        ca = (desc.get("certificateAuthority") or {}).get("data")
        host = str(desc["endpoint"]).rstrip("/")
        return cls(host=host, token=eks_token(eks_name, region),
                   ca_file=_ca_file(ca) if host.startswith("https://") and ca else None)

    def _open(self, req: urllib.request.Request, timeout: float) -> Any:
        req.add_header("Authorization", f"Bearer {self.token}")
        ctx = ssl.create_default_context(cafile=self.ca_file) if self.host.startswith("https://") else None
        return urllib.request.urlopen(req, timeout=timeout, context=ctx)

    def get(self, path: str, query: dict[str, str] | None = None) -> dict[str, Any] | None:
        url = self.host + path + ("?" + urllib.parse.urlencode(query) if query else "")
        try:
            with self._open(urllib.request.Request(url, headers={"Accept": "application/json"}), self.timeout) as r:
                return json.loads(r.read())  # type: ignore[no-any-return]
        except urllib.error.HTTPError as err:
            if err.code == 404:
                return None
            raise KubeUnavailable(f"Kubernetes API answered {err.code} for {path}") from None
        except (urllib.error.URLError, TimeoutError, OSError) as err:
            raise KubeUnavailable(f"Kubernetes API unreachable: {err}") from None

    def list(self, path: str, label_selector: str | None = None) -> list[dict[str, Any]]:
        body = self.get(path, {"labelSelector": label_selector} if label_selector else None)
        return list((body or {}).get("items") or [])

    def proxy_post(self, namespace: str, service: str, port: int, path: str, body: bytes, *,
                   max_response: int, timeout: float) -> tuple[int, bytes, bool]:
        """POST body to `path` on the Service through the API server's proxy: (status, bytes, truncated)."""
        if not path.startswith("/v1/") or ".." in path or "?" in path:
            raise ValueError("proxy path must be an engine API path")
        url = (f"{self.host}/api/v1/namespaces/{_segment(namespace)}/services/"
               f"{_segment(service)}:{int(port)}/proxy{path}")
        req = urllib.request.Request(url, data=body, method="POST",
                                     headers={"Content-Type": "application/json", "Accept": "application/json"})
        try:
            with self._open(req, timeout) as r:
                data = r.read(max_response + 1)
                return r.status, data[:max_response], len(data) > max_response
        except urllib.error.HTTPError as err:
            return err.code, err.read(max_response), False
        except (urllib.error.URLError, TimeoutError, OSError) as err:
            raise KubeUnavailable(f"endpoint unreachable: {err}") from None


def connect(eks_name: str, region: str) -> KubeHttp:
    return KubeHttp.for_eks(eks_name, region)
