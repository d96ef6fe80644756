"""In-memory fakes of PodStart's ports, checked against the same contract tests as the real adapters
(tests/functional/test_port_contracts.py) and type-checked against the protocols below."""

from __future__ import annotations

import builtins
import itertools
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from functions.domain import catalog as cat
from functions.domain.clusters.models import Snapshot
from functions.domain.clusters.network import VpcView
from functions.domain.errors import InvalidInput
from functions.domain.events import Envelope
from functions.domain.operations import Operation, OperationStatus, Target
from functions.domain.ports import (
    ClusterReader,
    EventPublisher,
    IdempotencyGuard,
    IdempotencyInProgress,
    IdempotencyMismatch,
    LockHeld,
    MlflowServers,
    OperationRepository,
    StaleWrite,
    StateStore,
    WorkflowRunner,
)


class FakeOperationRepository:
    def __init__(self) -> None:
        self.items: dict[str, Operation] = {}
        self.locks: dict[str, str] = {}
        self._lock = threading.Lock()

    def create(self, op: Operation) -> None:
        with self._lock:
            if op.id in self.items:
                raise LockHeld(self.locks.get(op.target.lock_key, "unknown"))
            holder = self.locks.get(op.target.lock_key)
            if holder is not None:
                raise LockHeld(holder)
            self.items[op.id] = op
            self.locks[op.target.lock_key] = op.id

    def get(self, op_id: str) -> Operation | None:
        return self.items.get(op_id)

    def save(self, old: Operation, new: Operation) -> Operation:
        with self._lock:
            current = self.items.get(old.id)
            if current is None or current.revision != old.revision:
                raise StaleWrite(old.id)
            self.items[new.id] = new
            return new

    def acquire(self, op: Operation) -> None:
        with self._lock:
            holder = self.locks.get(op.target.lock_key)
            if holder not in (None, op.id):
                raise LockHeld(holder or "unknown")
            self.locks[op.target.lock_key] = op.id

    def release(self, op: Operation) -> None:
        self.break_lock(op.target, op.id)

    def holder(self, target: Target) -> str | None:
        return self.locks.get(target.lock_key)

    def break_lock(self, target: Target, holder_id: str) -> None:
        with self._lock:
            if self.locks.get(target.lock_key) == holder_id:
                del self.locks[target.lock_key]

    def list(self, *, cluster: str | None, status: OperationStatus | None, limit: int,
             token: str | None) -> tuple[list[Operation], str | None]:
        order = {op_id: i for i, op_id in enumerate(self.items)}  # insertion breaks same-millisecond ties
        ops = sorted(self.items.values(), key=lambda o: (o.created_at, order[o.id]), reverse=True)
        if cluster:
            key = Target(cluster=cluster).index_key
            ops = [o for o in ops if o.target.index_key == key]
        if status:
            ops = [o for o in ops if o.status is status]
        if token is not None and not token.isdigit():
            raise InvalidInput.field(["query", "next_token"], "not a token this API issued")
        start = int(token or 0)
        page = ops[start:start + limit]
        return page, (str(start + limit) if start + limit < len(ops) else None)

    def pending_older_than(self, seconds: float, now: float | None = None) -> builtins.list[Operation]:
        cutoff = datetime.fromtimestamp((now if now is not None else time.time()) - seconds, UTC)
        cut = cutoff.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        return [o for o in self.items.values() if o.status is OperationStatus.PENDING and o.created_at < cut]


