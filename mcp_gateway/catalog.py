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

Location = Literal["path", "query", "body", "gateway", "more"]

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
IDEMPOTENCY_SCHEMA: dict[str, Any] = {"type": "string", "description": "Retry key"}
DETAIL_SCHEMA: dict[str, Any] = {"enum": ["full"], "description": "All fields (large)"}
GATEWAY_LIMIT_SCHEMA: dict[str, Any] = {"type": "integer", "minimum": 1, "description": "Rows per page"}
GATEWAY_TOKEN_SCHEMA: dict[str, Any] = {"type": "string", "description": "From the previous answer"}
DRY_RUN_SCHEMA: dict[str, Any] = {"type": "boolean", "description": "Plan only"}
MORE_ARG = "more"  # body fields a big tool folds into one object argument (the tools/list budget)
RESOURCE = "podstart://tools/{name}"  # an MCP resource: a tool's whole schema and guidance
SPEC_SCHEMA = "podstart://spec-schema"  # an MCP resource: GET /v1/specs/schema
# The region of a cluster-scoped tool is needed only when the cluster's name is in several regions: the `cluster`
# argument then says it (`region/name`; a cluster name has no '/'), and the route's `region` query parameter is no
# argument of its own (the tools/list budget). The gateway still takes `region` from a caller that passes it.
CLUSTER_ARG = {"type": "string", "description": "Cluster"}
TRACK = f" Watch: {STATUS_TOOL}."  # the operation it returns; its `next` says the exact call


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
    more: tuple[str, ...] = ()  # body fields folded into the one `more` argument (described in its resource)
    guide: str = ""  # longer guidance: in the tool's resource and skills/reference/tools.md, not in tools/list


