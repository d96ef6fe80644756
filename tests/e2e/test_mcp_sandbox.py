"""The MCP face of the sandbox, spoken to with the official `mcp` client: streamable HTTP at
`{base_url}/mcp` with a bearer token, and stdio (`python -m mcp_gateway --api URL`). Tools match the
REST OpenAPI, reads answer, every tool result fits 4 KB on the seeded data of every region, a create with
one idempotency key is one operation and one CreateCluster while a repeated scale without a key is a new
request, bad input names the field, and read-only (flag or viewer role) never reaches a mutation."""

from __future__ import annotations

import asyncio
import os
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from mcp_gateway.catalog import (
    HIDDEN,
    IDEMPOTENCY_ARG,
    KNOWN,
    MORE_ARG,
    REST_ONLY,
    build_catalog,
    folded,
    gateway_args,
    unlisted,
)
from mcp_gateway.views import BUDGET
from sandbox.aws.embedded import SEEDED_REGIONS
from sandbox.resources import TEAM_BUCKET

ROOT = Path(__file__).resolve().parents[2]
T = TypeVar("T")
TERMINAL = {"SUCCEEDED", "FAILED", "CANCELLED"}
READ_TOOLS = {"list_regions", "find_capacity", "list_instance_types", "list_operations", "get_operation",
              "get_identity", "list_clusters", "get_cluster", "list_data"}
WRITE_TOOLS = {"create_cluster", "retry_operation", "cancel_operation", "set_preferences"}


# --- clients ---------------------------------------------------------------------------------------

@asynccontextmanager
async def http_client(url: str, token: str | None) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (httpx2.AsyncClient(headers=headers, timeout=60) as http,
                Client(streamable_http_client(url, http_client=http)) as client):
        yield client


