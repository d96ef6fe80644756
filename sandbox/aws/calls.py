"""Client-side call log and fault injection, as botocore hooks on the control plane's client factory."""

from __future__ import annotations

import collections
import contextvars
import datetime as dt
import threading
from dataclasses import dataclass
from typing import Any

_MAX_STR = 512
_MAX_ITEMS = 50
_MAX_DEPTH = 6


def redact(value: Any, depth: int = 0) -> Any:
    """A JSON-friendly, bounded copy of API params with every secret masked by PodStart's one redaction
    (functions.domain.redaction: keys that name secrets, credential-looking values)."""
    from functions.domain import redaction

    if depth > _MAX_DEPTH:
        return "..."
    if isinstance(value, dict):
        return {
            k: (redaction.MASK if isinstance(k, str) and redaction.secret_key(k) else redact(v, depth + 1))
            for k, v in list(value.items())[:_MAX_ITEMS]
        }
    if isinstance(value, list | tuple):
        items = [redact(v, depth + 1) for v in value[:_MAX_ITEMS]]
        if len(value) > _MAX_ITEMS:
            items.append(f"... {len(value) - _MAX_ITEMS} more")
        return items
    if isinstance(value, bytes | bytearray):
        return f"<{len(value)} bytes>"
    if isinstance(value, str) and redaction.credential(value):
        return redaction.MASK
    if isinstance(value, str) and len(value) > _MAX_STR:
        return value[:_MAX_STR] + f"... ({len(value)} chars)"
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return repr(value)[:_MAX_STR]


# The API request (its API Gateway request id) an AWS call is made for; empty for workflows, events, timers.
ORIGIN: contextvars.ContextVar[str] = contextvars.ContextVar("podstart_call_origin", default="")


class CallLog:
    """Every AWS API call made through functions.adapters.aws.client, oldest first, bounded. Each record carries
    its sequence number (`seq`, counting every call ever logged): a window `after`/`until` stays the same calls
    once the oldest have been dropped, where list positions would shift."""

    def __init__(self, maxlen: int = 20_000) -> None:
        self._records: collections.deque[dict[str, Any]] = collections.deque(maxlen=maxlen)
        self._lock = threading.Lock()
        self._next = 0

    def append(self, service: str, operation: str, params: Any, outcome: str, region: str = "") -> None:
        record = {
            "service": service,
            "operation": operation,
            "params": params,
            "time": dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds"),
            "outcome": outcome,
            "request_id": ORIGIN.get(),
            "region": region,  # the client's region (a call's params rarely say it)
        }
        with self._lock:
            record["seq"] = self._next
            self._next += 1
            self._records.append(record)

    def mark(self) -> int:
        """The sequence number the next call will get: `records(after=mark)` is what happens from now on."""
        with self._lock:
            return self._next

    def records(self, service: str | None = None, operation: str | None = None,
                request_id: str | None = None, after: int | None = None,
                until: int | None = None) -> list[dict[str, Any]]:
        """The calls matching every filter given; `after` (inclusive) and `until` (exclusive) are marks."""
        with self._lock:
            snapshot = list(self._records)
        return [
            r
            for r in snapshot
            if (service is None or r["service"] == service)
            and (operation is None or r["operation"] == operation)
            and (request_id is None or r["request_id"] == request_id)
            and (after is None or r["seq"] >= after)
            and (until is None or r["seq"] < until)
        ]

    def clear(self) -> None:
        with self._lock:
            self._records.clear()


@dataclass
class Fault:
    service: str
    operation: str
    error_code: str
    count: int
    message: str
    status_code: int


class FaultInjector:
    """Fail a named AWS call N times with a given error code, client side (no botocore retry)."""

    def __init__(self) -> None:
        self._faults: list[Fault] = []
        self._lock = threading.Lock()

    def add(
        self,
        service: str,
        operation: str,
        error_code: str,
        count: int = 1,
        message: str | None = None,
        status_code: int = 400,
    ) -> None:
        with self._lock:
            self._faults.append(
                Fault(
                    service,
                    operation,
                    error_code,
                    count,
                    message or f"Injected fault: {error_code}",
                    status_code,
                )
            )

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()

    def list(self) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(vars(f)) for f in self._faults]

    def take(self, service: str, operation: str) -> Fault | None:
        """The first matching fault with calls left, its count decremented; None if none matches."""
        with self._lock:
            for fault in self._faults:
                if fault.service == service and fault.operation == operation and fault.count > 0:
                    fault.count -= 1
                    if fault.count == 0:
                        self._faults.remove(fault)
                    return fault
        return None


