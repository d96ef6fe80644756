"""The sandbox: embedded AWS + embedded Kubernetes + one local HTTP port serving UI, REST, MCP and /ws."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import logging
import os
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.convertors import PathConvertor, register_url_convertor
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from functions.lambdas import LAMBDAS
from sandbox import proxy, resources
from sandbox.auth import Tokens
from sandbox.concurrency import make_resolver_thread_safe
from sandbox.config import SandboxSettings
from sandbox.events_feed import EventFeed
from sandbox.live_socket import LiveSockets

LOG = logging.getLogger("podstart.sandbox")
WEB_DIST = resources.REPO / "web" / "dist"
PROBLEM = "application/problem+json"


class _ProxyPath(PathConvertor):
    """`path`, newlines included (an encoded %0A): like API Gateway's {proxy+}, every /v1 path reaches the API."""

    regex = r"[\s\S]*"


register_url_convertor("proxy", _ProxyPath())


def _problem(status: int, title: str, detail: str, errors: list[dict[str, Any]] | None = None) -> JSONResponse:
    body: dict[str, Any] = {"type": f"https://podstart.dev/problems/{title.lower().replace(' ', '-')}",
                            "title": title, "status": status, "detail": detail}
    if errors:
        body["errors"] = errors
    return JSONResponse(body, status_code=status, media_type=PROBLEM)


STOPPING = object()
REQUEST_THREAD = "podstart-api-request"


class _QuietAbandonedRequests(logging.Filter):
    """Once the sandbox stops, a request answered 503 and left running (a long poll) fails against the
    stopped embedded AWS; what it logs then is noise from the shutdown, not news."""

    def filter(self, record: logging.LogRecord) -> bool:
        return threading.current_thread().name != REQUEST_THREAD


class InFlight:
    """Runs each API request on its own daemon thread, so that stopping never waits for one.

    Handlers block (a long poll sleeps up to 20 s); on asyncio's default executor the process could
    not exit before they return. A request released by `release_all` answers at once; its thread is
    left to finish the read it was doing, or to end with the process.
    """

    def __init__(self) -> None:
        self._pending: set[asyncio.Future[Any]] = set()

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        context = contextvars.copy_context()

        def settle(outcome: Callable[[], None]) -> None:
            if not future.done():
                outcome()

        def work() -> None:
            try:
                result = context.run(fn, *args)
            except BaseException as exc:  # handed to the awaiting request, which re-raises it
                done = partial(settle, partial(future.set_exception, exc))
            else:
                done = partial(settle, partial(future.set_result, result))
            with contextlib.suppress(RuntimeError):  # the loop is gone: nobody awaits the answer
                loop.call_soon_threadsafe(done)

        self._pending.add(future)
        try:
            threading.Thread(target=work, name=REQUEST_THREAD, daemon=True).start()
            return await future
        finally:
            self._pending.discard(future)

    def release_all(self) -> None:
        for future in list(self._pending):
            if not future.done():
                future.set_result(STOPPING)


