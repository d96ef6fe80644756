"""Typed errors, mapped once per edge: problem+json at HTTP, error names for Step Functions, isError at MCP.

Nothing matches on message text: the class says what happened and whether a retry can help.
"""

from __future__ import annotations

from typing import Any

PROBLEM_BASE = "https://podstart.dev/problems/"


class Problem(Exception):
    """An error a client caused or must know about; rendered as RFC 9457 problem+json."""

    status = 400
    title = "Bad request"
    slug = "bad-request"

    def __init__(self, detail: str, *, errors: list[dict[str, Any]] | None = None, **extra: Any) -> None:
        super().__init__(detail)
        self.detail = detail
        self.errors = errors or []
        self.extra = extra

    def to_problem(self, instance: str | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {
            "type": PROBLEM_BASE + self.slug,
            "title": self.title,
            "status": self.status,
            "detail": self.detail,
        }
        if instance:
            body["instance"] = instance
        if self.errors:
            body["errors"] = self.errors
        body.update(self.extra)
        return body


class InvalidInput(Problem):
    status = 422
    title = "Invalid request"
    slug = "validation"

    @classmethod
    def of(cls, errors: list[dict[str, Any]]) -> InvalidInput:
        """One problem listing every field error: detail 'loc: msg; loc: msg'."""
        detail = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in errors)
        return cls(detail, errors=errors)

    @classmethod
    def field(cls, loc: list[str | int] | tuple[str | int, ...], msg: str) -> InvalidInput:
        return cls(f"{'.'.join(str(p) for p in loc)}: {msg}", errors=[{"loc": list(loc), "msg": msg}])


class BadRequest(Problem):
    """The request cannot be read at all (a body that is not JSON, a page token this API did not issue): 400.

    Distinct from InvalidInput (422), which is well-formed input that breaks a rule.
    """

    status = 400
    title = "Bad request"
    slug = "bad-request"

    @classmethod
    def field(cls, loc: list[str | int] | tuple[str | int, ...], msg: str) -> BadRequest:
        return cls(f"{'.'.join(str(p) for p in loc)}: {msg}", errors=[{"loc": list(loc), "msg": msg}])


class Unauthorized(Problem):
    status = 401
    title = "Unauthorized"
    slug = "unauthorized"


class Forbidden(Problem):
    status = 403
    title = "Forbidden"
    slug = "forbidden"


class NotFound(Problem):
    status = 404
    title = "Not found"
    slug = "not-found"


class Conflict(Problem):
    status = 409
    title = "Conflict"
    slug = "conflict"


class PayloadTooLarge(Problem):
    status = 413
    title = "Payload too large"
    slug = "payload-too-large"


class UnsupportedMediaType(Problem):
    status = 415
    title = "Unsupported media type"
    slug = "unsupported-media-type"


class StepError(Exception):
    """Raised by a workflow step. The class name is what Step Functions Retry/Catch match on."""

    retryable = False

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class TransientStepError(StepError):
    """Throttling, 5xx, eventual consistency: the state machine retries it with backoff."""

    retryable = True


class PermanentStepError(StepError):
    """Bad state or a refused request: the operation fails at this step; a user may retry it later."""


class OperationCancelled(StepError):
    """The operation was cancelled while its workflow ran."""


class ClusterApiUnavailable(Exception):
    """A cluster's Kubernetes API did not answer or refused PodStart (`status`: its HTTP answer, if any). Not the
    caller's fault: the REST edge answers 502 with what to do (functions.api.handler)."""

    status: int | None = None