class FakeStateStore:
    def __init__(self) -> None:
        self.items: dict[tuple[str, str], dict[str, Any]] = {}
        self.revs: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()

    def get(self, pk: str, sk: str) -> dict[str, Any] | None:
        body = self.items.get((pk, sk))
        return dict(body) if body is not None else None

    def put(self, pk: str, sk: str, body: dict[str, Any], ttl: int | None = None) -> None:
        with self._lock:
            self.items[(pk, sk)] = dict(body)
            self.revs.pop((pk, sk), None)  # a plain write leaves no revision (as DynamoDB's PutItem would)

    def get_rev(self, pk: str, sk: str) -> tuple[dict[str, Any] | None, int]:
        with self._lock:
            return self.get(pk, sk), self.revs.get((pk, sk), 0)

    def put_rev(self, pk: str, sk: str, body: dict[str, Any], rev: int) -> bool:
        with self._lock:
            if self.revs.get((pk, sk), 0) != rev:
                return False
            self.items[(pk, sk)] = dict(body)
            self.revs[(pk, sk)] = rev + 1
            return True

    def put_new(self, pk: str, sk: str, body: dict[str, Any], ttl: int | None = None) -> bool:
        with self._lock:
            if (pk, sk) in self.items:
                return False
            self.items[(pk, sk)] = dict(body)
            return True

    def delete(self, pk: str, sk: str) -> None:
        with self._lock:
            self.items.pop((pk, sk), None)
            self.revs.pop((pk, sk), None)

    def query(self, pk: str) -> list[dict[str, Any]]:
        return [dict(b) for (p, _), b in sorted(self.items.items()) if p == pk]


class FakePublisher:
    def __init__(self) -> None:
        self.published: list[Envelope] = []

    def publish(self, envelopes: list[Envelope]) -> int:
        self.published.extend(envelopes)
        return 0

    def types(self, op_id: str | None = None) -> list[str]:
        return [e.detail_type for e in self.published if op_id is None or e.data.get("operation_id") == op_id]


class FakeRunner:
    """Step Functions as a fake: executions by derived name; `fail_next` makes the next start raise."""

    def __init__(self, kinds: tuple[str, ...] = ()) -> None:
        self.kinds = set(kinds)
        self.started: dict[str, Operation] = {}
        self.stopped: list[str] = []
        self.fail_next: Exception | None = None

    def arn(self, op: Operation) -> str:
        return f"arn:aws:states:us-west-2:123456789012:execution:podstart-{op.kind}:{op.id}-{op.attempt}"

    def start(self, op: Operation) -> str:
        if self.fail_next is not None:
            exc, self.fail_next = self.fail_next, None
            raise exc
        arn = self.arn(op)
        self.started.setdefault(arn, op)
        return arn

    def stop(self, execution_arn: str, cause: str) -> None:
        self.stopped.append(execution_arn)

    def has_workflow(self, kind: str) -> bool:
        return not self.kinds or kind in self.kinds

    def find(self, op: Operation) -> str | None:
        arn = self.arn(op)
        return arn if arn in self.started else None


class FakeGuard:
    def __init__(self) -> None:
        self.done: dict[tuple[str, str], tuple[str, str]] = {}
        self.in_progress: set[tuple[str, str]] = set()

    def once(self, *, scope: str, key: str, request_hash: str, create: Callable[[], str]) -> str:
        k = (scope, key)
        if k in self.done:
            rhash, result = self.done[k]
            if rhash != request_hash:
                raise IdempotencyMismatch(key)
            return result
        if k in self.in_progress:
            raise IdempotencyInProgress(key)
        self.in_progress.add(k)
        try:
            result = create()
        finally:
            self.in_progress.discard(k)
        self.done[k] = (request_hash, result)
        return result


def gpu_type(name: str, gpus: int = 4, efa: int = 1) -> cat.InstanceType:
    accel = cat.Accelerator(kind="gpu", manufacturer="NVIDIA", model="A10G", count=gpus, memory_gib=24.0)
    return cat.InstanceType(name=name, vcpus=32, memory_gib=128.0, accelerator=accel, efa_supported=efa > 0,
                            efa_max_interfaces=efa, network_cards=max(1, efa), efa_only_supported=efa > 1,
                            accelerated=True)


