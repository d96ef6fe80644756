"""SageMaker managed MLflow (MlflowServers): ListMlflowTrackingServers, DescribeMlflowTrackingServer and
CreatePresignedMlflowTrackingServerUrl. Descriptions are cached briefly per container (the list shows each
server's URL and size, which only Describe answers); presigned links never are."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from functions.adapters import aws
from functions.adapters.catalog_aws import cached, clear_cache_key
from functions.domain import mlflow as mlf
from functions.domain.errors import InvalidInput

NOT_FOUND = ("ResourceNotFound", "ResourceNotFoundException")


@dataclass
class AwsMlflowServers:
    client: Callable[[str, str | None], Any] = aws.client

    def list_servers(self, region: str, limit: int,
                     next_token: str | None) -> tuple[list[dict[str, Any]], str | None]:
        args: dict[str, Any] = {"MaxResults": limit, "SortBy": "Name", "SortOrder": "Ascending"}
        if next_token:
            args["NextToken"] = next_token
        try:
            page = self.client("sagemaker", region).list_mlflow_tracking_servers(**args)
        except ClientError as err:
            if next_token and err.response.get("Error", {}).get("Code") == "ValidationException":
                raise InvalidInput.field(["query", "next_token"], "not a token from the previous page") from None
            raise
        out = []
        for s in page.get("TrackingServerSummaries") or []:
            desc = self._describe_cached(region, s["TrackingServerName"])
            out.append(desc or s)
        return out, page.get("NextToken")

    def _describe_cached(self, region: str, name: str) -> dict[str, Any] | None:
        return cached(("mlflow", region, name), lambda: self._describe(region, name), ttl=30.0)

    def _describe(self, region: str, name: str) -> dict[str, Any] | None:
        try:
            out: dict[str, Any] = self.client("sagemaker", region).describe_mlflow_tracking_server(
                TrackingServerName=name)
            return out
        except ClientError as err:
            if err.response.get("Error", {}).get("Code") in NOT_FOUND:
                return None
            raise

    def describe(self, region: str, name: str) -> dict[str, Any] | None:
        """Uncached: admission checks the status as it is now."""
        clear_cache_key(("mlflow", region, name))
        return self._describe(region, name)

    def presigned_url(self, region: str, name: str) -> str:
        out = self.client("sagemaker", region).create_presigned_mlflow_tracking_server_url(
            TrackingServerName=name, ExpiresInSeconds=mlf.PRESIGNED_URL_SECONDS,
            SessionExpirationDurationInSeconds=mlf.SESSION_SECONDS)
        return str(out["AuthorizedUrl"])
