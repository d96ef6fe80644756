"""Small interfaces the domain needs; adapters implement them, tests use in-memory fakes."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any, Protocol

from functions.domain.events import Envelope
from functions.domain.operations import Operation, OperationStatus, Target


class LockHeld(Exception):
    def __init__(self, holder_id: str) -> None:
        super().__init__(holder_id)
        self.holder_id = holder_id


class StaleWrite(Exception):
    """Someone else wrote the record since it was read."""


class OperationRepository(Protocol):
    def create(self, op: Operation) -> None:
        """Store a new operation and take its target's lock atomically; LockHeld if taken."""

    def get(self, op_id: str) -> Operation | None: ...

    def save(self, old: Operation, new: Operation) -> Operation:
        """Write `new` (already advanced: see operations.advance) if the stored revision is still
        old.revision; StaleWrite otherwise. Returns `new`."""

    def acquire(self, op: Operation) -> None:
        """Take the target lock for an existing operation (a retry); LockHeld if taken."""

    def release(self, op: Operation) -> None: ...

    def holder(self, target: Target) -> str | None: ...

    def break_lock(self, target: Target, holder_id: str) -> None: ...

    def list(
        self, *, cluster: str | None, status: OperationStatus | None, limit: int, token: str | None
    ) -> tuple[list[Operation], str | None]: ...

    def pending_older_than(self, seconds: float, now: float | None = None) -> builtins.list[Operation]:
        """PENDING operations created more than `seconds` ago (now: epoch seconds, default the clock)."""


class EventPublisher(Protocol):
    def publish(self, envelopes: list[Envelope]) -> int:
        """Publish in batches; returns the number of entries that failed."""


class WorkflowRunner(Protocol):
    def start(self, op: Operation) -> str:
        """Start the operation's workflow execution; returns its ARN."""

    def stop(self, execution_arn: str, cause: str) -> None: ...

    def find(self, op: Operation) -> str | None:
        """The ARN of the execution started for the operation's current attempt, if one exists."""

    def has_workflow(self, kind: str) -> bool: ...


class IdempotencyGuard(Protocol):
    def once(self, *, scope: str, key: str, request_hash: str, create: Callable[[], str]) -> str:
        """Run create() at most once per (scope, key); return its result (an operation id) on replays.

        Raises IdempotencyMismatch when the key was used with a different request, and
        IdempotencyInProgress while the first call with that key is still running.
        """


class IdempotencyMismatch(Exception):
    pass


class IdempotencyInProgress(Exception):
    pass


class StateStore(Protocol):
    """Key-value documents (per-user preferences, cluster records): pk + sk -> JSON body."""

    def get(self, pk: str, sk: str) -> dict[str, Any] | None: ...

    def put(self, pk: str, sk: str, body: dict[str, Any], ttl: int | None = None) -> None: ...

    def put_new(self, pk: str, sk: str, body: dict[str, Any], ttl: int | None = None) -> bool:
        """Write only if absent; False when the key is taken. `ttl`: epoch seconds after which it may vanish."""

    def delete(self, pk: str, sk: str) -> None: ...

    def query(self, pk: str) -> list[dict[str, Any]]:
        """Every body under pk, in sk order."""

    def get_rev(self, pk: str, sk: str) -> tuple[dict[str, Any] | None, int]:
        """(body, revision): the revision a `put_rev` must name (0: absent, or written without one)."""

    def put_rev(self, pk: str, sk: str, body: dict[str, Any], rev: int) -> bool:
        """Write `body` as revision rev+1 only if the stored revision is still `rev`; False when someone wrote in
        between (read again, apply the change again, try again)."""