def stdio_params(base_url: str, token: str, read_only: bool = False) -> StdioServerParameters:
    args = ["-m", "mcp_gateway", "--api", base_url, *(["--read-only"] if read_only else [])]
    env = {**{k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")},
           "PODSTART_TOKEN": token, "PYTHONPATH": str(ROOT)}
    return StdioServerParameters(command=sys.executable, args=args, env=env, cwd=str(ROOT))


@asynccontextmanager
async def stdio_client(base_url: str, token: str, read_only: bool = False) -> AsyncIterator[Client]:
    async with Client(stdio_params(base_url, token, read_only)) as client:
        yield client


def over_http(sandbox: Any, fn: Callable[[Client], Awaitable[T]], token: str | None = None) -> T:
    async def go() -> T:
        async with http_client(f"{sandbox.base_url}/mcp", token or sandbox.tokens.admin) as client:
            return await fn(client)
    return asyncio.run(go())


def over_stdio(sandbox: Any, fn: Callable[[Client], Awaitable[T]], read_only: bool = False) -> T:
    async def go() -> T:
        async with stdio_client(sandbox.base_url, sandbox.tokens.admin, read_only) as client:
            return await fn(client)
    return asyncio.run(go())


def over(transport: str, sandbox: Any, fn: Callable[[Client], Awaitable[T]]) -> T:
    return over_http(sandbox, fn) if transport == "http" else over_stdio(sandbox, fn)


def text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def tools(client: Client) -> dict[str, Any]:
    return {t.name: t for t in (await client.list_tools()).tools}


async def watch(client: Client, op_id: str, timeout: float = 180, version: int | None = None) -> dict[str, Any]:
    """get_operation(version=<the one you got>, wait_seconds=60) until terminal, as the skills say."""
    deadline = time.monotonic() + timeout
    while True:
        args: dict[str, Any] = {"operation_id": op_id, "wait_seconds": 60}
        if version is not None:
            args["version"] = version
        result = await client.call_tool("get_operation", args)
        assert not result.is_error, text(result)
        op = dict(result.structured_content or {})
        if op["status"] in TERMINAL:
            return op
        version = op["version"]
        assert time.monotonic() < deadline, f"{op_id} still {op['status']} at {op.get('phase')}"


def cluster_name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def create_args(name: str, **group: Any) -> dict[str, Any]:
    return {"name": name, "region": "us-west-2",
            "instance_groups": [{"name": "accel", "instance_type": "ml.c5.large", "instance_count": 1,
                                 "availability_zone": "us-west-2a", **group}]}


def creates_for(api: Any, name: str) -> list[dict[str, Any]]:
    return [c for c in api.calls("sagemaker", "CreateCluster") if c["params"].get("ClusterName") == name]


# --- tests -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_every_tool_schema_matches_the_rest_openapi(sandbox: Any, api: Any, transport: str) -> None:
    # Given the OpenAPI document the sandbox's REST API serves
    doc = api.get("/v1/openapi.json").json()
    by_route = {(s.method.lower(), s.path): s.name for s in build_catalog(doc)}

    # When an agent lists the tools over this transport
    listed = over(transport, sandbox, tools)

    # Then there is one tool per REST operation (but the few REST_ONLY names, each answered by another tool), and
    # its properties are the route's parameters + body fields, less the shared ones said once (region folded into
    # cluster, detail, limit, idempotency_key) and the rarer fields in `more`
    specs = {s.name: s for s in build_catalog(doc)}
    assert set(listed) == set(by_route.values())
    assert set(listed) >= READ_TOOLS | WRITE_TOOLS
    routes = {(m, p) for p, item in doc["paths"].items() for m in item if m in ("get", "put", "post", "patch",
                                                                                  "delete")}
    assert set(REST_ONLY) <= routes and not set(REST_ONLY) & set(by_route)  # each reason names a live route
    for path, item in doc["paths"].items():
        for method, op in item.items():
            if method not in ("get", "put", "post", "patch", "delete") or (method, path) in REST_ONLY:
                continue
            name = by_route[(method, path)]
            expected = {p["name"] for p in op.get("parameters", []) if p["in"] in ("path", "query")}
            required = {p["name"] for p in op.get("parameters", [])
                        if p.get("required") and p["in"] in ("path", "query")}
            if "requestBody" in op:
                ref = op["requestBody"]["content"]["application/json"]["schema"]["$ref"]
                body = doc["components"]["schemas"][ref.rsplit("/", 1)[1]]
                fields = {"instance_count"} if name == "scale_instance_group" else set(body["properties"])
                # update_features: the managed features (base add-ons come along as prerequisites);
                # start_health_check: group and node_ids (both checks run; the tools/list budget);
                # advise_capacity: all but name and max_options (the tools/list budget)
                if name in ("update_features", "start_health_check", "advise_capacity"):
                    fields = set(KNOWN[(method, path)].some_body)
                expected |= fields
                required |= fields if name == "scale_instance_group" else set(body.get("required", [])) & fields
            reads = method == "get" or bool(op.get("x-podstart-read-only"))  # a POST that only reads (advice)
            if not reads:
                expected.add(IDEMPOTENCY_ARG)
            if name == "get_operation":
                expected = (expected - {"wait"}) | {"wait_seconds"}
            expected |= gateway_args(specs[name])
            expected -= HIDDEN.get(name, frozenset())  # left out for the tools/list budget, on purpose
            expected -= set(unlisted(specs[name])) | set(folded(specs[name]))
            required -= set(unlisted(specs[name]))
            if folded(specs[name]):
                expected.add(MORE_ARG)
            assert set(listed[name].input_schema["properties"]) == expected, name
            assert set(listed[name].input_schema.get("required", [])) == required, name
            assert bool(listed[name].annotations.read_only_hint) is reads, name


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_read_tools_answer_with_structured_content(sandbox: Any, transport: str) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("list_regions", {}), ("find_capacity", {"region": "us-west-2", "instance_type": "ml.g5.8xlarge"}),
        ("list_instance_types", {"region": "us-west-2", "availability_zone": "us-west-2a"}),
        ("list_instance_types all", {"region": "us-west-2"}),
        ("list_clusters", {}), ("list_operations", {"limit": 5}), ("get_identity", {}), ("list_data", {}),
        ("list_instance_types full", {"region": "us-west-2", "detail": "full"})]

    async def go(client: Client) -> dict[str, Any]:
        return {name: await client.call_tool(name.split()[0], args) for name, args in calls}

    results = over(transport, sandbox, go)

    for name, result in results.items():
        assert not result.is_error, f"{name}: {text(result)}"
        assert isinstance(result.structured_content, dict), name
    assert "us-west-2" in {r["name"] for r in results["list_regions"].structured_content["items"]}
    assert "us-west-2a" in {z["availability_zone"] for z in results["find_capacity"].structured_content["zones"]}
    assert "ml.g5.8xlarge" in text(results["list_instance_types"])
    # a region's instance types: the compact answer pages and says so; detail="full" is the whole REST document
    types = results["list_instance_types all"].structured_content
    full = results["list_instance_types full"].structured_content["items"]
    assert types["next_token"] and types["more"].startswith(f"{len(full) - len(types['items'])} more items")
    assert "/data" in {r.get("path") for r in results["list_data"].structured_content["roots"]}


