"""One contract, two implementations: the DynamoDB adapters (on moto, in-process) and the in-memory
fakes the functional tests use. A fake that passes here may stand in for the real thing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from functions.adapters import aws
from functions.adapters.store import DynamoOperationRepository, DynamoStateStore
from functions.domain import operations as ops
from functions.domain.operations import Actor, OperationStatus, Target
from functions.domain.ports import LockHeld, OperationRepository, StaleWrite, StateStore
from sandbox.resources import TABLES
from tests.fakes import FakeOperationRepository, FakeStateStore
from tests.functional.moto_env import mocked_aws

REGION = "us-west-2"


@pytest.fixture(params=["fake", "dynamodb"])
def stores(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, Any]]:
    if request.param == "fake":
        yield FakeOperationRepository(), FakeStateStore()
        return
    with mocked_aws(monkeypatch):
        ddb = aws.client("dynamodb", REGION)
        for logical, spec in TABLES.items():
            ddb.create_table(TableName=f"t-{logical}", BillingMode="PAY_PER_REQUEST",
                             **{k: v for k, v in spec.items() if k != "ttl"})
        yield DynamoOperationRepository("t-operations", REGION), DynamoStateStore("t-state", REGION)


def op(op_id: str, cluster: str = "demo", created: str = "2026-12-01T10:00:00.000Z") -> ops.Operation:
    return ops.new_operation(op_id=op_id, kind="cluster.create", target=Target(cluster=cluster, region=REGION),
                             steps=("a", "b"), request={"n": 1}, principal=Actor(sub="u", name="u"),
                             idempotency_key=None, now=created)


def test_create_takes_the_target_lock_and_a_second_create_names_the_holder(stores: tuple[Any, Any]) -> None:
    repo: OperationRepository = stores[0]
    first = op("op-000001")
    repo.create(first)
    assert repo.get("op-000001") == first and repo.holder(first.target) == "op-000001"
    with pytest.raises(LockHeld) as held:
        repo.create(op("op-000002"))
    assert held.value.holder_id == "op-000001" and repo.get("op-000002") is None
    repo.create(op("op-000003", cluster="other"))  # another target is free


def test_save_is_conditional_on_the_revision_read(stores: tuple[Any, Any]) -> None:
    repo: OperationRepository = stores[0]
    first = op("op-000001")
    repo.create(first)
    saved = repo.save(first, ops.advance(first, ops.step_started(first, "a")))
    assert repo.get(first.id) == saved and saved.revision == 1 and saved.version == 1
    with pytest.raises(StaleWrite):
        repo.save(first, ops.advance(first, ops.step_started(first, "b")))  # written from a stale read
    assert repo.get(first.id) == saved


def test_release_acquire_and_break_lock_only_touch_the_holders_lock(stores: tuple[Any, Any]) -> None:
    repo: OperationRepository = stores[0]
    a, b = op("op-00000a"), op("op-00000b")
    repo.create(a)
    repo.break_lock(a.target, "op-someone-else")
    assert repo.holder(a.target) == a.id
    with pytest.raises(LockHeld):
        repo.acquire(b)
    repo.acquire(a)  # the holder may take it again (a retry)
    repo.release(a)
    assert repo.holder(a.target) is None
    repo.acquire(b)
    assert repo.holder(b.target) == b.id


def test_list_is_newest_first_per_cluster_filtered_and_paged(stores: tuple[Any, Any]) -> None:
    repo: OperationRepository = stores[0]
    for i in range(3):
        o = op(f"op-00000{i}", created=f"2026-12-01T10:00:0{i}.000Z")
        repo.create(o)
        repo.release(o)
    repo.create(op("op-0000zz", cluster="other"))
    page, token = repo.list(cluster="demo", status=None, limit=2, token=None)
    assert [o.id for o in page] == ["op-000002", "op-000001"] and token
    rest, token2 = repo.list(cluster="demo", status=None, limit=2, token=token)
    assert [o.id for o in rest] == ["op-000000"] and token2 is None
    failed = repo.get("op-000001")
    assert failed is not None
    repo.save(failed, ops.advance(failed, ops.fail(failed, ops.ErrorInfo(code="X", message="x", retryable=True))))
    only, _ = repo.list(cluster=None, status=OperationStatus.FAILED, limit=10, token=None)
    assert [o.id for o in only] == ["op-000001"]


def test_pending_older_than_finds_only_old_pending_operations(stores: tuple[Any, Any]) -> None:
    repo: OperationRepository = stores[0]
    old = op("op-0000old", cluster="c1", created="2026-12-01T10:00:00.000Z")
    new = op("op-0000new", cluster="c2", created="2026-12-01T10:09:00.000Z")
    running = op("op-0000run", cluster="c3", created="2026-12-01T10:00:00.000Z")
    for o in (old, new, running):
        repo.create(o)
    repo.save(running, ops.advance(running, ops.begin(running, "arn:x")))
    now = 1796119800.0  # 2026-12-01T10:10:00Z
    assert [o.id for o in repo.pending_older_than(300, now)] == ["op-0000old"]


def test_state_store_reads_writes_claims_and_queries_in_key_order(stores: tuple[Any, Any]) -> None:
    state: StateStore = stores[1]
    assert state.get("CLUSTER", "us-west-2#a") is None
    assert state.put_new("CLUSTER", "us-west-2#b", {"name": "b"}) is True
    assert state.put_new("CLUSTER", "us-west-2#b", {"name": "other"}) is False
    state.put("CLUSTER", "us-west-2#a", {"name": "a"})
    state.put("USER#u", "preferences", {"x": 1})
    assert [b["name"] for b in state.query("CLUSTER")] == ["a", "b"]
    state.delete("CLUSTER", "us-west-2#a")
    assert state.get("CLUSTER", "us-west-2#a") is None and state.get("CLUSTER", "us-west-2#b") == {"name": "b"}


def test_a_versioned_write_fails_when_someone_wrote_in_between(stores: tuple[Any, Any]) -> None:
    state: StateStore = stores[1]
    assert state.get_rev("CLUSTER", "us-west-2#v") == (None, 0)
    assert state.put_rev("CLUSTER", "us-west-2#v", {"n": 1}, 0) is True
    body, rev = state.get_rev("CLUSTER", "us-west-2#v")
    assert (body, rev) == ({"n": 1}, 1)
    assert state.put_rev("CLUSTER", "us-west-2#v", {"n": 2}, 0) is False  # read before the first write: stale
    assert state.put_rev("CLUSTER", "us-west-2#v", {"n": 2}, rev) is True
    state.put("CLUSTER", "us-west-2#v", {"n": 3})  # a plain write leaves no revision
    assert state.put_rev("CLUSTER", "us-west-2#v", {"n": 4}, rev + 1) is False
    assert state.get_rev("CLUSTER", "us-west-2#v") == ({"n": 3}, 0)


def test_two_writers_of_a_cluster_record_never_lose_each_others_change(stores: tuple[Any, Any]) -> None:
    from functions.domain.clusters.record import ClusterRecord, ClusterRecords, ClusterStatus, GroupRecord

    records = ClusterRecords(stores[1])
    records.save(ClusterRecord(name="race", region="us-west-2", status=ClusterStatus.ACTIVE, eks_cluster_name="race",
                               created_by="t", created_at="2026-01-01T00:00:00Z"))
    group = GroupRecord(name="spare", instance_type="ml.c5.large", instance_count=1, availability_zone="us-west-2a",
                        capacity_type="on-demand")

    def slow_follow(rec: ClusterRecord) -> ClusterRecord:
        # while this writer holds its copy, another adds a group
        current = records.load("us-west-2", "race")
        if current is not None and not any(g.name == "spare" for g in current.instance_groups):
            records.mutate("us-west-2", "race", lambda r: r.model_copy(update={"instance_groups": [group]}))
        return rec.model_copy(update={"hyperpod_status": "InService"})

    out = records.mutate("us-west-2", "race", slow_follow)
    assert out is not None and out.hyperpod_status == "InService" and [g.name for g in out.instance_groups] == ["spare"]
