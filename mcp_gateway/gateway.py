"""The gateway's core, without the MCP SDK: the tool catalog, the caller's role, and each tool call forwarded to
the PodStart REST API over HTTP. Imports neither `mcp` nor `mcp_types`, so the Lambda's fast `tools/list`
(mcp_gateway.fast) answers from the same `Gateway` the SDK's server uses (mcp_gateway.server) without loading
the SDK.

The catalog is the REST API's /v1/openapi.json, fetched once per `Gateway` with the caller's identity (it is
behind the API's auth, as every tool is). A viewer sees and may call only read tools (its role comes from GET
/v1/me, asked once a minute per identity); a read-only gateway likewise.

Per tool call: one idempotency key for a mutation (the caller's, else a fresh one) reused for the
gateway's own HTTP retries of that call (connection errors, 429/502/503/504); `get_operation` with
`wait_seconds` loops on the REST long poll (<= 20 s a request) until the operation changes or ends, or
the wait (<= 60 s, and what the host allows) is over, backing off when the REST API answers early
without a change, and lets a change settle for 2 s (a burst, each change within 2 s of the last: up to 6 s)
so a step's end and the next step's start come as one answer; every answer is shaped by `views.py` unless the
caller passes `detail="full"`.
"""

from __future__ import annotations

import functools
import json
import logging
import ssl
import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any

import anyio
import httpx2

from mcp_gateway.calls import (
    ArgumentError,
    Outcome,
    Request,
    build_request,
    new_idempotency_key,
    refusal,
    shape_response,
)
from mcp_gateway.catalog import (
    FACE_HEADER,
    IDEMPOTENCY_ARG,
    MAX_WAIT_SECONDS,
    RESOURCE,
    SPEC_SCHEMA,
    VERSION_ARG,
    WAIT_ARG,
    ToolSpec,
    build_catalog,
    reference,
)

log = logging.getLogger(__name__)

SERVER_NAME = "podstart"  # the MCP server's name and version (initialize's serverInfo, the 2026 era's _meta stamp)
SERVER_VERSION = "1.0.0"

REST_LONG_POLL = 20  # the REST API holds GET /v1/operations/{id}?wait= at most this long
TIMEOUT = httpx2.Timeout(REST_LONG_POLL + 20.0, connect=5.0)
RETRY_STATUS = frozenset({429, 502, 503, 504})
# what reading the tool catalog (GET /v1/openapi.json) may raise: each becomes a message saying why
CATALOG_ERRORS = (httpx2.HTTPError, RuntimeError, ValueError)
RETRY_DELAYS = (0.5, 1.5)  # the gateway's own retries of one request (same idempotency key)
BACKOFF_MAX = 5.0  # seconds between REST long polls that came back early with nothing new
SETTLE = 2  # seconds a change may wait for the next one before the answer goes out
SETTLE_MAX = 6  # seconds a burst of changes (each within SETTLE of the last) may hold the answer in all
HOST_MARGIN = 3.0  # seconds kept free before the host's deadline (Lambda) to answer

TokenSource = Callable[[], str | None] | str | None

# The Authorization header of the MCP HTTP request being served (set by mcp_gateway.asgi).
caller_authorization: ContextVar[str | None] = ContextVar("podstart_caller_authorization", default=None)
# time.monotonic() by which the host must have the answer (set by the Lambda adapter), if it has a limit.
answer_by: ContextVar[float | None] = ContextVar("podstart_answer_by", default=None)


def api_base(api_url: str) -> str:
    """`http://host:port`, `.../` or `.../v1` all mean the API root."""
    base = api_url.rstrip("/")
    return base.removesuffix("/v1")


def _bearer(token: str | None) -> str | None:
    if not token:
        return None
    token = token.strip()
    return token if token.lower().startswith("bearer ") else f"Bearer {token}"


ROLE_TTL = 60.0
_roles: dict[str, tuple[float, str]] = {}  # authorization -> (when asked, role)


