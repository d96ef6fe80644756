"""SageMaker managed MLflow, simulated (moto 5.2 has none of it): tracking servers per region, the runs and
metrics the simulated training jobs log, and presigned links to a small page the sandbox serves.

Operations: CreateMlflowTrackingServer (Creating -> Created after `CREATE_S`, time-scaled), Describe, List (paged,
filters by status and version), Start/Stop (Stopping -> Stopped, Starting -> Started), Delete, and
CreatePresignedMlflowTrackingServerUrl: `AuthorizedUrl` is `<sandbox>/sandbox/mlflow/<region>/<server>/?authToken=`
(valid `ExpiresInSeconds`, real seconds), a page listing the server's experiments, runs and their metrics.
`seed_tracking_servers(region)` makes one server per seeded region, already Created: `podstart-demo`.

The training operator (`sandbox/kube/operators/training.py`) records a job's metrics here when its pods have
`MLFLOW_TRACKING_URI` (a tracking server ARN) and `MLFLOW_EXPERIMENT_NAME`: `log_metrics`, one run per job.
"""

from __future__ import annotations

import datetime as dt
import html
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from sandbox.aws.runtime import ACCOUNT_ID, RUNTIME, now
from sandbox.aws.sagemaker.common import conflict, not_found, paginate, validation

CREATE_S = 25 * 60.0  # a managed tracking server takes ~25 minutes to create
STOP_S = START_S = 5 * 60.0
SEED_NAME = "podstart-demo"
MLFLOW_VERSION = "2.16.2"
SIZES = ("Small", "Medium", "Large")


@dataclass
class Run:
    name: str
    started: float = field(default_factory=time.time)
    metrics: dict[str, list[tuple[int, float, float]]] = field(default_factory=dict)  # key -> (step, value, time)


@dataclass
class TrackingServer:
    region: str
    name: str
    spec: dict[str, Any]
    status: str = "Creating"
    created: dt.datetime = field(default_factory=now)
    modified: dt.datetime = field(default_factory=now)
    url_id: str = field(default_factory=lambda: "t-" + secrets.token_hex(6))
    experiments: dict[str, dict[str, Run]] = field(default_factory=dict)  # experiment -> run name -> run

    @property
    def arn(self) -> str:
        return f"arn:aws:sagemaker:{self.region}:{ACCOUNT_ID}:mlflow-tracking-server/{self.name}"

    def active(self) -> str:
        return "Inactive" if self.status in ("Creating", "CreateFailed", "Stopped", "Stopping", "Starting",
                                             "Deleting") else "Active"

    def describe(self) -> dict[str, Any]:
        return {"TrackingServerArn": self.arn, "TrackingServerName": self.name,
                "ArtifactStoreUri": self.spec.get("ArtifactStoreUri", ""),
                "TrackingServerSize": self.spec.get("TrackingServerSize") or "Small",
                "MlflowVersion": self.spec.get("MlflowVersion") or MLFLOW_VERSION,
                "RoleArn": self.spec.get("RoleArn", ""), "TrackingServerStatus": self.status,
                "IsActive": self.active(),
                "TrackingServerUrl": f"https://{self.url_id}.{self.region}.experiments.sagemaker.aws",
                "WeeklyMaintenanceWindowStart": self.spec.get("WeeklyMaintenanceWindowStart") or "Sun:02:00",
                "AutomaticModelRegistration": bool(self.spec.get("AutomaticModelRegistration")),
                "CreationTime": self.created, "LastModifiedTime": self.modified}

    def summary(self) -> dict[str, Any]:
        d = self.describe()
        return {k: d[k] for k in ("TrackingServerArn", "TrackingServerName", "TrackingServerStatus", "IsActive",
                                  "MlflowVersion")} | {"CreationTime": self.created, "LastModifiedTime": self.modified}


