"""HTTP front of the Kubernetes API double: one threaded server, each cluster under /clusters/<name>."""

from __future__ import annotations

import collections
import contextlib
import json
import queue
import re
import selectors
import sys
import threading
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml

from sandbox.kube import authz, openapi, tables
from sandbox.kube.errors import ApiError, bad_request, not_found
from sandbox.kube.operators import DEFAULT_RECONCILERS, ControllerLoop, Reconciler
from sandbox.kube.proto import PROTOBUF, decode_object
from sandbox.kube.registry import REVIEWS, ResourceType, TypeRegistry
from sandbox.kube.store import ClusterStore, Obj, get_path

VERSION_INFO = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.0-eks-sandbox",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2025-01-01T00:00:00Z",
    "goVersion": "go1.23.0",
    "compiler": "gc",
    "platform": "linux/amd64",
}

DEFAULT_MINOR_VERSION = "1.32"  # a cluster added without one (tests); EKS clusters say theirs


def version_info(version: str) -> dict[str, str]:
    """`/version` of a cluster running Kubernetes `version` ("1.33"), as EKS's API servers answer it."""
    major, minor = version.split(".")[:2]
    return {**VERSION_INFO, "major": major, "minor": minor, "gitVersion": f"v{major}.{minor}.0-eks-sandbox"}


def kubelet_version(version: str) -> str:
    """A node's kubelet version on a cluster of Kubernetes `version`, as EKS AMIs report it."""
    return f"v{version}.3-eks-473151a"


_NO_SUCH_RESOURCE = ApiError(404, "NotFound", "the server could not find the requested resource")


def _version_priority(version: str) -> tuple[int, int, int]:
    m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if not m:
        return (0, 0, 0)
    stage = {"alpha": 1, "beta": 2, None: 3}[m.group(2)]
    return (stage, int(m.group(1)), int(m.group(3) or 0))


def _sorted_versions(versions: list[str]) -> list[str]:
    return sorted(versions, key=_version_priority, reverse=True)


