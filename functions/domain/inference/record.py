"""PodStart's record of an inference endpoint and of a model pool (state table).

The record names what the endpoint is served by (its namespace, Service and port): invoke resolves
its target from here and nowhere else. Live status comes from the cluster on every read.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from functions.domain.ports import StateStore

ENDPOINT_PK = "ENDPOINT"
POOL_PK = "POOL"


class EndpointStatus(StrEnum):
    DEPLOYING = "DEPLOYING"
    READY = "READY"
    FAILED = "FAILED"
    UPDATING = "UPDATING"
    DELETING = "DELETING"


class EndpointRecord(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    cluster: str
    region: str
    eks_cluster_name: str
    mode: str
    namespace: str = "default"
    kind: str  # the object whose status is the endpoint's: InferenceEndpointConfig, JumpStartModel, Deployment
    service_name: str
    service_port: int = 80
    model: str  # the served model name
    request: dict[str, Any] = Field(default_factory=dict)
    objects: list[dict[str, str]] = Field(default_factory=list)
    status: EndpointStatus = EndpointStatus.DEPLOYING
    message: str | None = None
    operation_id: str | None = None
    created_by: str
    created_at: str


class PoolRecord(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    cluster: str
    region: str
    eks_cluster_name: str
    engine: str
    image: str
    instance_type: str
    gpus_per_worker: int
    workers: int
    operation_id: str | None = None
    created_by: str
    created_at: str


def _sk(region: str, cluster: str, name: str) -> str:
    return f"{region}#{cluster}#{name}"


class EndpointRecords:
    def __init__(self, state: StateStore) -> None:
        self.state = state

    def load(self, region: str, cluster: str, name: str) -> EndpointRecord | None:
        body = self.state.get(ENDPOINT_PK, _sk(region, cluster, name))
        return EndpointRecord.model_validate(body) if body else None

    def create(self, rec: EndpointRecord) -> bool:
        return self.state.put_new(ENDPOINT_PK, _sk(rec.region, rec.cluster, rec.name), rec.model_dump(mode="json"))

    def save(self, rec: EndpointRecord) -> None:
        self.state.put(ENDPOINT_PK, _sk(rec.region, rec.cluster, rec.name), rec.model_dump(mode="json"))

    def delete(self, region: str, cluster: str, name: str) -> None:
        self.state.delete(ENDPOINT_PK, _sk(region, cluster, name))

    def of_cluster(self, region: str, cluster: str) -> list[EndpointRecord]:
        return sorted((EndpointRecord.model_validate(b) for b in self.state.query(ENDPOINT_PK)
                       if b.get("region") == region and b.get("cluster") == cluster), key=lambda r: r.name)

    def update(self, region: str, cluster: str, name: str, **changes: Any) -> EndpointRecord | None:
        rec = self.load(region, cluster, name)
        if rec is None:
            return None
        new = rec.model_copy(update=changes)
        self.save(new)
        return new


class PoolRecords:
    def __init__(self, state: StateStore) -> None:
        self.state = state

    def load(self, region: str, cluster: str, name: str) -> PoolRecord | None:
        body = self.state.get(POOL_PK, _sk(region, cluster, name))
        return PoolRecord.model_validate(body) if body else None

    def create(self, rec: PoolRecord) -> bool:
        return self.state.put_new(POOL_PK, _sk(rec.region, rec.cluster, rec.name), rec.model_dump(mode="json"))

    def delete(self, region: str, cluster: str, name: str) -> None:
        self.state.delete(POOL_PK, _sk(region, cluster, name))

    def of_cluster(self, region: str, cluster: str) -> list[PoolRecord]:
        return sorted((PoolRecord.model_validate(b) for b in self.state.query(POOL_PK)
                       if b.get("region") == region and b.get("cluster") == cluster), key=lambda r: r.name)