# (method, path) -> tool. Descriptions say what the tool does and when to use it, in a line (the tools/list budget);
# longer guidance is the tool's `guide` (its MCP resource and skills/reference/tools.md) and the skills.
KNOWN: dict[tuple[str, str], Known] = {
    ("get", "/v1/catalog/regions"): Known(
        "list_regions", "AWS regions where HyperPod runs.", small=True),
    ("get", "/v1/catalog/offerings"): Known(
        "find_capacity", "Per zone: is an instance type offered, quota, spot, training plans. Before choosing a "
        "zone.", paged=False),
    ("post", "/v1/capacity/advice"): Known(
        "advise_capacity", "Ranked options for N GPUs: where, when, price, the call to make.",
        small=True, some_body=("gpus", "gpu_model", "hours", "start_after", "regions", "capacity_types",
                               "max_hourly_usd", "efa_required", "same_zone", "cluster"),
        more=("start_after", "regions", "capacity_types", "max_hourly_usd", "efa_required", "same_zone")),
    ("post", "/v1/capacity/training-plans"): Known(
        "purchase_training_plan", "Admin: buy a training plan (dry_run shows the fee)." + TRACK,
        guide="confirm_upfront_fee repeats the fee the dry run shows, exactly; offering comes from "
              "advise_capacity's `first`."),
    ("get", "/v1/catalog/instance-types"): Known(
        "list_instance_types", "Instance types of a region or zone (accelerators, EFA)."),
    ("get", "/v1/catalog/mlflow-tracking-servers"): Known(
        "list_mlflow_servers", "MLflow tracking servers of a region."),
    ("get", "/v1/operations"): Known(
        "list_operations", "Operations, newest first."),
    ("get", "/v1/operations/{operation_id}"): Known(
        "get_operation", "An operation's status and next call. Watch: pass back its version, wait_seconds=60."),
    ("post", "/v1/operations/{operation_id}/retry"): Known(
        "retry_operation", "Resume a FAILED/CANCELLED operation at its failed step." + TRACK, idempotent=True),
    ("post", "/v1/operations/{operation_id}/cancel"): Known(
        "cancel_operation", "Cancel a running operation." + TRACK, destructive=True, idempotent=True),
    ("get", "/v1/me"): Known(
        "get_identity", "Your name, role, active cluster (use it when the user names none).", small=True),
    ("put", "/v1/preferences"): Known(
        "set_preferences", "Set active cluster {name, region} or default region; null clears."),
    ("get", "/v1/clusters"): Known(
        "list_clusters", "Clusters: status, groups, counts."),
    ("post", "/v1/clusters"): Known(
        "create_cluster", "Create a HyperPod cluster on EKS (minutes); it becomes active." + TRACK,
        more=("kubernetes_version", "vpc_cidr", "storage")),
    ("get", "/v1/clusters/{cluster}"): Known(
        "get_cluster", "One cluster: status, groups, counts, dependencies, storage."),
    ("delete", "/v1/clusters/{cluster}"): Known(
        "delete_cluster", "Delete a cluster and what PodStart made. Ask first." + TRACK,
        destructive=True),
    ("post", "/v1/clusters/import"): Known(
        "import_cluster", "Adopt an existing HyperPod-on-EKS cluster." + TRACK),
    ("post", "/v1/clusters/{cluster}/instance-groups"): Known(
        "add_instance_group", "Add an instance group." + TRACK,
        more=("training_plan_arn", "efa_only", "volume_size_gb", "deep_health_checks")),
    ("patch", "/v1/clusters/{cluster}/instance-groups/{group}"): Known(
        "scale_instance_group", "Set a group's instance_count (down removes nodes)." + TRACK,
        destructive=True, idempotent=True, only_body=("instance_count",)),
    ("delete", "/v1/clusters/{cluster}/instance-groups/{group}"): Known(
        "delete_instance_group", "Drain, then delete a group. Ask first." + TRACK,
        destructive=True),
    ("post", "/v1/clusters/{cluster}/reconcile"): Known(
        "reconcile_cluster", "Re-install base add-ons, agents, plugins, volumes (safe to repeat)." + TRACK,
        idempotent=True),
    ("get", "/v1/data"): Known(
        "list_data", "Your data: no uri = readable buckets; else one level of an s3:// or /data path.", paged=False),
    ("get", "/v1/clusters/{cluster}/storage"): Known(
        "list_storage", "Volumes (S3 mounts, FSx): status, namespace, bucket.", paged=False),
    ("post", "/v1/clusters/{cluster}/storage"): Known(
        "add_storage", "Mount an S3 bucket (kind s3) or create FSx for Lustre." + TRACK,
        more=("read_only", "storage_capacity_gib", "throughput_mb_per_tib")),
    ("delete", "/v1/clusters/{cluster}/storage/{name}"): Known(
        "remove_storage", "Remove a volume (FSx: deletes data; ask first)." + TRACK,
        destructive=True),
    ("get", "/v1/clusters/{cluster}/gpus"): Known(
        "get_cluster_gpus", "GPUs per group: total, used, free.", small=True),
    ("get", "/v1/clusters/{cluster}/nodes"): Known(
        "list_nodes", "Nodes: health, last fault, GPUs used/allocatable, repairs, next rung."),
    ("get", "/v1/clusters/{cluster}/nodes/{node_id}"): Known(
        "get_node", "One node: conditions, pods, events, ladder rung."),
    ("post", "/v1/clusters/{cluster}/nodes/reboot"): Known(
        "reboot_nodes", "Reboot nodes (ladder rung 2). Ask first." + TRACK),
    ("post", "/v1/clusters/{cluster}/nodes/replace"): Known(
        "replace_nodes", "Replace nodes (wipes storage; after a reboot or force). Ask first."
        + TRACK, destructive=True),
    ("post", "/v1/clusters/{cluster}/nodes/delete"): Known(
        "delete_nodes", "Terminate nodes (groups shrink). Ask first." + TRACK, destructive=True),
    ("post", "/v1/clusters/{cluster}/health-checks"): Known(
        "start_health_check", "Deep health checks (no pods meanwhile)." + TRACK,
        some_body=("group", "node_ids")),
    ("post", "/v1/clusters/{cluster}/software-update"): Known(
        "update_cluster_software", "Patch HyperPod software, rolling. Ask first." + TRACK,
        destructive=True, more=("rolling", "image_id", "wait_seconds")),
    ("get", "/v1/clusters/{cluster}/events"): Known(
        "list_cluster_events", "HyperPod events, newest first."),
    ("get", "/v1/recipes"): Known(
        "list_recipes", "Training recipes and parameters.", paged=False),
    ("post", "/v1/clusters/{cluster}/jobs"): Known(
        "submit_job", "Run a training job from a recipe." + TRACK,
        more=("nodes", "secrets", "env", "mlflow", "elastic", "max_retries", "log_monitoring", "recipe_version"),
        guide="Data: dataset/model parameters and output take /data/... (the shared bucket) or s3://bucket/key on "
              "a registered bucket mounted in the job's namespace (list_data shows where). The dry run checks "
              "every input exists."),
    ("get", "/v1/clusters/{cluster}/jobs"): Known(
        "list_jobs", "Training jobs and status."),
    ("get", "/v1/clusters/{cluster}/jobs/{job}"): Known(
        "get_job", "One job: status and why, pods, outputs."),
    ("get", "/v1/clusters/{cluster}/jobs/{job}/metrics"): Known(
        "get_job_metrics", "A job's loss and throughput by step.", paged=False),
    ("get", "/v1/clusters/{cluster}/jobs/{job}/logs"): Known(
        "get_job_logs", "A job pod's newest log lines.", small=True),
    ("delete", "/v1/clusters/{cluster}/jobs/{job}"): Known(
        "delete_job", "Delete a job and its pods." + TRACK, destructive=True),
    ("get", "/v1/clusters/{cluster}/namespaces"): Known(
        "list_namespaces", "PodStart namespaces (jobs, secrets go there).", small=True),
    ("post", "/v1/clusters/{cluster}/namespaces"): Known(
        "create_namespace", "Admin: create a PodStart namespace." + TRACK),
    ("delete", "/v1/clusters/{cluster}/namespaces/{namespace}"): Known(
        "delete_namespace", "Admin: delete a namespace and all in it. Ask first." + TRACK,
        destructive=True),
    ("get", "/v1/clusters/{cluster}/secrets"): Known(
        "list_secrets", "Secret names in a namespace (never values).", small=True),
    ("post", "/v1/clusters/{cluster}/secrets"): Known(
        "create_secret", "Write a Secret (values never returned).", idempotent=True),
    ("get", "/v1/clusters/{cluster}/endpoints"): Known(
        "list_endpoints", "Inference endpoints."),
    ("post", "/v1/clusters/{cluster}/endpoints"): Known(
        "deploy_endpoint", "Serve a model." + TRACK,
        more=("service", "internet_facing", "source_ranges", "engine_args", "replicas", "api_key_secret", "public",
              "pool", "router", "autoscaling", "tiered_kv_cache", "routing_strategy"),
        guide="Self-managed needs engine, image (pinned) and gpus (= the engine's parallelism). service external "
              "is an NLB: internet_facing needs source_ranges (or public, admin). The result's url and how_to_call "
              "say where it answers."),
    ("get", "/v1/clusters/{cluster}/endpoints/{endpoint}"): Known(
        "get_endpoint", "One endpoint: status, url, how to call it.", small=True),
    ("patch", "/v1/clusters/{cluster}/endpoints/{endpoint}"): Known(
        "update_endpoint", "Set replicas or autoscaling bounds." + TRACK, idempotent=True),
    ("delete", "/v1/clusters/{cluster}/endpoints/{endpoint}"): Known(
        "delete_endpoint", "Delete an endpoint. Ask first." + TRACK, destructive=True),
    ("post", "/v1/clusters/{cluster}/endpoints/{endpoint}/invoke"): Known(
        "invoke_endpoint", "Chat (messages) or complete (prompt) with a READY endpoint.", idempotent=False,
        more=("max_tokens", "temperature", "stream")),
    ("get", "/v1/clusters/{cluster}/pools"): Known(
        "list_pools", "Model pools (warm workers).", paged=False),
    ("post", "/v1/clusters/{cluster}/pools"): Known(
        "create_pool", "Create a pool of warm workers." + TRACK),
    ("post", "/v1/clusters/{cluster}/pools/{pool}/assign"): Known(
        "assign_pool_workers", "Bind pool workers to an endpoint." + TRACK),
    ("post", "/v1/clusters/{cluster}/pools/{pool}/release"): Known(
        "release_pool_workers", "Release an endpoint's pool workers." + TRACK, destructive=True),
    ("get", "/v1/clusters/{cluster}/models"): Known(
        "list_models", "Models in the shared bucket."),
    ("post", "/v1/clusters/{cluster}/models"): Known(
        "download_model", "Download a Hugging Face model." + TRACK),
    ("get", "/v1/clusters/{cluster}/features"): Known(
        "get_features", "Features: on/off, status, why.", small=True),
    # The six managed features only (their prerequisites, the base add-ons, come with them): tools/list budget.
    ("patch", "/v1/clusters/{cluster}/features"): Known(
        "update_features", "Turn features on/off; send only changes." + TRACK,
        idempotent=True,
        some_body=("training_operator", "inference_operator", "tiered_checkpointing", "autoscaling", "observability",
                   "kuberay_operator")),
    ("get", "/v1/clusters/{cluster}/spec"): Known(
        "export_spec", "A cluster as spec documents (detail=full to edit).", paged=False),
    ("post", "/v1/specs/plan"): Known(
        "plan_spec", "Diff spec documents with the live cluster.",
        paged=False),
    ("post", "/v1/specs/apply"): Known(
        "apply_spec", "Apply spec documents (plan_spec first)." + TRACK,
        destructive=True),
}