def _discovery_resources(registry: TypeRegistry, group: str, version: str) -> list[Obj]:
    out: list[Obj] = []
    for rt in registry.in_group_version(group, version):
        entry: Obj = {
            "name": rt.plural,
            "singularName": rt.singular,
            "namespaced": rt.namespaced,
            "kind": rt.kind,
            "verbs": list(rt.verbs),
        }
        if rt.short_names:
            entry["shortNames"] = list(rt.short_names)
        if rt.categories:
            entry["categories"] = list(rt.categories)
        out.append(entry)
        if rt.status:
            out.append(
                {
                    "name": f"{rt.plural}/status",
                    "singularName": "",
                    "namespaced": rt.namespaced,
                    "kind": rt.kind,
                    "verbs": ["get", "patch", "update"],
                }
            )
        if rt.scale:
            out.append(
                {
                    "name": f"{rt.plural}/scale",
                    "singularName": "",
                    "namespaced": rt.namespaced,
                    "group": "autoscaling",
                    "version": "v1",
                    "kind": "Scale",
                    "verbs": ["get", "patch", "update"],
                }
            )
        if rt.storage_key == ("", "serviceaccounts"):
            out.append({"name": "serviceaccounts/token", "singularName": "", "namespaced": True,
                        "group": "authentication.k8s.io", "version": "v1", "kind": "TokenRequest",
                        "verbs": ["create"]})
        if rt.storage_key == ("", "pods"):
            out.append({"name": "pods/log", "singularName": "", "namespaced": True, "kind": "Pod", "verbs": ["get"]})
            out.append({"name": "pods/eviction", "singularName": "", "namespaced": True, "group": "policy",
                        "version": "v1", "kind": "Eviction", "verbs": ["create"]})
    return out


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in separate writes; avoid 40 ms stalls
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_PATCH(self) -> None:
        self._dispatch("PATCH")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    # ---------------------------------------------------------------- plumbing

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            return self.rfile.read(length)
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0] or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        return b""

    def _send(self, code: int, body: bytes, content_type: str = "application/json",
              headers: dict[str, str] | None = None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        for warning in getattr(self, "_warnings", ()):
            self.send_header("Warning", '299 - "' + warning.replace('"', '\\"') + '"')
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-cache, private")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, code: int, obj: Any) -> None:
        self._send(code, json.dumps(obj).encode())

    def _start_stream(self, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache, private")
        self.end_headers()

    def _chunk(self, data: bytes) -> None:
        if data:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

    def _end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _dispatch(self, method: str) -> None:
        self._warnings: list[str] = []
        self._user, self._impersonating = authz.ADMIN, False
        try:
            body = self._read_body()
            parts = urlsplit(self.path)
            query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
            segs = [s for s in parts.path.split("/") if s]
            if self.server.cluster is not None:
                segs = ["clusters", self.server.cluster, *segs]
            if len(segs) < 2 or segs[0] != "clusters":
                if segs and segs[-1] in ("healthz", "livez", "readyz"):
                    self._send(200, b"ok", "text/plain")
                    return
                raise _NO_SUCH_RESOURCE
            store = self.server.api.store_or_none(segs[1])
            if store is None:
                raise ApiError(404, "NotFound", f"cluster {segs[1]!r} not found")
            self.server.api.note_request(segs[1], method, "/" + "/".join(segs))
            segs = segs[2:]
            if segs and segs[-1] in ("healthz", "livez", "readyz"):
                self._send(200, b"ok", "text/plain")
                return
            auth = self.headers.get("Authorization")
            if auth is None and self.server.api.require_token:
                raise ApiError(401, "Unauthorized", "Unauthorized")
            if auth is not None and (not auth.startswith("Bearer ") or not auth[7:].strip()):
                raise ApiError(401, "Unauthorized", "Unauthorized")
            self._route(store, method, segs, query, body)
        except ApiError as err:
            self._json(err.code, err.status())
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as err:  # surface bugs as 500 Status rather than a dropped connection
            self._json(500, ApiError(500, "InternalError", f"internal error: {err!r}").status())

    # ---------------------------------------------------------------- routing

    def _authorize(self, store: ClusterStore, attrs: authz.Attributes) -> None:
        """An impersonating request (`kubectl --as`) may do what the cluster's RBAC grants that user."""
        if not self._impersonating:
            return
        allowed, _ = authz.authorize(store, self._user, attrs)
        if not allowed:
            raise authz.forbidden(self._user, attrs)

    def _route(self, store: ClusterStore, method: str, segs: list[str], query: dict[str, str], body: bytes) -> None:
        registry = store.registry
        self._user, self._impersonating = authz.user_of(self.headers)
        if not segs or segs[0] not in ("api", "apis") or len(segs) <= (2 if segs[0] == "api" else 3):
            self._authorize(store, authz.Attributes(verb=method.lower(), path="/" + "/".join(segs)))
        if method == "GET" and segs == ["version"]:
            return self._json(200, version_info(self.server.api.version_of(store.name)))
        if method == "GET" and segs == ["api"]:
            host, port = str(self.server.server_address[0]), self.server.server_address[1]
            return self._json(
                200,
                {
                    "kind": "APIVersions",
                    "versions": ["v1"],
                    "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": f"{host}:{port}"}],
                },
            )
        if method == "GET" and segs == ["apis"]:
            groups = [self._api_group(g, v) for g, v in registry.groups().items() if g]
            return self._json(200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
        if method == "GET" and segs[:1] == ["openapi"]:
            return self._openapi(store, segs[1:])
        if not segs or segs[0] not in ("api", "apis"):
            raise _NO_SUCH_RESOURCE
        if segs[0] == "api":
            if len(segs) < 2:
                raise _NO_SUCH_RESOURCE
            group, version, rest = "", segs[1], segs[2:]
        else:
            if len(segs) == 2 and method == "GET":
                versions = registry.groups().get(segs[1])
                if not versions:
                    raise _NO_SUCH_RESOURCE
                return self._json(200, self._api_group(segs[1], versions))
            if len(segs) < 3:
                raise _NO_SUCH_RESOURCE
            group, version, rest = segs[1], segs[2], segs[3:]
        if not rest:
            resources = _discovery_resources(registry, group, version)
            if not resources or method != "GET":
                raise _NO_SUCH_RESOURCE
            gv = f"{group}/{version}" if group else version
            return self._json(
                200,
                {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources},
            )
        if group == "" and len(rest) >= 5 and rest[0] == "namespaces" and rest[2] == "services" and rest[4] == "proxy":
            from sandbox.kube.responder import proxy

            # the API server authenticates with Authorization and drops it before proxying (as kube-apiserver does)
            sent = {k: v for k, v in self.headers.items() if k.lower() != "authorization"}
            code, data = proxy(store, rest[1], rest[3], method, "/" + "/".join(rest[5:]), body, sent)
            return self._send(code, data)
        watch = query.get("watch", "") in ("true", "1")
        if rest[0] == "watch":
            watch, rest = True, rest[1:]
        namespace: str | None = None
        if len(rest) >= 3 and rest[0] == "namespaces":
            inner = registry.lookup(group, version, rest[2])
            if inner is not None and inner.namespaced:
                namespace, rest = rest[1], rest[2:]
        if not rest:
            raise _NO_SUCH_RESOURCE
        rt = registry.lookup(group, version, rest[0])
        if rt is None or len(rest) > 3 or (rt.namespaced and namespace is None and len(rest) > 1):
            raise _NO_SUCH_RESOURCE
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else None
        if (
            sub not in (None, "status", "scale", "log", "eviction", "token")
            or (sub == "eviction" and rt.storage_key != ("", "pods"))
            or (sub == "token" and rt.storage_key != ("", "serviceaccounts"))
            or (sub == "status" and not rt.status)
            or (sub == "log" and rt.storage_key != ("", "pods"))
        ):
            raise _NO_SUCH_RESOURCE
        verb = {"POST": "create", "PUT": "update", "PATCH": "patch"}.get(method) or (
            ("watch" if watch else ("get" if name else "list")) if method == "GET"
            else ("delete" if name else "deletecollection"))
        self._authorize(store, authz.Attributes(verb=verb, group=group, resource=rt.plural, subresource=sub or "",
                                                name=name or "", namespace=namespace or ""))
        manager = query.get("fieldManager") or self.headers.get("User-Agent", "unknown").split("/")[0]
        accept = self.headers.get("Accept", "")
        table = "as=Table" in accept
        if rt.kind in REVIEWS and method == "POST" and name is None:
            return self._json(201, authz.review(store, self._user, rt.kind, self._decode(body)))
        if rt.group == "metrics.k8s.io" and method == "GET" and not watch:
            from sandbox.kube import metrics

            return self._json(200, metrics.read(store, rt, namespace, name, query))
        if name is None:
            return self._collection(store, rt, method, namespace, query, body, watch, table, manager)
        if method == "POST" and sub == "eviction":
            return self._json(201, store.evict(namespace or "default", name))
        if method == "POST" and sub == "token":
            return self._json(201, authz.token_request(store, namespace or "default", name, self._decode(body)))
        if method == "GET" and sub == "log":
            return self._logs(store, namespace or "default", name, query)
        if method == "GET" and watch:
            query["fieldSelector"] = ",".join(filter(None, (query.get("fieldSelector"), f"metadata.name={name}")))
            return self._watch(store, rt, namespace, query, table)
        if method == "GET":
            obj = store.get_scale(rt, namespace, name) if sub == "scale" else store.get_rt(rt, namespace, name)
            if table and sub is None:
                obj = tables.table(
                    rt,
                    [obj],
                    {"resourceVersion": obj["metadata"].get("resourceVersion", "")},
                    query.get("includeObject", "Metadata"),
                )
            return self._json(200, obj)
        dry = store.dry_run() if query.get("dryRun") == "All" else contextlib.nullcontext()
        if method == "PUT":
            obj = self._decode(body)
            if sub is None:
                obj = self._validated(store, rt, query, obj, name=name, namespace=namespace)
            with dry:
                return self._json(200, store.replace_rt(rt, namespace, name, obj, sub, manager))
        if method == "PATCH":
            ctype = self.headers.get("Content-Type", "application/merge-patch+json").split(";")[0].strip()
            apply = ctype == "application/apply-patch+yaml"
            if sub is None and ctype != "application/json-patch+json":
                given = _patch_body(body, apply)
                kept = self._validated(store, rt, query, given, patch=not apply, apply=apply, name=name,
                                       namespace=namespace)
                if kept is not given:
                    body = json.dumps(kept).encode()
            if apply and query.get("dryRun") == "All":
                dry_run_apply(store, rt, namespace, name, body)  # what PodStart's plans rely on: schema errors
            with dry:
                if apply:
                    force = query.get("force", "") in ("true", "1")
                    return self._json(200, store.patch_rt(rt, namespace, name, ctype, body, sub,
                                                          query.get("fieldManager"), force))
                return self._json(200, store.patch_rt(rt, namespace, name, ctype, body, sub, manager))
        if method == "DELETE" and sub is None:
            with dry:
                return self._json(200, store.delete_rt(rt, namespace, name))
        raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")

    def _openapi(self, store: ClusterStore, segs: list[str]) -> None:
        published = self.server.api.published(store.name)
        crds = store.list("apiextensions.k8s.io/v1", "CustomResourceDefinition")
        docs = published.documents(store.registry.all(), crds)
        if segs == ["v2"]:
            return self._send(200, published.v2_bytes(docs))
        if segs == ["v3"]:
            return self._json(200, published.v3_index(docs))
        if len(segs) >= 3 and segs[0] == "v3":
            group, version = ("", segs[2]) if segs[1] == "api" and len(segs) == 3 else (
                (segs[2], segs[3]) if segs[1] == "apis" and len(segs) == 4 else ("", ""))
            body = published.v3_bytes(docs, group, version) if version else None
            if body is not None:
                return self._send(200, body, headers={"Etag": f'"{openapi.etag(body)}"',
                                                      "Cache-Control": "public, immutable"})
        raise _NO_SUCH_RESOURCE

    def _validated(self, store: ClusterStore, rt: ResourceType, query: dict[str, str], body: Any, *,
                   patch: bool = False, apply: bool = False, name: str = "", namespace: str | None = None) -> Any:
        """The request's `fieldValidation` (Warn when absent, as the API server) against the kind's schema: the
        body to store (unknown fields dropped), or a 400 under Strict."""
        published = self.server.api.published(store.name)
        crds = store.list("apiextensions.k8s.io/v1", "CustomResourceDefinition") if rt.from_crd else []
        docs = published.documents(store.registry.all(), crds) if rt.from_crd else openapi.Documents([], [])
        kept, warnings = openapi.validate_fields(docs, rt, body, query.get("fieldValidation", ""), patch=patch,
                                                 apply=apply, name=name, namespace=namespace)
        self._warnings += warnings
        return kept

    @staticmethod
    def _api_group(group: str, versions: list[str]) -> Obj:
        ordered = _sorted_versions(versions)
        gvs = [{"groupVersion": f"{group}/{v}", "version": v} for v in ordered]
        return {
            "kind": "APIGroup",
            "apiVersion": "v1",
            "name": group,
            "versions": gvs,
            "preferredVersion": gvs[0],
        }

    def _decode(self, body: bytes) -> Obj:
        """A request body: JSON, or Kubernetes protobuf (what kubectl's typed clients send)."""
        if self.headers.get("Content-Type", "").split(";")[0].strip() == PROTOBUF:
            return decode_object(body)
        try:
            obj = json.loads(body or b"null")
        except ValueError as err:
            raise bad_request(f"invalid JSON body: {err}") from err
        if not isinstance(obj, dict):
            raise bad_request("the request body must be a JSON object")
        return obj

    def _collection(
        self,
        store: ClusterStore,
        rt: ResourceType,
        method: str,
        namespace: str | None,
        query: dict[str, str],
        body: bytes,
        watch: bool,
        table: bool,
        manager: str,
    ) -> None:
        if method == "GET" and watch:
            return self._watch(store, rt, namespace, query, table)
        if method == "GET":
            limit = int(query.get("limit") or 0)
            listed = store.list_rt(
                rt,
                namespace,
                query.get("labelSelector"),
                query.get("fieldSelector"),
                limit,
                query.get("continue"),
            )
            if table:
                listed = tables.table(rt, listed["items"], listed["metadata"], query.get("includeObject", "Metadata"))
            return self._json(200, listed)
        if method == "POST":
            obj = self._validated(store, rt, query, self._decode(body), namespace=namespace)
            with store.dry_run() if query.get("dryRun") == "All" else contextlib.nullcontext():
                return self._json(201, store.create_rt(rt, namespace, obj, manager))
        if method == "DELETE":
            return self._json(
                200,
                store.delete_collection_rt(rt, namespace, query.get("labelSelector"), query.get("fieldSelector")),
            )
        raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")

    def _watch(
        self, store: ClusterStore, rt: ResourceType, namespace: str | None, query: dict[str, str], table: bool
    ) -> None:
        timeout = float(query.get("timeoutSeconds") or 1800)
        watcher = store.watch_rt(
            rt,
            namespace,
            query.get("labelSelector"),
            query.get("fieldSelector"),
            query.get("resourceVersion"),
        )
        deadline = time.monotonic() + timeout
        try:
            self._start_stream("application/json")
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self.server.stopping.is_set():
                    break
                try:
                    event = watcher.events.get(timeout=min(remaining, 0.5))
                except queue.Empty:
                    continue
                if event is None:
                    break
                etype, obj = event
                if table and etype != "ERROR":
                    obj = tables.table(
                        rt,
                        [obj],
                        {"resourceVersion": obj["metadata"].get("resourceVersion", "")},
                        query.get("includeObject", "Metadata"),
                    )
                self._chunk(json.dumps({"type": etype, "object": obj}).encode() + b"\n")
            self._end_stream()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        finally:
            store.unwatch(watcher)

    def _logs(self, store: ClusterStore, namespace: str, name: str, query: dict[str, str]) -> None:
        pod = store.get("v1", "Pod", name, namespace)
        if pod is None:
            raise not_found("pods", name)
        container = query.get("container") or None
        names = [c.get("name") for c in get_path(pod, "spec.containers") or []]
        if container and container not in names:
            raise bad_request(f"container {container} is not valid for pod {name}")
        offset = store.log_size(namespace, name, container)
        if query.get("sinceSeconds"):
            text = _since(store.read_log(namespace, name, container), int(query["sinceSeconds"]))
            if query.get("tailLines"):
                text = _tail(text, int(query["tailLines"]))
        elif query.get("tailLines"):
            text = store.tail_log(namespace, name, container, int(query["tailLines"]))
        else:
            text = store.read_log(namespace, name, container)
        if query.get("limitBytes"):
            text = text[: int(query["limitBytes"])]
        if query.get("follow", "") not in ("true", "1"):
            return self._send(200, text.encode(), "text/plain")
        try:
            self._start_stream("text/plain")
            self._chunk(text.encode())
            while not self.server.stopping.is_set():
                more, done = store.follow_log(namespace, name, container, offset, 0.5)
                offset += len(more)
                self._chunk(more.encode())
                if done:
                    break
            self._end_stream()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


def _tail(text: str, n: int) -> str:
    """The last n lines, found from the end (a 100 MB log is not split into a list of lines)."""
    if n <= 0:
        return ""
    end = len(text) - 1 if text.endswith("\n") else len(text)
    pos = end
    for _ in range(n):
        pos = text.rfind("\n", 0, pos)
        if pos < 0:
            return text
    return text[pos + 1:]


_STAMP = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z) ", re.M)