class ClusterReader(Protocol):
    """Live AWS state the API reads to admit requests and build views (never mutates)."""

    def snapshot(self, region: str, groups: list[Any], records: list[Any]) -> Any:
        """A clusters.Snapshot for admission: zones, offerings, quotas, plans, VPC CIDRs, names taken."""

    def hyperpod_clusters(self, region: str, max_age: float = 0.0) -> dict[str, dict[str, Any]]:
        """ListClusters: name -> summary (one call per page of 100); a scan younger than max_age is reused."""

    def eks_orchestrator(self, region: str, summary: dict[str, Any]) -> str | None:
        """The EKS cluster ARN a HyperPod cluster runs on (None: not on EKS)."""

    def describe_hyperpod(self, region: str, name: str) -> dict[str, Any] | None: ...

    def describe_eks(self, region: str, name: str) -> dict[str, Any] | None: ...

    def addons(self, region: str, name: str) -> list[dict[str, Any]]: ...

    def access_entries(self, region: str, name: str) -> list[str]:
        """Principal ARNs with an access entry on the EKS cluster ([] when it is gone)."""

    def quotas(self, region: str) -> list[Any]:
        """Fresh catalog.Quota list (cluster-usage quotas with what is in use)."""

    def network(self, region: str, subnet_ids: list[str]) -> Any:
        """A network.VpcView of the VPC holding these subnets: blocks, subnets, NAT presence."""

    def file_system(self, region: str, file_system_id: str) -> dict[str, Any] | None: ...

    def bucket_region(self, region: str, bucket: str) -> str | None:
        """The region an S3 bucket of this account lives in; None when there is no such bucket (or no access)."""

    def list_objects(self, region: str, bucket: str, prefix: str, limit: int,
                     token: str | None) -> dict[str, Any]:
        """One page of ListObjectsV2 with delimiter '/': {objects: [{key, size, last_modified}], prefixes,
        truncated, next_token}."""

    def regions(self) -> list[str]:
        """HyperPod regions enabled in the account."""

    def zones(self, region: str) -> dict[str, str]:
        """Zone name or zone id -> zone name."""

    def offered(self, region: str, zone: str) -> dict[str, Any]:
        """HyperPod instance types offered in the zone: name -> catalog.InstanceType."""


class PriceBook(Protocol):
    """Prices for plans (AWS Price List), cached: they change rarely."""

    def hourly(self, region: str, key: tuple[str, str]) -> tuple[float, str] | None:
        """USD per unit-hour for a plans.Capacity price key, and its source ("AWS Price List, 2026-11-30");
        None when the price list has no such product."""


class AuditLog(Protocol):
    """Append-only audit records; queried newest first by actor, by cluster, or all, one page per call."""

    def append(self, record: Any) -> None:
        """Store an audit.AuditRecord (never overwrites)."""

    def query(self, q: Any) -> tuple[list[Any], str | None]:
        """An audit.AuditQuery -> (records newest first, next page token)."""


class NodeReader(Protocol):
    """HyperPod nodes and events, and the cluster's Kubernetes nodes and pods: one call per method."""

    def list_cluster_nodes(self, region: str, cluster: str, group: str | None, limit: int,
                           token: str | None) -> tuple[list[dict[str, Any]], str | None]: ...

    def describe_cluster_node(self, region: str, cluster: str, node_id: str) -> dict[str, Any] | None: ...

    def cluster_events(self, region: str, cluster: str, *, node_id: str | None = None, group: str | None = None,
                       since: Any = None, limit: int = 50,
                       token: str | None = None) -> tuple[list[dict[str, Any]], str | None]: ...

    def kube_nodes(self, region: str, eks: str, selector: str, limit: int = 0,
                   token: str | None = None) -> tuple[list[dict[str, Any]], str | None]: ...

    def kube_node(self, region: str, eks: str, name: str) -> dict[str, Any] | None: ...

    def kube_pods_on(self, region: str, eks: str, name: str) -> list[dict[str, Any]]: ...

    def kube_pods(self, region: str, eks: str) -> list[dict[str, Any]]:
        """The cluster's pods that are not Succeeded or Failed (one list)."""


class FeatureReader(Protocol):
    """The live state behind the features document (never mutates)."""

    @property
    def bucket(self) -> str:
        """PodStart's data bucket (tiered checkpointing's S3 tier lives under a prefix of it)."""

    def read(self, region: str, cluster: str, eks_name: str, hyperpod_name: str | None) -> Any:
        """A features.FeatureInputs: add-ons, Pod Identity associations, HyperPod, the checkpoint role,
        and the Kubernetes objects (service account, node pools, node classes, Karpenter nodes)."""

    def read_live(self, region: str, eks_name: str, hyperpod_name: str | None, endpoint: str | None,
                  ca: str | None, *, nodes: bool, operator: bool) -> Any:
        """A features.FeatureVolatile, at most four calls side by side: ListAddons, HyperPod DescribeCluster, and
        (when asked: `nodes`, `operator`) Karpenter's nodes and the KubeRay operator's Deployment, at the
        Kubernetes endpoint a full read stored."""


