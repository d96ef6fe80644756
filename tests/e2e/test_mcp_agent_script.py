"""A scripted agent (deterministic, no model) follows skills/create-cluster/SKILL.md through MCP.

It inspects with the tools the skill's step 1 names, asks only the decision questions (answered by
the test) offering only values the tools returned, creates, blindly repeats the create once without
a key (the gateway derives the same key), watches with get_operation to a terminal state and verifies
with get_cluster. The sandbox's call log proves the retry repeated nothing."""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from pathlib import Path
from typing import Any

from mcp import Client

from mcp_gateway.catalog import build_catalog
from tests.e2e.test_mcp_sandbox import TERMINAL, creates_for, http_client, text

SKILL = Path(__file__).resolve().parents[2] / "skills" / "create-cluster" / "SKILL.md"
DECISIONS = {"availability_zone", "instance_type", "capacity_type", "instance_count"}


def section_tools(skill: str, number: int, tools: set[str]) -> list[str]:
    """Tools a numbered section ('## 1. ...') of the skill names in backticks, in order."""
    match = re.search(rf"^## {number}\..*?(?=^## |\Z)", skill, re.S | re.M)
    assert match, f"section {number} missing from {SKILL}"
    named = re.findall(r"`([a-z]+_[a-z_]+)(?:\(|`)", match.group(0))
    return [t for t in dict.fromkeys(named) if t in tools]


class ScriptedAgent:
    """Does what the skill says, in order; records every tool call and every question."""

    def __init__(self, client: Client, answers: dict[str, Any]) -> None:
        self.client = client
        self.answers = answers
        self.calls: list[str] = []
        self.questions: dict[str, list[Any]] = {}

    async def tool(self, tool: str, /, **args: Any) -> dict[str, Any]:
        self.calls.append(tool)
        result = await self.client.call_tool(tool, args)
        assert not result.is_error, f"{tool}: {text(result)}"
        return dict(result.structured_content or {})

    def ask(self, decision: str, options: list[Any]) -> Any:
        """A decision question: the user (the test) picks one of the offered options."""
        assert options, f"nothing to offer for {decision}"
        self.questions[decision] = options
        answer = self.answers[decision]
        assert answer in options, f"{answer!r} was not offered for {decision}: {options}"
        return answer

    async def create_cluster(self, name: str, region: str) -> dict[str, Any]:
        # 1. Inspect (no questions yet)
        existing = await self.tool("list_clusters")
        assert name not in {c["name"] for c in existing["items"]}
        await self.tool("list_operations", status="RUNNING")
        regions = {r["name"] for r in (await self.tool("list_regions"))["items"]}
        assert region in regions
        zones = [z["name"] for z in (await self.tool("list_availability_zones", region=region))["items"]]
        zone = self.ask("availability_zone", zones)
        types = await self.tool("list_instance_types", region=region, availability_zone=zone)
        quotas = {q["instance_type"]: q for q in (await self.tool("get_quotas", region=region))["items"]}
        plans = (await self.tool("list_training_plans", region=region))["items"]

        # 2. The decision questions, offering only what the tools returned
        instance_type = self.ask("instance_type", [t["name"] for t in types["items"] if t["name"] in quotas])
        capacity = self.ask("capacity_type", ["on-demand", "spot",
                                              *(["training-plan"] if any(p["instance_type"] == instance_type
                                                                         for p in plans) else [])])
        count = self.ask("instance_count", list(range(1, quotas[instance_type]["available"] + 1)))

        # 3. Create (the script "loses" the answer and blindly repeats the call, with no key either time)
        args = {"name": name, "region": region,
                "instance_groups": [{"name": "accel", "instance_type": instance_type, "instance_count": count,
                                     "availability_zone": zone, "capacity_type": capacity}]}
        first = await self.tool("create_cluster", **args)
        again = await self.tool("create_cluster", **args)
        assert again["id"] == first["id"], "a blind retry started a second operation"

        # 4. Watch to the end
        deadline = time.monotonic() + 120
        op = first
        while op["status"] not in TERMINAL:
            assert time.monotonic() < deadline, f"still {op['status']} at {op.get('phase')}"
            op = await self.tool("get_operation", operation_id=first["id"], wait_seconds=20)

        # 5. Verify and report
        cluster = await self.tool("get_cluster", cluster=name, region=region)
        return {"operation": op, "cluster": cluster}