def _since(text: str, seconds: int) -> str:
    """Lines stamped (RFC 3339, as the simulated operators write them) within the last `seconds`."""
    cutoff = datetime.now(UTC).timestamp() - seconds
    for m in _STAMP.finditer(text):
        try:
            at = datetime.strptime(m.group(1)[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC).timestamp()
        except ValueError:
            continue
        if at >= cutoff:
            return text[m.start():]
    return ""


def _patch_body(raw: bytes, apply: bool) -> Any:
    """A patch's body as data, for field validation (an apply body may be YAML); None when unreadable (the
    store then answers the decoding error)."""
    try:
        return json.loads(raw or b"null")
    except ValueError:
        if not apply:
            return None
    try:
        return yaml.safe_load(raw.decode())
    except (yaml.YAMLError, UnicodeDecodeError):
        return None


def dry_run_apply(store: ClusterStore, rt: ResourceType, namespace: str | None, name: str, raw: bytes) -> Obj:
    """Server-side apply with dryRun=All: the checks the API server makes before admission (the body, the
    kind, the namespace, the CRD's schema); the server then runs the apply without storing it."""
    try:
        body = json.loads(raw or b"null")
    except ValueError as err:
        raise bad_request(f"invalid apply body: {err}") from err
    if not isinstance(body, dict):
        raise bad_request("the apply configuration must be an object")
    if body.get("kind") and body["kind"] != rt.kind:
        raise bad_request(f"the kind {body['kind']!r} does not match the resource {rt.qualified!r}")
    if rt.namespaced and store.get("v1", "Namespace", namespace or "default") is None:
        raise not_found("namespaces", namespace or "default")
    if rt.from_crd:
        crd = store.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", rt.from_crd) or {}
        version = rt.api_version.rsplit("/", 1)[-1]
        schema = next((v.get("schema", {}).get("openAPIV3Schema") for v in get_path(crd, "spec.versions") or []
                       if v.get("name") == version), None)
        if schema:
            import jsonschema

            errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(body), key=lambda e: list(e.path))
            if errors:
                e = errors[0]
                path = ".".join(str(p) for p in e.path)
                raise ApiError(422, "Invalid", f"{rt.kind}.{rt.group} {name!r} is invalid: {path}: {e.message}")
    live = store.get(rt.api_version, rt.kind, name, namespace) or {}
    return {**live, **body, "metadata": {**(live.get("metadata") or {}), **(body.get("metadata") or {})}}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    timeout = 0  # handle_request() never waits: the serve loop selects over every listener

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # clients hanging up are routine
            super().handle_error(request, client_address)

    def __init__(self, addr: tuple[str, int], api: KubeApiServer, cluster: str | None = None) -> None:
        self.api = api
        self.cluster = cluster  # a cluster's own port serves its API at the root, as an API server does
        self.stopping = api.stopping
        super().__init__(addr, _Handler)


