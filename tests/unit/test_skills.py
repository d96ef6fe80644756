"""Skills and agent configs stay true to the tool catalog and the code: front matter with name + "Use when",
every tool a skill names exists in the gateway's catalog (built from the REST OpenAPI document), the tools
reference is generated from that catalog, the create body in the skill is one the API accepts, the steps
named are the workflows' steps; `hypd-inst-agent` writes and asks before every write, the read-only agent
cannot write."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from mcp_gateway.catalog import ToolSpec, build_catalog, folded

ROOT = Path(__file__).resolve().parents[2]
SKILLS = ROOT / "skills"
AGENTS = SKILLS / "agents"
SKILL_FILES = sorted(SKILLS.glob("*/SKILL.md"))
DOCS = [*SKILL_FILES, *sorted((SKILLS / "reference").glob("*.md")), SKILLS / "README.md",
        *sorted((AGENTS / "claude").glob("*.md"))]
REQUIRED_SKILLS = {"podstart-workflow-rules", "create-cluster", "add-instance-group", "import-cluster",
                   "delete-cluster", "diagnose-cluster-creation", "diagnose-node-health"}
# A backticked snake_case identifier starting with one of these verbs is a tool reference (arguments like
# `instance_count` or `idempotency_key` are not); extra verbs catch tools a skill might invent.
EXTRA_VERBS = {"describe", "update", "reboot", "replace", "start", "stop", "remove", "run", "submit", "deploy"}
BACKTICKED = re.compile(r"`(?:mcp__podstart__|@podstart/)?([a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?:\([^`]*\))?`")


@cache
def catalog() -> dict[str, ToolSpec]:
    from functions.api.handler import openapi_document

    return {s.name: s for s in build_catalog(openapi_document())}


def verbs() -> set[str]:
    return {name.split("_", 1)[0] for name in catalog()} | EXTRA_VERBS


def named_tools(text: str) -> set[str]:
    """Tools a markdown text names: backticked snake_case identifiers that start with a tool verb."""
    return {m for m in BACKTICKED.findall(text) if m.split("_", 1)[0] in verbs()}


def unknown_tools(text: str) -> set[str]:
    return named_tools(text) - set(catalog())


def front_matter(text: str) -> dict[str, Any]:
    match = re.match(r"\A---\n(.*?)\n---\n", text, re.S)
    assert match, "no YAML front matter"
    data = yaml.safe_load(match.group(1))
    assert isinstance(data, dict)
    return data


def mutating() -> set[str]:
    return {n for n, s in catalog().items() if s.mutating}


# --- skills ----------------------------------------------------------------------------------------

def test_the_workflow_skills_exist() -> None:
    assert {p.parent.name for p in SKILL_FILES} >= REQUIRED_SKILLS


@pytest.mark.parametrize("path", SKILL_FILES, ids=lambda p: p.parent.name)
def test_skill_front_matter_has_name_and_use_when(path: Path) -> None:
    meta = front_matter(path.read_text())
    assert meta.get("name") == path.parent.name
    description = meta.get("description")
    assert isinstance(description, str) and description.startswith("Use when "), description
    assert len(description) <= 1024


@pytest.mark.parametrize("path", SKILL_FILES, ids=lambda p: p.parent.name)
def test_skill_is_short_and_names_tools(path: Path) -> None:
    text = path.read_text()
    assert len(text.splitlines()) <= 80, "keep one workflow per file; move reference material out"
    assert named_tools(text), "a skill names the tools it uses, in backticks"


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(SKILLS)))
def test_every_tool_a_skill_names_exists_in_the_catalog(path: Path) -> None:
    assert not unknown_tools(path.read_text())


def test_a_skill_naming_a_nonexistent_tool_fails_the_check() -> None:
    skill = ("---\nname: demo\ndescription: Use when testing.\n---\n"
             "Call `list_clusters`, then `reboot_cluster_nodes(cluster)` and `get_cluster_health`; "
             "pass `instance_count` and `idempotency_key`.\n")

    assert named_tools(skill) == {"list_clusters", "reboot_cluster_nodes", "get_cluster_health"}
    assert unknown_tools(skill) == {"reboot_cluster_nodes", "get_cluster_health"}


READ_ONLY_MARK = "Read-only: call only read tools"
RAW_MUTATION = re.compile(r"aws sagemaker (batch|delete|update|create)|kubectl (delete|drain|cordon|apply|patch)")


def _items(text: str) -> list[str]:
    """A markdown text cut into its list items (numbered or bulleted), continuation lines included."""
    return [b for b in re.split(r"\n(?=\s*(?:\d+\.|-) )", text) if b.strip()]


def read_only_violations(text: str) -> list[str]:
    """Items of a read-only skill that call a mutating tool (rather than suggest or recommend it: the Recommendation
    a diagnosis ends with, for the acting agent to ask about) or show a raw aws/kubectl mutation."""
    return [i.strip()[:80] for i in _items(text)
            if (named_tools(i) & mutating() and not ("suggest" in i.lower() or "recommend" in i.lower()))
            or RAW_MUTATION.search(i)]


@pytest.mark.parametrize("path", [p for p in SKILL_FILES if READ_ONLY_MARK in p.read_text()],
                         ids=lambda p: p.parent.name)
def test_a_read_only_skill_only_suggests_mutating_tools(path: Path) -> None:
    assert not read_only_violations(path.read_text())


def test_the_read_only_check_catches_a_call_and_a_raw_cli_mutation() -> None:
    assert read_only_violations("1. Read `get_node`.\n2. Then call `reboot_nodes(cluster, node_ids)`.\n")
    assert read_only_violations("- Suggest `aws sagemaker batch-reboot-cluster-nodes --node-ids i-1`\n")
    assert not read_only_violations("- **Reboot**: suggest `reboot_nodes(cluster, node_ids)`.\n")


def test_the_tools_reference_lists_every_tool() -> None:
    text = (SKILLS / "reference" / "tools.md").read_text()
    listed = set(re.findall(r"^\| `([a-z_]+)` \|", text, re.M))
    assert listed == set(catalog())
    for name, spec in catalog().items():
        kind = re.search(rf"^\| `{name}` \| ([^|]+) \|", text, re.M)
        assert kind and kind.group(1).startswith("read" if spec.read_only else "write"), name


def test_skills_link_only_to_files_that_exist() -> None:
    for path in DOCS:
        for target in re.findall(r"\]\(([^)#]+\.md)\)", path.read_text()):
            assert (path.parent / target).resolve().is_file(), f"{path}: {target}"


# --- what the skills claim ------------------------------------------------------------------------

def test_the_tools_reference_and_agent_tool_lists_are_generated_from_the_catalog() -> None:
    # A drifted file (a tool added, an argument renamed) fails here: run `python -m mcp_gateway.docs`
    from mcp_gateway.docs import TARGET, generated

    files = generated(list(catalog().values()))
    assert TARGET == SKILLS / "reference" / "tools.md" and TARGET in files
    assert len(files) == 8  # the reference, six agent configs, the README's copy line
    for path, text in files.items():
        assert path.read_text() == text, f"{path.relative_to(ROOT)} drifted: run python -m mcp_gateway.docs"


def test_the_generated_reference_changes_with_the_catalog() -> None:
    from mcp_gateway.docs import render

    specs = list(catalog().values())
    renamed = [s if s.name != "find_capacity" else type(s)(**{**s.__dict__, "name": "get_quota_usage"})
               for s in specs]

    assert render(renamed) != render(specs) and "`get_quota_usage` | read |" in render(renamed)


def test_the_create_skill_shows_storage_and_node_recovery_in_a_body_the_api_accepts() -> None:
    import jsonschema

    from functions.api.handler import openapi_document

    text = (SKILLS / "create-cluster" / "SKILL.md").read_text()
    body = json.loads(re.search(r"```json\n(.*?)```", text, re.S).group(1))  # type: ignore[union-attr]
    doc = openapi_document()
    rest_body = doc["paths"]["/v1/clusters"]["post"]["requestBody"]["content"]["application/json"]["schema"]

    assert body["storage"] == {"s3": True} and body["node_recovery"] == "automatic"
    assert "fsx_lustre" in text and "storage_capacity_gib" in text
    # the body (less the gateway's idempotency_key) is valid for POST /v1/clusters, patterns included
    jsonschema.validate({k: v for k, v in body.items() if k != "idempotency_key"},
                        {**rest_body, "components": doc["components"]})
    spec = catalog()["create_cluster"]
    assert set(body) <= set(spec.input_schema["properties"]) | set(folded(spec)) | {"idempotency_key"}


def test_the_rules_say_how_to_watch_what_a_create_does_and_when_to_check_the_role() -> None:
    rules = (SKILLS / "podstart-workflow-rules" / "SKILL.md").read_text()

    assert "version" in rules and "wait_seconds=60" in rules
    assert "active cluster" in rules and "`set_preferences(active_cluster={name, region})`" in rules
    assert "`get_identity`" in rules
    assert "counts_as_of" in rules and "current_count" in rules
    # every skill that watches an operation passes the version back, with the 60 s wait
    for path in SKILL_FILES:
        for call in re.findall(r"`get_operation\(([^`]*)\)`", path.read_text()):
            if "wait_seconds" in call:
                assert "version" in call and "wait_seconds=60" in call, (path, call)


def test_a_skill_names_only_steps_the_workflows_have() -> None:
    from functions.domain.kinds import KINDS

    steps = {s for kind in KINDS.values() for s in kind}
    for path in DOCS:
        for name in re.findall(r"`([a-z]+(?:_[a-z]+)*)`", path.read_text()):
            if name.endswith(("_plane", "_cluster", "_group")) and name not in catalog():
                assert name in steps, (path, name)
    table = (SKILLS / "reference" / "steps.md").read_text()
    assert set(re.findall(r"^\| `([a-z_]+)` \|", table, re.M)) == set(KINDS["cluster.create"])


def test_skills_claim_nothing_podstart_does_not_do() -> None:
    # PodStart applies its own Kubernetes manifests (functions/domain/manifests.py); it installs no Helm charts
    for path in [*DOCS, ROOT / "README.md"]:
        assert "helm" not in path.read_text().lower(), path
    assert not list((ROOT / "functions").rglob("*helm*"))


# --- agent configs ---------------------------------------------------------------------------------

def kiro(name: str) -> dict[str, Any]:
    return json.loads((AGENTS / "kiro" / f"{name}.json").read_text())  # type: ignore[no-any-return]


def kiro_tools(patterns: list[str]) -> set[str]:
    return {p.removeprefix("@podstart/") for p in patterns if p.startswith("@podstart/")}


def claude_tools(patterns: list[str]) -> set[str]:
    return {p.removeprefix("mcp__podstart__") for p in patterns if p.startswith("mcp__podstart__")}


def server_args(config: dict[str, Any]) -> list[str]:
    server = config["mcpServers"]["podstart"]
    assert server["command"] == "python" and server["args"][:2] == ["-m", "mcp_gateway"], server
    return list(server["args"])


def reads_the_skills_name() -> set[str]:
    """Read tools the skills tell an agent to call: an agent following them is never stopped to approve a read."""
    named = set().union(*(named_tools(p.read_text()) for p in SKILL_FILES))
    return {n for n in named if n in catalog() and catalog()[n].read_only}


def test_kiro_hypd_inst_agent_writes_and_asks_before_every_write() -> None:
    # Given the agent the product is known by
    agent = kiro("hypd-inst-agent")

    # Then its gateway can write, every read the skills use runs without asking, and no write tool is
    # pre-approved: Kiro asks the user before each one
    assert agent["name"] == "hypd-inst-agent" and agent["description"] and agent["prompt"]
    assert "--read-only" not in server_args(agent)
    assert "http://127.0.0.1:3099" in server_args(agent)
    allowed = kiro_tools(agent["allowedTools"])
    assert allowed <= set(catalog()), allowed - set(catalog())
    assert not allowed & mutating(), "writes are never pre-approved: each one asks the user"
    assert reads_the_skills_name() <= allowed, reads_the_skills_name() - allowed
    assert not any(p in ("*", "@podstart", "@podstart/*") for p in agent["allowedTools"])
    assert "@podstart" in agent["tools"]
    assert "asks" in agent["prompt"] and "one sentence" in agent["description"]


def test_kiro_readonly_agent_cannot_write() -> None:
    agent = kiro("hypd-inst-agent-readonly")

    assert agent["name"] == "hypd-inst-agent-readonly"
    assert "--read-only" in server_args(agent)
    allowed = kiro_tools(agent["allowedTools"])
    assert allowed and allowed <= set(catalog()) and not allowed & mutating()
    assert reads_the_skills_name() <= allowed
    assert "hypd-inst-agent" in agent["prompt"]  # it hands changes to the agent that can make them


def test_kiro_resources_point_at_the_skills() -> None:
    for name in ("hypd-inst-agent", "hypd-inst-agent-readonly"):
        resources = kiro(name)["resources"]
        paths = {re.sub(r"^(file|skill)://", "", r) for r in resources}
        assert "skills/podstart-workflow-rules/SKILL.md" in paths
        assert {f"skills/{s}/SKILL.md" for s in REQUIRED_SKILLS} <= paths
        assert all((ROOT / p).is_file() for p in paths), paths


def test_claude_code_configs() -> None:
    # The repo's .mcp.json stays read-only; the agent's own server config can write
    assert "--read-only" in server_args(json.loads((ROOT / ".mcp.json").read_text()))
    assert "--read-only" not in server_args(json.loads((AGENTS / "claude" / "mcp.json").read_text()))

    settings = json.loads((AGENTS / "claude" / "settings.json").read_text())["permissions"]
    assert claude_tools(settings["allow"]) <= set(catalog()) and not claude_tools(settings["allow"]) & mutating()
    assert reads_the_skills_name() <= claude_tools(settings["allow"])
    assert claude_tools(settings["ask"]) == mutating()  # every write asks

    readonly = json.loads((AGENTS / "claude" / "settings.readonly.json").read_text())["permissions"]
    assert not claude_tools(readonly["allow"]) & mutating()
    assert claude_tools(readonly["deny"]) == mutating()


def test_claude_code_agent_definitions() -> None:
    agent = front_matter((AGENTS / "claude" / "hypd-inst-agent.md").read_text())
    readonly = front_matter((AGENTS / "claude" / "hypd-inst-agent-readonly.md").read_text())

    assert agent["name"] == "hypd-inst-agent" and str(agent["description"]).startswith("Use when ")
    assert claude_tools([t.strip() for t in str(agent["tools"]).split(",")]) == set(catalog())
    assert readonly["name"] == "hypd-inst-agent-readonly" and str(readonly["description"]).startswith("Use when ")
    tools = claude_tools([t.strip() for t in str(readonly["tools"]).split(",")])
    assert tools and tools <= set(catalog()) and not tools & mutating()


def test_plain_mcp_client_config_speaks_http_with_a_bearer_token() -> None:
    server = json.loads((AGENTS / "mcp-client.json").read_text())["mcpServers"]["podstart"]
    assert server["url"] == "http://127.0.0.1:3099/mcp"
    assert server["headers"]["Authorization"].startswith("Bearer ")


def test_the_readme_names_both_agents() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Use with an AI agent"):]
    assert "`hypd-inst-agent`" in section and "`hypd-inst-agent-readonly`" in section
    for path in re.findall(r"skills/agents/[a-z/._-]+\.(?:json|md)", section):
        assert (ROOT / path).is_file(), path


def test_the_deploy_skill_shows_a_self_managed_body_the_api_accepts() -> None:
    from functions.domain.inference.endpoints import EndpointCreate

    text = (SKILLS / "deploy-model" / "SKILL.md").read_text()
    body = json.loads(re.search(r"```json\n(.*?)```", text, re.S).group(1))  # type: ignore[union-attr]

    assert EndpointCreate.model_validate(body).image == "vllm/vllm-openai:v0.10.1"
    spec = catalog()["deploy_endpoint"]
    assert set(body) <= set(spec.input_schema["properties"]) | set(folded(spec))
    assert {"replicas", "service", "internet_facing", "source_ranges"} <= set(folded(spec))  # the skill says: more
    assert "`:latest` is refused" in text and "never the token" in text


def test_every_agent_config_and_the_readme_copy_line_name_every_skill() -> None:
    from mcp_gateway.docs import AGENTS, README, skill_names

    names = skill_names()
    assert {"submit-training-job", "diagnose-node-health", "deploy-model"} <= set(names)
    readme = README.read_text()
    copy = readme[readme.index("<!-- skills-copy"):readme.index("<!-- /skills-copy -->")]
    for text in (copy, *(p.read_text() for p in (AGENTS / "claude").glob("hypd-inst-agent*.md")),
                 *(p.read_text() for p in (AGENTS / "kiro").glob("hypd-inst-agent*.json"))):
        missing = [n for n in names if f"skills/{n}" not in text]
        assert missing == [], missing
