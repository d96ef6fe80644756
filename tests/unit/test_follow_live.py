"""A read that records what HyperPod says (target and current counts) onto the cluster record: many readers at once
never turn the read into an error, while a change that must be made (a group added) still says it was not."""

from __future__ import annotations

from typing import Any

import pytest

from functions.domain.clusters.record import ClusterRecord, ClusterRecords, ClusterStatus, GroupRecord, RecordContended
from functions.logic.clusters.views import follow_live
from functions.logic.deps import Deps
from tests.fakes import FakeStateStore


class BusyStore(FakeStateStore):
    """Another writer wins every conditional write (a hundred requests on one record at once)."""

    def put_rev(self, pk: str, sk: str, body: dict[str, Any], rev: int) -> bool:
        return False


def recorded(state: FakeStateStore) -> ClusterRecord:
    group = GroupRecord(name="gpu", instance_type="ml.g5.8xlarge", instance_count=1,
                        availability_zone="us-west-2a", capacity_type="on-demand")
    rec = ClusterRecord(name="busy", region="us-west-2", status=ClusterStatus.ACTIVE, eks_cluster_name="busy",
                        created_by="t", created_at="2026-01-01T00:00:00Z", instance_groups=[group])
    ClusterRecords(state).save(rec)
    return rec


HYPERPOD = {"ClusterStatus": "InService",
            "InstanceGroups": [{"InstanceGroupName": "gpu", "TargetCount": 2, "CurrentCount": 1,
                                "Status": "Updating"}]}


def test_a_read_under_contention_answers_what_hyperpod_said_without_an_error() -> None:
    state = BusyStore()
    rec = recorded(state)
    deps = Deps(operations=None, state=state, reader=None)  # type: ignore[arg-type]
    seen = follow_live(deps, rec, HYPERPOD, "2026-01-01T00:01:00Z")
    g = seen.instance_groups[0]
    assert (g.instance_count, g.current_count, g.status, seen.hyperpod_status) == (2, 1, "Updating", "InService")
    with pytest.raises(RecordContended):  # a change that must land still says it did not
        deps.records.update("us-west-2", "busy", hyperpod_status="Deleting")


def test_without_contention_the_read_records_what_it_saw() -> None:
    state = FakeStateStore()
    rec = recorded(state)
    follow_live(Deps(operations=None, state=state, reader=None), rec, HYPERPOD,  # type: ignore[arg-type]
                "2026-01-01T00:01:00Z")
    stored = ClusterRecords(state).load("us-west-2", "busy")
    assert stored is not None and stored.instance_groups[0].instance_count == 2
    assert stored.instance_groups[0].counts_as_of == "2026-01-01T00:01:00Z"