def test_create_with_one_key_twice_is_one_operation_and_one_create_call(sandbox: Any, api: Any) -> None:
    # Given a create_cluster call an agent may send twice (a timeout, a retry) with the same key
    name, key = cluster_name("mcp"), uuid.uuid4().hex
    args = {**create_args(name), IDEMPOTENCY_ARG: key}

    async def go(client: Client) -> tuple[Any, Any, dict[str, Any], Any]:
        first = await client.call_tool("create_cluster", args)
        second = await client.call_tool("create_cluster", args)
        assert not first.is_error, text(first)
        done = await watch(client, first.structured_content["id"])
        cluster = await client.call_tool("get_cluster", {"cluster": name, "region": "us-west-2"})
        return first, second, done, cluster

    first, second, done, cluster = over_http(sandbox, go)

    # Then both answers are the same operation, the text says how to track it, and it ran once
    assert not second.is_error, text(second)
    op_id = first.structured_content["id"]
    assert second.structured_content["id"] == op_id
    assert first.structured_content["kind"] == "cluster.create"
    assert f'get_operation(operation_id="{op_id}", version=' in first.structured_content["next"]
    assert done["status"] == "SUCCEEDED", done.get("error")
    assert not cluster.is_error and cluster.structured_content["status"] == "ACTIVE", text(cluster)
    assert len(creates_for(api, name)) == 1


@pytest.mark.parametrize(("args", "loc", "words"), [
    (create_args("Bad_Name"), "body.name", ("pattern", "lowercase", "match")),
    (create_args("ok-count", instance_count=999), "instance_count", ("less than", "quota", "999", "at most")),
], ids=["bad-name", "count-999"])
def test_bad_input_is_a_tool_error_naming_the_field(sandbox: Any, api: Any, args: dict[str, Any], loc: str,
                                                     words: tuple[str, ...]) -> None:
    result = over_http(sandbox, lambda c: c.call_tool("create_cluster", args))

    assert result.is_error
    body = text(result)
    assert "HTTP 4" in body and loc in body, body
    assert any(w in body.lower() for w in words), body
    assert result.structured_content and result.structured_content.get("errors"), result.structured_content
    assert not creates_for(api, args["name"])


def test_read_only_stdio_gateway_hides_and_refuses_mutations(sandbox: Any, api: Any) -> None:
    name = cluster_name("ro")

    async def go(client: Client) -> tuple[dict[str, Any], Any, Any]:
        listed = await tools(client)
        refused = await client.call_tool("create_cluster", create_args(name))
        read = await client.call_tool("list_clusters", {})
        return listed, refused, read

    listed, refused, read = over_stdio(sandbox, go, read_only=True)

    assert set(listed) >= READ_TOOLS
    assert not {n for n, t in listed.items() if not t.annotations.read_only_hint}  # the reads only
    assert refused.is_error and "read-only" in text(refused), text(refused)
    assert not read.is_error
    assert not creates_for(api, name)
    assert name not in {c["name"] for c in api.get("/v1/clusters").json()["items"]}


def test_viewer_over_http_is_refused_every_mutation(sandbox: Any, api: Any) -> None:
    name = cluster_name("vw")

    async def go(client: Client) -> tuple[Any, Any, Any, Any]:
        listed = await client.list_tools()
        read = await client.call_tool("list_clusters", {})
        create = await client.call_tool("create_cluster", create_args(name))
        retry = await client.call_tool("retry_operation", {"operation_id": "op-abcdef123"})
        return listed, read, create, retry

    listed, read, create, retry = over_http(sandbox, go, token=sandbox.tokens.viewer)

    names = {t.name for t in listed.tools}
    assert "list_clusters" in names and not names & {"create_cluster", "retry_operation", "delete_cluster"}
    assert not read.is_error, text(read)
    for result in (create, retry):
        assert result.is_error and "read-only" in text(result), text(result)
    assert not creates_for(api, name)
    assert name not in {c["name"] for c in api.get("/v1/clusters").json()["items"]}


def test_anonymous_http_caller_gets_401_not_the_gateways_identity(sandbox: Any) -> None:
    async def go() -> Any:
        async with http_client(f"{sandbox.base_url}/mcp", None) as client:
            return await client.call_tool("list_clusters", {})

    result = asyncio.run(go())

    assert result.is_error and "HTTP 401" in text(result), text(result)