# REST routes with no tool (each with its reason): the tools/list budget, where another tool answers the same.
# The REST API, the UI and the CLI keep them.
REST_ONLY: dict[tuple[str, str], str] = {
    ("get", "/v1/buckets"): "list_data without uri lists the same buckets, with where each is mounted",
    ("get", "/v1/catalog/availability-zones"): "find_capacity lists the zones that offer the instance type",
    ("get", "/v1/catalog/quotas"): "find_capacity says the quota available per instance type",
    ("get", "/v1/catalog/training-plans"): "find_capacity lists training plans with free capacity per zone",
    ("get", "/v1/specs/schema"): "the MCP resource podstart://spec-schema serves it",
    ("get", "/v1/audit"): "the audit trail is the UI's and the REST API's; agents report from their operations",
    ("get", "/v1/clusters/{cluster}/storage/{name}/objects"): "list_data browses the same keys by s3:// URI",
    ("get", "/v1/clusters/{cluster}/instance-groups"): "get_cluster lists the groups with their counts",
    ("get", "/v1/preferences"): "get_identity answers with the caller's preferences (active cluster, default region)",
    ("get", "/v1/jobs"): "the console's list across clusters; agents work on one cluster (list_jobs)",
    ("get", "/v1/endpoints"): "the console's list across clusters; agents work on one cluster (list_endpoints)",
}

