"""SageMaker managed MLflow (MlflowServers): ListMlflowTrackingServers, DescribeMlflowTrackingServer and
CreatePresignedMlflowTrackingServerUrl. Descriptions are cached briefly per container (the list shows each
server's URL and size, which only Describe answers); presigned links never are.

A job's metrics are read from its tracking server's MLflow REST API (`/api/2.0/mlflow/...` at TrackingServerUrl),
signed with SigV4 for the `sagemaker-mlflow` service, read-only (SearchExperiments, SearchRuns, GetMetricHistory).
The sandbox answers these requests itself (`register_transport`)."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from functions.adapters import aws
from functions.adapters.catalog_aws import cached, clear_cache_key
from functions.domain.errors import InvalidInput
from functions.domain.training import mlflow as mlf

NOT_FOUND = ("ResourceNotFound", "ResourceNotFoundException")
REST_TIMEOUT_S = 10
MAX_HISTORY = 1000

# (method, url, json body or None) -> (HTTP status, JSON answer): how MLflow REST requests are sent. Default: SigV4
# over HTTPS; the sandbox registers one that answers from its simulated tracking servers.
Transport = Callable[[str, str, dict[str, Any] | None], tuple[int, dict[str, Any]]]
_transport: Transport | None = None


def register_transport(fn: Transport | None) -> None:
    global _transport
    _transport = fn


def _signed(method: str, url: str, body: dict[str, Any] | None) -> tuple[int, dict[str, Any]]:
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest

    region = urllib.parse.urlsplit(url).hostname.split(".")[1]  # type: ignore[union-attr]  # t-x.<region>.experiments...
    data = json.dumps(body).encode() if body is not None else None
    req = AWSRequest(method=method, url=url, data=data, headers={"Content-Type": "application/json"} if data else {})
    SigV4Auth(aws.credentials(), "sagemaker-mlflow", region).add_auth(req)
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=data, headers=dict(req.headers.items()),
                                                           method=method), timeout=REST_TIMEOUT_S) as res:
            return res.status, json.loads(res.read() or b"{}")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"{}")


def rest(method: str, url: str, body: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
    return (_transport or _signed)(method, url, body)


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

    def metric_history(self, region: str, name: str, experiment: str,
                       run_name: str) -> tuple[str, dict[str, list[tuple[int, float]]]] | None:
        desc = self._describe_cached(region, name)
        base = str((desc or {}).get("TrackingServerUrl") or "").rstrip("/")
        if not base:
            return None
        api = f"{base}/api/2.0/mlflow"
        quoted = experiment.replace("'", "\\'")
        status, found = rest("POST", f"{api}/experiments/search", {"filter": f"name = '{quoted}'", "max_results": 1})
        exps = found.get("experiments") or [] if status == 200 else []
        if not exps:
            return None
        status, found = rest("POST", f"{api}/runs/search", {"experiment_ids": [exps[0]["experiment_id"]],
                                                           "max_results": 20,
                                                           "order_by": ["attributes.start_time DESC"]})
        runs = found.get("runs") or [] if status == 200 else []
        if not runs:
            return None
        run = next((r for r in runs if (r.get("info") or {}).get("run_name") == run_name), runs[0])
        info = run.get("info") or {}
        keys = sorted({m.get("key") for m in (run.get("data") or {}).get("metrics") or [] if m.get("key")})
        series: dict[str, list[tuple[int, float]]] = {}
        for key in keys:
            q = urllib.parse.urlencode({"run_id": info.get("run_id"), "metric_key": key, "max_results": MAX_HISTORY})
            status, hist = rest("GET", f"{api}/metrics/get-history?{q}")
            if status == 200:
                series[key] = sorted((int(m.get("step") or 0), float(m["value"]))
                                     for m in hist.get("metrics") or [] if "value" in m)
        return str(info.get("run_name") or run_name), series
