"""PodStart's record of a cluster it created or imported (state table), next to live AWS state.

The record is what PodStart knows between AWS calls: the request it ran, the last counts it saw (kept
current by the events projector and by every detail read), and the latest operation. Views show the
live state where they read it and the record's last-known values (with their time) where they don't.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from functions.domain.ports import StateStore

RECORD_PK = "CLUSTER"


class ClusterStatus(StrEnum):
    CREATING = "CREATING"
    ACTIVE = "ACTIVE"
    FAILED = "FAILED"
    DELETING = "DELETING"
    DELETE_FAILED = "DELETE_FAILED"
    IMPORTING = "IMPORTING"


Origin = Literal["created", "imported"]


class GroupRecord(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    instance_type: str
    instance_count: int  # the target count PodStart last asked for or saw
    availability_zone: str
    availability_zone_id: str | None = None
    capacity_type: str
    efa_only: bool = False
    training_plan_arn: str | None = None
    current_count: int | None = None  # last observed running instances (None: never observed)
    status: str | None = None  # last observed HyperPod group status
    counts_as_of: str | None = None  # when current_count/status were observed


class ClusterRecord(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    region: str
    status: ClusterStatus
    origin: Origin = "created"  # imported: PodStart deletes only what it added (its access entry)
    eks_cluster_name: str
    hyperpod_cluster_name: str | None = None
    hyperpod_status: str | None = None  # last observed HyperPod cluster status
    kubernetes_version: str | None = None
    node_recovery: str | None = None
    instance_groups: list[GroupRecord] = Field(default_factory=list)
    vpc_cidr: str | None = None
    created_by: str
    created_at: str
    operation_id: str | None = None  # the latest operation on this cluster
    idempotency_key: str | None = None
    storage: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _legacy_managed(cls, data: Any) -> Any:
        """Records written before `origin` existed said `managed: false` for imported clusters."""
        if isinstance(data, dict) and "origin" not in data and "managed" in data:
            data = {**data, "origin": "created" if data["managed"] else "imported"}
        return data

    @property
    def created_by_podstart(self) -> bool:
        return self.origin == "created"

    def group(self, name: str) -> GroupRecord | None:
        return next((g for g in self.instance_groups if g.name == name), None)


def record_key(region: str, name: str) -> tuple[str, str]:
    return RECORD_PK, f"{region}#{name}"


MUTATE_TRIES = 10


class RecordContended(RuntimeError):
    """Others wrote the record each time it was read (MUTATE_TRIES times): the change was not made."""


class ClusterRecords:
    """Cluster records over any StateStore (DynamoDB in AWS, a fake in tests)."""

    def __init__(self, state: StateStore) -> None:
        self.state = state

    def load(self, region: str, name: str) -> ClusterRecord | None:
        body = self.state.get(*record_key(region, name))
        return ClusterRecord.model_validate(body) if body else None

    def save(self, record: ClusterRecord) -> None:
        self.state.put(*record_key(record.region, record.name), record.model_dump(mode="json"))

    def create(self, record: ClusterRecord) -> bool:
        """Claim the (region, name); False when a record already holds it."""
        return self.state.put_new(*record_key(record.region, record.name), record.model_dump(mode="json"))

    def delete(self, region: str, name: str) -> None:
        self.state.delete(*record_key(region, name))

    def all(self) -> list[ClusterRecord]:
        return sorted((ClusterRecord.model_validate(b) for b in self.state.query(RECORD_PK)),
                      key=lambda r: (r.name, r.region))

    def named(self, name: str) -> list[ClusterRecord]:
        return [r for r in self.all() if r.name == name]

    def mutate(self, region: str, name: str,
               change: Callable[[ClusterRecord], ClusterRecord | None]) -> ClusterRecord | None:
        """Read, change, write back only if nobody wrote in between, else again: two writers (a group added while
        the event projector or a page records HyperPod's counts) never lose each other's change. `change` answers
        the new record, or None to leave it. The record as it now is (None: there is none)."""
        key = record_key(region, name)
        for _ in range(MUTATE_TRIES):
            body, rev = self.state.get_rev(*key)
            if body is None:
                return None
            rec = ClusterRecord.model_validate(body)
            new = change(rec)
            if new is None or new == rec:
                return rec
            if self.state.put_rev(*key, new.model_dump(mode="json"), rev):
                return new
        raise RecordContended(f"cluster record {region}/{name} kept changing; try again")

    def update(self, region: str, name: str, **changes: Any) -> ClusterRecord | None:
        return self.mutate(region, name, lambda rec: rec.model_copy(update=changes))

    def set_status(self, region: str, name: str, status: ClusterStatus, **changes: Any) -> None:
        self.update(region, name, status=status, **changes)