class FakeClusterReader:
    """A small account: one region with two zones offering ml.g5.8xlarge, a quota of 16, no clusters."""

    _ids = itertools.count(1)

    def __init__(self, region: str = "us-west-2") -> None:
        self.region = region
        self.zone_ids = {f"{region}a": "usw2-az1", f"{region}b": "usw2-az2"}
        self.types = {"ml.g5.8xlarge": gpu_type("ml.g5.8xlarge"), "ml.p5.48xlarge": gpu_type("ml.p5.48xlarge", 8, 32)}
        self.quota_limits: dict[str, int] = {"ml.g5.8xlarge": 16, "ml.p5.48xlarge": 4}
        self.in_use: dict[str, int] = {}
        self.hyperpod: dict[str, dict[str, Any]] = {}  # name -> DescribeCluster
        self.eks: dict[str, dict[str, Any]] = {}  # name -> DescribeCluster (EKS)
        self.vpc_cidrs: list[str] = []
        self.networks: dict[str, VpcView] = {}  # first subnet id -> view
        self.file_systems: dict[str, dict[str, Any]] = {}
        self.buckets: dict[str, str] = {}  # bucket -> region
        self.objects: dict[str, dict[str, int]] = {}  # bucket -> key -> size
        self.calls: list[str] = []

    def _zones(self) -> dict[str, str]:
        return {z: z for z in self.zone_ids} | {i: z for z, i in self.zone_ids.items()}

    def snapshot(self, region: str, groups: list[Any], records: list[Any]) -> Snapshot:
        self.calls.append("snapshot")
        quotas = {t: cat.Quota(instance_type=t, quota_code="L-1", quota_name=f"{t} for cluster usage", limit=n,
                               in_use=self.in_use.get(t, 0), available=max(0, n - self.in_use.get(t, 0)))
                  for t, n in self.quota_limits.items()}
        taken = {r.name for r in records if r.region == region} | set(self.eks) | set(self.hyperpod)
        return Snapshot(region_ok=region == self.region, zones=self._zones(), zone_ids=dict(self.zone_ids),
                        offered={z: dict(self.types) for z in self.zone_ids}, quotas=quotas, training_plans={},
                        vpc_cidrs=list(self.vpc_cidrs), taken_names=taken)

    def hyperpod_clusters(self, region: str, max_age: float = 0.0) -> dict[str, dict[str, Any]]:
        self.calls.append("ListClusters")
        return {n: {"ClusterName": n, "ClusterArn": d["ClusterArn"], "ClusterStatus": d["ClusterStatus"]}
                for n, d in self.hyperpod.items()} if region == self.region else {}

    def eks_orchestrator(self, region: str, summary: dict[str, Any]) -> str | None:
        d = self.hyperpod.get(summary["ClusterName"]) or {}
        return ((d.get("Orchestrator") or {}).get("Eks") or {}).get("ClusterArn")

    def describe_hyperpod(self, region: str, name: str) -> dict[str, Any] | None:
        self.calls.append("DescribeCluster")
        return self.hyperpod.get(name)

    def describe_eks(self, region: str, name: str) -> dict[str, Any] | None:
        return self.eks.get(name)

    def addons(self, region: str, name: str) -> list[dict[str, Any]]:
        return []

    def access_entries(self, region: str, name: str) -> list[str]:
        return []

    def quotas(self, region: str) -> list[cat.Quota]:
        return list(self.snapshot(region, [], []).quotas.values())

    def network(self, region: str, subnet_ids: list[str]) -> VpcView:
        return self.networks[subnet_ids[0]]

    def file_system(self, region: str, file_system_id: str) -> dict[str, Any] | None:
        return self.file_systems.get(file_system_id)

    def bucket_region(self, region: str, bucket: str) -> str | None:
        return self.buckets.get(bucket)

    def list_objects(self, region: str, bucket: str, prefix: str, limit: int, token: str | None) -> dict[str, Any]:
        keys = sorted(k for k in self.objects.get(bucket, {}) if k.startswith(prefix))
        start = int(token or 0)
        page = keys[start:start + limit]
        more = start + limit < len(keys)
        return {"objects": [{"key": k, "size": self.objects[bucket][k], "last_modified": None} for k in page],
                "prefixes": [], "truncated": more, "next_token": str(start + limit) if more else None}

    def regions(self) -> list[str]:
        return [self.region]

    def zones(self, region: str) -> dict[str, str]:
        return self._zones()

    def offered(self, region: str, zone: str) -> dict[str, Any]:
        return dict(self.types) if zone in self.zone_ids else {}

    def add_hyperpod(self, name: str, groups: dict[str, int], *, status: str = "InService",
                     eks_arn: str | None = None, subnet: str = "subnet-c1") -> dict[str, Any]:
        n = next(self._ids)
        self.hyperpod[name] = {
            "ClusterName": name, "ClusterArn": f"arn:aws:sagemaker:{self.region}:123456789012:cluster/c{n:011d}",
            "ClusterStatus": status, "VpcConfig": {"Subnets": ["subnet-p1"]},
            "Orchestrator": {"Eks": {"ClusterArn": eks_arn or
                                     f"arn:aws:eks:{self.region}:123456789012:cluster/{name}"}},
            "InstanceGroups": [{"InstanceGroupName": g, "InstanceType": "ml.g5.8xlarge", "TargetCount": c,
                                "CurrentCount": c, "Status": "InService",
                                "OverrideVpcConfig": {"Subnets": [subnet]}} for g, c in groups.items()],
        }
        return self.hyperpod[name]


