"""S3 extension: a ListObjectsV2 continuation token S3 did not issue is refused as S3 refuses it (400
InvalidArgument "The continuation token provided is incorrect"); moto 5 looks the token up, gets nothing, and
fails with a 500 comparing a key with None."""

from __future__ import annotations

from typing import Any


def patch() -> None:
    from moto.s3.exceptions import InvalidContinuationToken
    from moto.s3.models import S3Backend

    original = S3Backend.list_objects_v2
    if getattr(original, "_podstart", False):
        return

    def list_objects_v2(self: Any, bucket: Any, prefix: Any, delimiter: Any, continuation_token: str | None,
                        start_after: Any, max_keys: int) -> Any:
        if continuation_token and continuation_token not in self._pagination_tokens:
            raise InvalidContinuationToken()
        return original(self, bucket, prefix, delimiter, continuation_token, start_after, max_keys)

    list_objects_v2._podstart = True  # type: ignore[attr-defined]
    S3Backend.list_objects_v2 = list_objects_v2  # type: ignore[method-assign]