def test_scripted_agent_follows_the_create_cluster_skill(sandbox: Any, api: Any) -> None:
    skill = SKILL.read_text()
    name = f"agent-{uuid.uuid4().hex[:6]}"
    answers = {"availability_zone": "us-west-2a", "instance_type": "ml.g5.8xlarge",
               "capacity_type": "on-demand", "instance_count": 2}

    async def go() -> tuple[ScriptedAgent, dict[str, Any]]:
        async with http_client(f"{sandbox.base_url}/mcp", sandbox.tokens.admin) as client:
            agent = ScriptedAgent(client, answers)
            return agent, await agent.create_cluster(name, "us-west-2")

    agent, report = asyncio.run(go())

    # The operation ended well and the cluster is what the user decided
    op, cluster = report["operation"], report["cluster"]
    assert op["status"] == "SUCCEEDED", op.get("error")
    assert op["kind"] == "cluster.create"
    assert cluster["status"] == "ACTIVE"
    group = cluster["instance_groups"][0]
    assert (group["instance_type"], group["current_count"]) == ("ml.g5.8xlarge", 2)

    # It asked only the decision questions, never about networking
    assert set(agent.questions) == DECISIONS

    # It did what the skill says, in the skill's order: inspect (step 1), create (3), watch (4), verify (5)
    tools = {s.name for s in build_catalog(api.get("/v1/openapi.json").json())}
    inspect = section_tools(skill, 1, tools)
    assert {"list_clusters", "list_regions", "list_availability_zones", "list_instance_types", "get_quotas",
            "list_training_plans"} <= set(inspect)
    first_create = agent.calls.index("create_cluster")
    assert set(inspect) <= set(agent.calls[:first_create]), set(inspect) - set(agent.calls[:first_create])
    assert section_tools(skill, 3, tools) == ["create_cluster"]
    assert "get_operation" in section_tools(skill, 4, tools) and "get_cluster" in section_tools(skill, 5, tools)
    after = agent.calls[first_create:]
    assert after[:2] == ["create_cluster", "create_cluster"] and after[-1] == "get_cluster"
    assert set(after[2:-1]) == {"get_operation"}

    # The blind retry repeated nothing: one operation, one SageMaker CreateCluster for this name
    assert len(creates_for(api, name)) == 1
    ops = api.get("/v1/operations", params={"cluster": name}).json()["items"]
    assert [o["id"] for o in ops] == [op["id"]]


def test_scripted_agent_diagnoses_a_failed_create_read_only_then_resumes_it(sandbox: Any, api: Any) -> None:
    # Given a create that fails at the hyperpod_cluster step (an injected SageMaker error)
    api.post("/v1/sandbox/faults", json={"service": "sagemaker", "operation": "CreateCluster",
                                         "error_code": "ValidationException", "count": 1,
                                         "message": "injected for the diagnose skill"})
    name = f"diag-{uuid.uuid4().hex[:6]}"
    args = {"name": name, "region": "us-west-2",
            "instance_groups": [{"name": "accel", "instance_type": "ml.g5.8xlarge", "instance_count": 1,
                                 "availability_zone": "us-west-2a"}]}
    tools = {s.name: s for s in build_catalog(api.get("/v1/openapi.json").json())}

    async def go() -> tuple[list[str], dict[str, Any], dict[str, Any]]:
        async with http_client(f"{sandbox.base_url}/mcp", sandbox.tokens.admin) as client:
            agent = ScriptedAgent(client, {})
            op = await agent.tool("create_cluster", **args)
            while op["status"] not in TERMINAL:
                op = await agent.tool("get_operation", operation_id=op["id"], wait_seconds=20)
            # diagnose-cluster-creation: read-only investigation
            mark = len(agent.calls)
            listed = await agent.tool("list_operations", cluster=name)
            failed = await agent.tool("get_operation", operation_id=listed["items"][0]["id"])
            await agent.tool("get_cluster", cluster=name, region="us-west-2")
            await agent.tool("get_quotas", region="us-west-2")
            diagnosis = agent.calls[mark:]
            # create-cluster "Resume": the user accepted the suggested retry_operation
            resumed = await agent.tool("retry_operation", operation_id=failed["id"])
            while resumed["status"] not in TERMINAL:
                resumed = await agent.tool("get_operation", operation_id=failed["id"], wait_seconds=20)
            return diagnosis, failed, resumed

    diagnosis, failed, resumed = asyncio.run(go())

    assert all(tools[t].read_only for t in diagnosis), diagnosis
    step = next(s for s in failed["steps"] if s["status"] == "FAILED")
    assert (failed["status"], failed["phase"], step["name"]) == ("FAILED", "hyperpod_cluster", "hyperpod_cluster")
    assert step["error"]["code"] == "ValidationException"
    assert resumed["status"] == "SUCCEEDED", resumed.get("error")
    assert [s["attempts"] for s in resumed["steps"]][:3] == [1, 1, 1]  # finished steps were not repeated
    ok = [c for c in creates_for(api, name) if c["outcome"] == "ok"]
    assert len(ok) == 1
