"""Bucket listings for the API (ObjectLister): ListObjectsV2, one bounded page per call."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from functions.adapters import aws


@dataclass
class AwsObjectLister:
    client: Callable[[str, str | None], Any] = aws.client

    def list_objects(self, bucket: str, prefix: str, start_after: str | None,
                     max_keys: int) -> tuple[list[dict[str, Any]], bool]:
        params: dict[str, Any] = {"Bucket": bucket, "Prefix": prefix, "MaxKeys": max_keys}
        if start_after:
            params["StartAfter"] = start_after
        out = self.client("s3", None).list_objects_v2(**params)
        items = [{"key": o["Key"], "size": int(o.get("Size") or 0),
                  "last_modified": o["LastModified"].isoformat() if o.get("LastModified") else None}
                 for o in out.get("Contents") or []]
        return items, bool(out.get("IsTruncated"))

    def read_small(self, bucket: str, key: str, max_bytes: int) -> bytes | None:
        from botocore.exceptions import ClientError

        try:
            out = self.client("s3", None).get_object(Bucket=bucket, Key=key)
        except ClientError as err:
            if err.response.get("Error", {}).get("Code") in ("NoSuchKey", "404", "NotFound"):
                return None
            raise
        return bytes(out["Body"].read(max_bytes))
