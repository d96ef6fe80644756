"""moto's DynamoDB, made atomic where DynamoDB is.

In DynamoDB a conditional write is atomic: two writers that both read version 3 and write "version = 3" cannot
both succeed. moto checks the condition, then writes, with nothing between two requests' threads (the sandbox's
server serves each request on its own thread), so both could: a limit enforced by optimistic concurrency (a user's
live follows, an operation's revision) was passed under a burst. Every single-item write and every transaction
here runs under one lock, as the service's own item-level atomicity would make it look to PodStart.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

WRITES = ("put_item", "update_item", "delete_item", "transact_write_items")
_LOCK = threading.RLock()  # re-entrant: a transaction's writes go through the same methods


def patch() -> None:
    from moto.dynamodb.models import DynamoDBBackend

    for name in WRITES:
        method = getattr(DynamoDBBackend, name)
        if not getattr(method, "_podstart", False):
            setattr(DynamoDBBackend, name, _atomic(method))


def _atomic(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def write(*args: Any, **kwargs: Any) -> Any:
        with _LOCK:
            return method(*args, **kwargs)

    write._podstart = True  # type: ignore[attr-defined]
    return write