class ClusterKube(Protocol):
    """Read access to one cluster's Kubernetes API, and POST through the service proxy (the API's only door
    to an endpoint: namespace, Service and port come from PodStart's record)."""

    def get(self, path: str, query: dict[str, str] | None = None) -> dict[str, Any] | None: ...

    def list(self, path: str, label_selector: str | None = None) -> builtins.list[dict[str, Any]]: ...

    def names(self, path: str, label_selector: str | None = None) -> builtins.list[str]:
        """Names at `path` (a collection or one object) without the objects (a Secret's values stay put)."""

    def proxy_post(self, namespace: str, service: str, port: int, path: str, body: bytes, *,
                   max_response: int, timeout: float, headers: dict[str, str] | None = None
                   ) -> tuple[int, bytes, bool]: ...

    def apply(self, manifest: dict[str, Any]) -> None:
        """Server-side apply (field manager podstart); the answer is dropped (a Secret's would echo its data)."""

    def logs(self, namespace: str, pod: str, container: str | None, tail: int, since_seconds: int | None,
             limit_bytes: int) -> tuple[str, bool]:
        """The newest bytes (at most limit_bytes) of the pod's last `tail` lines, in bounded memory; (text, cut)."""

    def follow_logs(self, namespace: str, pod: str, container: str | None, tail: int) -> LogStream:
        """The pod's log from its last `tail` lines on, as it is written (the API server's follow=true)."""


class LogStream(Protocol):
    """An open follow: `read()` blocks until bytes arrive and answers b"" when the log ends (the container
    stopped); `close()`, from any thread, ends it (a blocked read then answers b"" or raises OSError)."""

    def read(self) -> bytes: ...

    def close(self) -> None: ...


KubeConnector = Callable[[str, str], ClusterKube]  # (EKS cluster name, region) -> ClusterKube


class ObjectLister(Protocol):
    """A bucket's keys under a prefix, in key order, one bounded page per call (read-only: ListObjectsV2)."""

    def list_objects(self, bucket: str, prefix: str, start_after: str | None,
                     max_keys: int) -> tuple[builtins.list[dict[str, Any]], bool]:
        """([{"key", "size", "last_modified" (ISO 8601)}], more keys follow)."""

    def read_small(self, bucket: str, key: str, max_bytes: int) -> bytes | None:
        """One small object's bytes (GetObject, at most max_bytes read); None when it does not exist."""


class LiveConnections(Protocol):
    """The deployed live socket's state (DynamoDB; items expire with the connection's 2-hour life): who is
    connected, and which log follows each connection holds."""

    def add_connection(self, connection_id: str, sub: str, lease: builtins.list[builtins.list[str]] | None = None
                       ) -> None:
        """Record the connection, and the lease of its share of sockets (released on disconnect)."""

    def lease_of(self, connection_id: str) -> builtins.list[builtins.list[str]]:
        """The lease recorded with the connection ([] if none)."""

    def remove_connection(self, connection_id: str) -> builtins.list[str]:
        """Remove the connection and its follows; the follow ids removed."""

    def add_follow(self, connection_id: str, sub: str, follow_id: str, limit: int) -> bool:
        """Record a follow unless the user already holds `limit` (False then)."""

    def remove_follow(self, connection_id: str, follow_id: str) -> bool: ...

    def has_follow(self, connection_id: str, follow_id: str) -> bool: ...

    def connections(self) -> builtins.list[str]: ...


class Poster(Protocol):
    """Sends one message to one socket connection; False when the connection is gone."""

    def post(self, connection_id: str, message: dict[str, Any]) -> bool: ...


class MlflowServers(Protocol):
    """SageMaker managed MLflow tracking servers of the account, in a region (read-only, and presigned links)."""

    def list_servers(self, region: str, limit: int,
                     next_token: str | None) -> tuple[builtins.list[dict[str, Any]], str | None]:
        """(DescribeMlflowTrackingServer answers of one ListMlflowTrackingServers page, the next token)."""
        ...

    def describe(self, region: str, name: str) -> dict[str, Any] | None:
        """DescribeMlflowTrackingServer; None when the account has no such server there."""
        ...

    def presigned_url(self, region: str, name: str) -> str:
        """CreatePresignedMlflowTrackingServerUrl: a short-lived link to the MLflow UI (never stored)."""
        ...

    def metric_history(self, region: str, name: str, experiment: str,
                       run_name: str) -> tuple[str, dict[str, builtins.list[tuple[int, float]]]] | None:
        """A run's metrics step by step, from the tracking server's MLflow REST API (read-only): the run named
        `run_name` in `experiment`, else its newest run; (run name, {metric: [(step, value)]}), None when the
        experiment has no run yet."""
        ...
