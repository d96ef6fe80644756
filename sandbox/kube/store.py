"""One simulated cluster's object store: CRUD, patch, apply, watch, logs. Thread-safe."""

from __future__ import annotations

import base64
import contextlib
import copy
import ipaddress
import json
import queue
import random
import string
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import yaml

from sandbox.kube.authz import DEFAULT_RBAC
from sandbox.kube.conversion import from_storage, to_storage
from sandbox.kube.errors import ApiError, already_exists, bad_request, conflict, invalid, not_found
from sandbox.kube.patching import fields_v1, json_patch, merge_patch, prune_unapplied, strategic_merge
from sandbox.kube.registry import ResourceType, TypeRegistry, types_from_crd
from sandbox.kube.selectors import Predicate, field_matcher, label_matcher, selector_string

Obj = dict[str, Any]
GK = tuple[str, str]  # (group, plural): the storage key of a resource type
AppliedKey = tuple[GK, str, str, str]  # (storage key, namespace, name, field manager)

DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
CRD_GK: GK = ("apiextensions.k8s.io", "customresourcedefinitions")
NS_GK: GK = ("", "namespaces")
POD_GK: GK = ("", "pods")

PATCH_JSON = "application/json-patch+json"
PATCH_MERGE = "application/merge-patch+json"
PATCH_STRATEGIC = "application/strategic-merge-patch+json"
PATCH_APPLY = "application/apply-patch+yaml"

_HISTORY = 20000


def now_rfc3339() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def get_path(obj: Any, path: str) -> Any:
    cur = obj
    for part in path.strip(".").split("."):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
    return cur


def set_path(obj: Obj, path: str, value: Any) -> None:
    parts = path.strip(".").split(".")
    cur = obj
    for part in parts[:-1]:
        cur = cur.setdefault(part, {})
    cur[parts[-1]] = value


def _spec_of(obj: Obj) -> Obj:
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


def _without_rv(obj: Obj) -> Obj:
    out = dict(obj)
    out["metadata"] = {k: v for k, v in (obj.get("metadata") or {}).items() if k != "resourceVersion"}
    return out


class Watcher:
    """A subscription of one watch request; events are (type, object) tuples, None ends the stream."""

    def __init__(self, rt: ResourceType, namespace: str | None, pred: Predicate) -> None:
        self.rt = rt
        self.namespace = namespace
        self.pred = pred
        self.events: queue.Queue[tuple[str, Obj] | None] = queue.Queue()

    def _match(self, obj: Obj | None) -> bool:
        if obj is None:
            return False
        if self.namespace and obj.get("metadata", {}).get("namespace") != self.namespace:
            return False
        return self.pred(obj)

    def _put(self, etype: str, obj: Obj) -> None:
        out = from_storage(self.rt, copy.deepcopy(obj))
        out["apiVersion"] = self.rt.api_version
        self.events.put((etype, out))

    def offer(self, etype: str, obj: Obj, old: Obj | None) -> None:
        new_match, old_match = self._match(obj), self._match(old)
        if etype == "ADDED" and new_match:
            self._put("ADDED", obj)
        elif etype == "MODIFIED":
            if new_match:
                self._put("MODIFIED" if old_match else "ADDED", obj)
            elif old_match:
                self._put("DELETED", obj)
        elif etype == "DELETED" and new_match:
            self._put("DELETED", obj)


