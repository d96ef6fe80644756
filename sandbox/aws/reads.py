"""What a user's read calls get from the embedded AWS where moto has nothing to say.

- A read operation (List*, Describe*, Get*, Search*) moto does not implement answers as the service answers an
  account that has none of those resources, never a 500: a list with nothing in it (`aws sagemaker
  list-compute-quotas`, `aws fsx describe-data-repository-associations`, `aws service-quotas list-services`
  ...), or, when the call names a resource (a required identifier), the operation's own not-found error from
  the service model. PodStart's own calls never take this path: they are implemented, and a write moto lacks
  still fails loudly.
- New S3 buckets have what AWS gives every new bucket since 2023: default encryption (SSE-S3) and Block Public
  Access on, so `aws s3api get-bucket-encryption|get-public-access-block` answer as they do in an account.
"""

from __future__ import annotations

import functools
import re
from typing import Any

_READ = re.compile(r"^(list|describe|get|search)_")


@functools.cache
def _service_model(name: str) -> Any:
    import botocore.session

    return botocore.session.get_session().get_service_model(name)


def _empty(shape: Any) -> dict[str, Any]:
    """The members of an output shape that say "nothing": empty lists and maps (anything else is left out)."""
    out: dict[str, Any] = {}
    for name, member in getattr(shape, "members", {}).items():
        if member.type_name == "list":
            out[name] = []
        elif member.type_name == "map":
            out[name] = {}
    return out


def _not_found(operation: Any) -> str:
    """The operation's own not-found error (its HTTP status comes from the service model when serialized)."""
    for error in operation.error_shapes:
        if "NotFound" in error.name or error.name in ("NoSuchResourceException", "ResourceNotFound"):
            return str(error.name)
    return "ValidationException"


def _not_found_class() -> type[Exception]:
    from moto.core.exceptions import ServiceException

    class NotFoundError(ServiceException):
        """Defined here, not in a moto package: moto then takes the error's shape from the called service."""

    return NotFoundError


def _not_found_error(code: str, message: str) -> Exception:
    return _not_found_class()(code, message)


def answer(response: Any) -> Any:
    """The service's answer to an unimplemented read on `response` (a moto BaseResponse), or None."""
    from moto.core.responses import ActionResult

    action = response._get_action()
    if not action or not _READ.match(re.sub(r"(?<!^)([A-Z])", r"_\1", action).lower()):
        return None
    try:
        operation = _service_model(response.boto3_service_name).operation_model(action)
    except Exception:
        return None
    required = list(getattr(operation.input_shape, "required_members", []) or [])
    if required and not action.startswith(("List", "Search")):
        params = response._get_params() if hasattr(response, "_get_params") else {}
        named = next((str(params[r]) for r in required if params.get(r)), "the resource")
        err = _not_found_error(_not_found(operation), f"Resource Not Found: {named} does not exist.")
        return response.serialized(ActionResult(err))
    return response.serialized(ActionResult(_empty(operation.output_shape)))


def patch() -> None:
    from moto.core.responses import BaseResponse
    from moto.s3.models import FakeBucket, PublicAccessBlock

    original_call = BaseResponse.call_action
    if getattr(original_call, "_podstart_reads", False):
        return

    def call_action(self: Any) -> Any:
        try:
            return original_call(self)
        except NotImplementedError:
            served = answer(self)
            if served is None:
                raise
            status, headers, body = served
            return status, headers, body

    call_action._podstart_reads = True  # type: ignore[attr-defined]
    BaseResponse.call_action = call_action  # type: ignore[method-assign]

    original_init = FakeBucket.__init__

    def bucket_init(self: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        self.encryption = {"Rule": {"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"},
                                    "BucketKeyEnabled": "false"}}
        self.public_access_block = PublicAccessBlock(True, True, True, True)

    FakeBucket.__init__ = bucket_init  # type: ignore[method-assign]
