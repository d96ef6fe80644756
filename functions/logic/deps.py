"""What the use cases need, as ports."""

from __future__ import annotations

from dataclasses import dataclass

from functions.domain.cluster_record import ClusterRecords
from functions.domain.ports import ClusterReader, NodeReader, StateStore
from functions.domain.service import OperationService


@dataclass
class Deps:
    operations: OperationService
    state: StateStore
    reader: ClusterReader
    nodes: NodeReader | None = None  # the API's node reads (None where a process reads no nodes)

    @property
    def records(self) -> ClusterRecords:
        return ClusterRecords(self.state)