class ClusterStore:
    """The objects of one simulated cluster. Public methods take and return plain dicts (copies)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.registry = TypeRegistry()
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._rv = 0
        self._objects: dict[GK, dict[tuple[str, str], Obj]] = {}
        self._changed_at: dict[tuple[GK, str, str], float] = {}
        self._history: deque[tuple[int, GK, str, Obj, Obj | None]] = deque(maxlen=_HISTORY)
        self._watchers: list[Watcher] = []
        self._logs: dict[tuple[str, str, str], LogBuffer] = {}
        self._appended = 0  # log lines appended, ever
        self._applied: dict[AppliedKey, Obj] = {}
        self._ips = iter(ipaddress.ip_network("10.100.0.0/16").hosts())
        self._closed = False
        self._dry = False  # inside dry_run(): writes are computed and answered, never stored
        self._event_names: dict[tuple[str, str, str, str], str] = {}  # what record_event aggregates
        self._event_stamp = 0
        self.evictions: list[tuple[str, str]] = []  # (namespace, pod) evicted through pods/eviction, in order
        for ns in DEFAULT_NAMESPACES:
            self.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        for obj in DEFAULT_RBAC:  # what a new cluster's RBAC bootstrap creates
            self.create(copy.deepcopy(obj))

    # ---------------------------------------------------------------- in-process API (by apiVersion/kind)

    def resolve(self, api_version: str, kind: str) -> ResourceType:
        rt = self.registry.by_kind(api_version, kind)
        if rt is None:
            raise ApiError(404, "NotFound", f"no kind {kind!r} is registered for version {api_version!r}")
        return rt

    @property
    def resource_version(self) -> int:
        with self._lock:
            return self._rv

    @property
    def activity(self) -> tuple[int, int]:
        """What changes whenever anything in the cluster does: its resourceVersion and the log lines appended."""
        with self._lock:
            return self._rv, self._appended

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        rt = self.resolve(api_version, kind)
        with self._lock:
            obj = self._bucket(rt).get((self._ns(rt, namespace), name))
            return self._present(rt, obj) if obj else None

    def list(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> list[Obj]:
        rt = self.resolve(api_version, kind)
        return list(self.list_rt(rt, namespace, label_selector, field_selector)["items"])

    def count(self, api_version: str, kind: str) -> int:
        """How many objects of a kind (no copies: for controllers that run on every tick)."""
        rt = self.resolve(api_version, kind)
        with self._lock:
            return len(self._bucket(rt))

    def create(self, obj: Obj, namespace: str | None = None) -> Obj:
        """Create as a client would, but keeping any status given (controllers seed status this way)."""
        rt = self.resolve(obj.get("apiVersion", ""), obj.get("kind", ""))
        ns = namespace or obj.get("metadata", {}).get("namespace")
        return self.create_rt(rt, ns, obj, keep_status=True)

    def put(self, obj: Obj) -> Obj:
        """Upsert without resourceVersion checks, status included (for simulated controllers and tests)."""
        rt = self.resolve(obj.get("apiVersion", ""), obj.get("kind", ""))
        meta = obj.get("metadata") or {}
        with self._lock:
            ns = self._ns(rt, meta.get("namespace"))
            if (ns, meta.get("name", "")) not in self._bucket(rt):
                return self.create_rt(rt, ns, obj, keep_status=True)
            return self._replace(rt, ns, meta["name"], obj, None, check_rv=False, keep_status=False)

    def set_status(
        self, api_version: str, kind: str, name: str, namespace: str | None, status: dict[str, Any]
    ) -> Obj | None:
        """Replace an object's status; no event when nothing changes. None when the object is gone."""
        rt = self.resolve(api_version, kind)
        with self._lock:
            ns = self._ns(rt, namespace)
            cur = self._bucket(rt).get((ns, name))
            if cur is None:
                return None
            if cur.get("status") == status:
                return self._present(rt, cur)
            body = copy.deepcopy(cur)
            body["status"] = status
            return self._replace(rt, ns, name, body, "status", check_rv=False)

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        rt = self.resolve(api_version, kind)
        with self._lock:
            if (self._ns(rt, namespace), name) not in self._bucket(rt):
                return None
            return self.delete_rt(rt, self._ns(rt, namespace), name)

    def record_event(self, obj: Obj, etype: str, reason: str, message: str, component: str, host: str = "") -> None:
        """A core/v1 Event about `obj`, as a controller's event recorder writes it: the same reason and message
        about the same object again counts up (`count`, `lastTimestamp`) instead of adding an event."""
        meta = obj.get("metadata") or {}
        namespace = meta.get("namespace") or "default"
        key = (namespace, meta.get("uid", ""), reason, message)
        now = now_rfc3339()
        with self._lock:
            if self._closed or ("", namespace) not in self._objects.get(NS_GK, {}):
                return
            name = self._event_names.get(key)
            current = self.get("v1", "Event", name, namespace) if name else None
            if current is not None:
                current["count"] = int(current.get("count") or 1) + 1
                current["lastTimestamp"] = now
                self.put(current)
                return
            # as the event recorder names them: the object, then the time in hex (so events list in order)
            stamp = max(time.time_ns(), self._event_stamp + 1)
            self._event_stamp = stamp
            name = f"{meta.get('name', 'object')}.{stamp:x}"
            self._event_names[key] = name
            source: Obj = {"component": component}
            if host:
                source["host"] = host
            self.create({
                "apiVersion": "v1", "kind": "Event",
                "metadata": {"name": name, "namespace": namespace},
                "involvedObject": {k: v for k, v in (("apiVersion", obj.get("apiVersion")), ("kind", obj.get("kind")),
                                                     ("name", meta.get("name")), ("namespace", meta.get("namespace")),
                                                     ("uid", meta.get("uid")),
                                                     ("resourceVersion", meta.get("resourceVersion"))) if v},
                "reason": reason, "message": message, "type": etype, "source": source,
                "firstTimestamp": now, "lastTimestamp": now, "count": 1,
                "reportingComponent": component, "reportingInstance": host or component,
            })

    def elapsed(self, obj: Obj) -> float:
        """Wall seconds since the object was created or its generation last changed."""
        rt = self.resolve(obj.get("apiVersion", ""), obj.get("kind", ""))
        meta = obj.get("metadata") or {}
        with self._lock:
            start = self._changed_at.get((rt.storage_key, meta.get("namespace", ""), meta.get("name", "")))
        return 0.0 if start is None else time.monotonic() - start

    def append_log(self, namespace: str, pod: str, text: str, container: str | None = None) -> None:
        with self._cond:
            self._appended += 1
            key = (namespace, pod, container or self._default_container(namespace, pod))
            self._logs.setdefault(key, LogBuffer()).append(text)
            self._cond.notify_all()

    def _log(self, namespace: str, pod: str, container: str | None) -> LogBuffer:
        return self._logs.get((namespace, pod, container or self._default_container(namespace, pod))) or LogBuffer()

    def read_log(self, namespace: str, pod: str, container: str | None = None) -> str:
        """The whole log (a copy: for small logs and `sinceSeconds`)."""
        with self._lock:
            return self._log(namespace, pod, container).text_from(0)

    def log_size(self, namespace: str, pod: str, container: str | None = None) -> int:
        with self._lock:
            return self._log(namespace, pod, container).size

    def tail_log(self, namespace: str, pod: str, container: str | None, lines: int) -> str:
        """The last `lines` lines, read from the end: a 100 MB log is neither copied nor split."""
        with self._lock:
            return self._log(namespace, pod, container).tail(lines)

    def close(self) -> None:
        """End every open watch and log stream."""
        with self._cond:
            self._closed = True
            for w in self._watchers:
                w.events.put(None)
            self._watchers.clear()
            self._cond.notify_all()

    @contextlib.contextmanager
    def dry_run(self) -> Iterator[None]:
        """`?dryRun=All`: everything inside runs every check and answers as it would, and stores nothing (the
        lock is held throughout, so no other request sees the dry state)."""
        with self._lock:
            self._dry = True
            try:
                yield
            finally:
                self._dry = False

    # ---------------------------------------------------------------- helpers

    def _bucket(self, rt: ResourceType) -> dict[tuple[str, str], Obj]:
        return self._objects.setdefault(rt.storage_key, {})

    @staticmethod
    def _ns(rt: ResourceType, namespace: str | None) -> str:
        return (namespace or "default") if rt.namespaced else ""

    @staticmethod
    def _present(rt: ResourceType, obj: Obj) -> Obj:
        out = from_storage(rt, copy.deepcopy(obj))
        out["apiVersion"] = rt.api_version
        out["kind"] = rt.kind
        return out

    def _default_container(self, namespace: str, pod: str) -> str:
        obj = self._objects.get(POD_GK, {}).get((namespace, pod))
        containers = get_path(obj, "spec.containers") or []
        return str(containers[0].get("name", "")) if containers else ""

    def _lookup(self, rt: ResourceType, ns: str, name: str) -> Obj:
        obj = self._bucket(rt).get((ns, name))
        if obj is None:
            raise not_found(rt.qualified, name)
        return obj

    def _write(self, rt: ResourceType, ns: str, name: str, obj: Obj, etype: str, old: Obj | None) -> Obj:
        if self._dry:
            if old is not None:
                obj["metadata"]["resourceVersion"] = old["metadata"].get("resourceVersion", "")
            return self._present(rt, obj)
        self._rv += 1
        obj["metadata"]["resourceVersion"] = str(self._rv)
        self._bucket(rt)[(ns, name)] = obj
        if old is None or old.get("metadata", {}).get("generation") != obj["metadata"].get("generation"):
            self._changed_at[(rt.storage_key, ns, name)] = time.monotonic()
        self._emit(rt.storage_key, etype, obj, old)
        if rt.storage_key == CRD_GK:
            self._sync_crd(obj)
        return self._present(rt, obj)

    def _emit(self, gk: GK, etype: str, obj: Obj, old: Obj | None) -> None:
        snap, old_snap = copy.deepcopy(obj), copy.deepcopy(old) if old is not None else None
        self._history.append((self._rv, gk, etype, snap, old_snap))
        for w in self._watchers:
            if w.rt.storage_key == gk:
                w.offer(etype, snap, old_snap)
        self._cond.notify_all()

    def _remove(self, rt: ResourceType, ns: str, name: str) -> Obj:
        if self._dry:
            return copy.deepcopy(self._bucket(rt)[(ns, name)])
        obj = self._bucket(rt).pop((ns, name))
        self._changed_at.pop((rt.storage_key, ns, name), None)
        for key in [k for k in self._applied if k[:3] == (rt.storage_key, ns, name)]:
            del self._applied[key]
        self._rv += 1
        obj["metadata"]["resourceVersion"] = str(self._rv)
        self._emit(rt.storage_key, "DELETED", obj, obj)
        if rt.storage_key == CRD_GK:
            self._drop_crd(obj)
        elif rt.storage_key == NS_GK:
            self._drop_namespace(name)
        elif rt.storage_key == POD_GK:
            for log_key in [k for k in self._logs if k[:2] == (ns, name)]:
                del self._logs[log_key]
        return obj

    def _sync_crd(self, crd: Obj) -> None:
        self.registry.unregister_crd(crd["metadata"]["name"])
        for rt in types_from_crd(crd):
            self.registry.register(rt)

    def _drop_crd(self, crd: Obj) -> None:
        types = [rt for rt in self.registry.all() if rt.from_crd == crd["metadata"]["name"]]
        self.registry.unregister_crd(crd["metadata"]["name"])
        if types:
            for ns, name in list(self._bucket(types[0])):
                self._remove(types[0], ns, name)

    def _drop_namespace(self, namespace: str) -> None:
        for rt in self.registry.all():
            if rt.namespaced:
                for ns, name in [k for k in self._bucket(rt) if k[0] == namespace]:
                    self._remove(rt, ns, name)

    def _generate_name(self, rt: ResourceType, ns: str, prefix: str) -> str:
        alphabet = "bcdfghjklmnpqrstvwxz2456789"
        while True:
            name = prefix + "".join(random.choices(alphabet, k=5))
            if (ns, name) not in self._bucket(rt):
                return name

    def _defaults(self, rt: ResourceType, obj: Obj) -> None:
        """What admission and defaulting would add on create."""
        gk, meta = rt.storage_key, obj["metadata"]
        if gk == NS_GK:
            meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta["name"]
            obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
            obj.setdefault("status", {"phase": "Active"})
        elif gk == POD_GK:
            obj.setdefault("status", {"phase": "Pending", "qosClass": "BestEffort"})
        elif gk in (("apps", "deployments"), ("apps", "statefulsets"), ("apps", "replicasets")):
            obj.setdefault("spec", {}).setdefault("replicas", 1)
        elif gk == ("batch", "jobs"):
            spec = obj.setdefault("spec", {})
            spec.setdefault("completions", 1)
            spec.setdefault("parallelism", 1)
            spec.setdefault("backoffLimit", 6)
        elif gk == ("", "services"):
            spec = obj.setdefault("spec", {})
            spec.setdefault("type", "ClusterIP")
            if spec.get("clusterIP") != "None":
                spec.setdefault("clusterIP", str(next(self._ips)))
            spec.setdefault("clusterIPs", [spec["clusterIP"]])
        elif gk == ("", "persistentvolumeclaims") or gk == ("", "persistentvolumes"):
            obj.setdefault("status", {"phase": "Pending"})
            # Storage object in-use protection (admission): deletion waits until nothing uses it.
            claim = gk[1] == "persistentvolumeclaims"
            protection = "kubernetes.io/pvc-protection" if claim else "kubernetes.io/pv-protection"
            finalizers = meta.setdefault("finalizers", [])
            if protection not in finalizers:
                finalizers.append(protection)
        elif gk == CRD_GK:
            names = (obj.get("spec") or {}).get("names") or {}
            obj.setdefault(
                "status",
                {
                    "acceptedNames": names,
                    "conditions": [
                        {
                            "type": t,
                            "status": "True",
                            "reason": r,
                            "lastTransitionTime": now_rfc3339(),
                            "message": m,
                        }
                        for t, r, m in (
                            ("NamesAccepted", "NoConflicts", "no conflicts found"),
                            ("Established", "InitialNamesAccepted", "the initial names have been accepted"),
                        )
                    ],
                    "storedVersions": [
                        v["name"] for v in (obj.get("spec") or {}).get("versions") or [] if v.get("storage")
                    ],
                },
            )

    @staticmethod
    def _manage(
        obj: Obj,
        manager: str | None,
        operation: str,
        api_version: str,
        fields: Obj | None = None,
        subresource: str | None = None,
    ) -> None:
        if not manager:
            return
        entries = [
            e
            for e in obj["metadata"].get("managedFields") or []
            if not (
                e.get("manager") == manager and e.get("operation") == operation and e.get("subresource") == subresource
            )
        ]
        entry: Obj = {
            "manager": manager,
            "operation": operation,
            "apiVersion": api_version,
            "time": now_rfc3339(),
            "fieldsType": "FieldsV1",
            "fieldsV1": fields if fields is not None else fields_v1(obj),
        }
        if subresource:
            entry["subresource"] = subresource
        entries.append(entry)
        obj["metadata"]["managedFields"] = entries

    # ---------------------------------------------------------------- by resource type (the HTTP layer)

    def evict(self, namespace: str, name: str) -> Obj:
        """POST pods/{name}/eviction (policy/v1 Eviction): deletes the pod unless a PodDisruptionBudget selecting
        it allows no disruption now (429, as the real API server: the caller retries)."""
        from sandbox.kube.errors import ApiError
        from sandbox.kube.selectors import label_matcher, selector_string

        with self._lock:
            pods = self.resolve("v1", "Pod")
            pod = self.get_rt(pods, namespace, name)
            for pdb in self.list("policy/v1", "PodDisruptionBudget", namespace):
                spec = pdb.get("spec") or {}
                sel = selector_string(spec.get("selector"))
                if not sel or not label_matcher(sel)(pod):
                    continue
                matching = [p for p in self.list("v1", "Pod", namespace, sel)
                            if not p["metadata"].get("deletionTimestamp")]
                healthy = sum(1 for p in matching if (p.get("status") or {}).get("phase") == "Running")
                if spec.get("minAvailable") is not None:
                    need = _pdb_count(spec["minAvailable"], len(matching))
                else:
                    need = len(matching) - _pdb_count(spec.get("maxUnavailable", 0), len(matching))
                if healthy - need < 1:
                    pname = pdb["metadata"]["name"]
                    raise ApiError(429, "TooManyRequests",
                                   "Cannot evict pod as it would violate the pod's disruption budget.",
                                   {"causes": [{"reason": "DisruptionBudget", "message":
                                                f"The disruption budget {pname} needs {need} healthy pods and has "
                                                f"{healthy} currently"}]})
            self.delete_rt(pods, namespace, name)
            self.evictions.append((namespace, name))
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}

    def get_rt(self, rt: ResourceType, namespace: str | None, name: str) -> Obj:
        with self._lock:
            return self._present(rt, self._lookup(rt, self._ns(rt, namespace), name))

    def list_rt(
        self,
        rt: ResourceType,
        namespace: str | None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int = 0,
        continue_token: str | None = None,
    ) -> Obj:
        """A `XList`; namespace None lists across namespaces."""
        lpred, fpred = label_matcher(label_selector), field_matcher(field_selector)
        start: tuple[str, str] | None = None
        if continue_token:
            try:
                ns_, name_ = json.loads(base64.urlsafe_b64decode(continue_token.encode()))
                start = (ns_, name_)
            except (ValueError, TypeError) as err:
                raise ApiError(410, "Expired", "the provided continue parameter is not valid") from err
        with self._lock:
            bucket = self._bucket(rt)
            keys = sorted(k for k in bucket if not (rt.namespaced and namespace) or k[0] == namespace)
            # Match on the stored object (with its apiVersion and kind) before copying: a selected page
            # of a 2,000-node cluster copies its page, not the cluster.
            typed = {"apiVersion": rt.api_version, "kind": rt.kind}
            items = [
                self._present(rt, bucket[k])
                for k in keys
                if (start is None or k > start)
                and lpred(bucket[k])
                and (not field_selector or fpred({**bucket[k], **typed}))
            ]
            rv = str(self._rv)
        meta: Obj = {"resourceVersion": rv}
        if limit and len(items) > limit:
            last = items[limit - 1]["metadata"]
            token = json.dumps([last.get("namespace", ""), last["name"]]).encode()
            meta["continue"] = base64.urlsafe_b64encode(token).decode()
            meta["remainingItemCount"] = len(items) - limit
            items = items[:limit]
        return {"apiVersion": rt.api_version, "kind": f"{rt.kind}List", "metadata": meta, "items": items}

    def create_rt(
        self,
        rt: ResourceType,
        namespace: str | None,
        body: Obj,
        manager: str | None = None,
        keep_status: bool = False,
    ) -> Obj:
        if not isinstance(body, dict):
            raise bad_request("the request body must be an object")
        obj = to_storage(rt, copy.deepcopy(body))
        meta = obj.get("metadata")
        if not isinstance(meta, dict):
            meta = obj["metadata"] = {}
        if body.get("kind") and body["kind"] != rt.kind:
            raise bad_request(f"the kind {body['kind']!r} does not match the resource {rt.qualified!r}")
        with self._lock:
            if rt.namespaced:
                ns = namespace or meta.get("namespace") or "default"
                if meta.get("namespace") and meta["namespace"] != ns:
                    raise bad_request(
                        "the namespace of the provided object does not match the namespace sent on the request"
                    )
                if ("", ns) not in self._objects.get(NS_GK, {}):
                    raise not_found("namespaces", ns)
                meta["namespace"] = ns
            else:
                ns = ""
                meta.pop("namespace", None)
            if not meta.get("name") and meta.get("generateName"):
                meta["name"] = self._generate_name(rt, ns, meta["generateName"])
            name = meta.get("name")
            if not name:
                raise invalid(rt.qualified, "", "metadata.name: Required value: name or generateName is required")
            if (ns, name) in self._bucket(rt):
                raise already_exists(rt.qualified, name)
            obj["apiVersion"], obj["kind"] = rt.api_version, rt.kind
            for key in ("resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds"):
                meta.pop(key, None)
            meta["uid"] = str(uuid.uuid4())
            meta["creationTimestamp"] = now_rfc3339()
            meta["generation"] = 1
            if rt.status and not keep_status:
                obj.pop("status", None)
            _normalize(rt, obj)
            self._defaults(rt, obj)
            self._manage(obj, manager, "Update", rt.api_version)
            return self._write(rt, ns, name, obj, "ADDED", None)

    def _replace(
        self,
        rt: ResourceType,
        ns: str,
        name: str,
        body: Obj,
        subresource: str | None,
        check_rv: bool = True,
        keep_status: bool = True,
        manager: str | None = None,
    ) -> Obj:
        old = self._lookup(rt, ns, name)
        if not isinstance(body, dict):
            raise bad_request("the request body must be an object")
        new = to_storage(rt, copy.deepcopy(body))
        meta = new.get("metadata")
        if not isinstance(meta, dict):
            meta = new["metadata"] = {}
        if meta.get("name") and meta["name"] != name:
            raise bad_request(f"the name of the object ({meta['name']}) does not match the name on the URL ({name})")
        rv = meta.get("resourceVersion")
        if check_rv and rv and rv != old["metadata"]["resourceVersion"]:
            raise conflict(rt.qualified, name)
        if subresource == "status":
            result = copy.deepcopy(old)
            if "status" in new:
                result["status"] = new["status"]
            else:
                result.pop("status", None)
            self._manage(result, manager, "Update", rt.api_version, subresource="status")
        else:
            result = new
            om = old["metadata"]
            meta["name"] = name
            if rt.namespaced:
                meta["namespace"] = ns
            else:
                meta.pop("namespace", None)
            for key in ("uid", "creationTimestamp", "generation", "deletionTimestamp"):
                if key in om:
                    meta[key] = om[key]
                else:
                    meta.pop(key, None)
            if "managedFields" not in meta and "managedFields" in om:
                meta["managedFields"] = om["managedFields"]
            result["apiVersion"], result["kind"] = rt.api_version, rt.kind
            if keep_status and rt.status:
                if "status" in old:
                    result["status"] = copy.deepcopy(old["status"])
                else:
                    result.pop("status", None)
            _normalize(rt, result)
            if _spec_of(result) != _spec_of(old) or (not rt.status and result.get("status") != old.get("status")):
                meta["generation"] = int(om.get("generation", 1)) + 1
            self._manage(result, manager, "Update", rt.api_version)
        if _without_rv(result) == _without_rv(old):
            return self._present(rt, old)
        if result["metadata"].get("deletionTimestamp") and not result["metadata"].get("finalizers"):
            if self._dry:
                return self._present(rt, result)
            self._bucket(rt)[(ns, name)] = result
            return self._present(rt, self._remove(rt, ns, name))
        return self._write(rt, ns, name, result, "MODIFIED", old)

    def replace_rt(
        self,
        rt: ResourceType,
        namespace: str | None,
        name: str,
        body: Obj,
        subresource: str | None = None,
        manager: str | None = None,
    ) -> Obj:
        with self._lock:
            ns = self._ns(rt, namespace)
            if subresource == "scale":
                return self._put_scale(rt, ns, name, body)
            return self._replace(rt, ns, name, body, subresource, manager=manager)

    def patch_rt(
        self,
        rt: ResourceType,
        namespace: str | None,
        name: str,
        content_type: str,
        raw: bytes,
        subresource: str | None = None,
        manager: str | None = None,
        force: bool = False,
    ) -> Obj:
        ctype = content_type.split(";")[0].strip()
        with self._lock:
            ns = self._ns(rt, namespace)
            if ctype == PATCH_APPLY:
                return self._apply(rt, ns, name, raw, subresource, manager)
            try:
                patch = json.loads(raw or b"null")
            except ValueError as err:
                raise bad_request(f"invalid JSON patch body: {err}") from err
            if subresource == "scale":
                current = self._scale_of(rt, self._lookup(rt, ns, name))
            else:
                current = from_storage(rt, self._lookup(rt, ns, name))
            if ctype == PATCH_JSON:
                patched = json_patch(copy.deepcopy(current), patch)
            elif ctype == PATCH_MERGE:
                patched = merge_patch(current, patch)
            elif ctype == PATCH_STRATEGIC:
                patched = strategic_merge(current, patch)
            else:
                raise ApiError(
                    415, "UnsupportedMediaType", f"the body of the request was in an unknown format: {ctype}"
                )
            if subresource == "scale":
                return self._put_scale(rt, ns, name, patched)
            return self._replace(rt, ns, name, patched, subresource, manager=manager)

    def _apply(
        self, rt: ResourceType, ns: str, name: str, raw: bytes, subresource: str | None, manager: str | None
    ) -> Obj:
        if not manager:
            raise bad_request("PATCH requests with apply content type must have fieldManager set")
        try:
            body = json.loads(raw)
        except ValueError:
            try:
                body = yaml.load(raw.decode(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
            except yaml.YAMLError as err:
                raise bad_request(f"error decoding YAML: {err}") from err
        if not isinstance(body, dict):
            raise bad_request("the apply configuration must be an object")
        meta = body.setdefault("metadata", {})
        if meta.get("name", name) != name:
            raise bad_request(f"the name of the object ({meta['name']}) does not match the name on the URL ({name})")
        meta["name"] = name
        key = (rt.storage_key, ns, name, manager)
        fields = fields_v1(body)
        if (ns, name) not in self._bucket(rt):
            if subresource:
                raise not_found(rt.qualified, name)
            seed = copy.deepcopy(body)
            self._manage(seed, manager, "Apply", rt.api_version, fields)
            if not self._dry:
                self._applied[key] = copy.deepcopy(body)
            return self.create_rt(rt, ns or None, seed)
        live = from_storage(rt, copy.deepcopy(self._bucket(rt)[(ns, name)]))
        prune_unapplied(live, self._applied.get(key, {}), body)
        merged = strategic_merge(live, body)
        self._manage(merged, manager, "Apply", rt.api_version, fields, subresource)
        if not self._dry:
            self._applied[key] = copy.deepcopy(body)
        return self._replace(rt, ns, name, merged, subresource, check_rv=bool(meta.get("resourceVersion")))

    def _scale_of(self, rt: ResourceType, obj: Obj) -> Obj:
        if not rt.scale:
            raise not_found(rt.qualified, obj["metadata"]["name"])
        meta = obj["metadata"]
        if rt.label_selector_path:
            selector = get_path(obj, rt.label_selector_path) or ""
        else:
            selector = selector_string(get_path(obj, "spec.selector"))
        status: Obj = {"replicas": get_path(obj, rt.status_replicas_path) or 0}
        if selector:
            status["selector"] = selector
        return {
            "apiVersion": "autoscaling/v1",
            "kind": "Scale",
            "metadata": {
                k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp") if k in meta
            },
            "spec": {"replicas": get_path(obj, rt.spec_replicas_path) or 0},
            "status": status,
        }

    def get_scale(self, rt: ResourceType, namespace: str | None, name: str) -> Obj:
        with self._lock:
            return self._scale_of(rt, self._lookup(rt, self._ns(rt, namespace), name))

    def _put_scale(self, rt: ResourceType, ns: str, name: str, scale: Obj) -> Obj:
        old = self._lookup(rt, ns, name)
        self._scale_of(rt, old)
        rv = (scale.get("metadata") or {}).get("resourceVersion")
        if rv and rv != old["metadata"]["resourceVersion"]:
            raise conflict(rt.qualified, name)
        body = copy.deepcopy(old)
        set_path(body, rt.spec_replicas_path, int((scale.get("spec") or {}).get("replicas") or 0))
        self._replace(rt, ns, name, body, None, check_rv=False)
        return self._scale_of(rt, self._bucket(rt)[(ns, name)])

    def delete_rt(self, rt: ResourceType, namespace: str | None, name: str) -> Obj:
        """Deletes (or marks for deletion while finalizers remain); returns a Status or the object."""
        with self._lock:
            ns = self._ns(rt, namespace)
            obj = self._lookup(rt, ns, name)
            meta = obj["metadata"]
            if meta.get("finalizers") and rt.storage_key != NS_GK:
                if not meta.get("deletionTimestamp"):
                    body = copy.deepcopy(obj)
                    body["metadata"]["deletionTimestamp"] = now_rfc3339()
                    body["metadata"]["deletionGracePeriodSeconds"] = 0
                    return self._write(rt, ns, name, body, "MODIFIED", obj)
                return self._present(rt, obj)
            gone = self._remove(rt, ns, name)
            if rt.storage_key == POD_GK:  # graceful deletion: the apiserver answers with the pod
                body = self._present(rt, gone)
                body["metadata"].setdefault("deletionTimestamp", now_rfc3339())
                body["metadata"].setdefault("deletionGracePeriodSeconds", 0)
                return body
            return {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Success",
                "details": {
                    "name": name,
                    "group": rt.group,
                    "kind": rt.plural,
                    "uid": gone["metadata"]["uid"],
                },
            }

    def delete_collection_rt(
        self, rt: ResourceType, namespace: str | None, label_selector: str | None, field_selector: str | None
    ) -> Obj:
        with self._lock:
            listed = self.list_rt(rt, namespace, label_selector, field_selector)
            for item in listed["items"]:
                self.delete_rt(rt, item["metadata"].get("namespace"), item["metadata"]["name"])
            return listed

    def watch_rt(
        self,
        rt: ResourceType,
        namespace: str | None,
        label_selector: str | None,
        field_selector: str | None,
        resource_version: str | None,
    ) -> Watcher:
        lpred, fpred = label_matcher(label_selector), field_matcher(field_selector)
        w = Watcher(rt, namespace if rt.namespaced else None, lambda o: lpred(o) and fpred(o))
        with self._lock:
            if self._closed:
                w.events.put(None)
                return w
            if resource_version in (None, "", "0"):
                for key in sorted(self._bucket(rt)):
                    w.offer("ADDED", self._bucket(rt)[key], None)
            else:
                try:
                    since = int(resource_version)
                except ValueError as err:
                    raise bad_request(f"invalid resourceVersion {resource_version!r}") from err
                if len(self._history) == _HISTORY and since < self._history[0][0] - 1:
                    expired = ApiError(410, "Expired", f"too old resource version: {since}").status()
                    w.events.put(("ERROR", expired))
                for rv, gk, etype, obj, old in self._history:
                    if rv > since and gk == rt.storage_key:
                        w.offer(etype, obj, old)
            self._watchers.append(w)
        return w

    def unwatch(self, w: Watcher) -> None:
        with self._lock:
            if w in self._watchers:
                self._watchers.remove(w)

    def follow_log(
        self, namespace: str, pod: str, container: str | None, offset: int, timeout: float
    ) -> tuple[str, bool]:
        """Text after `offset`, waiting up to `timeout`; True when the stream should end."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                obj = self._objects.get(POD_GK, {}).get((namespace, pod))
                log = self._log(namespace, pod, container)
                done = self._closed or obj is None or get_path(obj, "status.phase") in ("Succeeded", "Failed")
                remaining = deadline - time.monotonic()
                if log.size > offset or done or remaining <= 0:
                    return log.text_from(offset), done
                self._cond.wait(remaining)


class LogBuffer:
    """A pod's log as chunks of at most CHUNK characters: appending a line never copies the whole log (a
    running pod of a long job logs for days), the tail is found from the end, a follower reads from an offset."""

    CHUNK = 64 * 1024

    def __init__(self) -> None:
        self._chunks: list[str] = []
        self.size = 0

    def append(self, text: str) -> None:
        if not text:
            return
        if self._chunks and len(self._chunks[-1]) + len(text) <= self.CHUNK:
            self._chunks[-1] += text
        else:
            self._chunks.append(text)
        self.size += len(text)

    def text_from(self, offset: int) -> str:
        out: list[str] = []
        start = 0
        for c in self._chunks:
            end = start + len(c)
            if end > offset:
                out.append(c[max(0, offset - start):])
            start = end
        return "".join(out)

    def tail(self, lines: int) -> str:
        if lines <= 0:
            return ""
        taken: list[str] = []
        found = 0
        for i, c in enumerate(reversed(self._chunks)):
            piece = c[:-1] if i == 0 and c.endswith("\n") else c  # the final newline ends the last line
            pos = len(piece)
            while found < lines:
                pos = piece.rfind("\n", 0, pos)
                if pos < 0:
                    break
                found += 1
            if found >= lines:
                taken.append(c[pos + 1:])
                return "".join(reversed(taken))
            taken.append(c)
        return "".join(reversed(taken))


def _normalize(rt: ResourceType, obj: Obj) -> None:
    """What the API server does to every write of a kind before storing it: a Secret's `stringData` is merged
    into `data` (base64, winning over the same key in `data`) and never stored; its `type` defaults to Opaque."""
    if rt.storage_key == ("", "secrets"):
        string_data = obj.pop("stringData", None)
        if isinstance(string_data, dict) and string_data:
            data: Obj = obj["data"] if isinstance(obj.get("data"), dict) else {}
            for key, value in string_data.items():
                data[key] = base64.b64encode(str(value).encode()).decode()
            obj["data"] = data
        obj.setdefault("type", "Opaque")


def random_suffix(n: int = 5) -> str:
    return "".join(random.choices(string.ascii_lowercase + string.digits, k=n))


def _pdb_count(value: int | str, total: int) -> int:
    """A PDB's minAvailable/maxUnavailable: an integer, or a percentage of the matching pods (rounded up)."""
    if isinstance(value, str) and value.endswith("%"):
        return -(-int(value[:-1]) * total // 100)
    return int(value)
