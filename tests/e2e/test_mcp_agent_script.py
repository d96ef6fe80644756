"""A scripted agent (deterministic, no model) follows the skills through MCP for the two requests of issue 9:

1. "Set up a new HyperPod cluster called agent-demo in us-west-2 with two ml.g5.8xlarge on-demand nodes and
   shared S3 storage, with automatic node recovery, and tell me when it's ready"
2. "add a group spare with one node in another zone and scale it to 2"

It inspects with the tools the skills name, asks only the questions the sentence left open (the zone),
offering only values the tools returned, writes with an idempotency key, watches each operation with
get_operation passing back the version (wait_seconds=60) and reports. It records every tool call and the
bytes of every tool result it read. `tests/bench_agent.py` prints the figures against the issue's budgets;
these tests assert only what is exact: each result within 4 KB, the outcome, the questions, the order.

Capacity: `find_capacity` (per zone: offered, spot, training plans; the quota available).

Below them, issue 26's five journeys (`run_journeys`): an operator's agent creates a cluster, switches on features,
fine-tunes on the user's data in their bucket, serves the user's model behind a load balancer, and fixes a broken node
with the one call the user approves; each within 12 calls and 8 KB of tool results."""

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

FIRST = object()  # an answer: the first option offered
CAPACITY_TOOL = "find_capacity"  # per-zone capacity in one call
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
        """Reader-visible step changes: each step that ran started and ended (its steps_done, twice)."""
        done, _, _ = str(self.final.get("steps_done") or "0/0").partition("/")
        return 2 * int(done or 0)


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
        if answer is FIRST:  # the user takes what was offered (e.g. approves the one call shown)
            return options[0]
        assert answer in options, f"{answer!r} was not offered for {decision}: {options}"
        return answer

    async def capacity(self, region: str, instance_type: str) -> dict[str, int | None]:
        """Zones offering the type -> quota available for it (find_capacity: one call)."""
        answer = await self.tool(CAPACITY_TOOL, region=region, instance_type=instance_type)
        regional = _available(answer)
        return {str(r["availability_zone"]): _available(r) or regional for r in answer.get("zones") or []
                if r.get("offered", True)}

    async def watch(self, op: dict[str, Any], timeout: float = 300) -> dict[str, Any]:
        """get_operation, passing back the version, wait_seconds=60, until terminal (skill step 4)."""
        w = Watch(op_id(op), versions=[op["version"]])
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
        assert await self.rows("list_clusters", "name", name, name=name) is None, f"{name} exists already"
        zones = await self.capacity(region, instance_type)
        known = [q for q in zones.values() if q is not None]
        assert known, zones  # find_capacity says the quota available per zone
        available = max(known)
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
        assert known, zones  # find_capacity says the quota available per zone
        available = max(known)
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


def op_id(op: dict[str, Any]) -> str:
    """An operation's id: in the answer a write returns; a watch's answer names it in its `next` call."""
    found = op.get("id") or re.search(r'operation_id="(op-[0-9a-f]+)"', str(op.get("next")))
    assert found, op
    return found if isinstance(found, str) else found.group(1)


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
    step = failed["failed"]  # the compact view names the failed step (every step: detail="full")
    assert (failed["status"], failed["phase"], step["name"]) == ("FAILED", "hyperpod_cluster", "hyperpod_cluster")
    assert step["error"] == "ValidationException" and failed["error"]["code"] == "ValidationException"
    assert failed["next"].startswith("fix the cause, then retry_operation(")
    assert "outputs" in full["steps"][0]  # detail="full": the REST document, raw outputs included
    assert resumed["status"] == "SUCCEEDED", resumed.get("error")
    assert [s["attempts"] for s in after["steps"]][:3] == [1, 1, 1]  # finished steps were not repeated
    ok = [c for c in creates_for(api, name) if c["outcome"] == "ok"]
    assert len(ok) == 1


# --- issue 26: five journeys, an operator's agent following the skills ----------------------------------------

JOURNEY_CALLS, JOURNEY_BYTES = 12, 8 * 1024  # per journey (issue 26)
SKILL = {name: (SKILLS / name / "SKILL.md").read_text() for name in (
    "create-cluster", "manage-features", "submit-training-job", "deploy-model", "diagnose-node-health")}
LLAMA_FACTORY_IMAGE = "hiyouga/llamafactory:0.9.3"
VLLM_IMAGE = "vllm/vllm-openai:v0.10.1"


@dataclass
class JourneyFigures:
    name: str
    calls: list[str]
    sizes: list[int]

    @property
    def bytes(self) -> int:
        return sum(self.sizes)


