"""EventBridge publisher for the `podstart` bus: batches of at most 10, failed entries counted."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from aws_lambda_powertools import Logger

from functions.adapters import aws
from functions.domain.events import EVENT_SOURCE, Envelope, batches

logger = Logger(child=True)


@dataclass
class EventBridgePublisher:
    bus_name: str
    region: str | None = None

    def publish(self, envelopes: list[Envelope]) -> int:
        failed = 0
        client: Any = aws.client("events", self.region)
        for batch in batches(envelopes):
            entries = [
                {"Source": EVENT_SOURCE, "DetailType": e.detail_type, "EventBusName": self.bus_name,
                 "Detail": json.dumps(e.detail(), default=str)}
                for e in batch
            ]
            try:
                resp = client.put_events(Entries=entries)
                failed += int(resp.get("FailedEntryCount", 0))
            except Exception:
                logger.exception("put_events failed", entries=len(entries))
                failed += len(entries)
        if failed:
            logger.warning("events not published", failed=failed)
        return failed
