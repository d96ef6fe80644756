"""Skills and agent configs stay true to the tool catalog: front matter with name + "Use when", every
tool a skill names exists in the gateway's catalog (built from the REST OpenAPI document), every tool
an agent config allows exists, read-only configs allow no mutating tool, writes are an explicit opt-in."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from mcp_gateway.catalog import ToolSpec, build_catalog

ROOT = Path(__file__).resolve().parents[2]
SKILLS = ROOT / "skills"
AGENTS = SKILLS / "agents"
SKILL_FILES = sorted(SKILLS.glob("*/SKILL.md"))
DOCS = [*SKILL_FILES, *sorted((SKILLS / "reference").glob("*.md")), SKILLS / "README.md",
        *sorted((AGENTS / "claude").glob("*.md"))]
REQUIRED_SKILLS = {"podstart-workflow-rules", "create-cluster", "add-instance-group", "import-cluster",
                   "delete-cluster", "diagnose-cluster-creation"}
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


def test_kiro_hypd_inst_agent_is_read_only_and_allows_only_existing_read_tools() -> None:
    agent = kiro("hypd-inst-agent")

    assert agent["name"] == "hypd-inst-agent" and agent["description"] and agent["prompt"]
    assert "--read-only" in server_args(agent)
    assert "http://127.0.0.1:3099" in server_args(agent)
    allowed = kiro_tools(agent["allowedTools"])
    assert allowed and allowed <= set(catalog()), allowed - set(catalog())
    assert not allowed & mutating()
    assert not any(p in ("*", "@podstart", "@podstart/*") for p in agent["allowedTools"])
    assert {"list_clusters", "get_operation", "get_cluster"} <= allowed
    assert "@podstart" in agent["tools"] or kiro_tools(agent["tools"])


def test_kiro_resources_point_at_the_skills() -> None:
    for name in ("hypd-inst-agent", "hypd-inst-agent-write"):
        resources = kiro(name)["resources"]
        paths = {re.sub(r"^(file|skill)://", "", r) for r in resources}
        assert "skills/podstart-workflow-rules/SKILL.md" in paths
        assert {f"skills/{s}/SKILL.md" for s in REQUIRED_SKILLS} <= paths
        assert all((ROOT / p).is_file() for p in paths), paths


def test_kiro_write_agent_is_an_explicit_opt_in() -> None:
    write = kiro("hypd-inst-agent-write")

    assert write["name"] != "hypd-inst-agent" and "write" in write["name"]
    assert "--read-only" not in server_args(write)
    allowed = kiro_tools(write["allowedTools"])
    assert allowed <= set(catalog())
    assert not allowed & mutating(), "writes are never pre-approved: each one asks the user"


def test_claude_code_mcp_json_is_read_only() -> None:
    config = json.loads((ROOT / ".mcp.json").read_text())
    assert "--read-only" in server_args(config)
    write = json.loads((AGENTS / "claude" / "mcp.write.json").read_text())
    assert "--read-only" not in server_args(write)


def test_claude_code_settings_allow_only_existing_read_tools() -> None:
    settings = json.loads((AGENTS / "claude" / "settings.json").read_text())
    allowed = claude_tools(settings["permissions"]["allow"])
    denied = claude_tools(settings["permissions"].get("deny", []))

    assert allowed and allowed <= set(catalog()), allowed - set(catalog())
    assert not allowed & mutating()
    assert denied <= set(catalog()) and denied == mutating()

    write = json.loads((AGENTS / "claude" / "settings.write.json").read_text())
    assert not claude_tools(write["permissions"]["allow"]) & mutating()
    assert claude_tools(write["permissions"].get("ask", [])) == mutating()


def test_claude_code_agent_definition_is_read_only() -> None:
    text = (AGENTS / "claude" / "hypd-inst-agent.md").read_text()
    meta = front_matter(text)
    tools = {t.strip() for t in str(meta["tools"]).split(",")}

    assert meta["name"] == "hypd-inst-agent" and str(meta["description"]).startswith("Use when ")
    podstart = claude_tools(sorted(tools))
    assert podstart and podstart <= set(catalog()) and not podstart & mutating()


def test_plain_mcp_client_config_speaks_http_with_a_bearer_token() -> None:
    server = json.loads((AGENTS / "mcp-client.json").read_text())["mcpServers"]["podstart"]
    assert server["url"] == "http://127.0.0.1:3099/mcp"
    assert server["headers"]["Authorization"].startswith("Bearer ")