class JourneyAgent(ScriptedAgent):
    """The scripted agent of issue 26's journeys: each method is one user request, done the way its skill says,
    every write planned first (dry_run) and approved once by the user (the test), every operation watched."""

    figures: list[JourneyFigures]

    def journey(self, name: str) -> int:
        self.figures = getattr(self, "figures", [])
        self.figures.append(JourneyFigures(name, [], []))
        return len(self.calls)

    def close(self, mark: int) -> JourneyFigures:
        f = self.figures[-1]
        f.calls, f.sizes = self.calls[mark:], self.result_bytes[mark:]
        return f

    def approve(self, what: str, plan: dict[str, Any]) -> None:
        """The one question before a write: the plan (changes, cost, warnings) shown, the user says yes."""
        assert plan.get("dry_run") is True, plan
        self.ask(f"approve {what}", [True])

    # 1. "Create a cluster <name> in us-west-2 with two ml.g5.8xlarge nodes; don't let HyperPod touch a node
    #    without asking me" (create-cluster)
    async def create(self, name: str, region: str, instance_type: str, count: int) -> dict[str, Any]:
        mark = self.journey("create a cluster")
        assert await self.rows("list_clusters", "name", name, name=name) is None
        zones = await self.capacity(region, instance_type)
        zone = self.ask("availability_zone", sorted(zones))
        body = {"name": name, "region": region, "node_recovery": "none",
                "instance_groups": [{"name": "accel", "instance_type": instance_type, "instance_count": count,
                                     "availability_zone": zone, "capacity_type": "on-demand"}]}
        self.approve("create", await self.tool("create_cluster", **body, dry_run=True))
        op = await self.watch(await self.tool("create_cluster", **body, idempotency_key=f"create-{name}"))
        cluster = await self.tool("get_cluster", cluster=name)
        self.close(mark)
        return {"operation": op, "cluster": cluster}

    # 2. "Switch on the training operator and KubeRay on <cluster>" (manage-features)
    async def features(self, cluster: str, names: list[str]) -> dict[str, Any]:
        mark = self.journey("switch on features")
        before = await self.tool("get_features", cluster=cluster)
        change = {n: {"enabled": True} for n in names if str(before[n]).startswith("off")}
        self.approve("features", await self.tool("update_features", cluster=cluster, **change, dry_run=True))
        op = await self.watch(await self.tool("update_features", cluster=cluster, **change))
        after = await self.tool("get_features", cluster=cluster)
        self.close(mark)
        return {"operation": op, "features": after}

    # 3. "Fine-tune Qwen3-0.6B with LLaMA-Factory on my support_chats dataset in my team bucket, and keep the result
    #    in my bucket" (submit-training-job)
    async def finetune(self, cluster: str, job: str, bucket: str, dataset: str, model: str,
                       instance_type: str) -> dict[str, Any]:
        mark = self.journey("fine-tune on my data")
        roots = await self.tool("list_data", cluster=cluster)
        mine = next(r for r in roots["roots"] if r["uri"].startswith(f"s3://{bucket}/"))
        namespace = self.ask("namespace", [m.partition(":")[0] for m in mine.get("mounted") or []])
        folder = await self.tool("list_data", uri=f"s3://{bucket}/sft/")
        dataset_dir = self.ask("dataset folder", folder.get("folders") or [])
        args = {"cluster": cluster, "name": job, "namespace": namespace, "recipe": "llama-factory",
                "image": LLAMA_FACTORY_IMAGE, "instance_type": instance_type, "gpus_per_node": 1,
                "parameters": {"model_name_or_path": model, "dataset_dir": dataset_dir, "dataset": dataset},
                "output": f"s3://{bucket}/runs/{job}/"}
        self.approve("job", await self.tool("submit_job", **args, dry_run=True))
        op = await self.watch(await self.tool("submit_job", **args))
        detail = await self.tool("get_job", cluster=cluster, job=job, namespace=namespace)
        self.close(mark)
        return {"operation": op, "job": detail}

    # 4. "Serve my fine-tuned model from my bucket with vLLM behind a load balancer, for our office 203.0.113.0/24"
    #    (deploy-model)
    async def serve(self, cluster: str, endpoint: str, bucket: str, cidr: str) -> dict[str, Any]:
        mark = self.journey("serve my model behind a load balancer")
        gpus = await self.tool("get_cluster_gpus", cluster=cluster)
        group = next(g for g in gpus["groups"] if g["gpus_free"] >= 1)
        models = await self.tool("list_data", uri=f"s3://{bucket}/models/")
        uri = self.ask("model folder", models.get("folders") or [])
        args = {"cluster": cluster, "name": endpoint, "mode": "self-managed", "engine": "vllm", "image": VLLM_IMAGE,
                "model": {"source": "s3", "uri": uri}, "instance_type": group["instance_type"], "gpus": 1,
                "more": {"service": "external", "internet_facing": True, "source_ranges": [cidr]}}
        plan = await self.tool("deploy_endpoint", **args, dry_run=True)
        assert any(w.startswith("EXPOSURE") for w in plan["warnings"]), plan
        self.approve("endpoint", plan)
        op = await self.watch(await self.tool("deploy_endpoint", **args))
        view = await self.tool("get_endpoint", cluster=cluster, endpoint=endpoint)
        self.close(mark)
        return {"operation": op, "endpoint": view, "plan": plan}

    # 5. "Node <id> looks broken, fix it" (diagnose-node-health, then the hand-over)
    async def fix_node(self, cluster: str, node_id: str) -> dict[str, Any]:
        mark = self.journey("fix a broken node")
        page = await self.tool("list_nodes", cluster=cluster, unhealthy=True)
        row = next(r for r in page["items"] if r["node_id"] == node_id)
        node = await self.tool("get_node", cluster=cluster, node_id=node_id)
        assert node["ladder"]["rung"] == row["rung"]
        fix = row["fix"]  # the Recommendation's call: shown to the user, approved once, made exactly
        self.ask("approve fix", [fix])
        op = await self.watch(await self.tool(fix["tool"], **fix["args"]))
        after = await self.tool("get_node", cluster=cluster, node_id=node_id)
        self.close(mark)
        return {"row": row, "operation": op, "node": after}


