"""Logger, Tracer and Metrics, set up once for every function.

The Tracer is built on the first invocation, not at import: the X-Ray SDK costs ~100 ms to import
and patch, which would double each entry module's import time (see `make bench`). The first
invocation pays it once; warm invocations pay nothing.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.logging.formatter import LambdaPowertoolsFormatter

from functions.domain import redaction


class RedactingFormatter(LambdaPowertoolsFormatter):
    """Every log record passes PodStart's one redaction before it is written: a credential-looking value (an
    exception's message quoting a request, a key=value) or a key that names a secret is masked."""

    def serialize(self, log: Any) -> str:
        return super().serialize(redaction.redact(log, bound=False))


logger = Logger(logger_formatter=RedactingFormatter())  # service name from POWERTOOLS_SERVICE_NAME
metrics = Metrics(namespace="PodStart")


class LazyTracer:
    """Powertools Tracer, created when a traced handler first runs."""

    def __init__(self) -> None:
        self._tracer: Any = None

    def get(self) -> Any:
        if self._tracer is None:
            from aws_lambda_powertools import Tracer

            self._tracer = Tracer()
        return self._tracer

    def capture_lambda_handler(self, capture_response: bool = True) -> Callable[[Callable[..., Any]],
                                                                                 Callable[..., Any]]:
        def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
            traced: Callable[..., Any] | None = None

            @functools.wraps(fn)
            def handler(event: Any, context: Any) -> Any:
                nonlocal traced
                if traced is None:
                    traced = self.get().capture_lambda_handler(fn, capture_response=capture_response)
                return traced(event, context)

            return handler

        return decorate


tracer = LazyTracer()