class ClientHooks:
    """botocore handlers: remember params, short-circuit faulted calls, record the outcome."""

    _KEY = "podstart_sandbox_params"

    def __init__(self, calls: CallLog, faults: FaultInjector) -> None:
        self.calls = calls
        self.faults = faults

    def install(self) -> None:
        from functions.adapters import aws

        aws.register_hook("before-parameter-build", self.before_parameter_build)
        aws.register_hook("before-call", self.before_call)
        aws.register_hook("after-call", self.after_call)

    def before_parameter_build(
        self, params: dict[str, Any], model: Any, context: dict[str, Any], **_: Any
    ) -> None:
        context[self._KEY] = redact(params)

    def before_call(self, model: Any, context: dict[str, Any], **_: Any) -> Any:
        from botocore.awsrequest import AWSResponse

        fault = self.faults.take(model.service_model.service_name, model.name)
        if fault is None:
            if model.service_model.service_name == "pricing" and model.name == "GetProducts":
                from sandbox.aws.pricing import get_products  # moto has no pricing service: seeded answers

                return AWSResponse("http://sandbox/pricing", 200, {}, None), get_products(context.get(self._KEY, {}))
            return None

        http = AWSResponse("http://sandbox/fault", fault.status_code, {}, None)
        return http, {
            "Error": {"Code": fault.error_code, "Message": fault.message},
            "ResponseMetadata": {"HTTPStatusCode": fault.status_code, "HTTPHeaders": {}},
        }

    def after_call(
        self, http_response: Any, parsed: dict[str, Any], model: Any, context: dict[str, Any], **_: Any
    ) -> None:
        outcome = "ok"
        status = getattr(http_response, "status_code", 200)
        if status >= 300:
            outcome = str((parsed or {}).get("Error", {}).get("Code") or status)
        self.calls.append(model.service_model.service_name, model.name, context.get(self._KEY, {}), outcome,
                          str(context.get("client_region") or ""))


def _known(url: str) -> bool:
    """The request is to an embedded cluster the sandbox still has (a twin's deletion may have taken it)."""
    from sandbox.aws.runtime import RUNTIME

    if RUNTIME.kube is None:
        return False
    cluster = RUNTIME.kube.cluster_of(url)
    return bool(cluster and RUNTIME.kube.store_or_none(cluster) is not None)


def _namespace_rules(url: str, namespace: str) -> list[dict[str, Any]]:
    """What the Roles of `namespace` grant the podstart-api group on the embedded cluster `url` is a request to
    (its API's own port, or `.../clusters/{name}/api/...`): the API server's RoleBindings there, as EKS evaluates
    them."""
    from functions.domain import rbac
    from sandbox.aws.runtime import RUNTIME

    if RUNTIME.kube is None:
        return []
    cluster = RUNTIME.kube.cluster_of(url)
    store = RUNTIME.kube.store_or_none(cluster) if cluster else None
    if store is None:
        return []
    api = "rbac.authorization.k8s.io/v1"
    return rbac.bound_rules(store.list(api, "Role", namespace), store.list(api, "RoleBinding", namespace))


# A Kubernetes request as the call log names it: reads start like AWS reads do ("Get"), writes do not.
_KUBE_VERBS = {"GET": "Get", "POST": "Post", "PUT": "Replace", "PATCH": "Apply", "DELETE": "Delete"}


class KubeHooks:
    """Every request the API function's Kubernetes client sends (functions.adapters.kube_http), in the call log
    as service `kubernetes` (operation: Get, Post, Replace, Apply or Delete; params: the path), tagged with
    the API request it served like the AWS calls."""

    def __init__(self, calls: CallLog) -> None:
        self.calls = calls

    def install(self) -> None:
        from functions.adapters import kube_http

        kube_http.register_hook(self.record)

    def record(self, method: str, url: str) -> None:
        """Log the request; refuse it (403, as EKS would) when the `podstart-api` group's RBAC does not allow it:
        the API function in the sandbox has exactly the access its access entry gives it in AWS."""
        import io
        import json
        import urllib.error
        from urllib.parse import urlsplit

        from functions.domain import rbac

        # no such embedded cluster (gone with a same-named twin): its API server's own 404 answers, not RBAC
        why = rbac.refused(method, url, namespaced=lambda ns: _namespace_rules(url, ns)) if _known(url) else None
        self.calls.append("kubernetes", _KUBE_VERBS.get(method.upper(), method.title()),
                          {"path": urlsplit(url).path}, "sent" if why is None else "Forbidden")
        if why is not None:
            status = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden", "code": 403,
                      "message": f'User "podstart-api" cannot {why} (group {rbac.GROUP})'}
            raise urllib.error.HTTPError(url, 403, "Forbidden", {}, io.BytesIO(json.dumps(status).encode()))  # type: ignore[arg-type]
