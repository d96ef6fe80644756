"""Make the Powertools REST resolver's per-request state thread-local, for the sandbox only.

In AWS a Lambda container serves one request at a time, so Powertools keeps the current event,
context and request context on the resolver (partly as class attributes). The sandbox serves many
requests at once from threads of one process (a long poll must not block other callers), so
without this two requests could read each other's event. Applied once, before serving.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

_state = threading.local()
_applied = False


class _PerThread:
    """A data descriptor whose value is per thread (shared by class and instance access)."""

    def __init__(self, name: str, default: Callable[[], Any] | None = None) -> None:
        self.name = name
        self.default = default

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        try:
            return getattr(_state, self.name)
        except AttributeError:
            if self.default is None:
                raise AttributeError(self.name) from None
            value = self.default()
            setattr(_state, self.name, value)
            return value

    def __set__(self, obj: Any, value: Any) -> None:
        setattr(_state, self.name, value)


def make_resolver_thread_safe() -> None:
    global _applied
    if _applied:
        return
    from aws_lambda_powertools.event_handler import api_gateway

    base = api_gateway.BaseRouter
    # Instance access (self.current_event) finds these in the class dict ...
    base.current_event = _PerThread("current_event")  # type: ignore[assignment]
    base.lambda_context = _PerThread("lambda_context")  # type: ignore[assignment]
    api_gateway.ApiGatewayResolver.context = _PerThread("context", dict)  # type: ignore[assignment]

    # ... and class-level writes (BaseRouter.current_event = ...) go through the metaclass.
    class _ThreadLocalRouterMeta(type(base)):  # type: ignore[misc]
        current_event = _PerThread("current_event")
        lambda_context = _PerThread("lambda_context")

    base.__class__ = _ThreadLocalRouterMeta  # type: ignore[method-assign]
    _applied = True