# Extra tools over the same REST operation, exposing only some body fields.
ALIASES: dict[tuple[str, str], list[Known]] = {}

# REST parameter -> tool argument, where the REST name would mislead an agent.
RENAMES: dict[tuple[str, str], str] = {("get_operation", "wait"): WAIT_ARG}

# REST parameters a tool leaves out (the tools/list budget), each with its reason; a cancel's plan only says the status
# becomes CANCELLED.
HIDDEN: dict[str, frozenset[str]] = {
    "cancel_operation": frozenset({"dry_run"}),
    "get_job_logs": frozenset({"container", "since_seconds", "limit_bytes"}),  # the gateway's log view covers them
    "list_mlflow_servers": frozenset({"limit"}),  # 20 a page; next_token pages on
    "download_model": frozenset({"source"}),  # huggingface, the only source (its default)
    "set_preferences": frozenset({"dry_run"}),  # its plan is the two fields it sets
    "create_secret": frozenset({"dry_run"}),  # its plan names the keys it writes: nothing to decide
}

# Schema keywords the gateway sets for a tool argument: what it serves itself, and descriptions shorter than the REST
# API's (the tools/list budget; the REST ones stay in the OpenAPI document, the tool's resource and tools.md).
OVERRIDES: dict[tuple[str, str], dict[str, Any]] = {
    ("get_operation", WAIT_ARG): {"minimum": 0, "maximum": MAX_WAIT_SECONDS,
                                  "description": "Seconds (0-60) to wait for a change"},
    ("get_operation", VERSION_ARG): {"description": "The version you got"},
    ("create_cluster", "node_recovery"): {"description": "automatic: HyperPod repairs faulty nodes"},
    ("add_instance_group", "instance_count"): {"description": "Instances (within quota)"},
    ("add_instance_group", "availability_zone"): {"description": "Zone name or id offering the type"},
    ("add_instance_group", "capacity_type"): {"description": "Fixed for the group's life"},
    ("delete_instance_group", "confirm"): {"description": "The group's name again"},
    ("delete_instance_group", "drain_timeout_s"): {"description": "Seconds a PodDisruptionBudget may block"},
    ("delete_cluster", "confirm"): {"description": "The cluster's name again"},
    ("delete_namespace", "confirm"): {"description": "The namespace's name again"},
    ("remove_storage", "confirm"): {"description": "The name again (FSx: deletes data)"},
    ("add_storage", "kind"): {"description": "s3: an existing bucket; fsx_lustre: new"},
    ("add_storage", "bucket"): {"description": "s3: a bucket PodStart may mount (list_data)"},
    ("add_storage", "prefix"): {"description": "s3: only this key prefix"},
    ("deploy_endpoint", "mode"): {"description": "self-managed: vLLM/SGLang"},
    ("create_cluster", "instance_groups"): {"description": "[{name, instance_type, instance_count, availability_zone, "
                                                         "capacity_type?: on-demand|spot|training-plan, "
                                                         "training_plan_arn?, ...}]"},
    ("update_features", "autoscaling"): {"description": "{enabled, instance_groups?, cpu_limit?, ...}"},
    ("update_features", "tiered_checkpointing"): {"description": "{enabled, memory_percent?}"},
    ("deploy_endpoint", "gpus"): {"description": "GPUs per replica"},
    ("deploy_endpoint", "engine"): {"description": "Engine"},
    ("deploy_endpoint", "replicas"): {"description": "Replicas"},
    ("update_features", "kuberay_operator"): {"description": "{enabled: bool}"},
    ("update_features", "observability"): {"description": "{enabled: bool}"},
    ("update_features", "inference_operator"): {"description": "{enabled: bool}"},
    ("update_features", "training_operator"): {"description": "{enabled: bool}"},
    ("deploy_endpoint", "model"): {"description": "{source: huggingface|s3|fsx|jumpstart, model_id|uri, revision?}"},
    ("assign_pool_workers", "model"): {"description": "{source: s3|huggingface, uri?, model_id?, revision?}"},
    ("download_model", "token_secret"): {"description": "A Secret with key `token` (gated models)"},
    ("download_model", "revision"): {"description": "Branch, tag or commit"},
    ("get_job", "mlflow_link"): {"description": "Presigned MLflow UI link (operators)"},
    ("plan_spec", "documents"): {"description": "Spec documents of ONE cluster (resource podstart://spec-schema)"},
    ("apply_spec", "documents"): {"description": "Spec documents of ONE cluster (resource podstart://spec-schema)"},
    ("plan_spec", "prune"): {"description": "Also delete what the documents no longer name"},
    ("apply_spec", "prune"): {"description": "Also delete what the documents no longer name (roles apply)"},
    ("update_endpoint", "autoscaling_min"): {"description": "Autoscaling min"},
    ("update_endpoint", "autoscaling_max"): {"description": "Autoscaling max"},
    ("submit_job", "recipe"): {"description": "Recipe (list_recipes)"},
    ("submit_job", "output"): {"description": "Write to /data/... or s3://... (default /data/jobs/<name>/)"},
    ("submit_job", "gpus_per_node"): {"description": "GPUs per pod"},
    ("list_data", "uri"): {"description": "/data/... or s3://bucket/prefix/"},
    ("list_data", "cluster"): {"description": "Show mounts on this cluster"},
    ("list_data", "region"): {"description": "The cluster's, if ambiguous"},
    ("submit_job", "parameters"): {"description": "Recipe parameters"},
    ("list_instance_types", "availability_zone"): {"description": "Zone name or id (omit: the region)"},
    ("create_pool", "gpus_per_worker"): {"description": "GPUs per worker"},
    ("release_pool_workers", "workers"): {"description": "How many (default: all)"},
}

