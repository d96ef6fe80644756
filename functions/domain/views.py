"""The documents the REST API answers, as typed models: the OpenAPI document (and from it the UI's
TypeScript types and the MCP tool catalog) follows from these."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from functions.domain.operations import Actor, Attempt, ErrorInfo, OperationStatus, StepStatus, Target
from functions.domain.plans import CostLine
from functions.domain.training.api import Unreachable


class StepOut(BaseModel):
    name: str
    status: StepStatus
    started_at: str | None = None
    ended_at: str | None = None
    message: str | None = None
    error: ErrorInfo | None = None
    attempts: int = 0
    outputs: dict[str, Any] = Field(default_factory=dict)


class OperationOut(BaseModel):
    """The Operation record: a mutation's 202 body and what get_operation returns."""

    id: str
    kind: str
    target: Target
    status: OperationStatus
    phase: str | None = None
    steps: list[StepOut]
    request: dict[str, Any]
    result: dict[str, Any] | None = None
    error: ErrorInfo | None = None
    principal: Actor
    idempotency_key: str | None = None
    created_at: str
    updated_at: str
    attempt: int
    attempts: list[Attempt] = Field(default_factory=list, description="Who started, retried and cancelled, when")
    version: int = Field(description="Changes only when something a reader sees changes; pass it back to wait")
    links: dict[str, str]
    status_tool: str = Field(description="The tool/endpoint that tracks this operation to a terminal state")


class OperationList(BaseModel):
    items: list[OperationOut]
    next_token: str | None = None


# -- clusters -----------------------------------------------------------------------------------------
class GroupView(BaseModel):
    """An instance group: what PodStart recorded, with the live counts where they were read."""

    name: str
    instance_type: str
    availability_zone: str
    availability_zone_id: str | None = None
    capacity_type: str
    efa_only: bool = False
    training_plan_arn: str | None = None
    instance_count: int = Field(description="Instances PodStart recorded for the group (the last count it set or saw)")
    target_count: int = Field(description="Instances HyperPod is asked to run")
    current_count: int | None = Field(default=None, description="Instances running when last observed; null: "
                                                                 "never observed yet")
    status: str | None = Field(default=None, description="HyperPod's status of the group when last observed")
    counts_as_of: str | None = Field(default=None, description="When current_count/status were observed")
    drift: str | None = Field(default=None, description="Set when the live group differs from PodStart's record")


class ClusterSummary(BaseModel):
    """One row of the clusters list: PodStart's record (created or imported) or a HyperPod-on-EKS cluster
    found in the account that PodStart does not track (origin external, importable)."""

    name: str
    region: str
    status: str = Field(description="PodStart's status (CREATING, ACTIVE, ...); for external clusters HyperPod's")
    origin: Literal["created", "imported", "external"]
    managed: bool = Field(description="PodStart tracks this cluster (it created or imported it)")
    importable: bool = Field(description="An external HyperPod-on-EKS cluster: POST /v1/clusters/import adopts it")
    hyperpod_status: str | None = None
    eks_cluster_name: str | None = None
    kubernetes_version: str | None = None
    instance_groups: list[GroupView] = Field(default_factory=list)
    active: bool = False
    operation_id: str | None = None
    created_at: str | None = None
    created_by: str | None = None


class ClusterList(BaseModel):
    items: list[ClusterSummary]
    next_token: str | None = None
    discovered_at: str | None = Field(
        default=None, description="When the periodic scan of every HyperPod region last ran (UTC): the untracked "
        "clusters of regions holding none of PodStart's are as of then (ask ?region= for a live answer); null: "
        "not scanned yet, or a region was named")
    undiscovered_regions: list[str] = Field(
        default_factory=list, description="Regions the last scan could not read (their rows are from an older scan)")


class EksView(BaseModel):
    name: str
    status: str | None = None
    arn: str | None = None
    endpoint: str | None = None
    version: str | None = None


class HyperPodView(BaseModel):
    name: str | None = None
    status: str | None = None
    arn: str | None = None
    node_recovery: str | None = None
    node_provisioning_mode: str | None = None
    failure_message: str | None = None


class DependencyView(BaseModel):
    name: str
    kind: Literal["eks-addon", "kubernetes"]
    status: str | None = None
    version: str | None = None


class PvcView(BaseModel):
    name: str
    namespace: str
    phase: str | None = Field(default=None, description="Bound once the volume is usable; as of `as_of`")
    as_of: str | None = None


class StorageView(BaseModel):
    name: str
    kind: Literal["s3-mountpoint", "fsx-lustre"]
    status: str = Field(description="FSx: the file system's lifecycle (CREATING, AVAILABLE, ...); S3: the PVC phase")
    bucket: str | None = None
    file_system_id: str | None = None
    lifecycle: str | None = None
    pvc: PvcView | None = None


class RunningCost(BaseModel):
    """What a cluster costs per hour now, from the AWS Price List: its instances running (current counts), the EKS
    control plane, the NAT gateway and the FSx file system PodStart made for it. Unknown prices stay unknown."""

    currency: Literal["USD"] = "USD"
    hourly: float | None = Field(description="USD per hour now; null when a line's price (or count) is unknown")
    known_hourly: float = Field(description="The sum of the lines whose price is known")
    lines: list[CostLine] = Field(default_factory=list)
    as_of: str = Field(description="When the counts and prices were read")
    note: str | None = None


