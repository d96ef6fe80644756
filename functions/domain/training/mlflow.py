"""SageMaker managed MLflow for training jobs: the request (`mlflow` of a job submit), the tracking-server views,
who may use a server, the per-job access objects, and the IAM policy that scopes a job to one server.

A job that reports to MLflow gets `MLFLOW_TRACKING_URI=<tracking server ARN>` (the `sagemaker-mlflow` plugin
signs requests to that server) and `MLFLOW_EXPERIMENT_NAME`, and runs under a ServiceAccount of its own whose
EKS Pod Identity role may call `sagemaker-mlflow:*` on that one tracking server ARN.

Per job, not shared: the ServiceAccount `<job>-mlflow`, its role and its Pod Identity association belong to one
job. Two jobs in a namespace may report to different servers, and a role shared by jobs would need a reference
count kept consistent against concurrent submits and deletes; per job, deleting a job removes exactly what it
made and never something another job uses. The cost is one IAM role per MLflow job (IAM's default quota is
1,000 roles per account, raisable) and one Pod Identity association (5,000 per cluster).
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

# The service model's TrackingServerArn pattern, with the name rule of TrackingServerName.
ARN = r"^arn:aws[a-z\-]*:sagemaker:[a-z0-9\-]{1,32}:[0-9]{12}:mlflow-tracking-server/[a-zA-Z0-9](-*[a-zA-Z0-9]){0,255}$"
EXPERIMENT = r"^[A-Za-z0-9][A-Za-z0-9_.\-/]{0,127}$"
ENV_URI, ENV_EXPERIMENT = "MLFLOW_TRACKING_URI", "MLFLOW_EXPERIMENT_NAME"
ANNOTATION_SERVER = "podstart.dev/mlflow-tracking-server"
# Statuses in which a server answers clients (SageMaker's TrackingServerStatus), with IsActive == Active.
USABLE = ("Created", "Started", "Updated", "MaintenanceComplete")
PRESIGNED_URL_SECONDS = 300  # the shortest session a link opens: 5 minutes to click it (the API's maximum)
SESSION_SECONDS = 1800  # the MLflow UI session the link opens (SageMaker's minimum)


class MlflowSpec(BaseModel):
    """`mlflow` of a job submit: the tracking server the job reports to."""

    model_config = ConfigDict(extra="forbid")

    tracking_server_arn: str = Field(
        pattern=ARN, max_length=2048,
        description="arn:<partition>:sagemaker:<region>:<account>:mlflow-tracking-server/<name>, in the "
                    "cluster's region")
    experiment: str | None = Field(None, pattern=EXPERIMENT, description="Experiment name (default: the job name)")


def parts(arn: str) -> tuple[str, str, str]:
    """(region, account, name) of a tracking server ARN."""
    head, _, name = arn.partition(":mlflow-tracking-server/")
    _, _, _, region, account = head.split(":")[:5]
    return region, account, name


def experiment_of(spec: MlflowSpec, job: str) -> str:
    return spec.experiment or job


class TrackingServer(BaseModel):
    """One managed MLflow tracking server, as the submit form lists it."""

    name: str
    arn: str
    status: str
    is_active: bool
    mlflow_version: str | None = None
    tracking_server_url: str | None = None
    size: str | None = None
    usable: bool = Field(description="Jobs can report to it now (status and IsActive)")


class TrackingServerPage(BaseModel):
    region: str
    items: list[TrackingServer]
    next_token: str | None = None


class JobMlflow(BaseModel):
    """What GET .../jobs/{job} shows of a job's MLflow reporting."""

    tracking_server_arn: str
    experiment: str
    url: str | None = Field(None, description="Presigned MLflow UI link, when asked with mlflow_link=true (operators "
                                              "only; expires in minutes)")
    url_note: str | None = None


def server_view(desc: dict[str, Any]) -> TrackingServer:
    status, active = str(desc.get("TrackingServerStatus") or ""), desc.get("IsActive") == "Active"
    return TrackingServer(name=desc["TrackingServerName"], arn=desc["TrackingServerArn"], status=status,
                          is_active=active, mlflow_version=desc.get("MlflowVersion"),
                          tracking_server_url=desc.get("TrackingServerUrl"), size=desc.get("TrackingServerSize"),
                          usable=status in USABLE and active)


def refusal(desc: dict[str, Any]) -> str | None:
    """Why a job cannot report to this server now (None: it can)."""
    view = server_view(desc)
    if view.usable:
        return None
    if view.status in USABLE:
        return f"tracking server {view.name} is {view.status} but not active; start it or choose another"
    return (f"tracking server {view.name} is {view.status or 'unknown'}: jobs need it "
            f"{' or '.join(USABLE)}; start it (StartMlflowTrackingServer) or choose another")


# -- the job's access objects ----------------------------------------------------------------------

def service_account(job: str) -> str:
    return f"{job}-mlflow"


def role_name(cluster: str, region: str, namespace: str, job: str) -> str:
    """`podstart-mlflow-<job>-<hash8>`: one role per job (hash of region/cluster/namespace/job), <= 64 chars."""
    h = hashlib.sha256(f"{region}/{cluster}/{namespace}/{job}".encode()).hexdigest()[:8]
    return f"podstart-mlflow-{job[:38]}-{h}"


POLICY_NAME = "mlflow"


def policy(tracking_server_arn: str) -> str:
    """`sagemaker-mlflow:*` on that one tracking server (no `*` resource)."""
    return json.dumps({"Version": "2012-10-17", "Statement": [
        {"Sid": "ThisTrackingServerOnly", "Effect": "Allow", "Action": "sagemaker-mlflow:*",
         "Resource": [tracking_server_arn]}]})


def service_account_object(job: str, namespace: str, labels: dict[str, str], server_arn: str) -> dict[str, Any]:
    """The job's ServiceAccount (EKS Pod Identity gives its pods the role: no annotation needed)."""
    return {"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": service_account(job), "namespace": namespace, "labels": dict(labels),
                         "annotations": {ANNOTATION_SERVER: server_arn}}}


def env(spec: MlflowSpec, job: str) -> list[dict[str, str]]:
    return [{"name": ENV_URI, "value": spec.tracking_server_arn},
            {"name": ENV_EXPERIMENT, "value": experiment_of(spec, job)}]


def from_containers(containers: list[dict[str, Any]]) -> tuple[str, str] | None:
    """(server ARN, experiment) from a rendered job's container env; None when it does not report to MLflow."""
    for c in containers:
        values = {e.get("name"): e.get("value") for e in c.get("env") or []}
        uri = values.get(ENV_URI)
        if uri and re.match(ARN, str(uri)):
            return str(uri), str(values.get(ENV_EXPERIMENT) or "")
    return None
