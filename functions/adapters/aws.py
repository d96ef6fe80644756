"""boto3 client factory: lazy, cached per (service, region), never built at import time.

The sandbox registers botocore event hooks here (call log, fault injection); every client the
control plane makes comes from this factory, so every AWS call passes through them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import lru_cache
from typing import Any

_hooks: list[tuple[str, Callable[..., Any]]] = []
_lock = threading.Lock()


def register_hook(event_name: str, handler: Callable[..., Any]) -> None:
    """Register a botocore event handler (e.g. 'before-call') on every client, present and future."""
    with _lock:
        _hooks.append((event_name, handler))
        client.cache_clear()


def clear_hooks() -> None:
    with _lock:
        _hooks.clear()
        client.cache_clear()


@lru_cache(maxsize=1)
def _session() -> Any:
    import boto3

    return boto3.session.Session()


def credentials() -> Any:
    """The function's credentials (its role), for requests signed by hand (SigV4 to an MLflow tracking server)."""
    return _session().get_credentials()


@lru_cache(maxsize=64)
def client(service: str, region: str | None = None, endpoint_url: str | None = None) -> Any:
    from botocore.config import Config

    cfg = Config(retries={"mode": "standard", "max_attempts": 3}, user_agent_extra="podstart/0.1")
    extra = {"endpoint_url": endpoint_url} if endpoint_url else {}
    c = _session().client(service, region_name=region, config=cfg, **extra)
    for event_name, handler in list(_hooks):
        c.meta.events.register(event_name, handler)
    return c
