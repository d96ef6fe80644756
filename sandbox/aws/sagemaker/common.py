"""What every HyperPod concern shares: SageMaker's error shapes, paging and time parameters."""

from __future__ import annotations

import datetime as dt
from typing import Any


def errors() -> Any:
    from moto.sagemaker import exceptions

    return exceptions


def validation(message: str) -> Exception:
    return errors().ValidationError(message=message)


def not_found(message: str) -> Exception:
    return errors().ResourceNotFound(message=message)


def limit_exceeded(message: str) -> Exception:
    class ResourceLimitExceeded(errors().SagemakerClientError):  # type: ignore[name-defined,misc]
        code = "ResourceLimitExceeded"

    return ResourceLimitExceeded(message)  # type: ignore[no-any-return]


def conflict(message: str) -> Exception:
    return errors().ConflictException(message)  # type: ignore[no-any-return]


def paginate(items: list[Any], max_results: Any, next_token: Any) -> tuple[list[Any], str | None]:
    if next_token and not str(next_token).isdigit():
        raise validation("Invalid pagination token")  # as SageMaker answers a token it did not issue
    start = int(next_token or 0)
    end = start + int(max_results or 100)
    return items[start:end], (str(end) if end < len(items) else None)


def ts(value: Any) -> float:
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, dt.datetime):
        return value.timestamp()
    return dt.datetime.fromisoformat(str(value)).timestamp()
