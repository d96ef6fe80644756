"""A scripted agent (deterministic, no model) follows the skills through MCP for the two requests of issue 9:

1. "Set up a new HyperPod cluster called agent-demo in us-west-2 with two ml.g5.8xlarge on-demand nodes and
   shared S3 storage, with automatic node recovery, and tell me when it's ready"
2. "add a group spare with one node in another zone and scale it to 2"

It inspects with the tools the skills name, asks only the questions the sentence left open (the zone),
offering only values the tools returned, writes with an idempotency key, watches each operation with
get_operation passing back the version (wait_seconds=60) and reports. It records every tool call and the
bytes of every tool result it read. `tests/bench_agent.py` prints the figures against the issue's budgets;
these tests assert only what is exact: each result within 4 KB, the outcome, the questions, the order.

Capacity: `find_capacity` (per zone: offered, quota, plans) once the REST API has it; until then one
`list_instance_types` per zone and `get_quotas`. The switch is `CAPACITY_TOOL` below (and the script uses the
fallback by itself while the tool is missing)."""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp import Client

from mcp_gateway.catalog import build_catalog
from mcp_gateway.views import BUDGET
from tests.e2e.test_mcp_sandbox import TERMINAL, creates_for, http_client, text

CAPACITY_TOOL = "find_capacity"  # per-zone capacity in one call; "" forces the per-zone fallback
SKILLS = Path(__file__).resolve().parents[2] / "skills"
CREATE_SKILL = SKILLS / "create-cluster" / "SKILL.md"
WATCH_WAIT = 60


def section_tools(skill: str, number: int, tools: set[str]) -> list[str]:
    """Tools a numbered section ('## 1. ...') of the skill names in backticks, in order."""
    match = re.search(rf"^## {number}\..*?(?=^## |\Z)", skill, re.S | re.M)
    assert match, f"section {number} missing from {CREATE_SKILL}"
    named = re.findall(r"`([a-z]+_[a-z_]+)(?:\(|`)", match.group(0))
    return [t for t in dict.fromkeys(named) if t in tools]


@dataclass
class Watch:
    """One operation watched to its end: the get_operation calls it cost and what changed meanwhile."""

    operation_id: str
    calls: int = 0
    versions: list[int] = field(default_factory=list)
    seconds: float = 0.0
    final: dict[str, Any] = field(default_factory=dict)

    @property
    def step_changes(self) -> int:
        """Reader-visible step changes: each step that ran started and ended (a skipped step: one change)."""
        steps = self.final.get("steps") or []
        return sum(2 if s.get("status") in ("SUCCEEDED", "FAILED") else 1 for s in steps
                   if s.get("status") != "PENDING")