_SERVERS: dict[str, dict[str, TrackingServer]] = {}  # region -> name -> server
_TOKENS: dict[str, tuple[str, str, float]] = {}  # presigned token -> (region, name, expires at)


def servers(region: str) -> dict[str, TrackingServer]:
    with RUNTIME.lock:
        return _SERVERS.setdefault(region, {})


def _get(region: str, name: str) -> TrackingServer:
    s = servers(region).get(name)
    if s is None:
        raise not_found(f"Tracking server {name} does not exist.")
    return s


def _set(s: TrackingServer, status: str) -> None:
    s.status, s.modified = status, now()


def create(region: str, params: dict[str, Any], *, ready: bool = False) -> TrackingServer:
    name = str(params.get("TrackingServerName") or "")
    if not name or len(name) > 256:
        raise validation("TrackingServerName must be 1 to 256 characters.")
    if not str(params.get("ArtifactStoreUri") or "").startswith("s3://"):
        raise validation("ArtifactStoreUri must be an S3 URI.")
    if params.get("TrackingServerSize") and params["TrackingServerSize"] not in SIZES:
        raise validation(f"TrackingServerSize must be one of {', '.join(SIZES)}.")
    with RUNTIME.lock:
        if name in servers(region):
            raise validation(f"Tracking server {name} already exists.")
        s = TrackingServer(region, name, dict(params), status="Created" if ready else "Creating")
        servers(region)[name] = s
    if not ready:
        RUNTIME.after(CREATE_S, lambda: _set(s, "Created") if s.status == "Creating" else None)
    return s


def seed_tracking_servers(region: str) -> None:
    create(region, {"TrackingServerName": SEED_NAME, "ArtifactStoreUri": f"s3://sagemaker-{region}-{ACCOUNT_ID}/mlflow",
                    "TrackingServerSize": "Small", "MlflowVersion": MLFLOW_VERSION,
                    "RoleArn": f"arn:aws:iam::{ACCOUNT_ID}:role/service-role/podstart-mlflow"}, ready=True)


# -- SageMaker operations (patched onto moto's SageMakerResponse) --------------------------------------------------

def create_mlflow_tracking_server(self: Any) -> Any:
    from moto.core.responses import ActionResult

    return ActionResult({"TrackingServerArn": create(self.region, self._get_params()).arn})


def describe_mlflow_tracking_server(self: Any) -> Any:
    from moto.core.responses import ActionResult

    with RUNTIME.lock:
        return ActionResult(_get(self.region, self._get_param("TrackingServerName")).describe())


def list_mlflow_tracking_servers(self: Any) -> Any:
    from moto.core.responses import ActionResult

    p = self._get_params()
    with RUNTIME.lock:
        items = list(servers(self.region).values())
    if p.get("TrackingServerStatus"):
        items = [s for s in items if s.status == p["TrackingServerStatus"]]
    if p.get("MlflowVersion"):
        items = [s for s in items if s.describe()["MlflowVersion"] == p["MlflowVersion"]]
    key = {"Name": lambda s: s.name, "Status": lambda s: s.status}.get(p.get("SortBy") or "CreationTime",
                                                                       lambda s: s.created)
    items.sort(key=key, reverse=p.get("SortOrder") == "Descending")
    page, token = paginate([s.summary() for s in items], p.get("MaxResults"), p.get("NextToken"))
    return ActionResult({"TrackingServerSummaries": page, "NextToken": token})


def stop_mlflow_tracking_server(self: Any) -> Any:
    from moto.core.responses import ActionResult

    with RUNTIME.lock:
        s = _get(self.region, self._get_param("TrackingServerName"))
        if s.active() != "Active":
            raise conflict(f"Tracking server {s.name} is {s.status}; it can be stopped when active.")
        _set(s, "Stopping")
    RUNTIME.after(STOP_S, lambda: _set(s, "Stopped") if s.status == "Stopping" else None)
    return ActionResult({"TrackingServerArn": s.arn})


