"""What the use cases need, as ports."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from functions.domain.clusters.record import ClusterRecords
from functions.domain.ports import (
    ClusterKube,
    ClusterReader,
    FeatureReader,
    KubeConnector,
    MlflowServers,
    NodeReader,
    ObjectLister,
    PriceBook,
    StateStore,
)
from functions.domain.service import OperationService

if TYPE_CHECKING:
    from functions.domain.capacity.facts import CapacityFacts  # the advisor builds its facts; others never import them


@dataclass
class Deps:
    operations: OperationService
    state: StateStore
    reader: ClusterReader
    features: FeatureReader | None = None
    kube: KubeConnector = field(default=lambda eks, region: _no_kube(eks, region))
    prices: PriceBook | None = None
    nodes: NodeReader | None = None  # the API's node reads (None where a process reads no nodes)
    objects: ObjectLister | None = None  # bucket listings (the models list, a download's plan)
    mlflow: MlflowServers | None = None  # managed MLflow tracking servers (catalog, job admission, job links)
    capacity: CapacityFacts | None = None  # the capacity advisor's AWS facts (cached per region and fact)

    @property
    def records(self) -> ClusterRecords:
        return ClusterRecords(self.state)


def _no_kube(eks: str, region: str) -> ClusterKube:
    raise RuntimeError(f"no Kubernetes connector configured (cluster {eks} in {region})")