class ScriptedAgent:
    """Does what the skills say, in order; records every tool call, the bytes it read, every question."""

    def __init__(self, client: Client, answers: dict[str, Any], tools: dict[str, Any]) -> None:
        self.client = client
        self.answers = answers
        self.tools = tools  # name -> Tool, as listed
        self.calls: list[str] = []
        self.result_bytes: list[int] = []
        self.questions: list[tuple[str, list[Any]]] = []
        self.watches: list[Watch] = []
        self.seen_clusters: dict[str, dict[str, Any]] = {}  # what this conversation already read

    def takes(self, tool: str, arg: str) -> bool:
        return tool in self.tools and arg in self.tools[tool].input_schema.get("properties", {})

    async def tool(self, tool: str, /, **args: Any) -> dict[str, Any]:
        self.calls.append(tool)
        result = await self.client.call_tool(tool, args)
        self.result_bytes.append(len(result.model_dump_json(by_alias=True, exclude_none=True).encode()))
        assert not result.is_error, f"{tool}: {text(result)}"
        return dict(result.structured_content or {})

    async def rows(self, tool: str, key: str, match: Any, /, **args: Any) -> dict[str, Any] | None:
        """The row of a list whose `key` is `match`, following next_token until it shows up."""
        while True:
            page = await self.tool(tool, **args)
            row = next((r for r in page.get("items", []) if r.get(key) == match), None)
            if row is not None or not page.get("next_token"):
                return row
            args = {**args, "next_token": page["next_token"]}

    def ask(self, decision: str, options: list[Any]) -> Any:
        """A decision question: the user (the test) picks one of the offered options."""
        assert options, f"nothing to offer for {decision}"
        self.questions.append((decision, options))
        answer = self.answers[decision]
        assert answer in options, f"{answer!r} was not offered for {decision}: {options}"
        return answer

    async def capacity(self, region: str, instance_type: str) -> dict[str, int | None]:
        """Zones offering the type -> quota available for it (None: not known from this call)."""
        if CAPACITY_TOOL and CAPACITY_TOOL in self.tools:
            answer = await self.tool(CAPACITY_TOOL, region=region, instance_type=instance_type)
            rows = answer.get("items") or answer.get("zones") or []
            return {str(r.get("availability_zone") or r.get("zone") or r.get("name")): _available(r)
                    for r in rows if r.get("offered", True)}
        zones = [z["name"] for z in (await self.tool("list_availability_zones", region=region))["items"]]
        offering: dict[str, int | None] = {}
        for zone in zones:
            narrow = {"instance_type": instance_type} if self.takes("list_instance_types", "instance_type") else {}
            if await self.rows("list_instance_types", "name", instance_type, region=region, availability_zone=zone,
                               **narrow):
                offering[zone] = None
        return offering

    async def quota(self, region: str, instance_type: str) -> int:
        narrow = {"instance_type": instance_type} if self.takes("get_quotas", "instance_type") else {}
        row = await self.rows("get_quotas", "instance_type", instance_type, region=region, **narrow)
        assert row is not None, f"no quota row for {instance_type} in {region}"
        return int(row["available"])

    async def watch(self, op: dict[str, Any], timeout: float = 300) -> dict[str, Any]:
        """get_operation, passing back the version, wait_seconds=60, until terminal (skill step 4)."""
        w = Watch(op["id"], versions=[op["version"]])
        started = time.monotonic()
        while op["status"] not in TERMINAL:
            assert time.monotonic() - started < timeout, f"still {op['status']} at {op.get('phase')}"
            op = await self.tool("get_operation", operation_id=w.operation_id, version=op["version"],
                                 wait_seconds=WATCH_WAIT)
            w.calls += 1
            w.versions.append(op["version"])
        w.seconds, w.final = time.monotonic() - started, op
        self.watches.append(w)
        return op

    # --- request 1 --------------------------------------------------------------------------------

    async def create_cluster(self, name: str, region: str, instance_type: str, count: int) -> dict[str, Any]:
        # 1. Inspect: the name is free, the zones offering the type, the quota (no questions yet)
        assert await self.rows("list_clusters", "name", name) is None, f"{name} exists already"
        zones = await self.capacity(region, instance_type)
        known = [q for q in zones.values() if q is not None]
        available = max(known) if known else await self.quota(region, instance_type)
        assert count <= available, f"{count} x {instance_type} exceed the quota ({available} available)"

        # 2. Ask only what the sentence left open: the zone
        zone = self.ask("availability_zone", sorted(zones))

        # 3. Create, with storage and node recovery in the body, and a key for a safe retry
        op = await self.tool("create_cluster", name=name, region=region, node_recovery="automatic",
                             storage={"s3": True}, idempotency_key=f"create-{name}-1",
                             instance_groups=[{"name": "accel", "instance_type": instance_type,
                                               "instance_count": count, "availability_zone": zone,
                                               "capacity_type": "on-demand"}])

        # 4. Watch to the end; 5. verify and report
        op = await self.watch(op)
        cluster = self.seen_clusters[name] = await self.tool("get_cluster", cluster=name, region=region)
        return {"operation": op, "cluster": cluster}

    # --- request 2 --------------------------------------------------------------------------------

    async def add_and_scale(self, cluster_name: str, region: str, group: str, first: int,
                            then: int) -> dict[str, Any]:
        # 1. Inspect the cluster: ACTIVE, the zones and type its groups use (the skill: skip get_cluster when
        # this conversation just read it, as after request 1)
        cluster = self.seen_clusters.get(cluster_name) or await self.tool("get_cluster", cluster=cluster_name,
                                                                          region=region)
        assert cluster["status"] == "ACTIVE", cluster
        used = {g["availability_zone"] for g in cluster["instance_groups"]}
        instance_type = cluster["instance_groups"][0]["instance_type"]
        # 2. Zones offering the type that the cluster does not use yet; the quota covers the new nodes
        zones = await self.capacity(region, instance_type)
        known = [q for z, q in zones.items() if q is not None]
        available = max(known) if known else await self.quota(region, instance_type)
        assert then <= available, f"{then} more {instance_type} exceed the quota ({available} available)"
        # 3. Ask the zone ("another zone")
        zone = self.ask("availability_zone", sorted(set(zones) - used))
        # 4. Add, watch; then scale, watch
        added = await self.watch(await self.tool(
            "add_instance_group", cluster=cluster_name, region=region, name=group, instance_type=instance_type,
            instance_count=first, availability_zone=zone, capacity_type="on-demand",
            idempotency_key=f"add-{cluster_name}-{group}-1"))
        assert added["status"] == "SUCCEEDED", added
        scaled = await self.watch(await self.tool(
            "scale_instance_group", cluster=cluster_name, region=region, group=group, instance_count=then,
            idempotency_key=f"scale-{cluster_name}-{group}-{then}"))
        # 6. Report from the finished operation (its step message has the counts)
        return {"added": added, "scaled": scaled, "zone": zone}