class ResourceError(Exception):
    """A resource the gateway cannot give: `unknown` (no such resource: the caller's mistake), else the catalog or
    the REST API could not answer. mcp_gateway.server turns it into the JSON-RPC error."""

    def __init__(self, message: str, *, unknown: bool = False) -> None:
        super().__init__(message)
        self.unknown = unknown


@functools.cache
def _tls() -> ssl.SSLContext:
    """One TLS context per process for every REST request: building one (reading the CA bundle) costs ~20 ms of
    CPU, which an HTTP client made per request would pay each time."""
    return httpx2.create_ssl_context()


class Gateway:
    """Catalog + HTTP forwarding, shared by every transport."""

    def __init__(self, api_url: str, token: TokenSource, read_only: bool, openapi: dict[str, Any] | None,
                 from_caller: bool = False, *, transport: httpx2.AsyncBaseTransport | None = None,
                 sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.base = api_base(api_url)
        self._token = token
        self.read_only = read_only
        self.from_caller = from_caller
        self._openapi = openapi
        self._specs: dict[str, ToolSpec] | None = build_index(openapi) if openapi is not None else None
        self._transport = transport  # tests put a fake REST API here
        self._sleep = sleep
        self._clock = clock

    def _client(self) -> httpx2.AsyncClient:
        if self._transport is not None:
            return httpx2.AsyncClient(timeout=TIMEOUT, transport=self._transport)
        return httpx2.AsyncClient(timeout=TIMEOUT, verify=_tls())

    def authorization(self) -> str | None:
        """Who the REST API sees: the MCP caller's bearer token (HTTP), else the configured token.

        With `from_caller`, a request without a token stays anonymous (the REST API answers 401):
        the gateway never lends its own identity to a caller.
        """
        if self.from_caller:
            return caller_authorization.get()
        token = self._token() if callable(self._token) else self._token
        return _bearer(token)

    async def specs(self) -> dict[str, ToolSpec]:
        """The catalog; fetched once (two concurrent first calls may both fetch: harmless, no lock to
        tie the gateway to one event loop, since the Lambda adapter runs a loop per invocation)."""
        if self._specs is None:
            self._openapi = await self._fetch_openapi()
            self._specs = build_index(self._openapi)
        return self._specs

    def cached_spec(self, name: str) -> ToolSpec | None:
        return None if self._specs is None else self._specs.get(name)

    async def _fetch_openapi(self) -> dict[str, Any]:
        headers = {"Accept": "application/json"}
        auth = self.authorization()
        if auth:
            headers["Authorization"] = auth
        async with self._client() as client:
            response = await client.get(f"{self.base}/v1/openapi.json", headers=headers)
        response.raise_for_status()
        doc = response.json()
        if not isinstance(doc, dict) or "paths" not in doc:
            raise RuntimeError(f"{self.base}/v1/openapi.json is not an OpenAPI document")
        return doc

    def catalog_problem(self, exc: Exception) -> str:
        """Why the tool catalog (the API's OpenAPI document, behind the API's auth as every tool is) is unreadable."""
        if isinstance(exc, httpx2.HTTPStatusError):
            status = exc.response.status_code
            if status in (401, 403):
                return (f"the caller is not signed in to PodStart (HTTP {status}); send "
                        "'Authorization: Bearer <PodStart access token>' to the MCP server")
            return f"could not load the tool catalog from {self.base}/v1/openapi.json (HTTP {status})"
        return f"could not load the tool catalog from {self.base}/v1/openapi.json ({exc})"

    async def caller_read_only(self) -> bool:
        """Read-only when configured so, or when the caller is a viewer (asked once a minute per identity).
        The REST API refuses a viewer's writes either way; this keeps them out of the tool list."""
        if self.read_only:
            return True
        auth = self.authorization()
        if not auth:
            return False
        now = time.monotonic()
        hit = _roles.get(auth)
        if hit is None or now - hit[0] > ROLE_TTL:
            role = ""
            try:
                async with self._client() as client:
                    r = await client.get(f"{self.base}/v1/me", headers={"Authorization": auth})
                if r.status_code == 200:
                    role = str(r.json().get("role", ""))
            except (httpx2.HTTPError, ValueError):
                role = ""
            hit = _roles[auth] = (now, role)
        return hit[1] == "viewer"

    async def visible(self) -> list[ToolSpec]:
        read_only = await self.caller_read_only()
        return [s for s in (await self.specs()).values() if not (read_only and s.mutating)]

    async def resource(self, uri: str) -> str:
        """A resource's text: a tool's whole reference (`podstart://tools/<tool>`), or the spec documents' JSON
        Schema (`podstart://spec-schema`, read from the REST API with the caller's identity). Raises
        `ResourceError` when there is no such resource or it cannot be read."""
        try:
            specs = await self.specs()
        except CATALOG_ERRORS as exc:
            raise ResourceError(self.catalog_problem(exc)) from exc
        if uri == SPEC_SCHEMA:
            headers = {"Accept": "application/json", FACE_HEADER: "mcp"}
            auth = self.authorization()
            if auth:
                headers["Authorization"] = auth
            async with self._client() as client:
                response = await client.get(f"{self.base}/v1/specs/schema", headers=headers)
            if response.status_code != 200:
                raise ResourceError(f"{uri}: the REST API answered HTTP {response.status_code}")
            return response.text
        prefix = RESOURCE.format(name="")
        spec = specs.get(uri.removeprefix(prefix)) if uri.startswith(prefix) else None
        if spec is None:
            raise ResourceError(f"no resource {uri} (podstart://tools/<tool> or {SPEC_SCHEMA})", unknown=True)
        return json.dumps(reference(spec), indent=1)

    async def call(self, name: str, arguments: dict[str, Any]) -> Outcome:
        try:
            specs = await self.specs()
        except CATALOG_ERRORS as exc:
            return Outcome(f"{name}: {self.catalog_problem(exc)}", None, True)
        spec = specs.get(name)
        if spec is None:
            return Outcome(f"unknown tool {name}", None, True)
        if spec.mutating and await self.caller_read_only():
            return refusal(spec)
        # One key for this tool call: the caller's, else a fresh one; the gateway's retries below reuse it.
        key = str(arguments.get(IDEMPOTENCY_ARG) or new_idempotency_key()) if spec.mutating else None
        try:
            if spec.arg(WAIT_ARG) is not None and spec.arg(VERSION_ARG) is not None:
                return await self._watch(spec, arguments)
            req, shape = build_request(spec, arguments, key)
        except ArgumentError as exc:
            return Outcome(str(exc), None, True)
        response = await self._send(spec, req)
        if isinstance(response, Outcome):
            return response
        return shape_response(spec, response.status_code, response.headers.get("content-type", ""), response.text,
                              shape, key)

    async def _send(self, spec: ToolSpec, req: Request) -> httpx2.Response | Outcome:
        """One REST request, retried on connection errors and 429/502/503/504 with the same headers (so the
        same Idempotency-Key): a transport retry of one tool call never becomes a second request."""
        headers = {**dict(req.headers), FACE_HEADER: "mcp"}  # the audit trail's face
        auth = self.authorization()
        if auth:
            headers["Authorization"] = auth
        for attempt, delay in enumerate((*RETRY_DELAYS, None)):
            try:
                async with self._client() as client:
                    response = await client.request(req.method, f"{self.base}{req.path}", params=req.query or None,
                                                    json=req.body, headers=headers)
            except httpx2.TransportError as exc:
                log.warning("PodStart API unreachable (attempt %d): %r", attempt + 1, exc)
                if delay is None:
                    key = headers.get("Idempotency-Key")
                    same = f' with the same idempotency_key="{key}"' if key else ""
                    return Outcome(f"{spec.name}: the PodStart API at {self.base} did not answer "
                                   f"({type(exc).__name__}); this is transient, call again{same}.", None, True)
            else:
                if response.status_code not in RETRY_STATUS or delay is None:
                    return response
            await self._sleep(delay)
        raise AssertionError("unreachable")

    def _wait_budget(self, wait: int) -> float:
        """Seconds this call may wait: what the caller asked (<= 60), within what the host allows."""
        budget = float(max(0, min(wait, MAX_WAIT_SECONDS)))
        by = answer_by.get()
        if by is not None:
            budget = min(budget, max(0.0, by - self._clock() - HOST_MARGIN))
        return budget

    async def _poll(self, spec: ToolSpec, arguments: dict[str, Any], wait: int,
                    version: Any) -> tuple[Outcome, dict[str, Any] | None]:
        """One REST read of the operation (a long poll when `wait` > 0): the shaped result, and the record
        when the read succeeded."""
        ask = {k: v for k, v in arguments.items() if k not in (WAIT_ARG, VERSION_ARG)}
        ask[WAIT_ARG] = wait
        if version is not None:
            ask[VERSION_ARG] = version
        req, shape = build_request(spec, ask)
        response = await self._send(spec, req)
        if isinstance(response, Outcome):
            return response, None
        outcome = shape_response(spec, response.status_code, response.headers.get("content-type", ""),
                                 response.text, shape)
        return outcome, (_json_dict(response) if response.status_code == 200 else None)

    async def _watch(self, spec: ToolSpec, arguments: dict[str, Any]) -> Outcome:
        """get_operation with `wait_seconds`: REST long polls (<= 20 s each) until the operation's version
        differs from the one passed (or, without one, from the first answer), it is terminal, or the wait is
        over. A REST answer that comes back early with nothing new (a stale version the API ignores, a
        proxy's cut) is followed by a growing pause, never by an immediate repeat: no busy loop."""
        wait = arguments.get(WAIT_ARG) or 0
        if not isinstance(wait, int) or isinstance(wait, bool) or wait < 0:
            raise ArgumentError(f"{spec.name}: {WAIT_ARG} must be a whole number of seconds (0-60)")
        deadline = self._clock() + self._wait_budget(wait)
        version = arguments.get(VERSION_ARG)
        outcome: Outcome | None = None
        if version is None or deadline - self._clock() < 1:
            # A plain read: the answer when there is nothing to wait for, else the version to wait from.
            outcome, op = await self._poll(spec, arguments, 0, version)
            if op is None or _terminal(op) or deadline - self._clock() < 1:
                return outcome
            if version is not None and op.get("version") != version:
                return outcome
            version = op.get("version")
        pause = 1.0
        while True:
            chunk = int(min(REST_LONG_POLL, deadline - self._clock()))
            if chunk < 1 and outcome is not None:
                return outcome
            started = self._clock()
            outcome, op = await self._poll(spec, arguments, max(chunk, 0), version)
            if op is not None and not _terminal(op) and op.get("version") != version:
                return await self._settle(spec, arguments, outcome, op, deadline)
            if op is None or _terminal(op) or self._clock() >= deadline - 1:
                return outcome
            if self._clock() - started < chunk - 1:  # came back early with nothing new: back off
                await self._sleep(min(pause, max(0.0, deadline - self._clock())))
                pause = min(pause * 2, BACKOFF_MAX)


    async def _settle(self, spec: ToolSpec, arguments: dict[str, Any], outcome: Outcome,
                      op: dict[str, Any], deadline: float) -> Outcome:
        """A change often comes with others a moment later (a step ends, the next one starts, its first message):
        wait up to SETTLE seconds for the next, and again while they keep coming (up to SETTLE_MAX in all, never
        past the wait), so one answer carries the burst and the watcher makes one call, not several."""
        until = min(deadline - 1, self._clock() + SETTLE_MAX)
        version = op.get("version")
        while True:
            wait = int(min(SETTLE, until - self._clock()))
            if wait < 1:
                return outcome
            later, newer = await self._poll(spec, arguments, wait, version)
            if newer is None:
                return outcome
            outcome = later
            if _terminal(newer) or newer.get("version") == version:
                return outcome
            version = newer.get("version")


def _terminal(op: dict[str, Any]) -> bool:
    return op.get("status") in ("SUCCEEDED", "FAILED", "CANCELLED")


def _json_dict(response: httpx2.Response) -> dict[str, Any] | None:
    try:
        data = response.json()
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def build_index(openapi: dict[str, Any]) -> dict[str, ToolSpec]:
    return {s.name: s for s in build_catalog(openapi)}
