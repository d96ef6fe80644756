"""The one event envelope PodStart publishes on its `podstart` bus."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from functions.domain.operations import now_iso

EVENT_SOURCE = "podstart"
ENVELOPE_VERSION = "1"
MAX_BATCH = 10  # PutEvents accepts at most 10 entries


class Metadata(BaseModel):
    model_config = ConfigDict(frozen=True)

    version: str = ENVELOPE_VERSION
    correlation_id: str
    created_at: str


class Envelope(BaseModel):
    model_config = ConfigDict(frozen=True)

    detail_type: str
    metadata: Metadata
    data: dict[str, Any]

    def detail(self) -> dict[str, Any]:
        return {"metadata": self.metadata.model_dump(mode="json"), "data": self.data}


def envelope(detail_type: str, data: dict[str, Any], correlation_id: str) -> Envelope:
    return Envelope(
        detail_type=detail_type,
        metadata=Metadata(correlation_id=correlation_id, created_at=now_iso()),
        data=data,
    )


def batches(items: list[Envelope], size: int = MAX_BATCH) -> list[list[Envelope]]:
    return [items[i : i + size] for i in range(0, len(items), size)]