class Sandbox:
    """Starts everything in-process; `app` is the ASGI app for the one port."""

    def __init__(self, settings: SandboxSettings | None = None) -> None:
        self.settings = settings or SandboxSettings()
        self.tokens = Tokens.make(self.settings.token, self.settings.operator_token,
                                  self.settings.viewer_token)
        self.feed = EventFeed()
        self.sockets = LiveSockets(self.feed)
        self.ready = threading.Event()
        self._stopping = threading.Event()
        self.aws: Any = None
        self.kube: Any = None
        self.info: dict[str, Any] = {}
        self._api: Any = None
        self._mcp: Any = None
        self._in_flight = InFlight()
        self._mutation_slots = asyncio.Semaphore(self.settings.mutation_slots)

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> None:
        from functions.adapters import aws as aws_factory
        from sandbox.aws import EmbeddedAws
        from sandbox.kube import KubeApiServer

        scale = self.settings.time_scale
        os.environ.update({  # before any handler module builds its Logger
            "POWERTOOLS_SERVICE_NAME": "podstart-sandbox",
            "POWERTOOLS_TRACE_DISABLED": "1",
            "POWERTOOLS_METRICS_NAMESPACE": "PodStart",
            "POWERTOOLS_METRICS_DISABLED": "1",
            "POWERTOOLS_LOG_LEVEL": os.environ.get("POWERTOOLS_LOG_LEVEL", "WARNING"),
            "AWS_LAMBDA_FUNCTION_NAME": "podstart-sandbox",
        })
        from functions.observability import logger

        logger.setLevel(os.environ["POWERTOOLS_LOG_LEVEL"])  # in case a handler module was imported first
        self.kube = KubeApiServer(port=self.settings.kube_port, time_scale=scale)
        self.kube.start()
        self.aws = EmbeddedAws(port=self.settings.aws_port, time_scale=scale, kube=self.kube)
        self.aws.start()
        from sandbox.aws.runtime import RUNTIME

        RUNTIME.public_url = self.base_url
        os.environ.update(self.aws.env())
        aws_factory.client.cache_clear()  # clients made before the endpoint was exported are stale
        self.feed.install()
        handlers = {spec.function_name: spec.load() for spec in LAMBDAS.values()}
        function_arns = {name: self.aws.function_arn(name) for name in handlers}
        made = resources.create_all(self._plain_client, function_arns, self._workflow_role())
        os.environ.update({
            "OPERATIONS_TABLE": made["tables"]["operations"],
            "STATE_TABLE": made["tables"]["state"],
            "IDEMPOTENCY_TABLE": made["tables"]["idempotency"],
            "AUDIT_TABLE": made["tables"]["audit"],
            "EVENT_BUS_NAME": made["bus"],
            "WORKFLOW_ARNS": json.dumps(made["workflows"]),
            "DATA_BUCKET": made["buckets"]["data"],
            "ASSETS_BUCKET": made["buckets"]["assets"],
            "TIME_SCALE": str(scale),
            "PODSTART_ROLE_ARN": self._role("podstart-steps", "lambda.amazonaws.com"),
            # the sandbox's /ws follows logs in this process, as the API function
            "PODSTART_READER_ROLE_ARNS": self._role("podstart-api", "lambda.amazonaws.com"),
            "PERMISSIONS_BOUNDARY_ARN": self._boundary(),
            "REGISTERED_BUCKETS": self.settings.registered_buckets,
            **({"LIMITS": self.settings.limits} if self.settings.limits else {}),
        })
        self._clear_settings_caches()
        make_resolver_thread_safe()
        self.aws.route_lambdas(handlers)
        self._api = LAMBDAS["api"].load()
        self.info = made
        self._start_sweeper(handlers["podstart-events"])
        self.ready.set()

    @staticmethod
    def _clear_settings_caches() -> None:
        from functions import settings

        for fn in (settings.api_settings, settings.steps_settings, settings.events_settings):
            fn.cache_clear()

    def register_workflow(self, kind: str, steps: dict[str, Any]) -> str:
        """Deploy an extra workflow (tests use this to exercise the engine on their own steps)."""
        from functions.api import deps
        from functions.domain.asl import definition
        from functions.domain.kinds import KINDS
        from functions.workflows.context import Workflow
        from functions.workflows.registry import WORKFLOWS

        KINDS[kind] = tuple(steps)
        WORKFLOWS.register(Workflow(kind=kind, steps=steps))
        body = json.dumps(definition(kind, tuple(steps))).replace(
            "${StepsFunctionArn}", self.aws.function_arn("podstart-steps"))
        sfn = self._plain_client("stepfunctions")
        arn = str(sfn.create_state_machine(name="podstart-" + kind.replace(".", "-"), definition=body,
                                           roleArn=self._workflow_role())["stateMachineArn"])
        self.info["workflows"][kind] = arn
        os.environ["WORKFLOW_ARNS"] = json.dumps(self.info["workflows"])
        self._clear_settings_caches()
        deps.services.cache_clear()
        return arn

    def _start_sweeper(self, events_handler: Any) -> None:
        """EventBridge's `rate(5 minutes)` sweep and `rate(10 minutes)` discovery rules, on the sandbox clock:
        invoke the events function with the Scheduled Events the deployed schedules send (the discovery also
        once at start, as a deployment's first list would otherwise wait for it, and at most once a minute)."""
        from functions.events.projector import DISCOVER
        from functions.logic.clusters.discovery import DISCOVER_EVERY_MINUTES
        from sandbox.aws.lambdas import LambdaContext

        period = max(1.0, resources.SWEEP_MINUTES * 60 / self.settings.time_scale)
        # At most once a minute however compressed the clock: a scan is a ListClusters in every HyperPod region
        # (16 calls), and a list that names its region reads that region live anyway.
        every = max(60.0, DISCOVER_EVERY_MINUTES * 60 / self.settings.time_scale)
        ctx = LambdaContext("podstart-events", self.aws.function_arn("podstart-events"), timeout_s=30)

        def fire(rule: str, detail: dict[str, str]) -> None:
            try:
                events_handler({"source": "aws.events", "detail-type": "Scheduled Event", "detail": detail,
                                "region": resources.REGION, "resources": [rule]}, ctx)
            except Exception:
                LOG.exception("%s failed", rule)

        def run() -> None:
            fire("podstart-discover", {"podstart": DISCOVER})
            discovered = time.monotonic()
            while not self._stopping.wait(period):
                fire("podstart-sweep", {})
                if time.monotonic() - discovered >= every:
                    fire("podstart-discover", {"podstart": DISCOVER})
                    discovered = time.monotonic()

        threading.Thread(target=run, name="podstart-sweeper", daemon=True).start()

    def drain(self) -> None:
        """Answer every request still running (a long poll waits up to 20 s) with 503 now; call from the
        serving loop when the server begins to shut down."""
        from functions.observability import logger

        quiet = _QuietAbandonedRequests()
        for handler in (*logging.getLogger(logger.service).handlers, *logging.getLogger().handlers):
            handler.addFilter(quiet)
        self._in_flight.release_all()

    def stop(self) -> None:
        self._stopping.set()
        if self.aws is not None:
            self.aws.stop()
        if self.kube is not None:
            self.kube.stop()

    def _plain_client(self, service: str, region: str | None = None) -> Any:
        from functions.adapters import aws as aws_factory

        return aws_factory.client(service, region)

    def _role(self, name: str, service: str) -> str:
        iam = self._plain_client("iam")
        doc = json.dumps({"Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Principal": {"Service": service}, "Action": "sts:AssumeRole"}]})
        try:
            return str(iam.create_role(RoleName=name, AssumeRolePolicyDocument=doc)["Role"]["Arn"])
        except iam.exceptions.EntityAlreadyExistsException:
            return str(iam.get_role(RoleName=name)["Role"]["Arn"])

    def _boundary(self) -> str:
        """The permissions boundary every role the workflows create carries (infra/boundary.py in AWS)."""
        iam = self._plain_client("iam")
        doc = json.dumps({"Version": "2012-10-17", "Statement": [
            {"Sid": "SandboxCeiling", "Effect": "Allow", "Action": ["s3:*", "ec2:*", "eks:*", "logs:*"],
             "Resource": "*"}]})
        try:
            return str(iam.create_policy(PolicyName="podstart-roles-boundary", PolicyDocument=doc)["Policy"]["Arn"])
        except iam.exceptions.EntityAlreadyExistsException:
            return f"arn:aws:iam::{resources.ACCOUNT}:policy/podstart-roles-boundary"

    def _workflow_role(self) -> str:
        return self._role("podstart-workflows", "states.amazonaws.com")

    # -- URLs -----------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        return f"http://{self.settings.host}:{self.settings.port}"

    def sign_in_url(self) -> str:
        return f"{self.base_url}/#token={self.tokens.admin}"

    # -- HTTP -----------------------------------------------------------------------------------
    def _claims(self, request: Request) -> dict[str, str] | None:
        return self.tokens.claims(request.headers.get("authorization"))

    async def healthz(self, request: Request) -> Response:
        if not self.ready.is_set():
            return JSONResponse({"status": "starting"}, status_code=503)
        return JSONResponse({"status": "ok"})

    async def api(self, request: Request) -> Response:
        if not self.ready.is_set():
            return _problem(503, "Starting", "the sandbox is still starting")
        body = await request.body()
        event = proxy.to_event(
            request.method, request.url.path, list(request.headers.items()),
            list(request.query_params.multi_items()), body, self._claims(request),
            request.client.host if request.client else "127.0.0.1",
        )
        request_id = event["requestContext"]["requestId"]
        mutation = request.method in ("POST", "PUT", "PATCH", "DELETE")
        async with self._mutation_slots if mutation else contextlib.nullcontext():
            result = await self._invoke_api(event, request_id)
        if result is STOPPING:
            return _problem(503, "Stopping", "the sandbox is stopping")
        status, headers, payload = proxy.from_result(result)
        headers.pop("Content-Length", None)
        headers["x-amzn-RequestId"] = request_id  # as API Gateway answers; /v1/sandbox/calls?request_id= filters by it
        return Response(payload, status_code=status, headers=headers)

    async def _invoke_api(self, event: dict[str, Any], request_id: str) -> Any:
        """One invocation of the API function, its AWS calls tagged with the request id in the call log.
        The Lambda context (and so its deadline) starts here, when the invocation runs, as on AWS."""
        from sandbox.aws.calls import ORIGIN
        from sandbox.aws.lambdas import LambdaContext

        ctx = LambdaContext("podstart-api", self.aws.function_arn("podstart-api"), timeout_s=29)
        token = ORIGIN.set(request_id)
        try:
            return await self._in_flight.run(self._api, event, ctx)
        finally:
            ORIGIN.reset(token)

    def _require(self, request: Request, admin: bool = False) -> JSONResponse | None:
        claims = self._claims(request)
        if claims is None:
            return _problem(401, "Unauthorized", "sign in first: send Authorization: Bearer <token>")
        if admin and claims.get("cognito:groups") != "admin":
            return _problem(403, "Forbidden", "sandbox controls need the admin token")
        return None

    async def sandbox_info(self, request: Request) -> Response:
        if (denied := self._require(request)) is not None:
            return denied
        return JSONResponse({
            "aws_endpoint": self.aws.endpoint,
            "kubernetes": self.kube.clusters(),
            "time_scale": self.settings.time_scale,
            "region": resources.REGION,
            "tables": self.info.get("tables"),
            "buckets": self.info.get("buckets"),
        })

    async def calls(self, request: Request) -> Response:
        if (denied := self._require(request)) is not None:
            return denied
        q = request.query_params
        try:
            after, until = (int(q[k]) if q.get(k) else None for k in ("after", "until"))
        except ValueError:
            return JSONResponse({"type": "about:blank", "title": "Bad Request", "status": 400,
                                 "detail": "after and until are call sequence numbers (next_seq of an earlier answer)"},
                                status_code=400, media_type="application/problem+json")
        mark = self.aws.calls.mark()
        return JSONResponse({"items": self.aws.calls.records(service=q.get("service"), operation=q.get("operation"),
                                                             request_id=q.get("request_id"), after=after, until=until),
                             "next_seq": mark})

    async def faults(self, request: Request) -> Response:
        if (denied := self._require(request, admin=True)) is not None:
            return denied
        if request.method == "DELETE":
            self.aws.faults.clear()
            return Response(status_code=204)
        if request.method == "GET":
            return JSONResponse({"items": self.aws.faults.list()})
        try:
            body = await request.json()
            fault = {
                "service": str(body["service"]), "operation": str(body["operation"]),
                "error_code": str(body["error_code"]), "count": int(body.get("count", 1)),
                "message": body.get("message"), "status_code": int(body.get("status_code", 400)),
            }
        except (ValueError, KeyError, TypeError) as exc:
            return _problem(422, "Invalid request", f"need service, operation, error_code (and count): {exc}")
        if fault["count"] < 1:
            return _problem(422, "Invalid request", "count: must be at least 1")
        self.aws.faults.add(**fault)
        return JSONResponse(fault, status_code=201)

    async def states(self, request: Request) -> Response:
        """Drive an AWS resource into a terminal failed state, now or on its next create/update."""
        from sandbox.aws import states
        from sandbox.aws.runtime import RUNTIME, ResourceMissing

        if (denied := self._require(request, admin=True)) is not None:
            return denied
        if request.method == "DELETE":
            RUNTIME.disarm()
            return Response(status_code=204)
        if request.method == "GET":
            return JSONResponse({"items": [dict(vars(a)) for a in RUNTIME.armed()]})
        try:
            change = states.parse(json.loads(await request.body() or b"null"))
        except ValueError as exc:  # malformed JSON or InvalidStateRequest
            field = exc.field if isinstance(exc, states.InvalidStateRequest) else "body"
            message = exc.message if isinstance(exc, states.InvalidStateRequest) else f"not JSON: {exc}"
            loc = ["body"] if field == "body" else ["body", field]
            return _problem(422, "Invalid request", f"{field}: {message}", [{"loc": loc, "msg": message}])
        if change.when != "now":
            states.apply(change)
            return JSONResponse({"armed": change.as_dict()}, status_code=201)
        try:
            await asyncio.to_thread(states.apply, change)
        except ResourceMissing as exc:
            return _problem(404, "Not found", str(exc))
        client = self.aws.client(change.service, change.region)
        return JSONResponse(await asyncio.to_thread(states.describe, change, client))

    async def node_fault(self, request: Request) -> Response:
        """Simulate a fault on a HyperPod instance: {"kind": "gpu_xid" | "efa_down" | "nccl_hang" | "unreachable",
        "latent": false}; a latent fault is found only by a deep health check."""
        from sandbox.aws.runtime import ResourceMissing
        from sandbox.aws.sagemaker import faults

        if (denied := self._require(request, admin=True)) is not None:
            return denied
        try:
            body = json.loads(await request.body() or b"null")
        except ValueError as exc:
            return _problem(422, "Invalid request", f"body: not JSON: {exc}", [{"loc": ["body"], "msg": "not JSON"}])
        kind = body.get("kind") if isinstance(body, dict) else None
        if kind not in faults.FAULTS:
            msg = f"must be one of {', '.join(sorted(faults.FAULTS))}"
            return _problem(422, "Invalid request", f"kind: {msg}", [{"loc": ["body", "kind"], "msg": msg}])
        latent = body.get("latent", False)
        if not isinstance(latent, bool):
            return _problem(422, "Invalid request", "latent: must be a boolean",
                            [{"loc": ["body", "latent"], "msg": "must be a boolean"}])
        try:
            result = await asyncio.to_thread(faults.inject, request.path_params["node_id"], kind, latent)
        except ResourceMissing as exc:
            return _problem(404, "Not found", str(exc))
        except faults.FaultRefused as exc:
            return _problem(409, "Conflict", str(exc))
        return JSONResponse(result, status_code=201)

    async def ws(self, websocket: WebSocket) -> None:
        """Live events. Authenticate with an Authorization header or a first message {"token": ...}."""
        await websocket.accept()
        claims = self.tokens.claims(websocket.headers.get("authorization"))
        if claims is None:
            try:
                first = await asyncio.wait_for(websocket.receive_json(), timeout=10)
                claims = self.tokens.claims(f"Bearer {first.get('token', '')}")
            except (TimeoutError, WebSocketDisconnect, ValueError, AttributeError):
                claims = None
        if claims is None:
            await websocket.send_json({"type": "error", "status": 401, "detail": "send {\"token\": ...} first"})
            await websocket.close(code=4401)
            return
        await self.sockets.serve(websocket, str(claims.get("sub") or "anonymous"))

    async def mlflow_page(self, request: Request) -> Response:
        """What a presigned MLflow link opens (CreatePresignedMlflowTrackingServerUrl): the tracking server's
        experiments and the metrics simulated jobs logged. The link's token is the access, as in AWS."""
        from sandbox.aws.sagemaker import mlflow

        status, body = mlflow.page(request.path_params["region"], request.path_params["name"],
                                   request.query_params.get("authToken"))
        return HTMLResponse(body, status_code=status)

    async def index(self, request: Request) -> Response:
        path = request.url.path.lstrip("/") or "index.html"
        if WEB_DIST.is_dir():
            candidate = (WEB_DIST / path).resolve()
            if candidate.is_file() and WEB_DIST.resolve() in candidate.parents:
                return FileResponse(candidate)
            return FileResponse(WEB_DIST / "index.html")
        return HTMLResponse(
            "<!doctype html><html lang=en><head><meta charset=utf-8><title>PodStart sandbox</title>"
            "<link rel=icon href=data:,></head><body><h1>PodStart sandbox</h1>"
            "<p>The web UI is not built yet. The REST API is at <code>/v1</code> "
            "(OpenAPI: <code>/v1/openapi.json</code>), MCP at <code>/mcp</code>.</p></body></html>"
        )

    def _mcp_app(self) -> Any:
        try:
            from mcp_gateway.asgi import create_app
        except ImportError:
            return None
        try:
            return create_app(f"{self.base_url}")
        except Exception:
            LOG.exception("MCP gateway unavailable")
            return None

    def asgi(self) -> Starlette:
        routes: list[Any] = [
            Route("/healthz", self.healthz),
            Route("/v1/sandbox", self.sandbox_info),
            Route("/v1/sandbox/calls", self.calls),
            Route("/v1/sandbox/faults", self.faults, methods=["GET", "POST", "DELETE"]),
            Route("/v1/sandbox/states", self.states, methods=["GET", "POST", "DELETE"]),
            Route("/v1/sandbox/nodes/{node_id}/fault", self.node_fault, methods=["POST"]),
            Route("/sandbox/mlflow/{region}/{name}/", self.mlflow_page),
            Route("/v1/{path:proxy}", self.api, methods=["GET", "POST", "PUT", "PATCH", "DELETE"]),
            WebSocketRoute("/ws", self.ws),
        ]
        self._mcp = self._mcp_app()
        routes += [Route("/mcp", endpoint=self._mcp, methods=["GET", "POST", "DELETE"]), Mount("/mcp", app=self._mcp),
                   Route("/{path:path}", self.index)]
        # Compress the UI's assets and JSON like CloudFront does; /ws and /mcp streams pass through.
        return Starlette(routes=routes, middleware=[Middleware(GZipMiddleware, minimum_size=1024)])


def write_tokens(sandbox: Sandbox) -> dict[str, Path]:
    """Write each role's token file (mode 0600); role -> path."""
    return sandbox.tokens.write(sandbox.settings.state_dir)


__all__ = ["Sandbox", "write_tokens"]
