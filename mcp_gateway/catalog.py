"""The tool catalog: MCP tools derived from PodStart's REST OpenAPI document.

One tool per REST operation. A small map gives known operations their snake_case name, a tight
description and truthful annotations; any other route still becomes a tool with a derived name,
so a new endpoint shows up in MCP with no gateway code. A tool's input schema is the operation's
path and query parameters plus the request body's fields, flat, with the REST API's names, slimmed
of keywords that cost bytes and tell an agent nothing (titles, `null` options of optional arguments,
patterns of path parameters that name existing resources).

Reads whose answer can be big also take gateway arguments the REST API never sees: `detail`
("full" = the REST document as is; the default is a compact view, see `views.py`) and, on lists,
`limit`/`next_token` (the REST API's own when the route pages, else the gateway pages).

Pure data: no MCP, no HTTP. The server and the tests read the same `ToolSpec`s.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any, Literal

Location = Literal["path", "query", "body", "gateway"]

HTTP_METHODS = ("get", "put", "post", "patch", "delete")
MUTATING_METHODS = frozenset({"put", "post", "patch", "delete"})
STATUS_TOOL = "get_operation"
READ_ONLY_EXTENSION = "x-podstart-read-only"  # a POST that only reads (its question is a body): a read tool
IDEMPOTENCY_ARG = "idempotency_key"
FACE_HEADER = "X-PodStart-Face"  # the REST API's audit trail records the face a mutation came through
DETAIL_ARG = "detail"
LIMIT_ARG, TOKEN_ARG = "limit", "next_token"
WAIT_ARG, VERSION_ARG = "wait_seconds", "version"
MAX_WAIT_SECONDS = 60  # get_operation: the gateway loops on the REST long poll (<= 20 s a call) up to this
IDEMPOTENCY_SCHEMA: dict[str, Any] = {
    "type": "string", "description": "Same key = retry; omit = new call"}
DETAIL_SCHEMA: dict[str, Any] = {"enum": ["full"], "description": "full: all fields (large)"}
GATEWAY_LIMIT_SCHEMA: dict[str, Any] = {"type": "integer", "minimum": 1, "description": "Rows per page"}
GATEWAY_TOKEN_SCHEMA: dict[str, Any] = {"type": "string", "description": "next_token of the previous answer"}
TRACK = f" Track it with {STATUS_TOOL}."


@dataclass(frozen=True)
class Known:
    """What the map knows about one REST operation."""

    name: str
    description: str
    destructive: bool = False
    idempotent: bool | None = None  # None: true for GET/PUT/DELETE, false otherwise
    only_body: tuple[str, ...] = ()  # expose just these body fields (and require them)
    some_body: tuple[str, ...] = ()  # expose just these body fields (each optional, as in the REST API)
    small: bool = False  # a read whose answer is bounded and small: no `detail`, no paging
    paged: bool | None = None  # None: a GET on a collection path pages; False: one bounded list (no paging)


# (method, path) -> tool. Descriptions say what the tool does and when to use it.
KNOWN: dict[tuple[str, str], Known] = {
    ("get", "/v1/catalog/regions"): Known(
        "list_regions", "List AWS regions where HyperPod runs. Start here when no region is chosen.", small=True),
    ("get", "/v1/catalog/availability-zones"): Known(
        "list_availability_zones", "List a region's availability zones (names and ids).", small=True),
    ("get", "/v1/catalog/offerings"): Known(
        "find_capacity", "Where an instance type can run in a region: per zone offered, quota available, "
        "spot, training plans with free capacity. One call before choosing a zone.", paged=False),
    ("post", "/v1/capacity/advice"): Known(
        "advise_capacity", "Ranked options for N GPUs (zone, capacity type, quota, price, start, request to send); "
        "near misses say why not.", small=True,
        some_body=("gpus", "gpu_model", "hours", "start_after", "regions", "capacity_types", "max_hourly_usd",
                   "efa_required", "same_zone", "cluster")),
    ("post", "/v1/capacity/training-plans"): Known(
        "purchase_training_plan", "Buy a training plan offering (admin; upfront fee: dry_run shows it, "
        "confirm_upfront_fee repeats it)." + TRACK),
    ("get", "/v1/catalog/instance-types"): Known(
        "list_instance_types", "List HyperPod instance types offered in a region or zone (accelerators, EFA)."),
    ("get", "/v1/catalog/training-plans"): Known(
        "list_training_plans", "List SageMaker training plans (reserved capacity) in a region."),
    ("get", "/v1/catalog/quotas"): Known(
        "get_quotas", "HyperPod cluster-usage quotas per instance type: limit, in use, available."),
    ("get", "/v1/catalog/mlflow-tracking-servers"): Known(
        "list_mlflow_servers", "List a region's MLflow tracking servers (usable?), for submit_job's mlflow."),
    ("get", "/v1/operations"): Known(
        "list_operations", "List operations, newest first; filter by cluster or status."),
    ("get", "/v1/operations/{operation_id}"): Known(
        "get_operation", "An operation's status, steps and next action. Watch: pass back the version you got "
        "with wait_seconds=60; it returns on the next change."),
    ("post", "/v1/operations/{operation_id}/retry"): Known(
        "retry_operation", "Resume a FAILED or CANCELLED operation at its failed step." + TRACK, idempotent=True),
    ("post", "/v1/operations/{operation_id}/cancel"): Known(
        "cancel_operation", "Cancel a PENDING or RUNNING operation." + TRACK, destructive=True, idempotent=True),
    ("get", "/v1/me"): Known(
        "get_identity", "Your name and role: viewer only reads; operator and admin change; admin deletes.",
        small=True),
    ("get", "/v1/preferences"): Known(
        "get_preferences", "Your active cluster (use it when the user names none) and default region.",
        small=True),
    ("put", "/v1/preferences"): Known(
        "set_preferences", "Set your active cluster and/or default region; send only what changes, null clears."),
    ("get", "/v1/clusters"): Known(
        "list_clusters", "List clusters: status, groups with last known counts, latest operation."),
    ("post", "/v1/clusters"): Known(
        "create_cluster", "Create a HyperPod cluster on EKS (many minutes); it becomes your active cluster."
        + TRACK),
    ("get", "/v1/clusters/{cluster}"): Known(
        "get_cluster", "One cluster: status, groups and counts, EKS/HyperPod, dependencies, storage."),
    ("delete", "/v1/clusters/{cluster}"): Known(
        "delete_cluster", "Delete a cluster and what PodStart created for it. Irreversible: ask the user; "
        "confirm repeats the name." + TRACK, destructive=True),
    ("post", "/v1/clusters/import"): Known(
        "import_cluster", "Bring an existing HyperPod-on-EKS cluster under PodStart." + TRACK),
    ("get", "/v1/clusters/{cluster}/instance-groups"): Known(
        "list_instance_groups", "A cluster's instance groups: type, zone, target and current counts.",
        paged=False),
    ("post", "/v1/clusters/{cluster}/instance-groups"): Known(
        "add_instance_group", "Add an instance group to a cluster." + TRACK),
    ("patch", "/v1/clusters/{cluster}/instance-groups/{group}"): Known(
        "scale_instance_group", "Set an instance group's instance_count. Scaling down removes nodes." + TRACK,
        destructive=True, idempotent=True, only_body=("instance_count",)),
    ("delete", "/v1/clusters/{cluster}/instance-groups/{group}"): Known(
        "delete_instance_group", "Drain, then delete an instance group. Irreversible: ask the user."
        + TRACK, destructive=True),
    ("get", "/v1/audit"): Known(
        "list_audit", "Audit trail: who did what via which face (admin, or actor=me)."),
    ("post", "/v1/clusters/{cluster}/reconcile"): Known(
        "reconcile_cluster", "Re-install a cluster's base dependencies (EKS add-ons, health agent, NVIDIA/Neuron/EFA "
        "plugins) and volumes; safe to repeat, works on imported clusters." + TRACK, idempotent=True),
    ("get", "/v1/clusters/{cluster}/storage"): Known(
        "list_storage", "A cluster's volumes (S3 mounts, FSx): status, PVC and namespace, bucket/prefix, FSx "
        "lifecycle.", paged=False),
    ("post", "/v1/clusters/{cluster}/storage"): Known(
        "add_storage", "Mount an existing S3 bucket/prefix (kind s3) or create FSx for Lustre (kind fsx_lustre) "
        "as a PVC in a namespace." + TRACK),
    ("delete", "/v1/clusters/{cluster}/storage/{name}"): Known(
        "remove_storage", "Remove a volume and what PodStart made for it; buckets are kept. FSx deletes its data: "
        "ask the user; confirm repeats the name." + TRACK, destructive=True),
    ("get", "/v1/clusters/{cluster}/storage/{name}/objects"): Known(
        "list_storage_objects", "List objects under an S3 volume's prefix, one level ('folders' in prefixes)."),
    ("get", "/v1/clusters/{cluster}/gpus"): Known(
        "get_cluster_gpus", "GPUs per instance group: total, used, free (where pods fit now).",
        small=True),
    ("get", "/v1/clusters/{cluster}/nodes"): Known(
        "list_nodes", "A cluster's nodes (instance id, group, status, health label, Ready, GPUs, last action); "
        "filter by group or health."),
    ("get", "/v1/clusters/{cluster}/nodes/{node_id}"): Known(
        "get_node", "One node: conditions, taints, pods, recent events, ladder rung (investigate/reboot/replace). "
        "Read before any node action."),
    ("post", "/v1/clusters/{cluster}/nodes/reboot"): Known(
        "reboot_nodes", "Reboot nodes (batches of 25), watched back to Ready. Rung 2 of the ladder; ask the user."
        + TRACK),
    ("post", "/v1/clusters/{cluster}/nodes/replace"): Known(
        "replace_nodes", "Replace nodes with new instances; wipes instance storage. Needs a reboot first (409) "
        "unless force with a reason; ask the user." + TRACK, destructive=True),
    ("post", "/v1/clusters/{cluster}/nodes/delete"): Known(
        "delete_nodes", "Terminate specific nodes; their groups shrink. Ask the user; confirm is 'delete'." + TRACK,
        destructive=True),
    ("post", "/v1/clusters/{cluster}/health-checks"): Known(
        "start_health_check", "Deep-check node hardware; no pods meanwhile." + TRACK,
        some_body=("group", "node_ids")),
    ("post", "/v1/clusters/{cluster}/software-update"): Known(
        "update_cluster_software", "Patch HyperPod software on groups (default all), rolling: nodes restart batch "
        "by batch, pods disrupted. Ask the user." + TRACK, destructive=True),
    ("get", "/v1/clusters/{cluster}/events"): Known(
        "list_cluster_events", "HyperPod cluster events, newest first; filter by node_id, group, since."),
    ("get", "/v1/recipes"): Known(
        "list_recipes", "Recipes and their parameters, for submit_job.",
        paged=False),
    ("post", "/v1/clusters/{cluster}/jobs"): Known(
        "submit_job", "Submit a training job from a recipe; ends when it runs." + TRACK),
    ("get", "/v1/clusters/{cluster}/jobs"): Known(
        "list_jobs", "Training jobs: status, budget used."),
    ("get", "/v1/clusters/{cluster}/jobs/{job}"): Known(
        "get_job", "One job: status, pods, budget used, detections, MLflow link."),
    ("get", "/v1/clusters/{cluster}/jobs/{job}/logs"): Known(
        "get_job_logs", "A job pod's newest log lines.", small=True),
    ("delete", "/v1/clusters/{cluster}/jobs/{job}"): Known(
        "delete_job", "Delete a job and its pods." + TRACK, destructive=True),
    ("get", "/v1/buckets"): Known(
        "list_buckets", "Buckets PodStart may mount: its data bucket (operators), registered ones (admins).",
        small=True),
    ("get", "/v1/clusters/{cluster}/namespaces"): Known(
        "list_namespaces", "PodStart namespaces (default + admin-made): jobs, secrets, volumes go only there.",
        small=True),
    ("post", "/v1/clusters/{cluster}/namespaces"): Known(
        "create_namespace", "Admin: create a PodStart namespace (data volume, Secrets access)." + TRACK),
    ("delete", "/v1/clusters/{cluster}/namespaces/{namespace}"): Known(
        "delete_namespace", "Admin: delete a PodStart namespace and all in it; confirm=name. Ask first." + TRACK,
        destructive=True),
    ("get", "/v1/clusters/{cluster}/secrets"): Known(
        "list_secrets", "Secret names in a namespace (never values).", small=True),
    ("post", "/v1/clusters/{cluster}/secrets"): Known(
        "create_secret", "Write a Secret for a job's secrets (write-only).", idempotent=True),
    ("get", "/v1/clusters/{cluster}/endpoints"): Known(
        "list_endpoints", "A cluster's inference endpoints, live status."),
    ("post", "/v1/clusters/{cluster}/endpoints"): Known(
        "deploy_endpoint", "Deploy a model: managed (inference operator: KV cache, routing) or self-managed "
        "(engine, pinned image, gpus, service, router, KEDA). Check list_instance_groups first." + TRACK),
    ("get", "/v1/clusters/{cluster}/endpoints/{endpoint}"): Known(
        "get_endpoint", "One endpoint: live status, message, ready replicas, objects.", small=True),
    ("patch", "/v1/clusters/{cluster}/endpoints/{endpoint}"): Known(
        "update_endpoint", "Set an endpoint's replicas or autoscaling bounds; send only what changes." + TRACK,
        idempotent=True),
    ("delete", "/v1/clusters/{cluster}/endpoints/{endpoint}"): Known(
        "delete_endpoint", "Delete an endpoint and its objects. Ask the user first." + TRACK, destructive=True),
    ("post", "/v1/clusters/{cluster}/endpoints/{endpoint}/invoke"): Known(
        "invoke_endpoint", "Chat with a READY endpoint (test it after deploy).",
        idempotent=False),
    ("get", "/v1/clusters/{cluster}/pools"): Known(
        "list_pools", "Model pools: warm workers per model label.", paged=False),
    ("post", "/v1/clusters/{cluster}/pools"): Known(
        "create_pool", "Create a pool of warm GPU workers." + TRACK),
    ("post", "/v1/clusters/{cluster}/pools/{pool}/assign"): Known(
        "assign_pool_workers", "Bind N warm pool workers to a model_pool endpoint (by label; seconds)." + TRACK),
    ("post", "/v1/clusters/{cluster}/pools/{pool}/release"): Known(
        "release_pool_workers", "Return an endpoint's pool workers to the pool." + TRACK, destructive=True),
    ("get", "/v1/clusters/{cluster}/models"): Known(
        "list_models", "Models in the shared bucket: id, revision, files, bytes, complete, path."),
    ("post", "/v1/clusters/{cluster}/models"): Known(
        "download_model", "Download a Hugging Face model to the shared bucket (resumes)." + TRACK),
    ("get", "/v1/clusters/{cluster}/features"): Known(
        "get_features", "Features: on/off, status, why, version, needs, settings.",
        small=True),
    # The six managed features only (their prerequisites, the base add-ons, come with them): tools/list budget.
    ("patch", "/v1/clusters/{cluster}/features"): Known(
        "update_features", "Features on/off or settings; send ONLY changes." + TRACK,
        idempotent=True,
        some_body=("training_operator", "inference_operator", "tiered_checkpointing", "autoscaling", "observability",
                   "kuberay_operator")),
    ("get", "/v1/specs/schema"): Known(
        "get_spec_schema", "JSON Schema of spec documents (Cluster, TrainingJob, Endpoint): each spec is its create "
        "route's body, the name in metadata. detail=\"full\" for all of it.", paged=False),
    ("get", "/v1/clusters/{cluster}/spec"): Known(
        "export_spec", "A live cluster as spec documents (include=jobs,endpoints adds those); plan_spec of it shows "
        "no changes. detail=\"full\" for documents to edit and apply.", paged=False),
    ("post", "/v1/specs/plan"): Known(
        "plan_spec", "Diff spec documents of one cluster with the live state: per document create, update (old -> "
        "new), unchanged or replace-needed; child plans, cost. Changes nothing.", paged=False),
    ("post", "/v1/specs/apply"): Known(
        "apply_spec", "Apply spec documents: one operation runs the child operations in order; changed=false if "
        "nothing differs. plan_spec first and ask the user; prune deletes." + TRACK, destructive=True),
}

# Extra tools over the same REST operation, exposing only some body fields.
ALIASES: dict[tuple[str, str], list[Known]] = {
    ("put", "/v1/preferences"): [Known(
        "set_active_cluster", "Make a cluster ({name, region}) your active cluster, or null to clear it. "
        "Not needed after create_cluster.", only_body=("active_cluster",))],
}

# REST parameter -> tool argument, where the REST name would mislead an agent.
RENAMES: dict[tuple[str, str], str] = {("get_operation", "wait"): WAIT_ARG}

# REST query parameters a tool leaves out (the tools/list budget): agents read the audit trail newest first
# and page; the UI and REST keep the time window and the action filter. set_active_cluster is a one-field
# shortcut (plan with set_preferences); a cancel's plan only says the status becomes CANCELLED.
HIDDEN: dict[str, frozenset[str]] = {
    "list_audit": frozenset({"since", "until", "action"}),
    "set_active_cluster": frozenset({"dry_run"}),
    "cancel_operation": frozenset({"dry_run"}),
    "get_job_logs": frozenset({"container", "since_seconds", "limit_bytes"}),  # the gateway's log view covers them
    "list_mlflow_servers": frozenset({"limit"}),  # 20 a page; next_token pages on
}

# Schema keywords the gateway sets for a tool argument (it serves these itself).
OVERRIDES: dict[tuple[str, str], dict[str, Any]] = {
    ("get_operation", WAIT_ARG): {
        "maximum": MAX_WAIT_SECONDS, "description": "Wait up to this long (0-60) for the next change"},
    ("get_operation", VERSION_ARG): {"description": "The version you got; waits for a change after it"},
}

# Descriptions for parameters the OpenAPI document leaves undescribed.
FALLBACK_DESCRIPTIONS: dict[str, str] = {
    "cluster": "Cluster name",
    "group": "Instance group name",
    "operation_id": "Operation id (op-...)",
    "region": "AWS region, e.g. us-west-2",
    "availability_zone": "Availability zone name (us-west-2a) or id (usw2-az1)",
    "instance_type": "Instance type, e.g. ml.g5.8xlarge",
    "status": "Filter by status",
    "limit": "Page size",
    "next_token": "Token from the previous page",
    "confirm": "Repeat the resource name to confirm",
    "active_cluster": "The cluster other calls default to: {name, region}, or null",
    "default_region": "Region the UI and agents start from",
    "endpoint": "Endpoint name",
    "pool": "Model pool name",
}

# Titles repeat the name. Patterns (30-60 bytes each), string lengths and item counts: the descriptions say the
# format in words, and the REST API still checks them: its 422 names the field and the rule, and the tool error says it.
# Numeric bounds and enums stay: they are what an agent chooses from.
_SCHEMA_NOISE = ("title", "pattern", "maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties")


@dataclass(frozen=True)
class Arg:
    """One tool argument and where it goes: the HTTP request, or the gateway itself."""

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
    detail: bool = False  # takes `detail` (the default answer is a compact view)
    paging: Literal["rest", "gateway"] | None = None  # who serves limit/next_token, if anyone
    filters: tuple[str, ...] = ()  # optional query arguments that narrow a list (named in "N more" hints)

    @property
    def mutating(self) -> bool:
        return not self.read_only

    def arg(self, name: str) -> Arg | None:
        return next((a for a in self.args if a.name == name), None)


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
    read_only = method not in MUTATING_METHODS or bool(op.get(READ_ONLY_EXTENSION))
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
        if wire in HIDDEN.get(name, ()):
            continue
        arg = RENAMES.get((name, wire), wire)
        is_required = bool(p.get("required")) or loc == "path"
        schema = _clean(openapi, p.get("schema") or {}, keep_null=False)
        schema["description"] = _describe(p.get("description") or schema.get("description"), wire)
        if wire == "dry_run":  # the server's instructions say what it does: plan first, then ask once
            schema = {"type": "boolean", "description": "Plan only"}
        schema.update(OVERRIDES.get((name, arg), {}))
        properties[arg] = schema
        if is_required:
            required.append(arg)
        args.append(Arg(arg, wire, loc, is_required))
    has_body = False
    body_schema = _body_schema(openapi, op)
    if body_schema is not None:
        has_body = True
        fields = body_schema.get("properties") or {}
        body_required = set(body_schema.get("required") or [])
        wanted = (known.only_body or known.some_body or tuple(fields)) if known else tuple(fields)
        for wire in wanted:
            if wire not in fields or wire in properties:
                continue  # a body field never shadows a path or query parameter
            is_required = wire in body_required or bool(known and known.only_body)
            # A PUT replaces: there `null` clears a field, so it stays allowed; elsewhere omitting is the default.
            schema = _clean(openapi, fields[wire], keep_null=wire in body_required or method == "put")
            schema["description"] = _describe(schema.get("description"), wire)
            properties[wire] = schema
            if is_required:
                required.append(wire)
            args.append(Arg(wire, wire, "body", is_required))
    detail = False
    paging: Literal["rest", "gateway"] | None = None
    filters: tuple[str, ...] = ()
    if read_only and not (known and known.small):
        detail = True
        properties[DETAIL_ARG] = dict(DETAIL_SCHEMA)
        args.append(Arg(DETAIL_ARG, DETAIL_ARG, "gateway", False))
        collection = not path.endswith("}")
        if (known.paged if known and known.paged is not None else collection):
            rest_pages = TOKEN_ARG in properties
            paging = "rest" if rest_pages else "gateway"
            if not rest_pages:
                for arg_name, arg_schema in ((LIMIT_ARG, GATEWAY_LIMIT_SCHEMA), (TOKEN_ARG, GATEWAY_TOKEN_SCHEMA)):
                    if arg_name not in properties:
                        properties[arg_name] = dict(arg_schema)
                        args.append(Arg(arg_name, arg_name, "gateway", False))
        filters = tuple(a.name for a in args if a.location == "query" and not a.required
                        and a.name not in (LIMIT_ARG, TOKEN_ARG, "region"))
    if not read_only:
        properties[IDEMPOTENCY_ARG] = dict(IDEMPOTENCY_SCHEMA)
    # No top-level `additionalProperties: false`: the gateway refuses unknown arguments itself, by name.
    input_schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        input_schema["required"] = required
    if known:
        description = known.description
    else:
        description = (op.get("summary") or op.get("description") or f"{method.upper()} {path}").strip()
        if not read_only:
            description += f". May return an operation to watch with {STATUS_TOOL}."
    destructive = bool(known and known.destructive) or method == "delete"
    default_idempotent = method in ("get", "put", "delete")
    idempotent = known.idempotent if known and known.idempotent is not None else default_idempotent
    # destructiveHint and idempotentHint mean something only when readOnlyHint is false (MCP spec): a read
    # tool says just that it reads.
    annotations = {"readOnlyHint": True} if read_only else {
        "readOnlyHint": False, "destructiveHint": destructive, "idempotentHint": idempotent}
    return ToolSpec(name=name, description=description, method=method.upper(), path=path, args=tuple(args),
                    input_schema=input_schema, read_only=read_only, destructive=destructive and not read_only,
                    idempotent=idempotent, has_body=has_body, annotations=annotations, detail=detail,
                    paging=paging, filters=filters)


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


def _clean(openapi: dict[str, Any], schema: dict[str, Any], keep_null: bool) -> dict[str, Any]:
    """Inline $refs and drop what costs bytes and tells an agent nothing (see `_slim`)."""
    return _slim(copy.deepcopy(_inline(openapi, schema, depth=0)), keep_null)  # type: ignore[no-any-return]


def _slim(schema: Any, keep_null: bool, nested: bool = False) -> Any:
    """Titles go; `default: null` goes; 100.0 is 100; `additionalProperties: false` goes (the REST API
    refuses unknown fields by name anyway), and `true` too (the default); `anyOf [X, null]` becomes X unless
    `null` means something
    (a required argument, or a field a PUT clears). Nested optional fields never need `null`: omit them, and
    their defaults and descriptions go too: the argument's own description says what the object is, the names
    and enums say the rest, the REST API applies the defaults, and its 422 names a wrong nested field."""
    if isinstance(schema, list):
        return [_slim(s, keep_null=False, nested=nested) for s in schema]
    if isinstance(schema, float) and schema.is_integer():
        return int(schema)
    if not isinstance(schema, dict):
        return schema
    options = schema.get("anyOf")
    if isinstance(options, list) and not keep_null:
        rest = [o for o in options if not (isinstance(o, dict) and o.get("type") == "null")]
        if len(rest) == 1 and isinstance(rest[0], dict):
            merged = {k: v for k, v in schema.items() if k != "anyOf"}
            schema = {**rest[0], **merged}
        elif len(rest) != len(options):
            schema = {**schema, "anyOf": rest}
    out: dict[str, Any] = {}
    for k, v in schema.items():
        if k in _SCHEMA_NOISE or (k == "default" and (v is None or nested)) or (k == "description" and nested):
            continue
        if k == "additionalProperties" and isinstance(v, bool):  # false: see above; true: the default
            continue
        if k in ("properties", "patternProperties", "$defs", "definitions") and isinstance(v, dict):
            out[k] = {n: _slim(sub, keep_null=False, nested=True) for n, sub in v.items()}  # keys here are names
        elif k in ("anyOf", "oneOf", "allOf") and isinstance(v, list):
            out[k] = [_slim(s, keep_null=True, nested=nested) for s in v]  # the null option was decided above
        else:
            out[k] = _slim(v, keep_null=False, nested=nested)
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


def gateway_args(spec: ToolSpec) -> set[str]:
    """The arguments the gateway serves itself (the REST API never sees them)."""
    return {a.name for a in spec.args if a.location == "gateway"}


def tool_payload(spec: ToolSpec) -> dict[str, Any]:
    """The tools/list entry for one tool, as MCP serializes it (for size budgets)."""
    return {"name": spec.name, "description": spec.description, "inputSchema": spec.input_schema,
            "annotations": spec.annotations}
