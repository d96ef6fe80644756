"""Reading and writing cluster records in the state table."""

from __future__ import annotations

from typing import Any

from functions.domain.cluster_record import RECORD_PK, ClusterRecord, ClusterStatus, record_key


def load(state: Any, region: str, name: str) -> ClusterRecord | None:
    body = state.get(*record_key(region, name))
    return ClusterRecord.model_validate(body) if body else None


def save(state: Any, record: ClusterRecord) -> None:
    state.put(*record_key(record.region, record.name), record.model_dump(mode="json"))


def all_records(state: Any) -> list[ClusterRecord]:
    return sorted((ClusterRecord.model_validate(b) for b in state.query(RECORD_PK)),
                  key=lambda r: (r.name, r.region))


def set_status(state: Any, region: str, name: str, status: ClusterStatus, **changes: Any) -> None:
    rec = load(state, region, name)
    if rec is not None:
        save(state, rec.model_copy(update={"status": status, **changes}))
