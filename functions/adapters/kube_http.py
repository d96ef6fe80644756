"""A small read-and-proxy Kubernetes client for the API function (no `kubernetes` package in its bundle):
GET objects and lists, POST through the API server's service proxy to an endpoint's own Service, read a
pod's log in bounded memory, and server-side apply (write-only Secrets: the answer is never read back).

The proxy path is built from a namespace, a Service name and a port taken from PodStart's endpoint
record: no caller-given URL or host reaches it (the SSRF guard is the signature)."""

from __future__ import annotations

import builtins
import contextlib
import json
import ssl
import urllib.error
import urllib.parse
import urllib.request
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from functions.adapters import aws
from functions.adapters.eks_auth import _ca_file, eks_token
from functions.domain.errors import ClusterApiUnavailable, InvalidInput, NotFound

FIELD_MANAGER = "podstart"
PLURALS = {"Secret": "secrets", "Pod": "pods", "HyperPodPyTorchJob": "hyperpodpytorchjobs", "RayJob": "rayjobs"}

_NAME_OK = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-.")

# Observers of every request this client sends, (method, URL) before it goes out: as botocore's event hooks
# are for AWS calls (functions.adapters.aws.register_hook), so the sandbox's call log sees Kubernetes too.
_HOOKS: list[Callable[[str, str], None]] = []


def register_hook(hook: Callable[[str, str], None]) -> None:
    if hook not in _HOOKS:
        _HOOKS.append(hook)


def notify(method: str, url: str) -> None:
    """Tell the observers a request is going out (every Kubernetes client of the API function calls this)."""
    for hook in _HOOKS:
        hook(method, url)


TABLE_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io"
NAMES_LIMIT = 500