def start_mlflow_tracking_server(self: Any) -> Any:
    from moto.core.responses import ActionResult

    with RUNTIME.lock:
        s = _get(self.region, self._get_param("TrackingServerName"))
        if s.status != "Stopped":
            raise conflict(f"Tracking server {s.name} is {s.status}; it can be started when Stopped.")
        _set(s, "Starting")
    RUNTIME.after(START_S, lambda: _set(s, "Started") if s.status == "Starting" else None)
    return ActionResult({"TrackingServerArn": s.arn})


def delete_mlflow_tracking_server(self: Any) -> Any:
    from moto.core.responses import ActionResult

    with RUNTIME.lock:
        s = _get(self.region, self._get_param("TrackingServerName"))
        del servers(self.region)[s.name]
    return ActionResult({"TrackingServerArn": s.arn})


def create_presigned_mlflow_tracking_server_url(self: Any) -> Any:
    from moto.core.responses import ActionResult

    p = self._get_params()
    expires = int(p.get("ExpiresInSeconds") or 300)
    if not 5 <= expires <= 300:
        raise validation("ExpiresInSeconds must be between 5 and 300.")
    with RUNTIME.lock:
        s = _get(self.region, p["TrackingServerName"])
        if s.active() != "Active":
            raise conflict(f"Tracking server {s.name} is {s.status}; presigned URLs need an active server.")
        token, at = secrets.token_urlsafe(24), time.time()
        for old in [k for k, v in _TOKENS.items() if v[2] < at]:  # expired links are forgotten
            del _TOKENS[old]
        _TOKENS[token] = (s.region, s.name, at + expires)
    base = RUNTIME.public_url or "http://127.0.0.1"
    return ActionResult({"AuthorizedUrl": f"{base}/sandbox/mlflow/{s.region}/{s.name}/?authToken={token}"})


OPERATIONS = (create_mlflow_tracking_server, describe_mlflow_tracking_server, list_mlflow_tracking_servers,
              stop_mlflow_tracking_server, start_mlflow_tracking_server, delete_mlflow_tracking_server,
              create_presigned_mlflow_tracking_server_url)


# -- what simulated jobs log, and the page a presigned link opens --------------------------------------------------

def log_metrics(tracking_uri: str, experiment: str, run: str, step: int, metrics: dict[str, float]) -> bool:
    """Record one step of a run (the experiment and run are made on first use, as mlflow.start_run does).
    False when the URI names no active tracking server (a real client's requests would fail)."""
    head, _, name = tracking_uri.partition(":mlflow-tracking-server/")
    parts = head.split(":")
    if len(parts) < 5 or not name:
        return False
    with RUNTIME.lock:
        s = servers(parts[3]).get(name)
        if s is None or s.active() != "Active":
            return False
        r = s.experiments.setdefault(experiment or "Default", {}).setdefault(run, Run(run))
        for key, value in metrics.items():
            r.metrics.setdefault(key, []).append((step, float(value), time.time()))
    return True


