"""One sandbox for the whole e2e session: started in-process on free ports, driven over HTTP."""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from sandbox.__main__ import KEEP_ALIVE_S
from sandbox.app import Sandbox
from sandbox.config import SandboxSettings

TIME_SCALE = float(os.environ.get("PODSTART_TEST_TIME_SCALE", "300"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def eventually(check: Callable[[], Any], timeout: float = 30.0) -> Any:
    """Poll `check` until it returns something truthy (returned), failing the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not (value := check()):
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.1)
    return value


class Api:
    """A small HTTP client for the sandbox's one port."""

    def __init__(self, base: str, token: str) -> None:
        self.base = base
        self.http = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=60)

    def get(self, path: str, **kw: Any) -> httpx.Response:
        return self.http.get(path, **kw)

    def post(self, path: str, json: Any = None, key: str | None = None, **kw: Any) -> httpx.Response:
        headers = {**kw.pop("headers", {}), **({"Idempotency-Key": key} if key else {})}
        return self.http.post(path, json=json, headers=headers, **kw)

    def wait_terminal(self, op_id: str, timeout: float = 120) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        op = self.get(f"/v1/operations/{op_id}").json()
        while op["status"] not in ("SUCCEEDED", "FAILED", "CANCELLED"):
            assert time.monotonic() < deadline, f"operation {op_id} still {op['status']} at {op.get('phase')}"
            op = self.get(f"/v1/operations/{op_id}", params={"wait": 10, "version": op["version"]}).json()
        return op

    def make_cluster(self, prefix: str, groups: list[dict[str, Any]], **extra: Any) -> str:
        """A cluster created through the API and watched to SUCCEEDED (module fixtures' setup); its name."""
        name = f"{prefix}-{uuid.uuid4().hex[:6]}"
        op = self.post("/v1/clusters", json={"name": name, "region": "us-west-2", "instance_groups": groups,
                                             **extra}).json()
        assert self.wait_terminal(op["id"])["status"] == "SUCCEEDED"
        return name

    def calls(self, service: str | None = None, operation: str | None = None, request_id: str | None = None,
              after: int | None = None, until: int | None = None) -> list[dict[str, Any]]:
        """The sandbox's AWS call log; `after`/`until` are marks (the log is bounded: positions shift, marks do not)."""
        params = {k: v for k, v in (("service", service), ("operation", operation), ("request_id", request_id),
                                    ("after", after), ("until", until)) if v is not None and v != ""}
        return list(self.get("/v1/sandbox/calls", params=params).json()["items"])

    def mark(self) -> int:
        """Where the call log is now: `calls(after=mark)` is every call made since."""
        return int(self.get("/v1/sandbox/calls", params={"after": 2**62}).json()["next_seq"])


@pytest.fixture(scope="session")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    settings = SandboxSettings(port=_free_port(), time_scale=TIME_SCALE,
                               state_dir=Path(tmp_path_factory.mktemp("podstart")))
    sb = Sandbox(settings)
    sb.start()
    server = uvicorn.Server(uvicorn.Config(sb.asgi(), host="127.0.0.1", port=settings.port, log_level="warning",
                                           timeout_keep_alive=KEEP_ALIVE_S))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "sandbox did not start"
        time.sleep(0.05)
    yield sb
    # The API function's Kubernetes requests stayed within its RBAC (functions.domain.rbac) in every test
    forbidden = {r["params"]["path"] for r in sb.aws.calls.records(service="kubernetes")
                 if r["outcome"] == "Forbidden"}
    server.should_exit = True
    thread.join(timeout=10)
    sb.stop()
    assert not forbidden, f"the API function asked Kubernetes for what podstart-api may not do: {sorted(forbidden)}"


@pytest.fixture(scope="session")
def api(sandbox: Sandbox) -> Api:
    return Api(sandbox.base_url, sandbox.tokens.admin)


@pytest.fixture(scope="session")
def operator(sandbox: Sandbox) -> Api:
    return Api(sandbox.base_url, sandbox.tokens.operator)


@pytest.fixture(scope="session")
def viewer(sandbox: Sandbox) -> Api:
    return Api(sandbox.base_url, sandbox.tokens.viewer)


@pytest.fixture(scope="session")
def aws(sandbox: Sandbox) -> Any:
    """boto3 clients on the embedded AWS endpoint, to look at what the control plane made."""
    import boto3

    def client(service: str) -> Any:
        return boto3.client(service, region_name="us-west-2", endpoint_url=sandbox.aws.endpoint,
                            aws_access_key_id="testing", aws_secret_access_key="testing")
    return client


ACCELERATED = ("ml.g", "ml.p", "ml.trn", "ml.inf")


def _accelerated_clusters(api: Api) -> set[tuple[str, str]]:
    r = api.get("/v1/clusters", params={"limit": 100})
    return {(c["name"], c["region"]) for c in r.json().get("items") or [] if c.get("origin") != "external"
            and any(str(g.get("instance_type", "")).startswith(ACCELERATED) for g in c.get("instance_groups") or [])
            } if r.status_code == 200 else set()


@pytest.fixture(scope="module", autouse=True)
def frees_the_accelerators_it_took(sandbox: Sandbox) -> Iterator[None]:
    """A test file deletes the accelerated clusters it made when it ends, and waits for them to go: the sandbox's
    GPU quotas are real (16 x ml.g5.8xlarge...) and one worker's sandbox serves many files. Waiting keeps those
    deletions' AWS calls out of the next file's counts."""
    admin = Api(sandbox.base_url, sandbox.tokens.admin)
    before = _accelerated_clusters(admin)
    yield
    started = []
    for name, region in sorted(_accelerated_clusters(admin) - before):
        r = admin.http.delete(f"/v1/clusters/{name}", params={"confirm": name, "region": region})
        if r.status_code == 202:
            started.append(r.json()["id"])
    for op_id in started:
        try:
            admin.wait_terminal(op_id, timeout=180)
        except AssertionError:
            pass


@pytest.fixture(scope="session")
def anonymous(sandbox: Sandbox) -> httpx.Client:
    return httpx.Client(base_url=sandbox.base_url, timeout=30)


def kube_client(sandbox: Sandbox, cluster: str) -> Any:
    """A kubernetes ApiClient on that cluster's embedded Kubernetes API (what kubectl would talk to)."""
    from kubernetes import client

    config = client.Configuration()
    config.host = sandbox.kube.clusters()[cluster]
    return client.ApiClient(config)
