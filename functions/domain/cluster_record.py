"""PodStart's record of a cluster it created or imported (state table), next to live AWS state."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

RECORD_PK = "CLUSTER"


class ClusterStatus(StrEnum):
    CREATING = "CREATING"
    ACTIVE = "ACTIVE"
    FAILED = "FAILED"
    DELETING = "DELETING"
    DELETE_FAILED = "DELETE_FAILED"
    IMPORTING = "IMPORTING"


class GroupRecord(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    instance_type: str
    instance_count: int
    availability_zone: str
    capacity_type: str
    efa_only: bool = False
    training_plan_arn: str | None = None


class ClusterRecord(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    region: str
    status: ClusterStatus
    managed: bool = True  # False when imported: PodStart deletes only what it created
    eks_cluster_name: str
    hyperpod_cluster_name: str | None = None
    kubernetes_version: str | None = None
    node_recovery: str | None = None
    instance_groups: list[GroupRecord] = Field(default_factory=list)
    vpc_cidr: str | None = None
    created_by: str
    created_at: str
    operation_id: str | None = None  # the latest operation on this cluster
    idempotency_key: str | None = None
    storage: dict[str, Any] = Field(default_factory=dict)


def record_key(region: str, name: str) -> tuple[str, str]:
    return RECORD_PK, f"{region}#{name}"
