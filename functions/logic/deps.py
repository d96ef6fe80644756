"""What the use cases need, as ports."""

from __future__ import annotations

from dataclasses import dataclass

from functions.domain.cluster_record import ClusterRecords
from functions.domain.ports import ClusterReader, KubeAccess, StateStore
from functions.domain.service import OperationService


@dataclass
class Deps:
    operations: OperationService
    state: StateStore
    reader: ClusterReader
    kube: KubeAccess | None = None  # the API's Kubernetes access (jobs, pods, logs, secrets)

    @property
    def records(self) -> ClusterRecords:
        return ClusterRecords(self.state)
