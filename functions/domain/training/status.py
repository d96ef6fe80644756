"""A job as it runs: its status, conditions, pods, budget, metrics from its logs and bounded log reads."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field

from functions.domain.training import mlflow as mlf
from functions.domain.training import recipes
from functions.domain.training.manifests import SUBMITTED_ANNOTATION
from functions.domain.training.rules import LABEL_RECIPE

# --- views ----------------------------------------------------------------------------------------

JobStatus = Literal["Pending", "Running", "Restarting", "Hanging", "Succeeded", "Failed", "Unknown"]


class PodView(BaseModel):
    name: str
    node: str | None = None
    phase: str
    restarts: int = 0
    reason: str | None = None


class Detection(BaseModel):
    """A stuck/anomaly detection the operator reported (log monitoring: HANGING, SLOW)."""

    type: str
    rule: str | None = None
    message: str
    at: str | None = None


class Budget(BaseModel):
    used: int = Field(description="Recoveries used (restarts the operator made)")
    max: int = Field(description="runPolicy.jobMaxRetryCount (RayJob: backoffLimit)")
    exhausted: bool


class JobSummary(BaseModel):
    name: str
    namespace: str
    kind: Literal["pytorch", "ray"]
    recipe: str | None = None
    status: JobStatus
    budget: Budget
    instance_type: str | None = None
    nodes: int | None = None
    gpus_per_node: int | None = None
    created_at: str | None = None


class JobList(BaseModel):
    items: list[JobSummary]
    next_token: str | None = None


class MetricPoint(BaseModel):
    step: int
    value: float


class MetricSeries(BaseModel):
    name: str = Field(description="loss, throughput (samples/s), ...")
    points: list[MetricPoint]


class JobMetrics(BaseModel):
    """What a job reports, step by step: from its MLflow run when it reports to MLflow, else parsed from the log of
    its first pod (lines with `step N` and `loss X`, `throughput Y`). No series when neither has any yet."""

    source: Literal["mlflow", "logs", "none"]
    series: list[MetricSeries] = Field(default_factory=list)
    pod: str | None = Field(default=None, description="The pod whose log was parsed (source logs)")
    run: str | None = Field(default=None, description="The MLflow run read (source mlflow)")
    note: str | None = None


MAX_METRIC_POINTS = 500  # per series: the newest steps
_STEP = re.compile(r"\bstep[\s:=]+(\d+)", re.IGNORECASE)
_METRICS = {  # a series name -> the pattern of its value in a log line that also says the step
    "loss": re.compile(r"(?:\bloss|/pg_loss)[\s:=]+(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"),
    "throughput (samples/s)": re.compile(r"(?:\bthroughput[\s:=]+|\()(\d+(?:\.\d+)?) samples/s"),
    "learning rate": re.compile(r"\b(?:lr|learning_rate)[\s:=]+(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"),
}


def metrics_from_logs(lines: list[str]) -> dict[str, list[tuple[int, float]]]:
    """Step-by-step values from training log lines ("step 12 loss 1.83 throughput 41.5 samples/s", "step:3 - actor/
    pg_loss:0.41 ... (24.5 samples/s)"): one point per step and series (the last value a step printed wins: a
    multi-rank log prints each step once per rank), the newest MAX_METRIC_POINTS steps."""
    out: dict[str, dict[int, float]] = {}
    for line in lines:
        m = _STEP.search(line)
        if not m:
            continue
        step = int(m.group(1))
        for name, pat in _METRICS.items():
            v = pat.search(line)
            if v:
                out.setdefault(name, {})[step] = float(v.group(1))
    return {name: sorted(points.items())[-MAX_METRIC_POINTS:] for name, points in out.items() if points}


class ClusterJob(JobSummary):
    """A job in a list across clusters: where it runs."""

    cluster: str
    region: str


class Unreachable(BaseModel):
    """A cluster a list across clusters could not read (its jobs or endpoints are missing from the page)."""

    cluster: str
    region: str
    reason: str


class ClusterJobList(BaseModel):
    items: list[ClusterJob]
    next_token: str | None = None
    unreachable: list[Unreachable] = Field(default_factory=list, description="Clusters not read, and why")


class Condition(BaseModel):
    type: str
    status: str
    reason: str | None = None
    message: str | None = None
    at: str | None = None


class JobDetail(JobSummary):
    waiting: str | None = Field(default=None, description="Why its pods wait, as the scheduler says (e.g. 0/2 nodes "
                                                          "are available: 2 Insufficient nvidia.com/gpu)")
    conditions: list[Condition]
    pods: list[PodView]
    detections: list[Detection]
    started_at: str | None = None
    ended_at: str | None = None
    image: str | None = None
    data: recipes.DataPaths
    mlflow: mlf.JobMlflow | None = Field(None, description="The MLflow tracking server and experiment it reports to")


class JobLogs(BaseModel):
    pod: str
    container: str | None = None
    lines: list[str]
    truncated: bool = Field(description="True when older lines or bytes were cut to stay within the bounds")


def _submitted(obj: dict[str, Any]) -> dict[str, Any]:
    """The request the job was submitted with (its annotation), {} when absent or unreadable."""
    import json

    raw = ((obj.get("metadata") or {}).get("annotations") or {}).get(SUBMITTED_ANNOTATION)
    try:
        out = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return out if isinstance(out, dict) else {}


def _conditions(obj: dict[str, Any], kind: str = "pytorch") -> list[Condition]:
    """The job's conditions. A RayJob has none in KubeRay v1: its `jobDeploymentStatus` is shown as one, with the
    Ray job's `jobStatus`, the reason and the message."""
    st = obj.get("status") or {}
    if kind == "ray":
        dep = st.get("jobDeploymentStatus")
        if not dep:
            return []
        return [Condition(type=str(dep), status="True",
                          reason=st.get("reason") or (f"jobStatus {st['jobStatus']}" if st.get("jobStatus") else None),
                          message=st.get("message"), at=st.get("endTime") or st.get("startTime"))]
    return [Condition(type=c.get("type", ""), status=c.get("status", ""), reason=c.get("reason"),
                      message=c.get("message"), at=c.get("lastTransitionTime"))
            for c in (obj.get("status") or {}).get("conditions") or []]