def _put(aws: Any, bucket: str, objects: dict[str, bytes]) -> None:
    s3 = aws("s3")
    for key, body in objects.items():
        s3.put_object(Bucket=bucket, Key=key, Body=body)


def run_journeys(base_url: str, operator_token: str, api: Any, aws: Any) -> tuple[JourneyAgent, dict[str, Any]]:
    """Issue 26's five requests, one after the other, each a conversation of an operator's agent over MCP; between
    them what the user's world does by itself (an admin mounts the team's bucket, a GPU faults). Returns the agent
    (its figures per journey) and each journey's outcome."""
    from sandbox.resources import TEAM_BUCKET

    run = uuid.uuid4().hex[:6]
    name, job, endpoint = f"team-{run}", f"sft-{run}", f"support-{run}"
    # The user's world: their dataset (a LLaMA-Factory folder) and an earlier fine-tuned model in their team's
    # bucket, which an admin registered at deploy time
    _put(aws, TEAM_BUCKET, {
        f"sft/chats-{run}/dataset_info.json": b'{"support_chats": {"file_name": "chats.jsonl", "formatting": '
                                               b'"sharegpt"}}',
        f"sft/chats-{run}/chats.jsonl": b'{"conversations": [{"from": "human", "value": "hi"}]}\n',
        f"models/support-qwen-{run}/config.json": b'{"model_type": "qwen3"}',
        f"models/support-qwen-{run}/model.safetensors": b"weights"})
    approvals = {f"approve {w}": True for w in ("create", "features", "job", "endpoint")}
    agent = JourneyAgent(None, {"availability_zone": "us-west-2a", **approvals}, {})  # type: ignore[arg-type]

    def session(steps: Any) -> Any:
        async def go() -> Any:
            async with http_client(f"{base_url}/mcp", operator_token) as client:
                agent.client, agent.tools = client, {t.name: t for t in (await client.list_tools()).tools}
                return await steps(agent)
        return asyncio.run(go())

    out: dict[str, Any] = {"cluster": name, "job": job, "endpoint": endpoint, "bucket": TEAM_BUCKET}
    out["created"] = session(lambda a: a.create(name, "us-west-2", "ml.g5.8xlarge", 2))
    out["features"] = session(lambda a: a.features(name, ["training_operator", "kuberay_operator"]))
    # An admin mounted the team's bucket (read-write) in the default namespace, once: the team's jobs read and write it
    mount = api.post(f"/v1/clusters/{name}/storage", json={"kind": "s3", "name": "team", "bucket": TEAM_BUCKET,
                                                           "namespace": "default"}).json()
    out["mount"] = api.wait_terminal(mount["id"])
    agent.answers |= {"namespace": "default", "dataset folder": f"s3://{TEAM_BUCKET}/sft/chats-{run}/"}
    out["tuned"] = session(lambda a: a.finetune(name, job, TEAM_BUCKET, "support_chats", "Qwen/Qwen3-0.6B",
                                                "ml.g5.8xlarge"))
    agent.answers["model folder"] = f"s3://{TEAM_BUCKET}/models/support-qwen-{run}/"
    out["served"] = session(lambda a: a.serve(name, endpoint, TEAM_BUCKET, "203.0.113.0/24"))
    out["nodes"] = api.get(f"/v1/clusters/{name}/nodes").json()["items"]
    # a GPU fault on a busy node (HyperPod reports it; node recovery is off, so it waits for a human)
    out["broken"] = next(n["node_id"] for n in out["nodes"] if n["gpus_requested"])
    out["fault"] = api.post(f"/v1/sandbox/nodes/{out['broken']}/fault", json={"kind": "gpu_xid"}).status_code
    agent.answers["approve fix"] = FIRST
    out["fixed"] = session(lambda a: a.fix_node(name, out["broken"]))
    return agent, out