class KubeApiServer:
    """Embedded Kubernetes API for the sandbox: many clusters, each on its own port (its API at the root, as a
    real API server: `kubectl get --raw /apis` works), and all of them under `/clusters/<name>` on the main
    port; simulated controllers."""

    def __init__(
        self, host: str = "127.0.0.1", port: int = 0, time_scale: float = 60.0, *, require_token: bool = False
    ) -> None:
        """Any `Bearer` token is accepted. kubectl sends no token over plain http, so requests without
        an Authorization header are served as anonymous unless `require_token` (then 401)."""
        self._host, self._port = host, port
        self.require_token = require_token
        self.time_scale = time_scale
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._stores: dict[str, ClusterStore] = {}
        self._listeners: dict[str, _Server] = {}
        # EKS clusters of one name in two regions share the embedded API of that name: it goes with the last of them
        self._holders: dict[str, int] = {}
        self._published: dict[str, openapi.Published] = {}
        # (cluster, method, path) of recent requests: tests count the calls a page costs
        self.requests: collections.deque[tuple[str, str, str]] = collections.deque(maxlen=10_000)
        self._versions: dict[str, str] = {}  # cluster -> Kubernetes minor version ("1.33")
        self.requests_total = 0  # every request ever noted (the deque keeps the last 10,000): count by this
        self._noted = threading.Lock()
        self.reconcilers: list[Reconciler] = list(DEFAULT_RECONCILERS)
        self._controllers = ControllerLoop(self._all_stores, self.reconcilers, time_scale)
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self.stopping.clear()
        self._httpd = _Server((self._host, self._port), self)
        self._port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._serve, name="kube-api", daemon=True)
        self._thread.start()
        self._controllers.start()

    def _serve(self) -> None:
        """One thread accepts on every listener (the main port and each cluster's); each request then runs on
        its own thread, as ThreadingHTTPServer does."""
        with selectors.DefaultSelector() as selector:
            registered: set[_Server] = set()
            while not self.stopping.is_set():
                with self._lock:
                    current = {*self._listeners.values(), *([self._httpd] if self._httpd else [])}
                for srv in registered - current:
                    with contextlib.suppress(KeyError, ValueError):
                        selector.unregister(srv)
                for srv in current - registered:
                    selector.register(srv, selectors.EVENT_READ)
                registered = current
                try:
                    ready = selector.select(0.05)
                except OSError:  # a listener closed between the snapshot and the select
                    registered = set()
                    selector.close()
                    selector = selectors.DefaultSelector()
                    continue
                for key, _ in ready:
                    with contextlib.suppress(OSError):
                        key.fileobj.handle_request()  # type: ignore[union-attr]

    def stop(self) -> None:
        self._controllers.stop()
        if self._httpd is not None:
            self.stopping.set()
            for store in self._all_stores():
                store.close()
            if self._thread is not None:
                self._thread.join(timeout=5)
            with self._lock:
                listeners = [self._httpd, *self._listeners.values()]
                self._listeners.clear()
            for srv in listeners:
                srv.server_close()
            self._httpd = None

    @property
    def url(self) -> str:
        return f"http://{self._host}:{self._port}"

    def version_of(self, cluster: str) -> str:
        return self._versions.get(cluster, DEFAULT_MINOR_VERSION)

    def note_request(self, cluster: str, method: str, path: str) -> None:
        with self._noted:
            self.requests.append((cluster, method, path))
            self.requests_total += 1

    def add_cluster(self, name: str, version: str | None = None) -> str:
        """A cluster (idempotent); its API's URL, on its own port. `version`: the Kubernetes minor it runs."""
        with self._lock:
            if version:
                self._versions[name] = version
            self._holders[name] = self._holders.get(name, 0) + 1
            if name not in self._stores:
                self._stores[name] = ClusterStore(name)
            if name not in self._listeners:
                self._listeners[name] = _Server((self._host, 0), self, cluster=name)
            return self._cluster_url(name)

    def _cluster_url(self, name: str) -> str:
        return f"http://{self._host}:{self._listeners[name].server_address[1]}"

    def remove_cluster(self, name: str) -> None:
        with self._lock:
            self._holders[name] = self._holders.get(name, 1) - 1
            if self._holders[name] > 0:  # a same-named cluster of another region still uses it
                return
            self._holders.pop(name, None)
            store = self._stores.pop(name, None)
            self._published.pop(name, None)
            self._versions.pop(name, None)
            listener = self._listeners.pop(name, None)
        if store is not None:
            store.close()
        if listener is not None:
            listener.server_close()

    def cluster_of(self, url: str) -> str | None:
        """The cluster a request URL is for: by its port (each cluster's own), or `/clusters/<name>/` on the main
        port; None when it is not one of this server's."""
        parts = urlsplit(url)
        with self._lock:
            for name, listener in self._listeners.items():
                if parts.port == listener.server_address[1]:
                    return name
            segs = [s for s in parts.path.split("/") if s]
            if parts.port == self._port and len(segs) >= 2 and segs[0] == "clusters" and segs[1] in self._stores:
                return segs[1]
        return None

    def clusters(self) -> dict[str, str]:
        with self._lock:
            return {name: self._cluster_url(name) for name in self._stores}

    def store(self, name: str) -> ClusterStore:
        with self._lock:
            return self._stores[name]

    def published(self, name: str) -> openapi.Published:
        """The OpenAPI documents of a cluster (rebuilt when its kinds change)."""
        with self._lock:
            return self._published.setdefault(name, openapi.Published())

    def store_or_none(self, name: str) -> ClusterStore | None:
        with self._lock:
            return self._stores.get(name)

    def add_reconciler(self, reconcile: Reconciler) -> None:
        """Plug in another simulated controller; it runs on the next tick for every cluster."""
        self.reconcilers.append(reconcile)

    def _all_stores(self) -> list[ClusterStore]:
        with self._lock:
            return list(self._stores.values())