class KubeUnavailable(ClusterApiUnavailable):
    """The cluster's Kubernetes API could not be reached or refused us (`status`: its HTTP answer, if any)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


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

    def _open(self, req: urllib.request.Request, timeout: float | None) -> Any:
        notify(req.get_method(), req.full_url)
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
            raise KubeUnavailable(f"Kubernetes API answered {err.code} for {path}", err.code) from None
        except (urllib.error.URLError, TimeoutError, OSError) as err:
            raise KubeUnavailable(f"Kubernetes API unreachable: {err}") from None

    def list(self, path: str, label_selector: str | None = None) -> list[dict[str, Any]]:
        body = self.get(path, {"labelSelector": label_selector} if label_selector else None)
        return list((body or {}).get("items") or [])

    def names(self, path: str, label_selector: str | None = None) -> builtins.list[str]:
        """The names at `path` (a collection, or one object), read as a Table without the objects: a Secret's
        existence is checked, or its name listed, and its values never leave the API server. [] for a 404."""
        query = {"includeObject": "None", "limit": str(NAMES_LIMIT),
                 **({"labelSelector": label_selector} if label_selector else {})}
        url = self.host + path + "?" + urllib.parse.urlencode(query)
        req = urllib.request.Request(url, headers={"Accept": TABLE_ACCEPT})
        try:
            with self._open(req, self.timeout) as r:
                table = json.loads(r.read())
        except urllib.error.HTTPError as err:
            if err.code == 404:
                return []
            raise KubeUnavailable(f"Kubernetes API answered {err.code} for {path}", err.code) from None
        except (urllib.error.URLError, TimeoutError, OSError) as err:
            raise KubeUnavailable(f"Kubernetes API unreachable: {err}") from None
        return [str(row["cells"][0]) for row in table.get("rows") or [] if row.get("cells")]

    def proxy_post(self, namespace: str, service: str, port: int, path: str, body: bytes, *,
                   max_response: int, timeout: float, headers: dict[str, str] | None = None) -> tuple[int, bytes, bool]:
        """POST body to `path` on the Service through the API server's proxy: (status, bytes, truncated)."""
        if not path.startswith("/v1/") or ".." in path or "?" in path:
            raise ValueError("proxy path must be an engine API path")
        url = (f"{self.host}/api/v1/namespaces/{_segment(namespace)}/services/"
               f"{_segment(service)}:{int(port)}/proxy{path}")
        req = urllib.request.Request(url, data=body, method="POST",
                                     headers={"Content-Type": "application/json", "Accept": "application/json",
                                              **(headers or {})})
        try:
            with self._open(req, timeout) as r:
                data = r.read(max_response + 1)
                return r.status, data[:max_response], len(data) > max_response
        except urllib.error.HTTPError as err:
            return err.code, err.read(max_response), False
        except (urllib.error.URLError, TimeoutError, OSError) as err:
            raise KubeUnavailable(f"endpoint unreachable: {err}") from None

    def apply(self, manifest: dict[str, Any]) -> None:
        meta = manifest["metadata"]
        api_version = manifest["apiVersion"]
        base = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
        ns = f"/namespaces/{_segment(meta['namespace'])}" if meta.get("namespace") else ""
        url = (f"{self.host}{base}{ns}/{PLURALS[manifest['kind']]}/{_segment(meta['name'])}?"
               + urllib.parse.urlencode({"fieldManager": FIELD_MANAGER, "force": "true"}))
        req = urllib.request.Request(url, data=json.dumps(manifest).encode(), method="PATCH",
                                     headers={"Content-Type": "application/apply-patch+yaml",
                                              "Accept": "application/json"})
        try:
            with self._open(req, self.timeout) as r:
                r.read()
        except urllib.error.HTTPError as err:
            if err.code == 404:
                raise NotFound(f"namespace {meta.get('namespace')!r} does not exist") from None
            if err.code in (400, 422):
                raise InvalidInput(f"Kubernetes refused the {manifest['kind']}: {_message(err)}") from None
            raise KubeUnavailable(f"Kubernetes API answered {err.code} for {manifest['kind']}") from None
        except (urllib.error.URLError, TimeoutError, OSError) as err:
            raise KubeUnavailable(f"Kubernetes API unreachable: {err}") from None

    def logs(self, namespace: str, pod: str, container: str | None, tail: int, since_seconds: int | None,
             limit_bytes: int) -> tuple[str, bool]:
        """Read in 64 KiB chunks keeping only the newest `limit_bytes`: memory stays bounded however large the
        log is (the API server's tailLines already cuts most of it)."""
        kept: deque[bytes] = deque()
        size, cut = 0, False
        with self._open_log(namespace, pod, self.timeout, container=container, tailLines=tail,
                            sinceSeconds=since_seconds) as r:
            try:
                while chunk := r.read(64 * 1024):
                    kept.append(chunk)
                    size += len(chunk)
                    while len(kept) > 1 and size - len(kept[0]) >= limit_bytes:
                        size -= len(kept.popleft())
                        cut = True
            except (TimeoutError, OSError) as err:
                raise KubeUnavailable(f"Kubernetes API unreachable: {err}") from None
        data = b"".join(kept)
        if len(data) > limit_bytes:
            data, cut = data[-limit_bytes:], True
            nl = data.find(b"\n")
            data = data[nl + 1:] if nl >= 0 else data
        return data.decode("utf-8", "replace"), cut

    def follow_logs(self, namespace: str, pod: str, container: str | None, tail: int) -> _Follow:
        """follow=true from the last `tail` lines: the response stays open while the container runs. No read
        timeout (a quiet pod writes nothing for minutes); the follower ends it by closing it."""
        return _Follow(self._open_log(namespace, pod, None, container=container, tailLines=tail, follow="true"))

    def _open_log(self, namespace: str, pod: str, timeout: float | None, **query: Any) -> Any:
        """The open response of GET .../pods/{pod}/log with the query's set values; NotFound for a pod or
        container without a log, KubeUnavailable for anything else. (Errors while reading propagate as OSError.)"""
        params = {k: str(v) for k, v in query.items() if v is not None}
        url = (f"{self.host}/api/v1/namespaces/{_segment(namespace)}/pods/{_segment(pod)}/log?"
               + urllib.parse.urlencode(params))
        try:
            return self._open(urllib.request.Request(url), timeout)
        except urllib.error.HTTPError as err:
            if err.code in (400, 404):
                raise NotFound(f"no log for pod {pod} in {namespace}: {_message(err)}") from None
            raise KubeUnavailable(f"Kubernetes API answered {err.code} for the log of {pod}") from None
        except (urllib.error.URLError, TimeoutError, OSError) as err:
            raise KubeUnavailable(f"Kubernetes API unreachable: {err}") from None


class _Follow:
    def __init__(self, response: Any) -> None:
        self._r = response

    def read(self) -> bytes:
        try:
            return bytes(self._r.read1(64 * 1024))
        except AttributeError:  # http.client drops its file at the terminating chunk: the log ended
            return b""

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._r.close()


def _message(err: urllib.error.HTTPError) -> str:
    try:
        return str(json.loads(err.read() or b"{}").get("message") or err.reason)
    except (ValueError, OSError):
        return str(err.reason)


def connect(eks_name: str, region: str) -> KubeHttp:
    return KubeHttp.for_eks(eks_name, region)