def report(agent: JourneyAgent) -> str:
    return "\n".join(f"  {f.name}: {len(f.calls)} calls, {f.bytes / 1024:.1f} KB, largest {max(f.sizes)} B "
                     f"({', '.join(f.calls)})" for f in agent.figures)


def test_five_journeys_finish_real_users_jobs_within_the_budgets(sandbox: Any, api: Any, aws: Any) -> None:
    agent, out = run_journeys(sandbox.base_url, sandbox.tokens.operator, api, aws)
    job, bucket = out["job"], out["bucket"]

    # 1. create: the cluster runs, as the sentence asked
    created = out["created"]
    assert created["operation"]["status"] == "SUCCEEDED" and created["cluster"]["status"] == "ACTIVE"
    assert created["cluster"]["node_recovery"] == "None"
    # 2. features: both operators on
    feats = out["features"]
    assert feats["operation"]["status"] == "SUCCEEDED", feats["operation"]
    assert feats["features"]["training_operator"].startswith("ACTIVE"), feats["features"]
    assert feats["features"]["kuberay_operator"].startswith("ACTIVE"), feats["features"]
    # 3. fine-tuned on the user's dataset, writing to the user's bucket
    assert out["mount"]["status"] == "SUCCEEDED"
    tuned = out["tuned"]
    assert tuned["operation"]["status"] == "SUCCEEDED", tuned["operation"]
    assert tuned["job"]["status"] == "Running" and tuned["job"]["outputs"] == f"s3://{bucket}/runs/{job}/"
    # 4. the user's model served behind a load balancer: its URL in a tool result
    served = out["served"]
    assert served["operation"]["status"] == "SUCCEEDED", served["operation"]
    url = served["endpoint"]["url"]
    assert served["endpoint"]["ready"] is True and url.startswith("http://") and ".elb." in url, served["endpoint"]
    assert served["operation"].get("url") == url
    # No node overcommitted: each node's pods request at most the GPUs it has (the job and the endpoint on two)
    nodes = out["nodes"]
    assert all(n["gpus_requested"] <= n["gpus_allocatable"] for n in nodes), nodes
    assert sorted(n["gpus_requested"] for n in nodes) == [1, 1]
    # 5. the broken node found from list_nodes and fixed with the one call the user approved
    assert out["fault"] == 201
    fixed = out["fixed"]
    assert fixed["row"]["rung"] == "reboot" and "Xid 48" in fixed["row"]["fault"], fixed["row"]
    assert fixed["operation"]["status"] == "SUCCEEDED" and fixed["operation"]["kind"] == "nodes.reboot"
    assert fixed["node"]["health"] == "Schedulable" and fixed["node"].get("ready", True) is not False
    writes = [t for f in agent.figures[-1:] for t in f.calls if t in ("reboot_nodes", "replace_nodes")]
    assert writes == ["reboot_nodes"] and ("approve fix", [fixed["row"]["fix"]]) in agent.questions

    print(f"\nissue 26 journeys (operator token):\n{report(agent)}")
    for f in agent.figures:
        assert len(f.calls) <= JOURNEY_CALLS, (f.name, f.calls)
        assert f.bytes <= JOURNEY_BYTES, (f.name, f.bytes, list(zip(f.calls, f.sizes, strict=True)))
        assert max(f.sizes) <= BUDGET, (f.name, max(f.sizes))
    # Each journey followed its skill: every tool it called is one its skill (or the workflow rules) names
    rules = (SKILLS / "podstart-workflow-rules" / "SKILL.md").read_text()
    for f, skill in zip(agent.figures, SKILL.values(), strict=True):
        named = set(re.findall(r"`([a-z]+_[a-z_]+)", skill + rules))
        assert set(f.calls) <= named, (f.name, set(f.calls) - named)