# Structural checks: mypy fails here when a fake drifts from its port.
_repo: OperationRepository = FakeOperationRepository()
_state: StateStore = FakeStateStore()
_pub: EventPublisher = FakePublisher()
_runner: WorkflowRunner = FakeRunner()
class FakeMlflowServers:
    """Tracking servers by region and name, as DescribeMlflowTrackingServer answers them."""

    def __init__(self) -> None:
        self.servers: dict[tuple[str, str], dict[str, Any]] = {}
        self.presigned: list[tuple[str, str]] = []
        self.runs: dict[tuple[str, str, str], dict[str, builtins.list[tuple[int, float]]]] = {}

    def add(self, region: str, name: str, status: str = "Created", active: bool = True) -> str:
        arn = f"arn:aws:sagemaker:{region}:123456789012:mlflow-tracking-server/{name}"
        self.servers[(region, name)] = {
            "TrackingServerArn": arn, "TrackingServerName": name, "TrackingServerStatus": status,
            "IsActive": "Active" if active else "Inactive", "MlflowVersion": "2.16.2", "TrackingServerSize": "Small",
            "TrackingServerUrl": f"https://t-{name}.{region}.experiments.sagemaker.aws"}
        return arn

    def list_servers(self, region: str, limit: int,
                     next_token: str | None) -> tuple[builtins.list[dict[str, Any]], str | None]:
        mine = sorted((v for (r, _), v in self.servers.items() if r == region), key=lambda v: v["TrackingServerName"])
        start = int(next_token or 0)
        return mine[start:start + limit], (str(start + limit) if start + limit < len(mine) else None)

    def describe(self, region: str, name: str) -> dict[str, Any] | None:
        return self.servers.get((region, name))

    def presigned_url(self, region: str, name: str) -> str:
        self.presigned.append((region, name))
        return f"https://t-{name}.{region}.experiments.sagemaker.aws/auth?authToken=fake"

    def metric_history(self, region: str, name: str, experiment: str,
                       run_name: str) -> tuple[str, dict[str, builtins.list[tuple[int, float]]]] | None:
        run = self.runs.get((region, name, experiment))
        return (run_name, run) if run is not None else None


_mlflow: MlflowServers = FakeMlflowServers()
_guard: IdempotencyGuard = FakeGuard()
_reader: ClusterReader = FakeClusterReader()


class World:
    """A whole control plane over fakes: the operation service, records, a fake AWS reader, a fake
    Step Functions. Use cases and the engine run against it in-process, in milliseconds."""

    def __init__(self) -> None:
        from functions.domain.kinds import KINDS
        from functions.domain.service import OperationService
        from functions.logic.deps import Deps

        self.repo = FakeOperationRepository()
        self.state = FakeStateStore()
        self.publisher = FakePublisher()
        self.runner = FakeRunner()
        self.guard = FakeGuard()
        self.reader = FakeClusterReader()
        self.service = OperationService(repo=self.repo, publisher=self.publisher, runner=self.runner,
                                        guard=self.guard, steps_for=dict(KINDS), sleep=lambda s: None)
        self.deps = Deps(operations=self.service, state=self.state, reader=self.reader)