def _available(row: dict[str, Any]) -> int | None:
    for key in ("quota_available", "available"):
        if isinstance(row.get(key), int):
            return int(row[key])
    quota = row.get("quota")
    if isinstance(quota, dict) and isinstance(quota.get("available"), int):
        return int(quota["available"])
    return None


@dataclass
class Figures:
    """What the two requests cost, for the bench and the tests."""

    create_calls: int
    create_bytes: int
    add_scale_calls: int
    add_scale_bytes: int
    max_result_bytes: int
    watches: list[Watch]
    capacity: str


async def run_both(client: Client, name: str, region: str = "us-west-2") -> tuple[ScriptedAgent, Figures,
                                                                                     dict[str, Any], dict[str, Any]]:
    """The two requests, one after the other, as one agent session."""
    tools = {t.name: t for t in (await client.list_tools()).tools}
    agent = ScriptedAgent(client, {"availability_zone": "us-west-2a"}, tools)
    created = await agent.create_cluster(name, region, "ml.g5.8xlarge", 2)
    n1, b1 = len(agent.calls), sum(agent.result_bytes)
    agent.answers["availability_zone"] = "us-west-2b"
    grown = await agent.add_and_scale(name, region, "spare", 1, 2)
    figures = Figures(create_calls=n1, create_bytes=b1, add_scale_calls=len(agent.calls) - n1,
                      add_scale_bytes=sum(agent.result_bytes) - b1, max_result_bytes=max(agent.result_bytes),
                      watches=agent.watches,
                      capacity=CAPACITY_TOOL if CAPACITY_TOOL in tools else "list_instance_types per zone")
    return agent, figures, created, grown