# Arguments a tool takes but tools/list does not show (the budget): `limit` (a compact answer sizes its page itself and
# says how to get the rest; `next_token` pages on) and `detail` (every read tool takes detail="full" for the whole
# REST answer: the server's instructions say so once, and a compact answer cut to fit says so again), and
# `idempotency_key` (every write tool takes one; without it the gateway makes one per call, and the REST API refuses a
# second identical operation on a target while one runs). The tools' resources and skills/reference/tools.md list them.
UNLISTED = frozenset({LIMIT_ARG, DETAIL_ARG, IDEMPOTENCY_ARG})

# Shorter descriptions of arguments many tools share (the REST API's own stay in its OpenAPI document).
SHORT: dict[str, str] = {
    "namespace": "PodStart namespace",
    "instance_type": "e.g. ml.g5.8xlarge",
    "image": "Pinned tag or digest",
    "endpoint": "Endpoint name",
    "name": "Name",
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
    full_schema: dict[str, Any] = field(default_factory=dict)  # every argument, `more`'s fields unfolded
    guide: str = ""

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
            if (method, path) in REST_ONLY:
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
    short: dict[str, str] = {}  # per argument: the shorter description tools/list shows
    unlisted_here: set[str] = set()
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
        if schema.get("default") in (False, "", [], {}):
            schema.pop("default")
        if wire == "dry_run":  # the server's instructions say what it does: plan first, then ask once
            schema = dict(DRY_RUN_SCHEMA)
        if wire == "cluster" and loc == "path" and _takes_region(params, openapi):
            schema["description"] += " (region/name when the name is in 2+ regions)"
            short[arg] = CLUSTER_ARG["description"]
        if wire == "region" and not p.get("required") and "{cluster}" in path:
            unlisted_here.add(arg)  # taken, not listed: `cluster` says region/name
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
            if wire not in fields or wire in properties or wire in HIDDEN.get(name, ()):
                continue  # a body field never shadows a path or query parameter
            is_required = wire in body_required or bool(known and known.only_body)
            # A PUT replaces: there `null` clears a field, so it stays allowed; elsewhere omitting is the default.
            schema = _clean(openapi, fields[wire], keep_null=wire in body_required or method == "put")
            schema["description"] = _describe(schema.get("description"), wire)
            if schema.get("default") in (False, "", [], {}):  # the empty default is what omitting means
                schema.pop("default")
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
    full_schema: dict[str, Any] = {"type": "object", "properties": dict(properties)}
    if required:
        full_schema["required"] = list(required)
    properties = {k: {**_outline(v), **({"description": short.get(k) or SHORT[k]} if short.get(k) or k in SHORT
                                         else {}), **OVERRIDES.get((name, k), {})}
                  for k, v in properties.items() if k not in UNLISTED and k not in unlisted_here}
    folded = [w for w in (known.more if known else ()) if w in properties and w not in required]
    if folded:
        for w in folded:
            del properties[w]
        args = [Arg(a.name, a.wire, "more", False) if a.name in folded and a.location == "body" else a
                for a in args]
        keys = list(properties)
        at = keys.index(IDEMPOTENCY_ARG) if IDEMPOTENCY_ARG in keys else len(keys)
        items = list(properties.items())
        items.insert(at, (MORE_ARG, {"type": "object", "description": _more_text(name, folded)}))
        properties = dict(items)
        args.append(Arg(MORE_ARG, MORE_ARG, "gateway", False))
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
    # tool says just that it reads. A write tool leaves out what the spec's defaults already say (readOnlyHint
    # false, idempotentHint false) and always says whether it destroys (the default would be true).
    annotations: dict[str, bool] = {"readOnlyHint": True} if read_only else {
        "destructiveHint": destructive, **({"idempotentHint": True} if idempotent else {})}
    return ToolSpec(name=name, description=description, method=method.upper(), path=path, args=tuple(args),
                    input_schema=input_schema, read_only=read_only, destructive=destructive and not read_only,
                    idempotent=idempotent, has_body=has_body, annotations=annotations, detail=detail,
                    paging=paging, filters=filters, full_schema=full_schema, guide=known.guide if known else "")


def _more_text(name: str, fields: list[str], limit: int = 80) -> str:
    """`more`'s description: the fields it takes, as many as fit in a line; the tool's resource has them all."""
    text = "Also: " + ", ".join(fields)
    if len(text) <= limit:
        return text
    shown: list[str] = []
    for f in fields:
        if len("Also: " + ", ".join([*shown, f])) > limit - 12:
            break
        shown.append(f)
    return f"Also: {', '.join(shown)}, +{len(fields) - len(shown)} (resource)"


def _takes_region(params: list[dict[str, Any]], openapi: dict[str, Any]) -> bool:
    for p in params:
        if "$ref" in p:
            p = _resolve_ref(openapi, p["$ref"])
        if p.get("name") == "region" and p.get("in") == "query" and not p.get("required"):
            return True
    return False


def listed(spec: ToolSpec) -> set[str]:
    """The arguments tools/list shows (the gateway also takes a route's `region` that `cluster` folds)."""
    return set(spec.input_schema.get("properties") or {})


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


def _outline(schema: dict[str, Any]) -> dict[str, Any]:
    """A nested object argument as `{"type": "object"}` with its fields in the description, one line
    (`{name, count: int, kind?: a|b}`: `?` optional); an array of objects as `[{...}]`. The whole schema stays in
    the tool's resource and skills/reference/tools.md; the REST API validates the fields and its 422 names a wrong
    one. Other arguments are kept as they are."""
    desc = str(schema.get("description") or "")
    options = schema.get("anyOf")
    if isinstance(options, list):
        objects = [o for o in options if isinstance(o, dict) and "properties" in o]
        if len(objects) == 1:
            rest = [{"type": "object"} if o is objects[0] else o for o in options]
            return {"anyOf": rest, "description": f"{desc}: {signature(objects[0])}".lstrip(": ")}
        return schema
    if "properties" in schema:
        return {"type": "object", "description": f"{desc}: {signature(schema)}".lstrip(": ")}
    items = schema.get("items")
    if schema.get("type") == "array" and isinstance(items, dict) and "properties" in items:
        return {"type": "array", "items": {"type": "object"},
                "description": f"{desc}: [{signature(items)}]".lstrip(": ")}
    return {k: v for k, v in schema.items() if k not in BOUNDS}


# Numeric bounds and defaults of an argument: in its resource and tools.md, not in tools/list (the REST API's 422 says a
# bound an argument crossed, and applies the defaults; the gateway's own, wait_seconds' 0-60, is in its description).
BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "default")


