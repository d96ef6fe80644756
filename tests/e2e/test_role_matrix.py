"""Every route x role x face: the role each route needs, tried with each token over REST and through the MCP
gateway, with names outside what PodStart manages where a route takes them (a system namespace, another team's
bucket). Nothing changes: mutations are sent as dry runs against a cluster that does not exist, or with the
names PodStart refuses."""

from __future__ import annotations

import re
from typing import Any

import pytest
from mcp import Client

from sandbox.resources import OTHER_TEAM_BUCKET
from tests.e2e.test_mcp_sandbox import over_http, text

ROLES = ("viewer", "operator", "admin")
RANK = {r: i for i, r in enumerate(ROLES)}
# The role each mutating route needs (reads need a viewer). A route added without a line here fails the test.
MUTATIONS: dict[tuple[str, str], str] = {
    ("post", "/v1/clusters"): "operator",
    ("post", "/v1/clusters/import"): "admin",
    ("delete", "/v1/clusters/{cluster}"): "admin",
    ("post", "/v1/clusters/{cluster}/reconcile"): "operator",
    ("post", "/v1/clusters/{cluster}/software-update"): "operator",
    ("post", "/v1/clusters/{cluster}/instance-groups"): "operator",
    ("patch", "/v1/clusters/{cluster}/instance-groups/{group}"): "operator",
    ("delete", "/v1/clusters/{cluster}/instance-groups/{group}"): "admin",
    ("post", "/v1/clusters/{cluster}/nodes/reboot"): "operator",
    ("post", "/v1/clusters/{cluster}/nodes/replace"): "operator",
    ("post", "/v1/clusters/{cluster}/nodes/delete"): "admin",
    ("post", "/v1/clusters/{cluster}/health-checks"): "operator",
    ("patch", "/v1/clusters/{cluster}/features"): "operator",
    ("post", "/v1/clusters/{cluster}/storage"): "operator",
    ("delete", "/v1/clusters/{cluster}/storage/{name}"): "operator",
    ("post", "/v1/clusters/{cluster}/jobs"): "operator",
    ("delete", "/v1/clusters/{cluster}/jobs/{job}"): "operator",
    ("post", "/v1/clusters/{cluster}/secrets"): "operator",
    ("post", "/v1/clusters/{cluster}/endpoints"): "operator",
    ("patch", "/v1/clusters/{cluster}/endpoints/{endpoint}"): "operator",
    ("delete", "/v1/clusters/{cluster}/endpoints/{endpoint}"): "operator",
    ("post", "/v1/clusters/{cluster}/endpoints/{endpoint}/invoke"): "operator",
    ("post", "/v1/clusters/{cluster}/pools"): "operator",
    ("post", "/v1/clusters/{cluster}/pools/{pool}/assign"): "operator",
    ("post", "/v1/clusters/{cluster}/pools/{pool}/release"): "operator",
    ("post", "/v1/clusters/{cluster}/models"): "operator",
    ("post", "/v1/clusters/{cluster}/namespaces"): "admin",
    ("delete", "/v1/clusters/{cluster}/namespaces/{namespace}"): "admin",
    ("post", "/v1/operations/{operation_id}/retry"): "operator",
    ("post", "/v1/operations/{operation_id}/cancel"): "operator",
    ("put", "/v1/preferences"): "viewer",
    ("post", "/v1/specs/plan"): "viewer",  # a plan (a diff and child plans), read-only (x-podstart-read-only)
    ("post", "/v1/specs/apply"): "operator",  # and each child operation's own role
    ("post", "/v1/capacity/advice"): "viewer",  # a question, read-only (x-podstart-read-only)
    ("post", "/v1/capacity/training-plans"): "admin",  # buys reserved capacity: an upfront fee
}
# Reads a viewer may not make (they show what only operators may act on).
READS_ABOVE_VIEWER: dict[tuple[str, str], str] = {("get", "/v1/clusters/{cluster}/secrets"): "operator",
                                                   ("get", "/v1/audit"): "admin"}  # anyone's own with actor=me
NO_SUCH = {"cluster": "matrix-none", "group": "g", "name": "v", "job": "j", "endpoint": "e", "pool": "p",
           "namespace": "team", "node_id": "hyperpod-i-0abc", "operation_id": "op-" + "0" * 20}


def _operations(openapi: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(m, p, op) for p, item in openapi["paths"].items() for m, op in item.items()
            if m in ("get", "put", "post", "patch", "delete") and not p.startswith("/v1/sandbox")]


def _need(method: str, path: str) -> str:
    method = method.lower()
    if method == "get":
        return READS_ABOVE_VIEWER.get((method, path), "viewer")
    return MUTATIONS[(method, path)]


@pytest.fixture(scope="module")
def openapi(api: Any) -> dict[str, Any]:
    return api.get("/v1/openapi.json").json()  # type: ignore[no-any-return]


def test_the_matrix_names_every_mutating_route(openapi: dict[str, Any]) -> None:
    mutating = {(m, p) for m, p, _ in _operations(openapi) if m != "get"}
    assert mutating == set(MUTATIONS), (sorted(mutating - set(MUTATIONS)), sorted(set(MUTATIONS) - mutating))


