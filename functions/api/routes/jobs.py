"""/v1/clusters/{cluster}/jobs|secrets: training jobs, bounded logs, write-only secrets."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from functions.api.context import DryRun, actor, model_response, principal, require, requires, respond, services
from functions.api.routes.clusters import ClusterPath, IdempotencyKey, RegionOpt
from functions.api.schemas import OPERATION_RESPONSES
from functions.domain.kinds import required_role
from functions.domain.plans import Plan
from functions.domain.principal import Role
from functions.domain.tenancy import Namespace
from functions.domain.training import rules as training
from functions.domain.training import status as job_status
from functions.logic import everywhere
from functions.logic.training import jobs

router = Router()


def _ok(model: type, status: int = 200) -> dict[int, Any]:
    return {status: {"description": "OK", "content": {"application/json": {"model": model}}}}


JobPath = Annotated[str, Path(description="Job name", pattern=training.NAME)]
NamespaceQ = Annotated[Namespace, Query(description="A PodStart namespace (default or one an admin created)")]


@router.post("/v1/clusters/<cluster>/jobs",
             summary="Submit a training job from a recipe (operation job.submit: operator, dry-run, apply, watch "
                     "to Running)", tags=["jobs"], responses=OPERATION_RESPONSES)
@requires(required_role("job.submit"))
def submit_job(cluster: ClusterPath, body: training.JobSubmit, region: RegionOpt = None,
               idempotency_key: IdempotencyKey = None, dry_run: DryRun = False) -> Response[str]:
    p = require(router, required_role("job.submit"))
    return respond(jobs.submit_job(services(), cluster, region, body, actor(p), idempotency_key, dry_run))


# The query of both job lists (one cluster's, across clusters)
JobStatusQuery = Annotated[Literal["Pending", "Running", "Restarting", "Hanging", "Succeeded", "Failed"] | None,
                           Query(description="Only jobs in this status")]
LimitQuery = Annotated[int, Query(ge=1, le=100, description="Page size")]
NextTokenQuery = Annotated[str | None, Query(description="Token from the previous page", pattern=r"^\d{1,6}$")]


@router.get("/v1/clusters/<cluster>/jobs", summary="Training jobs PodStart submitted, newest first",
            tags=["jobs"], responses=_ok(job_status.JobList))
def list_jobs(
    cluster: ClusterPath,
    region: RegionOpt = None,
    status: JobStatusQuery = None,
    limit: LimitQuery = 50,
    next_token: NextTokenQuery = None,
) -> Response[str]:
    principal(router)
    return model_response(jobs.jobs_page(services(), cluster, region, status, limit, next_token))


@router.get("/v1/jobs", summary="Training jobs across clusters (every ACTIVE cluster, or cluster=), newest first; "
                              "clusters not read are listed with why", tags=["jobs"],
            responses=_ok(job_status.ClusterJobList))
def list_all_jobs(
    cluster: Annotated[str | None, Query(description="Only this cluster", pattern=r"^[a-z]([-a-z0-9]{0,30}[a-z0-9])?$")]
    = None,
    region: RegionOpt = None,
    status: JobStatusQuery = None,
    limit: LimitQuery = 50,
    next_token: NextTokenQuery = None,
) -> Response[str]:
    principal(router)
    return model_response(everywhere.all_jobs(services(), cluster, region, status, limit, next_token))


@router.get("/v1/clusters/<cluster>/jobs/<job>",
            summary="A job: status, pods (node, phase, restarts), recovery budget used, detections, data paths, MLflow "
                    "(a presigned link for operators who ask for it)",
            tags=["jobs"], responses=_ok(job_status.JobDetail))
def get_job(cluster: ClusterPath, job: JobPath, namespace: NamespaceQ = "default",
            region: RegionOpt = None,
            mlflow_link: Annotated[bool, Query(description="Make a presigned MLflow UI link (operators; it opens a "
                                                           "session on the tracking server)")] = False,
            ) -> Response[str]:
    p = principal(router)
    return model_response(jobs.get_job(services(), cluster, region, job, namespace,
                                       may_open_mlflow=p.role >= Role.operator, mlflow_link=mlflow_link))


@router.delete("/v1/clusters/<cluster>/jobs/<job>", summary="Delete a job and its pods (operation job.delete)",
               tags=["jobs"], responses=OPERATION_RESPONSES)
@requires(required_role("job.delete"))
def delete_job(cluster: ClusterPath, job: JobPath, namespace: NamespaceQ = "default", region: RegionOpt = None,
               idempotency_key: IdempotencyKey = None, dry_run: DryRun = False) -> Response[str]:
    p = require(router, required_role("job.delete"))
    return respond(jobs.remove_job(services(), cluster, region, job, namespace, actor(p), idempotency_key, dry_run))


@router.get("/v1/clusters/<cluster>/jobs/<job>/logs",
            summary="A job pod's log, bounded: the last `tail` lines within `limit_bytes` (default 200, ≤ 64 KiB)",
            tags=["jobs"], responses=_ok(job_status.JobLogs))
def get_job_logs(
    cluster: ClusterPath,
    job: JobPath,
    namespace: NamespaceQ = "default",
    region: RegionOpt = None,
    pod: Annotated[str | None, Query(description="Pod (default: the first)",
                                     pattern=r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")] = None,
    container: Annotated[str | None, Query(description="Container",
                                           pattern=r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")] = None,
    tail: Annotated[int, Query(ge=1, le=job_status.MAX_TAIL, description="Newest lines")] = 200,
    since_seconds: Annotated[int | None, Query(ge=1, le=7 * 86400, description="Only this recent")] = None,
    limit_bytes: Annotated[int, Query(ge=1024, le=job_status.MAX_LOG_BYTES, description="Byte bound")]
    = job_status.MAX_LOG_BYTES,
) -> Response[str]:
    principal(router)
    return model_response(jobs.job_logs(services(), cluster, region, job, namespace, pod, container, tail,
                                        since_seconds, limit_bytes))


@router.get("/v1/clusters/<cluster>/jobs/<job>/metrics",
            summary="A job's metrics step by step (loss, throughput): from its MLflow run when it reports to MLflow, "
                    "else parsed from its first pod's log", tags=["jobs"], responses=_ok(job_status.JobMetrics))
def get_job_metrics(cluster: ClusterPath, job: JobPath, namespace: NamespaceQ = "default",
                    region: RegionOpt = None) -> Response[str]:
    principal(router)
    return model_response(jobs.job_metrics(services(), cluster, region, job, namespace))


@router.get("/v1/clusters/<cluster>/secrets", summary="Secret names in a namespace (values are never read)",
            tags=["jobs"], responses=_ok(training.SecretNames))
@requires(Role.operator)
def list_secrets(cluster: ClusterPath, region: RegionOpt = None, namespace: NamespaceQ = "default") -> Response[str]:
    require(router, Role.operator)
    return model_response(jobs.secret_names(services(), cluster, region, namespace))


@router.post("/v1/clusters/<cluster>/secrets",
             summary="Write a Kubernetes Secret for jobs to reference by name (write-only: values never returned)",
             tags=["jobs"], responses={**_ok(training.SecretWritten, 201), 200: OPERATION_RESPONSES[200]})
@requires(required_role("job.submit"))
def create_secret(cluster: ClusterPath, body: training.SecretCreate, region: RegionOpt = None,
                  dry_run: DryRun = False) -> Response[str]:
    require(router, required_role("job.submit"))
    result = jobs.write_secret(services(), cluster, region, body, dry_run)
    return model_response(result, 200 if isinstance(result, Plan) else 201)
