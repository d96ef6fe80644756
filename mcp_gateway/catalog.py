"""The tool catalog: MCP tools derived from PodStart's REST OpenAPI document.

One tool per REST operation. A small map gives known operations their snake_case name, a tight
description and truthful annotations; any other route still becomes a tool with a derived name,
so a new endpoint shows up in MCP with no gateway code. A tool's input schema is the operation's
path and query parameters plus the request body's fields, flat, with the REST API's names.

Pure data: no MCP, no HTTP. The server and the tests read the same `ToolSpec`s.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any, Literal

Location = Literal["path", "query", "body"]

HTTP_METHODS = ("get", "put", "post", "patch", "delete")
MUTATING_METHODS = frozenset({"put", "post", "patch", "delete"})
STATUS_TOOL = "get_operation"
IDEMPOTENCY_ARG = "idempotency_key"
IDEMPOTENCY_SCHEMA: dict[str, Any] = {
    "type": "string", "minLength": 1, "maxLength": 128,
    "description": "Optional. Same key = same request: a retry returns the first result. "
                   "Derived from the arguments when omitted; pass a new key to repeat on purpose.",
}
TRACK = f" Returns an operation; track it with {STATUS_TOOL} until it is terminal."


@dataclass(frozen=True)
class Known:
    """What the map knows about one REST operation."""

    name: str
    description: str
    destructive: bool = False
    idempotent: bool | None = None  # None: true for GET/PUT/DELETE, false otherwise
    only_body: tuple[str, ...] = ()  # expose just these body fields (and require them)


# (method, path) -> tool. Descriptions say what the tool does and when to use it.
KNOWN: dict[tuple[str, str], Known] = {
    ("get", "/v1/catalog/regions"): Known(
        "list_regions", "List AWS regions where SageMaker HyperPod runs. Start here when no region is chosen."),
    ("get", "/v1/catalog/availability-zones"): Known(
        "list_availability_zones",
        "List a region's availability zones (names and zone ids). Use before placing instance groups."),
    ("get", "/v1/catalog/instance-types"): Known(
        "list_instance_types",
        "List HyperPod instance types offered in a region or zone (accelerators, EFA). "
        "Use before choosing an instance type."),
    ("get", "/v1/catalog/training-plans"): Known(
        "list_training_plans",
        "List the account's SageMaker training plans in a region. Use when the user wants reserved capacity."),
    ("get", "/v1/catalog/quotas"): Known(
        "get_quotas", "Show HyperPod quotas and usage per instance type in a region. Check before creating or "
        "scaling."),
    ("get", "/v1/operations"): Known(
        "list_operations", "List operations (create, scale, delete...), newest first; filter by cluster or status. "
        "Use to find running or failed work."),
    ("get", "/v1/operations/{operation_id}"): Known(
        "get_operation", "Get an operation's status and steps. Long-poll with wait_seconds; repeat until status is "
        "SUCCEEDED, FAILED or CANCELLED."),
    ("post", "/v1/operations/{operation_id}/retry"): Known(
        "retry_operation", "Retry a FAILED operation from its failed step; finished steps are skipped." + TRACK,
        idempotent=True),
    ("post", "/v1/operations/{operation_id}/cancel"): Known(
        "cancel_operation", "Cancel a PENDING or RUNNING operation." + TRACK, destructive=True, idempotent=True),
    ("get", "/v1/me"): Known(
        "get_identity", "Who you are and your role (viewer reads; operator and admin change). Check before writes."),
    ("get", "/v1/preferences"): Known(
        "get_preferences", "Get your active cluster and default region: the cluster other calls default to."),
    ("put", "/v1/preferences"): Known(
        "set_preferences", "Set your active cluster and/or default region; send only what changes, null clears."),
    ("get", "/v1/clusters"): Known(
        "list_clusters", "List HyperPod clusters and their status. Inspect before creating one."),
    ("post", "/v1/clusters"): Known(
        "create_cluster", "Create a HyperPod cluster on EKS (takes many minutes). Query regions, zones, instance "
        "types and quotas first." + TRACK),
    ("get", "/v1/clusters/{cluster}"): Known(
        "get_cluster", "Get one cluster: status, instance groups and settings."),
    ("delete", "/v1/clusters/{cluster}"): Known(
        "delete_cluster", "Delete a cluster and what PodStart created for it. Irreversible: confirm must repeat "
        "the cluster name; ask the user first." + TRACK, destructive=True),
    ("post", "/v1/clusters/import"): Known(
        "import_cluster", "Bring an existing HyperPod cluster under PodStart management." + TRACK),
    ("get", "/v1/clusters/{cluster}/instance-groups"): Known(
        "list_instance_groups", "List a cluster's instance groups with instance type and counts."),
    ("post", "/v1/clusters/{cluster}/instance-groups"): Known(
        "add_instance_group", "Add an instance group to a cluster. Check instance types and quotas first." + TRACK),
    ("patch", "/v1/clusters/{cluster}/instance-groups/{group}"): Known(
        "scale_instance_group", "Change an instance group's instance count; send only what changes. Scaling down "
        "removes nodes." + TRACK, destructive=True, idempotent=True),
}

# Extra tools over the same REST operation, exposing only some body fields.
ALIASES: dict[tuple[str, str], list[Known]] = {
    ("put", "/v1/preferences"): [Known(
        "set_active_cluster", "Make a cluster (name and region) your active cluster, or null to clear it. "
        "Use after creating or choosing a cluster.", only_body=("active_cluster",))],
}

# REST parameter -> tool argument, where the REST name would mislead an agent.
RENAMES: dict[tuple[str, str], str] = {("get_operation", "wait"): "wait_seconds"}

# Descriptions for parameters the OpenAPI document leaves undescribed.
FALLBACK_DESCRIPTIONS: dict[str, str] = {
    "cluster": "Cluster name",
    "group": "Instance group name",
    "operation_id": "Operation id (op-...)",
    "region": "AWS region, e.g. us-west-2",
    "availability_zone": "Availability zone name (us-west-2a) or id (usw2-az1)",
    "status": "Filter by status",
    "limit": "Page size",
    "next_token": "Token from the previous page",
    "confirm": "Repeat the resource name to confirm",
    "active_cluster": "The cluster other calls default to: {name, region}, or null",
    "default_region": "Region the UI and agents start from",
}

_SCHEMA_NOISE = ("title",)


@dataclass(frozen=True)
class Arg:
    """One tool argument and where it goes in the HTTP request."""

    name: str  # the tool argument
    wire: str  # the REST name
    location: Location
    required: bool


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    method: str
    path: str
    args: tuple[Arg, ...]
    input_schema: dict[str, Any]
    read_only: bool
    destructive: bool
    idempotent: bool
    has_body: bool = False
    annotations: dict[str, bool] = field(default_factory=dict)

    @property
    def mutating(self) -> bool:
        return not self.read_only


def build_catalog(openapi: dict[str, Any]) -> list[ToolSpec]:
    """Every REST operation in the document as a tool, known ones first in map order."""
    specs: list[ToolSpec] = []
    taken: set[str] = set()
    for path, item in (openapi.get("paths") or {}).items():
        for method in HTTP_METHODS:
            op = item.get(method)
            if op is None:
                continue
            known = KNOWN.get((method, path))
            for k in [known, *ALIASES.get((method, path), [])]:
                name = k.name if k else _unique(_derived_name(method, path, op), taken)
                if name in taken:
                    continue
                taken.add(name)
                specs.append(_spec(openapi, method, path, item, op, name, k))
    order = {k.name: i for i, k in enumerate([*KNOWN.values(), *(a for al in ALIASES.values() for a in al)])}
    specs.sort(key=lambda s: (order.get(s.name, len(order)), s.name))
    return specs


def _spec(openapi: dict[str, Any], method: str, path: str, item: dict[str, Any], op: dict[str, Any],
          name: str, known: Known | None) -> ToolSpec:
    read_only = method not in MUTATING_METHODS
    properties: dict[str, Any] = {}
    required: list[str] = []
    args: list[Arg] = []
    params = [*item.get("parameters", []), *op.get("parameters", [])]
    for p in params:
        if "$ref" in p:
            p = _resolve_ref(openapi, p["$ref"])
        loc = p.get("in")
        if loc not in ("path", "query"):
            continue  # headers and cookies are the gateway's business, not the agent's
        wire = p["name"]
        arg = RENAMES.get((name, wire), wire)
        schema = _clean(openapi, p.get("schema") or {})
        schema["description"] = _describe(p.get("description") or schema.get("description"), wire)
        properties[arg] = schema
        is_required = bool(p.get("required")) or loc == "path"
        if is_required:
            required.append(arg)
        args.append(Arg(arg, wire, loc, is_required))
    has_body = False
    body_schema = _body_schema(openapi, op)
    if body_schema is not None:
        has_body = True
        fields = body_schema.get("properties") or {}
        body_required = set(body_schema.get("required") or [])
        wanted = known.only_body if known and known.only_body else tuple(fields)
        for wire in wanted:
            if wire not in fields or wire in properties:
                continue  # a body field never shadows a path or query parameter
            schema = _clean(openapi, fields[wire])
            schema["description"] = _describe(schema.get("description"), wire)
            properties[wire] = schema
            is_required = wire in body_required or bool(known and known.only_body)
            if is_required:
                required.append(wire)
            args.append(Arg(wire, wire, "body", is_required))
    if not read_only:
        properties[IDEMPOTENCY_ARG] = dict(IDEMPOTENCY_SCHEMA)
    input_schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        input_schema["required"] = required
    if known:
        description = known.description
    else:
        description = (op.get("summary") or op.get("description") or f"{method.upper()} {path}").strip()
        if not read_only:
            description += f". Mutates state; may return an operation to track with {STATUS_TOOL}."
    destructive = bool(known and known.destructive) or method == "delete"
    default_idempotent = method in ("get", "put", "delete")
    idempotent = known.idempotent if known and known.idempotent is not None else default_idempotent
    annotations = {"readOnlyHint": read_only, "destructiveHint": destructive and not read_only,
                   "idempotentHint": idempotent}
    return ToolSpec(name=name, description=description, method=method.upper(), path=path, args=tuple(args),
                    input_schema=input_schema, read_only=read_only, destructive=destructive and not read_only,
                    idempotent=idempotent, has_body=has_body, annotations=annotations)


def _describe(description: str | None, wire: str) -> str:
    if description:
        return description
    return FALLBACK_DESCRIPTIONS.get(wire) or wire.replace("_", " ").capitalize()


def _body_schema(openapi: dict[str, Any], op: dict[str, Any]) -> dict[str, Any] | None:
    body = op.get("requestBody")
    if not body:
        return None
    if "$ref" in body:
        body = _resolve_ref(openapi, body["$ref"])
    content = body.get("content") or {}
    media = content.get("application/json") or next(iter(content.values()), None)
    if not media or "schema" not in media:
        return None
    schema = _inline(openapi, media["schema"], depth=0)
    # A body that is a bare anyOf/allOf of one object collapses to that object.
    for key in ("allOf", "anyOf", "oneOf"):
        options = [o for o in schema.get(key, []) if o.get("type") != "null"]
        if len(options) == 1 and "properties" not in schema:
            schema = options[0]
    return schema if isinstance(schema.get("properties"), dict) else None


def _resolve_ref(openapi: dict[str, Any], ref: str) -> dict[str, Any]:
    if not ref.startswith("#/"):
        raise ValueError(f"only local $ref is supported, got {ref}")
    node: Any = openapi
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node  # type: ignore[no-any-return]


def _inline(openapi: dict[str, Any], schema: Any, depth: int) -> Any:
    """The schema with every local $ref replaced by its target (bounded, in case of recursion)."""
    if isinstance(schema, list):
        return [_inline(openapi, s, depth) for s in schema]
    if not isinstance(schema, dict):
        return schema
    if "$ref" in schema:
        if depth > 8:
            return {"type": "object"}
        target = _inline(openapi, _resolve_ref(openapi, schema["$ref"]), depth + 1)
        extra = {k: v for k, v in schema.items() if k != "$ref"}
        return {**target, **_inline(openapi, extra, depth)}
    return {k: _inline(openapi, v, depth) for k, v in schema.items()}


def _clean(openapi: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """Inline $refs and drop keywords that cost tokens and tell an agent nothing (titles)."""
    return _strip(copy.deepcopy(_inline(openapi, schema, depth=0)))  # type: ignore[no-any-return]


def _strip(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_strip(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for k, v in schema.items():
        if k in _SCHEMA_NOISE:
            continue
        if k in ("properties", "patternProperties", "$defs", "definitions") and isinstance(v, dict):
            out[k] = {name: _strip(sub) for name, sub in v.items()}  # keys here are names, not keywords
        else:
            out[k] = _strip(v)
    return out


_VERBS = {"get": "get", "put": "set", "post": "create", "patch": "update", "delete": "delete"}


def _derived_name(method: str, path: str, op: dict[str, Any]) -> str:
    """A route the map does not know: its operationId's function part, else verb + resource."""
    op_id = str(op.get("operationId") or "")
    if op_id and len(op_id) <= 64:
        # Powertools/FastAPI style: "<function>_v1_<path>_<method>"; otherwise a hand-written id.
        return _snake(re.split(r"_v\d+_", op_id, maxsplit=1)[0])
    segments = [s for s in path.split("/") if s and not s.startswith("{") and not re.fullmatch(r"v\d+", s)]
    resource = _snake("_".join(segments[-2:]) or "root")
    verb = _VERBS[method]
    if method == "get" and not path.endswith("}"):
        verb = "list"
    return f"{verb}_{resource}"


def _snake(text: str) -> str:
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", text)
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:64] or "tool"


def _unique(name: str, taken: set[str]) -> str:
    if name not in taken:
        return name
    n = 2
    while f"{name}_{n}" in taken:
        n += 1
    return f"{name}_{n}"


def tool_payload(spec: ToolSpec) -> dict[str, Any]:
    """The tools/list entry for one tool, as MCP serializes it (for size budgets)."""
    return {"name": spec.name, "description": spec.description, "inputSchema": spec.input_schema,
            "annotations": spec.annotations}