def _send(who: Any, method: str, path: str, op: dict[str, Any] | None = None, **extra: Any) -> Any:
    url = re.sub(r"\{(\w+)\}", lambda m: NO_SUCH[m.group(1)], path)
    plans = op is None or any(p.get("name") == "dry_run" for p in op.get("parameters") or [])
    params = {"dry_run": "true"} if method != "get" and plans else {}
    params |= extra.pop("params", {})
    if method in ("post", "put", "patch"):
        return who.http.request(method.upper(), url, params=params, json=extra.pop("json", {}))
    return who.http.request(method.upper(), url, params=params)


@pytest.mark.parametrize("role", ROLES)
def test_rest_every_route_answers_each_role_as_the_matrix_says(role: str, openapi: dict[str, Any],
                                                               api: Any, operator: Any, viewer: Any) -> None:
    who = {"viewer": viewer, "operator": operator, "admin": api}[role]
    wrong = []
    for method, path, op in _operations(openapi):
        r = _send(who, method, path, op)
        allowed = RANK[role] >= RANK[_need(method, path)]
        if (r.status_code == 403) == allowed or r.status_code in (401, 500):
            wrong.append(f"{method.upper()} {path}: {r.status_code} as {role}")
    assert wrong == []


@pytest.mark.parametrize("role", ROLES)
def test_mcp_every_tool_answers_each_role_as_the_matrix_says(role: str, openapi: dict[str, Any],
                                                             sandbox: Any) -> None:
    from mcp_gateway.catalog import build_catalog

    specs = build_catalog(openapi)
    token = getattr(sandbox.tokens, role)

    async def go(client: Client) -> list[str]:
        listed = {t.name for t in (await client.list_tools()).tools}
        wrong = []
        for spec in specs:
            need = _need(spec.method, spec.path)
            allowed = RANK[role] >= RANK[need]
            if spec.mutating and role == "viewer":  # a viewer's gateway is read-only: the tool is not listed
                if spec.name in listed and need != "viewer":
                    wrong.append(f"{spec.name}: listed for a viewer")
                continue
            args = {a.name: NO_SUCH.get(a.name) or _dummy(spec.input_schema["properties"].get(a.name) or {})
                    for a in spec.args if a.required}
            if spec.arg("dry_run") is not None:
                args["dry_run"] = True
            result = await client.call_tool(spec.name, args)
            said = text(result)
            denied = result.is_error and ("HTTP 403" in said or "read-only" in said)
            if denied == allowed:
                wrong.append(f"{spec.name} as {role}: {said[:160]}")
        return wrong

    assert over_http(sandbox, go, token=token) == []


def _dummy(schema: dict[str, Any]) -> Any:
    """A value of the argument's type (the REST API judges the role before the value)."""
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type") or next((s.get("type") for s in schema.get("anyOf") or [] if s.get("type")), "string")
    return {"integer": 1, "number": 1, "boolean": False, "array": [], "object": {}}.get(kind, "x")


NAMESPACED = [
    ("post", "/v1/clusters/{cluster}/jobs", {"json": {"name": "j", "namespace": "kube-system", "recipe": "pytorch",
                                                      "image": "r/i:1", "instance_type": "ml.c5.large"}}),
    ("post", "/v1/clusters/{cluster}/secrets", {"json": {"name": "s", "namespace": "kube-system", "data": {"K": "v"}}}),
    ("post", "/v1/clusters/{cluster}/storage", {"json": {"kind": "fsx_lustre", "namespace": "kube-system"}}),
    ("post", "/v1/clusters/{cluster}/namespaces", {"json": {"name": "kube-system"}}),
    ("get", "/v1/clusters/{cluster}/secrets", {"params": {"namespace": "kube-system"}}),
    ("get", "/v1/clusters/{cluster}/jobs/{job}", {"params": {"namespace": "kube-system"}}),
    ("get", "/v1/clusters/{cluster}/jobs/{job}/logs", {"params": {"namespace": "aws-hyperpod"}}),
    ("delete", "/v1/clusters/{cluster}/jobs/{job}", {"params": {"namespace": "kube-system"}}),
]


@pytest.mark.parametrize("method,path,extra", NAMESPACED, ids=[f"{m} {p}" for m, p, _ in NAMESPACED])
def test_a_system_namespace_is_refused_naming_the_field_for_every_role_allowed_the_route(
        method: str, path: str, extra: dict[str, Any], api: Any, operator: Any, viewer: Any) -> None:
    for role, who in (("viewer", viewer), ("operator", operator), ("admin", api)):
        r = _send(who, method, path, **dict(extra))
        if RANK[role] < RANK[_need(method, path)]:
            assert r.status_code == 403, (role, r.text)
            continue
        assert r.status_code == 422, (role, r.text)
        assert any("namespace" in e["loc"][-1] or e["loc"] == ["body", "name"] for e in r.json()["errors"]), r.text


def test_another_teams_bucket_is_refused_for_every_role(api: Any, operator: Any, viewer: Any,
                                                        cluster_for_buckets: str) -> None:
    body = {"kind": "s3", "bucket": OTHER_TEAM_BUCKET, "name": "theirs"}
    url = f"/v1/clusters/{cluster_for_buckets}/storage"
    assert viewer.post(url, json=body).status_code == 403
    for who in (operator, api):
        for params in ({}, {"dry_run": "true"}):
            r = who.post(url, json=body, params=params)
            assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "bucket"], r.text


@pytest.fixture(scope="module")
def cluster_for_buckets(api: Any) -> str:
    return api.make_cluster("mx", [{"name": "cpu", "instance_type": "ml.c5.large", "instance_count": 1,
                                     "availability_zone": "us-west-2a"}])
