"""The one module that talks to PodStart: its REST API (/v1), and nothing else (no AWS or Kubernetes calls).

Every call goes through ROUTES, a table of (method, path, query parameters) that a test checks against the API's
own OpenAPI document, so a route the CLI uses cannot drift from the server. Errors come back as ApiError with
the server's problem+json (RFC 9457: title, status, detail, and `errors` [{loc, msg}] for fields).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx

from podstart_cli import __version__


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    query: tuple[str, ...] = ()
    body: bool = False


ROUTES: dict[str, Route] = {
    "me": Route("GET", "/v1/me"),
    "preferences": Route("GET", "/v1/preferences"),
    "list_clusters": Route("GET", "/v1/clusters", ("limit", "next_token", "region")),
    "get_cluster": Route("GET", "/v1/clusters/{cluster}", ("region",)),
    "list_nodes": Route("GET", "/v1/clusters/{cluster}/nodes", ("region", "limit", "next_token")),
    "get_node": Route("GET", "/v1/clusters/{cluster}/nodes/{node_id}", ("region",)),
    "list_jobs": Route("GET", "/v1/clusters/{cluster}/jobs", ("region", "limit", "next_token")),
    "get_job": Route("GET", "/v1/clusters/{cluster}/jobs/{job}", ("region", "namespace")),
    "get_job_logs": Route("GET", "/v1/clusters/{cluster}/jobs/{job}/logs", ("region", "namespace", "pod", "tail")),
    "list_endpoints": Route("GET", "/v1/clusters/{cluster}/endpoints", ("region", "limit", "next_token")),
    "get_endpoint": Route("GET", "/v1/clusters/{cluster}/endpoints/{endpoint}", ("region",)),
    "invoke_endpoint": Route("POST", "/v1/clusters/{cluster}/endpoints/{endpoint}/invoke", ("region",), body=True),
    "list_operations": Route("GET", "/v1/operations", ("cluster", "status", "limit", "next_token")),
    "get_operation": Route("GET", "/v1/operations/{operation_id}", ("wait", "version")),
    "spec_schema": Route("GET", "/v1/specs/schema"),
    "export_spec": Route("GET", "/v1/clusters/{cluster}/spec", ("region", "include")),
    "plan_spec": Route("POST", "/v1/specs/plan", body=True),
    "apply_spec": Route("POST", "/v1/specs/apply", ("dry_run",), body=True),
}

TERMINAL = ("SUCCEEDED", "FAILED", "CANCELLED")


class ApiError(Exception):
    """A problem+json answer (or a transport failure, status 0)."""

    def __init__(self, status: int, problem: dict[str, Any]) -> None:
        super().__init__(problem.get("detail") or problem.get("title") or f"HTTP {status}")
        self.status = status
        self.problem = problem

    @property
    def errors(self) -> list[dict[str, Any]]:
        return [e for e in self.problem.get("errors") or [] if isinstance(e, dict)]


@dataclass
class Answer:
    status: int
    body: Any
    headers: dict[str, str]


class Client:
    def __init__(self, endpoint: str, token: str, timeout: float = 60.0,
                 transport: httpx.BaseTransport | None = None) -> None:
        self.endpoint = endpoint.rstrip("/")
        self._http = httpx.Client(base_url=self.endpoint, timeout=timeout, transport=transport, headers={
            "Authorization": f"Bearer {token}", "User-Agent": f"podstart-cli/{__version__}",
            "Accept": "application/json", "X-PodStart-Face": "cli"})

    def close(self) -> None:
        self._http.close()

    # -- the one request path --------------------------------------------------------------------------------
    def call(self, name: str, path: dict[str, str] | None = None, query: dict[str, Any] | None = None,
             body: Any = None, idempotency_key: str | None = None) -> Answer:
        route = ROUTES[name]
        url = route.path.format(**{k: quote(str(v), safe="") for k, v in (path or {}).items()})
        params = {k: _param(v) for k, v in (query or {}).items() if v is not None}
        unknown = set(params) - set(route.query)
        if unknown:
            raise ValueError(f"{name} takes no query parameter {sorted(unknown)}")
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        for attempt in range(3):
            try:
                r = self._http.request(route.method, url, params=params, headers=headers,
                                       json=body if route.body else None)
            except httpx.TransportError as exc:
                if attempt < 2 and (route.method == "GET" or idempotency_key):
                    time.sleep(0.5 * (attempt + 1))
                    continue  # a read, or a write with its key: safe to send again
                raise ApiError(0, {"title": "Cannot reach PodStart", "status": 0,
                                   "detail": f"{self.endpoint}: {exc}"}) from None
            if r.status_code in (429, 502, 503, 504) and attempt < 2 and (route.method == "GET" or idempotency_key):
                time.sleep(_retry_after(r.headers, 0.5 * (attempt + 1)))  # a shared limit says when to come back
                continue
            return _answer(r)
        raise AssertionError("unreachable")

    # -- reads -----------------------------------------------------------------------------------------------
    def me(self) -> dict[str, Any]:
        return dict(self.call("me").body)

    def active_cluster(self) -> tuple[str, str] | None:
        active = (self.call("preferences").body or {}).get("active_cluster") or None
        return (str(active["name"]), str(active["region"])) if active else None

    def pages(self, name: str, path: dict[str, str] | None = None, query: dict[str, Any] | None = None,
              limit: int = 100) -> Iterator[dict[str, Any]]:
        token: str | None = None
        while True:
            page = self.call(name, path, {**(query or {}), "limit": limit, "next_token": token}).body
            yield from page.get("items") or []
            token = page.get("next_token")
            if not token:
                return

    def operation(self, op_id: str, wait: int = 0, version: int | None = None) -> dict[str, Any]:
        answer = self.call("get_operation", {"operation_id": op_id}, {"wait": wait or None, "version": version})
        if wait and "retry-after" in {k.lower() for k in answer.headers}:
            # the long poll was not granted (the caller's share of them is taken): it answered at once
            time.sleep(_retry_after(answer.headers, 2.0))
        return dict(answer.body)

    def wait_operation(self, op_id: str, timeout: float | None = None,
                       on_change: Any = None) -> dict[str, Any]:
        """Long-poll the operation to its end (the server answers on each visible change)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        op = self.operation(op_id)
        if on_change:
            on_change(op)
        while op["status"] not in TERMINAL:
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"operation {op_id} is still {op['status']}"
                                   + (f" at {op['phase']}" if op.get("phase") else ""))
            op = self.operation(op_id, wait=10, version=op.get("version"))
            if on_change:
                on_change(op)
        return op

    # -- specs -----------------------------------------------------------------------------------------------
    def plan(self, documents: list[dict[str, Any]], prune: bool) -> dict[str, Any]:
        return dict(self.call("plan_spec", body={"documents": documents, "prune": prune}).body)

    def apply(self, documents: list[dict[str, Any]], prune: bool, key: str | None = None,
              dry_run: bool = False) -> Answer:
        return self.call("apply_spec", query={"dry_run": True if dry_run else None},
                         body={"documents": documents, "prune": prune},
                         idempotency_key=None if dry_run else (key or str(uuid.uuid4())))


def _retry_after(headers: Any, default: float) -> float:
    raw = next((v for k, v in dict(headers).items() if k.lower() == "retry-after"), None)
    try:
        return min(max(float(raw), 0.1), 30.0) if raw is not None else default
    except ValueError:
        return default


def _param(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _answer(r: httpx.Response) -> Answer:
    try:
        body = r.json() if r.content else None
    except ValueError:
        body = None
    if r.status_code >= 400:
        problem = body if isinstance(body, dict) else {
            "title": r.reason_phrase or "Error", "status": r.status_code, "detail": r.text[:500]}
        raise ApiError(r.status_code, problem)
    return Answer(status=r.status_code, body=body, headers=dict(r.headers))