def signature(schema: Any) -> str:
    """One line for a schema: `{a, b?: int, c: x|y, d: [{...}]}`."""
    if not isinstance(schema, dict):
        return ""
    if "enum" in schema:
        return "|".join(str(v) for v in schema["enum"])
    if "const" in schema:
        return str(schema["const"])
    options = [o for o in schema.get("anyOf") or [] if isinstance(o, dict) and o.get("type") != "null"]
    if len(options) == 1:
        return signature(options[0])
    if "properties" in schema:
        req = set(schema.get("required") or [])
        parts = []
        for k, v in schema["properties"].items():
            inner = signature(v)
            parts.append(f"{k}{'' if k in req else '?'}" + (f": {inner}" if inner and inner != "string" else ""))
        return "{" + ", ".join(parts) + "}"
    kind = schema.get("type")
    if kind == "array":
        return f"[{signature(schema.get('items')) or 'any'}]"
    if kind == "integer":
        return "int"
    if kind == "boolean":
        return "bool"
    if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
        return "{name: " + (signature(schema["additionalProperties"]) or "any") + "}"
    return str(kind or "")


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
    """The arguments the gateway serves itself (the REST API never sees them as such)."""
    return {a.name for a in spec.args if a.location == "gateway"}


def reference(spec: ToolSpec) -> dict[str, Any]:
    """A tool's whole reference (its MCP resource): every argument with the REST API's descriptions, bounds and
    defaults, where each goes, and the longer guidance tools/list leaves out."""
    return {"name": spec.name, "description": spec.description, **({"guide": spec.guide} if spec.guide else {}),
            "rest": f"{spec.method} {spec.path}", "annotations": spec.annotations,
            "arguments": spec.full_schema,
            "folded_into_more": folded(spec) or None,
            "taken_but_not_listed": unlisted(spec)}


def unlisted(spec: ToolSpec) -> list[str]:
    """Arguments a tool takes that tools/list does not show: the shared ones (the server's instructions say them)."""
    shown = set(spec.input_schema["properties"]) | set(folded(spec))
    names = set(spec.full_schema.get("properties") or {}) | {a.name for a in spec.args}
    return sorted(names - shown - {MORE_ARG})


def folded(spec: ToolSpec) -> list[str]:
    """The body fields a tool takes inside its `more` argument."""
    return [a.name for a in spec.args if a.location == "more"]


def tool_payload(spec: ToolSpec) -> dict[str, Any]:
    """The tools/list entry for one tool, as MCP serializes it (for size budgets)."""
    return {"name": spec.name, "description": spec.description, "inputSchema": spec.input_schema,
            "annotations": spec.annotations}