def test_scale_2_then_1_then_2_without_keys_ends_at_2(sandbox: Any, api: Any, aws: Any) -> None:
    # Given a cluster whose group has one node
    name = cluster_name("rep")
    op = api.post("/v1/clusters", json=create_args(name)).json()
    assert api.wait_terminal(op["id"])["status"] == "SUCCEEDED"

    # When an agent scales it to 2, to 1, and to 2 again, with the same arguments as the first call and no key
    async def go(client: Client) -> list[dict[str, Any]]:
        done = []
        for count in (2, 1, 2):
            started = await client.call_tool("scale_instance_group", {
                "cluster": name, "region": "us-west-2", "group": "accel", "instance_count": count})
            assert not started.is_error, text(started)
            done.append(await watch(client, started.structured_content["id"],
                                    version=started.structured_content["version"]))
        return done

    done = over_http(sandbox, go)

    # Then each call was its own operation and the group ends at 2, in HyperPod and in PodStart
    assert [o["status"] for o in done] == ["SUCCEEDED"] * 3
    assert len({o["id"] for o in done}) == 3
    live = aws("sagemaker").describe_cluster(ClusterName=name)["InstanceGroups"]
    assert [g["TargetCount"] for g in live if g["InstanceGroupName"] == "accel"] == [2]
    groups = api.get(f"/v1/clusters/{name}/instance-groups", params={"region": "us-west-2"}).json()["items"]
    assert [g["target_count"] for g in groups] == [2]