def test_scripted_agent_takes_both_requests_from_one_sentence_to_a_running_cluster(sandbox: Any, api: Any,
                                                                                    aws: Any) -> None:
    name = f"agent-{uuid.uuid4().hex[:6]}"

    async def go() -> tuple[ScriptedAgent, Figures, dict[str, Any], dict[str, Any]]:
        async with http_client(f"{sandbox.base_url}/mcp", sandbox.tokens.admin) as client:
            return await run_both(client, name)

    agent, figures, created, grown = asyncio.run(go())

    # Request 1: the operation ended well, the cluster is what the sentence asked for, and it is active
    op, cluster = created["operation"], created["cluster"]
    assert op["status"] == "SUCCEEDED", op.get("error")
    assert cluster["status"] == "ACTIVE" and cluster["active"] is True
    group = cluster["instance_groups"][0]
    assert (group["instance_type"], group["current_count"]) == ("ml.g5.8xlarge", 2)
    assert cluster["storage"].startswith("podstart-data (s3-mountpoint) Bound")
    assert cluster["node_recovery"] == "Automatic"
    # Request 2: spare in another zone, scaled from 1 to 2
    assert grown["zone"] != "us-west-2a" and grown["scaled"]["status"] == "SUCCEEDED"
    live = aws("sagemaker").describe_cluster(ClusterName=name)["InstanceGroups"]
    assert {g["InstanceGroupName"]: g["TargetCount"] for g in live} == {"accel": 2, "spare": 2}

    # It asked only the question each sentence left open (the zone), offering only zones that offer the type,
    # and for the spare group only zones the cluster does not use yet
    assert [q for q, _ in agent.questions] == ["availability_zone", "availability_zone"]
    create_zones, spare_zones = (options for _, options in agent.questions)
    assert "us-west-2a" in create_zones and "us-west-2a" not in spare_zones
    assert set(spare_zones) < set(create_zones)

    # Every tool result it read fits the 4 KB compact budget
    assert figures.max_result_bytes <= BUDGET, figures
    # Each watch passed back the version it got: every answer but the last was a change (or a minute passed)
    for w in figures.watches:
        assert w.calls >= 1 and w.final["status"] == "SUCCEEDED"

    # It followed the create skill's order: inspect (step 1), create (3), watch (4), verify (5)
    skill = CREATE_SKILL.read_text()
    catalog = {s.name for s in build_catalog(api.get("/v1/openapi.json").json())}
    first_create = agent.calls.index("create_cluster")
    assert set(agent.calls[:first_create]) <= set(section_tools(skill, 1, catalog)) | {CAPACITY_TOOL}
    assert agent.calls[0] == "list_clusters"
    assert section_tools(skill, 3, catalog) == ["create_cluster"]
    assert "get_operation" in section_tools(skill, 4, catalog) and "get_cluster" in section_tools(skill, 5, catalog)
    create_part = agent.calls[first_create:figures.create_calls]
    assert create_part[0] == "create_cluster" and create_part[-1] == "get_cluster"
    assert set(create_part[1:-1]) == {"get_operation"}
    assert len(creates_for(api, name)) == 1


def test_scripted_agent_diagnoses_a_failed_create_read_only_then_resumes_it(sandbox: Any, api: Any) -> None:
    # Given a create that fails at the hyperpod_cluster step (an injected SageMaker error)
    api.post("/v1/sandbox/faults", json={"service": "sagemaker", "operation": "CreateCluster",
                                         "error_code": "ValidationException", "count": 1,
                                         "message": "injected for the diagnose skill"})
    name = f"diag-{uuid.uuid4().hex[:6]}"
    args = {"name": name, "region": "us-west-2",
            "instance_groups": [{"name": "accel", "instance_type": "ml.g5.8xlarge", "instance_count": 1,
                                 "availability_zone": "us-west-2a"}]}
    catalog = {s.name: s for s in build_catalog(api.get("/v1/openapi.json").json())}

    async def go() -> tuple[list[str], dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any]]:
        async with http_client(f"{sandbox.base_url}/mcp", sandbox.tokens.admin) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            agent = ScriptedAgent(client, {}, tools)
            await agent.watch(await agent.tool("create_cluster", **args))
            # diagnose-cluster-creation: read-only investigation
            mark = len(agent.calls)
            listed = await agent.tool("list_operations", cluster=name)
            failed = await agent.tool("get_operation", operation_id=listed["items"][0]["id"])
            full = await agent.tool("get_operation", operation_id=failed["id"], detail="full")
            await agent.tool("get_cluster", cluster=name, region="us-west-2")
            diagnosis = agent.calls[mark:]
            # create-cluster "Resume": the user accepted the suggested retry_operation
            resumed = await agent.watch(await agent.tool("retry_operation", operation_id=failed["id"]))
            after = await agent.tool("get_operation", operation_id=failed["id"], detail="full")
            return diagnosis, failed, full, resumed, after

    diagnosis, failed, full, resumed, after = asyncio.run(go())

    assert all(catalog[t].read_only for t in diagnosis), diagnosis
    step = next(s for s in failed["steps"] if s["status"] == "FAILED")
    assert (failed["status"], failed["phase"], step["name"]) == ("FAILED", "hyperpod_cluster", "hyperpod_cluster")
    assert step["error"] == "ValidationException" and failed["error"]["code"] == "ValidationException"
    assert failed["next"].startswith("fix the cause, then retry_operation(")
    assert "outputs" in full["steps"][0]  # detail="full": the REST document, raw outputs included
    assert resumed["status"] == "SUCCEEDED", resumed.get("error")
    assert [s["attempts"] for s in after["steps"]][:3] == [1, 1, 1]  # finished steps were not repeated
    ok = [c for c in creates_for(api, name) if c["outcome"] == "ok"]
    assert len(ok) == 1