def status_of(kind: str, obj: dict[str, Any]) -> JobStatus:
    st = obj.get("status") or {}
    if kind == "ray":
        dep = st.get("jobDeploymentStatus") or ""
        js = st.get("jobStatus") or ""
        if dep == "Failed" or js == "FAILED":
            return "Failed"
        if dep == "Complete" or js == "SUCCEEDED":
            return "Succeeded"
        if dep == "Retrying":
            return "Restarting"
        if dep == "Running" and js in ("RUNNING", ""):
            return "Running"
        return "Pending"
    true = {c.type for c in _conditions(obj) if c.status == "True"}
    for t, s in (("Failed", "Failed"), ("Succeeded", "Succeeded"), ("Completed", "Succeeded"),
                 ("Hanging", "Hanging"), ("Restarting", "Restarting"), ("Running", "Running")):
        if t in true:
            return s  # type: ignore[return-value]
    return "Pending"


def budget_of(kind: str, obj: dict[str, Any]) -> Budget:
    st, spec = obj.get("status") or {}, obj.get("spec") or {}
    if kind == "ray":  # KubeRay: `failed` counts failed attempts; the last one of a Failed job was not retried
        failed, cap = int(st.get("failed") or 0), int(spec.get("backoffLimit") or 0)
        used = min(cap, failed - 1 if failed and status_of(kind, obj) == "Failed" else failed)
    else:
        used, cap = int(st.get("restartCount") or 0), int((spec.get("runPolicy") or {}).get("jobMaxRetryCount") or 0)
    return Budget(used=used, max=cap, exhausted=used >= cap and status_of(kind, obj) == "Failed")


def summary(kind: str, obj: dict[str, Any]) -> JobSummary:
    meta = obj.get("metadata") or {}
    ann = meta.get("annotations") or {}

    def _int(k: str) -> int | None:
        v = ann.get(k)
        return int(v) if v and v.isdigit() else None

    return JobSummary(name=meta.get("name", ""), namespace=meta.get("namespace", "default"), kind=kind,  # type: ignore[arg-type]
                      recipe=(meta.get("labels") or {}).get(LABEL_RECIPE), status=status_of(kind, obj),
                      budget=budget_of(kind, obj), instance_type=ann.get("podstart.dev/instance-type"),
                      nodes=_int("podstart.dev/nodes"), gpus_per_node=_int("podstart.dev/gpus-per-node"),
                      created_at=meta.get("creationTimestamp"))


def pod_view(pod: dict[str, Any]) -> PodView:
    st = pod.get("status") or {}
    cs = st.get("containerStatuses") or []
    reason = st.get("reason") or next((c.get("message") or c.get("reason") for c in st.get("conditions") or []
                                       if c.get("type") == "PodScheduled" and c.get("status") == "False"), None)
    return PodView(name=pod["metadata"]["name"], node=(pod.get("spec") or {}).get("nodeName"),
                   phase=st.get("phase", "Pending"), restarts=sum(int(c.get("restartCount") or 0) for c in cs),
                   reason=reason)


def detail(kind: str, obj: dict[str, Any], pods: list[dict[str, Any]]) -> JobDetail:
    s = summary(kind, obj)
    st = obj.get("status") or {}
    conds = _conditions(obj, kind)
    detections = [Detection(type=c.type, rule=(c.reason or None), message=c.message or c.type, at=c.at)
                  for c in conds if c.type in ("Hanging", "Slow", "Degraded") and c.status == "True"]
    containers = [c for rs in (obj.get("spec") or {}).get("replicaSpecs") or []
                  for c in ((rs.get("template") or {}).get("spec") or {}).get("containers") or []]
    if kind == "ray":
        head = ((((obj.get("spec") or {}).get("rayClusterSpec") or {}).get("headGroupSpec") or {})
                .get("template") or {}).get("spec") or {}
        containers = head.get("containers") or []
    reports = mlf.from_containers(containers)
    from functions.domain.capacity.api import unscheduled

    return JobDetail(**s.model_dump(), conditions=conds, pods=[pod_view(p) for p in pods], detections=detections,
                     waiting=unscheduled(pods) if s.status in ("Pending", "Restarting") else None,
                     started_at=st.get("startTime"), ended_at=st.get("completionTime") or st.get("endTime"),
                     image=containers[0].get("image") if containers else None,
                     data=recipes.data_paths(s.name, _submitted(obj).get("output")),
                     mlflow=mlf.JobMlflow(tracking_server_arn=reports[0], experiment=reports[1], url=None)
                     if reports else None)


MAX_LOG_BYTES = 64 * 1024
MAX_TAIL = 5000


def bound_lines(text: str, tail: int, limit_bytes: int, cut: bool) -> JobLogs:
    """The last `tail` lines within `limit_bytes` (whole lines; `cut` says the source was cut already)."""
    lines = text.splitlines()
    truncated = cut or len(lines) > tail
    lines = lines[-tail:] if tail else []
    size, keep = 0, []
    for line in reversed(lines):
        size += len(line.encode()) + 1
        if size > limit_bytes:
            truncated = True
            break
        keep.append(line)
    return JobLogs(pod="", lines=list(reversed(keep)), truncated=truncated)