def _budget_calls(api: Any, cluster: str, op_id: str, failed_id: str) -> dict[str, list[dict[str, Any]]]:
    """Realistic arguments for every tool: the seeded data of every region, a live cluster and operations."""
    node_id = api.get(f"/v1/clusters/{cluster}/nodes", params={"region": "us-west-2"}).json()["items"][0]["node_id"]
    docs = api.get(f"/v1/clusters/{cluster}/spec", params={"region": "us-west-2"}).json()["documents"]
    edited = [{**docs[0], "spec": {**docs[0]["spec"], "instance_groups": [
        {**g, "instance_count": g["instance_count"] + 1} for g in docs[0]["spec"]["instance_groups"]]}}]
    calls: dict[str, list[dict[str, Any]]] = {
        "export_spec": [{"cluster": cluster, "region": "us-west-2"}],
        "plan_spec": [{"documents": docs}, {"documents": edited}, {"documents": [{"kind": "Nodepool"}]}],
        "apply_spec": [{"documents": docs}, {"documents": edited, "dry_run": True}],
        "list_regions": [{}], "get_identity": [{}],
        "list_clusters": [{}], "list_operations": [{}, {"status": "SUCCEEDED"}, {"cluster": cluster}],
        "get_operation": [{"operation_id": op_id}, {"operation_id": failed_id}],
        "get_cluster": [{"cluster": cluster, "region": "us-west-2"}],
        "list_instance_types": [], "find_capacity": [], "list_mlflow_servers": [],
        # writes: answers that are operations, problems (409/422) or small documents
        "create_cluster": [create_args("Bad_Name"), {**create_args(cluster_name("plan")), "dry_run": True}],
        "retry_operation": [{"operation_id": op_id}],
        "cancel_operation": [{"operation_id": op_id}],
        "delete_cluster": [{"cluster": cluster, "region": "us-west-2", "confirm": "not-the-name"}],
        "import_cluster": [{"region": "us-west-2", "eks_cluster_name": "no-such-eks", "name": "no-such"}],
        "add_instance_group": [{"cluster": cluster, "region": "us-west-2", "name": "accel",
                                "instance_type": "ml.g5.8xlarge", "instance_count": 1,
                                "availability_zone": "us-west-2a"}],
        "delete_instance_group": [{"cluster": cluster, "region": "us-west-2", "group": "accel",
                                   "confirm": "not-the-group"},
                                  {"cluster": cluster, "region": "us-west-2", "group": "accel",
                                   "confirm": "accel", "dry_run": True}],
        "scale_instance_group": [{"cluster": cluster, "region": "us-west-2", "group": "accel", "instance_count": 1}],
        "set_preferences": [{"default_region": "us-west-2"}],
        "list_data": [{}, {"cluster": cluster}, {"uri": "/data/datasets/"}, {"uri": f"s3://{TEAM_BUCKET}/"},
                      {"uri": "s3://other-team-private-123456789012/payroll/"}],
        "list_storage": [{"cluster": cluster, "region": "us-west-2"}],
        "add_storage": [{"cluster": cluster, "region": "us-west-2", "kind": "s3", "bucket": "no-such-bucket-here"}],
        "remove_storage": [{"cluster": cluster, "region": "us-west-2", "name": "no-such-volume"}],
        "reconcile_cluster": [{"cluster": cluster, "region": "us-west-2"}],
        "list_recipes": [{}],
        "submit_job": [{"cluster": cluster, "region": "us-west-2", "name": "bud", "recipe": "pytorch",
                        "image": "repo/train:1.0", "instance_type": "ml.g5.8xlarge", "nodes": 9}],
        "list_jobs": [{"cluster": cluster, "region": "us-west-2"}],
        "list_jobs_everywhere": [{}, {"cluster": cluster, "region": "us-west-2"}],
        "list_endpoints_everywhere": [{}, {"cluster": cluster}],
        "get_job_metrics": [{"cluster": cluster, "region": "us-west-2", "job": "no-such-job"}],
        "get_job": [{"cluster": cluster, "region": "us-west-2", "job": "no-such-job"}],
        "get_job_logs": [{"cluster": cluster, "region": "us-west-2", "job": "no-such-job"}],
        "delete_job": [{"cluster": cluster, "region": "us-west-2", "job": "no-such-job"}],
        "create_secret": [{"cluster": cluster, "region": "us-west-2", "name": "bud", "data": {"TOKEN": "x"}}],
        "list_endpoints": [{"cluster": cluster, "region": "us-west-2"}],
        "list_pools": [{"cluster": cluster, "region": "us-west-2"}],
        "list_models": [{"cluster": cluster, "region": "us-west-2"}],
        "list_secrets": [{"cluster": cluster, "region": "us-west-2"}],
        "download_model": [{"cluster": cluster, "region": "us-west-2", "model_id": "org/model", "dry_run": True},
                           {"cluster": cluster, "region": "us-west-2", "model_id": "org/model",
                            "token_secret": "no-such-secret"}],
        "get_endpoint": [{"cluster": cluster, "region": "us-west-2", "endpoint": "no-such-endpoint"}],
        "deploy_endpoint": [{"cluster": cluster, "region": "us-west-2", "name": "chat", "mode": "self-managed",
                             "engine": "vllm", "image": "vllm/vllm-openai:v0.6.3", "gpus": 1,
                             "model": {"source": "huggingface", "model_id": "org/model"},
                             "instance_type": "ml.g5.8xlarge"}],
        "update_endpoint": [{"cluster": cluster, "region": "us-west-2", "endpoint": "no-such-endpoint",
                             "replicas": 2}],
        "delete_endpoint": [{"cluster": cluster, "region": "us-west-2", "endpoint": "no-such-endpoint"}],
        "invoke_endpoint": [{"cluster": cluster, "region": "us-west-2", "endpoint": "no-such-endpoint",
                             "messages": [{"role": "user", "content": "hello"}]}],
        "create_pool": [{"cluster": cluster, "region": "us-west-2", "name": "warm", "engine": "vllm",
                         "image": "vllm/vllm-openai:v0.6.3", "instance_type": "ml.g5.8xlarge",
                         "gpus_per_worker": 1, "workers": 1}],
        "assign_pool_workers": [{"cluster": cluster, "region": "us-west-2", "pool": "no-such-pool",
                                 "endpoint": "chat", "model": {"source": "huggingface", "model_id": "org/model"},
                                 "workers": 1}],
        "release_pool_workers": [{"cluster": cluster, "region": "us-west-2", "pool": "no-such-pool",
                                  "endpoint": "chat"}],
        "list_nodes": [{"cluster": cluster, "region": "us-west-2"}, {"cluster": cluster, "unhealthy": True},
                       {"cluster": cluster, "faulted_since": "2026-01-01T00:00:00Z"}],
        "get_node": [{"cluster": cluster, "region": "us-west-2", "node_id": node_id}],
        "list_cluster_events": [{"cluster": cluster, "region": "us-west-2"}],
        "reboot_nodes": [{"cluster": cluster, "region": "us-west-2", "node_ids": ["i-0000000000000dead"],
                          "reason": "budget"}],
        "replace_nodes": [{"cluster": cluster, "region": "us-west-2", "node_ids": [node_id], "reason": "budget",
                           "confirm": "replace"}],
        "delete_nodes": [{"cluster": cluster, "region": "us-west-2", "node_ids": ["i-0000000000000dead"],
                          "confirm": "delete"}],
        "start_health_check": [{"cluster": cluster, "region": "us-west-2", "group": "no-such-group",
                                "node_ids": ["i-0000000000000dead"]}],
        "update_cluster_software": [{"cluster": cluster, "region": "us-west-2", "groups": ["no-such-group"]},
                                    {"cluster": cluster, "region": "us-west-2", "rolling": {"batch_percent": 25},
                                     "dry_run": True}],
        "get_features": [{"cluster": cluster, "region": "us-west-2"}],
        "get_cluster_gpus": [{"cluster": cluster, "region": "us-west-2"}],
        "advise_capacity": [{"gpus": 8, "regions": list(SEEDED_REGIONS)},
                            {"gpus": 16, "gpu_model": "h100", "hours": 72, "regions": list(SEEDED_REGIONS)},
                            {"gpus": 64, "gpu_model": "b200", "hours": 72}, {"gpus": 8, "cluster": cluster}],
        "purchase_training_plan": [{"name": "budget", "dry_run": True, "offering": {
            "region": "us-west-2", "offering_id": "tpo-none", "instance_type": "ml.p5.48xlarge", "instance_count": 1,
            "duration_hours": 24}}],
        "list_namespaces": [{"cluster": cluster, "region": "us-west-2"}],
        "create_namespace": [{"cluster": cluster, "region": "us-west-2", "name": "budget", "dry_run": True},
                             {"cluster": cluster, "region": "us-west-2", "name": "kube-budget"}],
        "delete_namespace": [{"cluster": cluster, "region": "us-west-2", "namespace": "no-such-ns",
                              "confirm": "no-such-ns"}],
        "update_features": [{"cluster": cluster, "region": "us-west-2", "observability": {"enabled": False}},
                            {"cluster": cluster, "region": "us-west-2",
                             "autoscaling": {"enabled": True, "instance_groups": ["no-such-group"]}}],
    }
    for region in SEEDED_REGIONS:
        listed = api.get("/v1/catalog/availability-zones", params={"region": region}).json()["items"]
        zones = [{"region": region, "availability_zone": z["name"]} for z in listed]
        calls["list_instance_types"] += [{"region": region}, *zones]
        calls["list_mlflow_servers"].append({"region": region})
        calls["find_capacity"] += [{"region": region, "instance_type": t} for t in ("ml.g5.8xlarge", "ml.p5.48xlarge")]
    return calls