def rest(method: str, url: str, body: dict[str, Any] | None) -> tuple[int, dict[str, Any]]:
    """The tracking servers' MLflow REST API, as PodStart reads it (functions.adapters.mlflow_aws): experiments
    search by name, runs search (newest first), metric history. The host names the server (TrackingServerUrl)."""
    from urllib.parse import parse_qs, urlsplit

    u = urlsplit(url)
    host = (u.hostname or "").split(".")
    if len(host) < 3 or not u.path.startswith("/api/2.0/mlflow/"):
        return 404, {"error_code": "ENDPOINT_NOT_FOUND", "message": f"no route {u.path}"}
    url_id, region = host[0], host[1]
    with RUNTIME.lock:
        s = next((x for x in servers(region).values() if x.url_id == url_id), None)
        if s is None or s.active() != "Active":
            return 503, {"error_code": "TEMPORARILY_UNAVAILABLE", "message": "the tracking server is not active"}
        what = u.path.removeprefix("/api/2.0/mlflow/")
        if method == "POST" and what == "experiments/search":
            wanted = str((body or {}).get("filter") or "").partition("=")[2].strip().strip("'")
            found = [e for e in s.experiments if not wanted or e == wanted]
            return 200, {"experiments": [{"experiment_id": e, "name": e} for e in found]}
        if method == "POST" and what == "runs/search":
            ids = (body or {}).get("experiment_ids") or []
            rows = [(e, r) for e in ids for r in s.experiments.get(e, {}).values()]
            rows.sort(key=lambda x: x[1].started, reverse=True)
            return 200, {"runs": [{"info": {"run_id": f"{e}/{r.name}", "run_name": r.name, "experiment_id": e,
                                            "start_time": int(r.started * 1000)},
                                   "data": {"metrics": [{"key": k, "value": v[-1][1], "step": v[-1][0]}
                                                        for k, v in r.metrics.items()]}} for e, r in rows]}
        if method == "GET" and what == "metrics/get-history":
            q = parse_qs(u.query)
            exp, _, run_name = (q.get("run_id") or [""])[0].partition("/")
            run = s.experiments.get(exp, {}).get(run_name)
            key = (q.get("metric_key") or [""])[0]
            if run is None:
                return 404, {"error_code": "RESOURCE_DOES_NOT_EXIST", "message": "no such run"}
            return 200, {"metrics": [{"key": key, "value": v, "step": st, "timestamp": int(t * 1000)}
                                     for st, v, t in run.metrics.get(key, [])]}
    return 404, {"error_code": "ENDPOINT_NOT_FOUND", "message": f"no route {method} {u.path}"}


def runs(region: str, name: str) -> dict[str, dict[str, Run]]:
    with RUNTIME.lock:
        s = servers(region).get(name)
        return {e: dict(rs) for e, rs in s.experiments.items()} if s else {}


def page(region: str, name: str, token: str | None) -> tuple[int, str]:
    """(HTTP status, HTML) of the page a presigned link opens: the server's experiments, runs and metrics."""
    with RUNTIME.lock:
        grant = _TOKENS.get(token or "")
        s = servers(region).get(name)
    if grant is None or grant[:2] != (region, name) or grant[2] < time.time():
        return 403, _html("MLflow: access denied", "<p>This link is invalid or has expired. Ask PodStart for a new "
                                                    "one (read the job again).</p>")
    if s is None:
        return 404, _html("MLflow: not found", f"<p>Tracking server {html.escape(name)} does not exist.</p>")
    body = [f"<p>Tracking server <b>{html.escape(s.name)}</b> ({html.escape(s.region)}), MLflow "
            f"{html.escape(s.describe()['MlflowVersion'])}, {html.escape(s.status)}</p>"]
    if not s.experiments:
        body.append("<p>No experiments yet.</p>")
    for exp, rs in sorted(s.experiments.items()):
        body.append(f"<section><h2>Experiment: {html.escape(exp)}</h2>")
        for run in rs.values():
            keys = sorted(run.metrics)
            last = {k: run.metrics[k][-1] for k in keys}
            steps = max((v[0] for v in last.values()), default=0)
            body.append(f"<h3>Run: {html.escape(run.name)}</h3><p>{steps} steps logged</p><table><thead><tr>"
                        "<th>metric</th><th>latest</th><th>step</th></tr></thead><tbody>")
            body += [f"<tr><td>{html.escape(k)}</td><td>{last[k][1]:g}</td><td>{last[k][0]}</td></tr>" for k in keys]
            body.append("</tbody></table>")
        body.append("</section>")
    return 200, _html(f"MLflow: {s.name}", "".join(body))


def _html(title: str, body: str) -> str:
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{html.escape(title)}</title>"
            f"<link rel=icon href=data:,></head><body><h1>{html.escape(title)}</h1>{body}</body></html>")