class ClusterDetail(ClusterSummary):
    node_recovery: str | None = None
    eks: EksView | None = None
    hyperpod: HyperPodView | None = None
    vpc_cidr: str | None = None
    network: dict[str, Any] = Field(default_factory=dict)
    dependencies: list[DependencyView] = Field(default_factory=list)
    storage: list[StorageView] = Field(default_factory=list)
    operations: list[OperationOut] = Field(default_factory=list)
    cost: RunningCost | None = Field(default=None, description="What it costs per hour now (null: not read)")


class GroupList(BaseModel):
    cluster: str
    region: str
    items: list[GroupView]


class ObjectRef(BaseModel):
    api_version: str
    kind: str
    name: str
    namespace: str = ""


class EndpointView(BaseModel):
    """An inference endpoint: what was asked, and its live state from the cluster."""

    name: str
    cluster: str
    region: str
    mode: str
    engine: str | None = None
    model: str = Field(description="The served model name")
    model_source: str
    instance_type: str
    gpus: int | None = None
    replicas: int = Field(description="Replicas asked for")
    ready_replicas: int | None = Field(default=None, description="Live: replicas ready now (None: not read)")
    autoscaling: dict[str, Any] | None = None
    service: str = Field(description="external, internal or model_pool")
    pool: str | None = None
    status: str = Field(description="DEPLOYING, READY, FAILED, UPDATING, DELETING; read live: DEGRADED (workers "
                                    "not ready), MISSING (its objects gone), NO_WORKERS (a model_pool endpoint no "
                                    "pool worker serves)")
    state: str | None = Field(default=None, description="Managed: the operator's status.state")
    message: str | None = None
    service_name: str
    routing_strategy: str | None = None
    tiered_kv_cache: dict[str, Any] | None = None
    router: dict[str, Any] | None = None
    internet_facing: bool = Field(default=False, description="service external: an internet-facing NLB")
    public: bool = Field(default=False, description="internet-facing with no source range limit (an admin's choice)")
    source_ranges: list[str] = Field(default_factory=list, description="CIDRs allowed to reach the NLB")
    api_key_required: bool = Field(default=False, description="Callers must send the API key (Authorization: Bearer "
                                                              "or X-Api-Key); the Secret's name is not shown")
    url: str | None = Field(default=None, description="Where to call it: the load balancer's address (external), or "
                                                      "the Service's in-cluster DNS name; None until the NLB exists")
    ready: bool = Field(default=False, description="It answers now (status READY)")
    how_to_call: str | None = Field(default=None, description="The OpenAI-compatible call, with its model name")
    objects: list[ObjectRef] = Field(default_factory=list)
    live: bool = Field(default=False, description="True when status was read from the cluster just now")
    operation_id: str | None = None
    created_by: str
    created_at: str


class EndpointList(BaseModel):
    cluster: str
    region: str
    items: list[EndpointView]
    next_token: str | None = None


class ClusterEndpointList(BaseModel):
    """Endpoints across clusters (each names its cluster and region)."""

    items: list[EndpointView]
    next_token: str | None = None
    unreachable: list[Unreachable] = Field(default_factory=list, description="Clusters not read, and why")


class PoolWorker(BaseModel):
    pod: str
    model: str = Field(description="The endpoint it serves, or unassigned")
    ready: bool
    node: str | None = None


class PoolView(BaseModel):
    name: str
    cluster: str
    region: str
    engine: str
    image: str
    instance_type: str
    gpus_per_worker: int
    workers: int
    by_model: dict[str, int] = Field(default_factory=dict, description="Workers per model label (live)")
    pods: list[PoolWorker] = Field(default_factory=list)
    operation_id: str | None = None


class PoolList(BaseModel):
    cluster: str
    region: str
    items: list[PoolView]


class ModelObject(BaseModel):
    """One model revision in the shared bucket (keys under models/, seen by pods at /data/models/)."""

    model_id: str
    revision: str
    files: int = Field(description="Files there now (the download's markers not counted)")
    bytes: int
    complete: bool = Field(default=False, description="The download wrote its _COMPLETE marker: every file is there")
    files_total: int | None = Field(default=None, description="Not complete: the files the download's manifest "
                                                              "expects (files/files_total is its progress)")
    last_modified: str | None = Field(default=None, description="The newest object's time (ISO 8601)")
    path: str = Field(description="The path the deploy form takes (source s3 uri): /data/models/{model_id}/{revision}/")


class ModelList(BaseModel):
    cluster: str
    region: str
    bucket: str
    items: list[ModelObject]
    next_token: str | None = None


class InvokeResult(BaseModel):
    """The engine's OpenAI-compatible answer, relayed; `endpoint` says who answered."""

    endpoint: str
    status: int
    model: str | None = None
    content: str | None = Field(default=None, description="The first choice's message content (a completion's text)")
    response: dict[str, Any] = Field(default_factory=dict, description="The engine's JSON answer as is")
    truncated: bool = False
    path: str = Field(default="/v1/chat/completions", description="The engine path PodStart called")
    latency_ms: int | None = Field(default=None, description="How long the engine took to answer, through the "
                                                             "cluster's API server (milliseconds)")
    prompt_tokens: int | None = Field(default=None, description="Tokens in, as the engine counted them (usage)")
    completion_tokens: int | None = Field(default=None, description="Tokens out, as the engine counted them")


class NoChange(BaseModel):
    """A PATCH equal to the live state: nothing starts."""

    changed: Literal[False] = False
    instance_group: GroupView | None = None
    endpoint: EndpointView | None = None