def test_every_tool_result_fits_the_budget_on_realistic_data(sandbox: Any, api: Any) -> None:
    # Given a live cluster, a succeeded and a failed operation, and the seeded catalog of every region
    name = cluster_name("bud")
    op = api.post("/v1/clusters", json=create_args(name)).json()
    assert api.wait_terminal(op["id"])["status"] == "SUCCEEDED"
    api.post("/v1/sandbox/faults", json={"service": "sagemaker", "operation": "CreateCluster",
                                         "error_code": "ValidationException", "count": 1,
                                         "message": "injected: " + "capacity is not available. " * 20})
    bad = api.post("/v1/clusters", json=create_args(cluster_name("bud"))).json()
    failed = api.wait_terminal(bad["id"])
    assert failed["status"] == "FAILED"
    calls = _budget_calls(api, name, op["id"], failed["id"])

    async def go(client: Client) -> tuple[set[str], dict[str, list[tuple[dict[str, Any], int, bool]]]]:
        listed = {t.name for t in (await client.list_tools()).tools}
        sizes: dict[str, list[tuple[dict[str, Any], int, bool]]] = {}
        for tool in sorted(listed):
            for args in calls.get(tool, []):
                result = await client.call_tool(tool, args)
                size = len(result.model_dump_json(by_alias=True, exclude_none=True).encode())
                sizes.setdefault(tool, []).append((args, size, bool(result.is_error)))
        return listed, sizes

    listed, sizes = over_http(sandbox, go)

    # Then every tool was tried (a tool added later needs its realistic arguments here) and every result,
    # answer or error, is at most 4 KB: the compact view, with "N more" and next_token where rows were cut
    assert listed <= set(sizes), f"add realistic arguments for {sorted(listed - set(sizes))}"
    over = [(tool, args, size) for tool, rows in sizes.items() for args, size, _ in rows if size > BUDGET]
    assert not over, over
    answered = {tool for tool, rows in sizes.items() if any(not err for _, _, err in rows)}
    assert answered >= {"list_clusters", "get_cluster", "get_operation", "find_capacity", "list_instance_types",
                        "list_data", "list_nodes", "list_operations", "scale_instance_group"}
