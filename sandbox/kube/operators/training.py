"""The HyperPod training operator, simulated: a HyperPodPyTorchJob becomes one pod per replica on Nodes of the
right instance type with free GPUs (Pending and Unschedulable when none are), phases Created -> Running, and
log lines per pod with steps, loss and throughput.

A job whose pods carry `MLFLOW_TRACKING_URI` (a SageMaker MLflow tracking server ARN) and `MLFLOW_EXPERIMENT_NAME`
reports each step's loss and throughput there too, as rank 0 of a Hugging Face Trainer does (`loss`,
`train_samples_per_second`: the sum over ranks), in a run named after the job (`sandbox/aws/sagemaker/mlflow.py`).

Knobs, as a user would cause them: deleting one of a job's pods is a pod failure (the operator restarts it and
counts the restart against `runPolicy.jobMaxRetryCount`; past it, the job is Failed); the annotation
`sandbox.podstart.dev/hang: "true"` on the job stops its log lines, and a `logMonitoringConfiguration` rule
whose `expectedRecurringFrequencyInSeconds` passes without a line sets the Hanging condition.

The CRD is what the EKS add-on `amazon-sagemaker-hyperpod-training-operator` installs (`sandbox/kube/addons.py`
applies it when the add-on becomes ACTIVE).
"""

from __future__ import annotations

import copy
import time
from collections import Counter
from datetime import UTC, datetime
from typing import Any

from sandbox.kube.errors import ApiError
from sandbox.kube.operators import scheduler
from sandbox.kube.operators.base import ReconcileContext, Reconciler, condition, update_status
from sandbox.kube.store import Obj, now_rfc3339

GROUP, VERSION, KIND, PLURAL = "sagemaker.amazonaws.com", "v1", "HyperPodPyTorchJob", "hyperpodpytorchjobs"
API_VERSION = f"{GROUP}/{VERSION}"
JOB_LABEL = "sagemaker.amazonaws.com/job-name"
HANG = "sandbox.podstart.dev/hang"
LOG_EVERY_S = 10.0  # realistic seconds between a running pod's log lines
TERMINAL = ("Failed", "Succeeded", "Completed")
SCHEDULER = "sandbox-hyperpod-training"  # the default scheduler (scheduler.py) leaves these pods to this operator


def _live(pod: Obj) -> bool:
    return not pod["metadata"].get("deletionTimestamp") and (pod.get("status") or {}).get("phase") not in (
        "Succeeded", "Failed")


def _place(ctx: ReconcileContext, spec: dict[str, Any], nodes: list[Obj]) -> tuple[str | None, str]:
    """The node a pod fits on, counted as the default scheduler counts (scheduler.reason: Ready, selector,
    taints, the extended resources the node's pods already request), a CPU training pod taking a node of its own;
    or kube-scheduler's message saying why none does."""
    pod = {"spec": spec}
    want = scheduler.requests(pod)
    pods = [p for p in ctx.store.list("v1", "Pod") if _live(p) and (p.get("spec") or {}).get("nodeName")]
    used = scheduler.bound_requests(ctx.store)
    reasons: Counter[str] = Counter()
    for n in nodes:
        name = n["metadata"]["name"]
        why = scheduler.reason(pod, n, used)
        if why is None and not want and any(JOB_LABEL in (p["metadata"].get("labels") or {})
                                            for p in pods if p["spec"]["nodeName"] == name):
            why = "node(s) already run a training pod"
        if why is None:
            return name, ""
        reasons[why] += 1
    return None, scheduler.message(len(nodes), reasons)


def _pod(job: Obj, index: int, node: str | None, why: str) -> Obj:
    meta, spec = job["metadata"], job.get("spec") or {}
    template = copy.deepcopy(((spec.get("replicaSpecs") or [{}])[0]).get("template") or {})
    pod_spec = template.get("spec") or {"containers": []}
    pod_spec["schedulerName"] = SCHEDULER  # this operator places its job's pods itself (one per node, GPUs counted)
    if node:
        pod_spec["nodeName"] = node
    labels = {**((template.get("metadata") or {}).get("labels") or {}), JOB_LABEL: meta["name"],
              "sagemaker.amazonaws.com/replica-index": str(index)}
    pod: Obj = {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": f"{meta['name']}-pod-{index}", "namespace": meta["namespace"], "labels": labels,
                             "ownerReferences": [{"apiVersion": API_VERSION, "kind": KIND, "name": meta["name"],
                                                  "uid": meta["uid"], "controller": True,
                                                  "blockOwnerDeletion": True}]},
                "spec": pod_spec}
    if not node:
        pod["status"] = {"phase": "Pending",
                         "conditions": [condition("PodScheduled", "False", "Unschedulable", why)]}
    return pod


def _conditions(status: dict[str, Any], *true: str, reason: str = "", message: str = "") -> list[dict[str, Any]]:
    """The job's conditions with exactly `true` set True (others kept, set False)."""
    old = {c["type"]: c for c in status.get("conditions") or []}
    out = []
    for t in dict.fromkeys([*old, *true]):
        if t in true:
            out.append(old[t] if old.get(t, {}).get("status") == "True" and t not in ("Hanging",)
                       else condition(t, "True", reason or t, message))
        else:
            c = old[t]
            out.append(c if c.get("status") == "False" else condition(t, "False", c.get("reason") or t))
    return out


def reconcile_training(ctx: ReconcileContext) -> None:
    try:
        jobs = ctx.store.list(API_VERSION, KIND)
    except ApiError:
        return  # the operator is not installed
    nodes = [n for n in ctx.store.list("v1", "Node")
             if any(c.get("type") == "Ready" and c.get("status") == "True"
                    for c in (n.get("status") or {}).get("conditions") or [])]
    for job in jobs:
        try:
            _reconcile(ctx, job, nodes)
        except ApiError:
            continue


def _reconcile(ctx: ReconcileContext, job: Obj, nodes: list[Obj]) -> None:
    meta, spec = job["metadata"], job.get("spec") or {}
    status: dict[str, Any] = copy.deepcopy(job.get("status") or {})
    if meta.get("deletionTimestamp") or any(
            c.get("type") in TERMINAL and c.get("status") == "True" for c in status.get("conditions") or []):
        return
    name, ns = meta["name"], meta["namespace"]
    replicas = int(((spec.get("replicaSpecs") or [{}])[0]).get("replicas") or 1)
    budget = int((spec.get("runPolicy") or {}).get("jobMaxRetryCount") or 0)
    pods = {p["metadata"]["name"]: p for p in ctx.store.list("v1", "Pod", ns, label_selector=f"{JOB_LABEL}={name}")
            if not p["metadata"].get("deletionTimestamp")}
    wanted = [f"{name}-pod-{i}" for i in range(replicas)]
    missing = [i for i, n in enumerate(wanted) if n not in pods]
    if not status.get("conditions"):
        status = {"conditions": [condition("Created", "True", "JobCreated", f"{KIND} {name} is created")],
                  "restartCount": 0}
    if missing and status.get("startTime"):
        # A pod of a started job is gone: a failure the operator recovers from, counted against the budget.
        used = int(status.get("restartCount") or 0) + 1
        if used > budget:
            status.update(restartCount=used - 1, completionTime=now_rfc3339(),
                          conditions=_conditions(status, "Failed", reason="JobMaxRetryCountExceeded",
                                                 message=f"pod {wanted[missing[0]]} failed; the recovery budget "
                                                         f"({budget} restarts) is used up"))
            update_status(ctx, job, status)
            return
        status["restartCount"] = used
        status["conditions"] = _conditions(status, "Restarting", reason="PodFailed",
                                           message=f"restarting {wanted[missing[0]]} ({used} of {budget})")
    for i in missing:
        node, why = _place(ctx, (((spec.get("replicaSpecs") or [{}])[0]).get("template") or {}).get("spec") or {},
                           nodes)
        made = ctx.store.create(_pod(job, i, node, why))
        ctx.store.record_event(job, "Normal", "SuccessfulCreatePod", f"Created pod: {made['metadata']['name']}",
                               "hyperpod-training-operator")
    _retry_unschedulable(ctx, pods.values(), nodes)
    running = [p for p in pods.values() if (p.get("status") or {}).get("phase") == "Running"]
    if not missing and len(running) == replicas:
        status.setdefault("startTime", now_rfc3339())
        hanging = _hang(ctx, job, running)
        status["conditions"] = (_conditions(status, "Running", "Hanging", reason=hanging[0], message=hanging[1])
                                if hanging else _conditions(status, "Running", reason="AllPodsRunning"))
        if not hanging and meta.get("annotations", {}).get(HANG) != "true":
            _log(ctx, job, running)
    update_status(ctx, job, status)


def _retry_unschedulable(ctx: ReconcileContext, pods: Any, nodes: list[Obj]) -> None:
    for p in pods:
        if (p.get("spec") or {}).get("nodeName") or not _live(p):
            continue
        node, _ = _place(ctx, p.get("spec") or {}, nodes)
        if node:
            ctx.store.put({**p, "spec": {**p["spec"], "nodeName": node}, "status": {"phase": "Pending"}})


def _now_ms() -> str:
    """A log line's time, to the millisecond (as training loggers print it; the live-log bench reads it)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _log(ctx: ReconcileContext, job: Obj, running: list[Obj]) -> None:
    if not ctx.waited(job, LOG_EVERY_S, f"log-{ctx.marks.get((job['metadata']['uid'], 'step'), 0)}"):
        return
    step = int(ctx.marks.get((job["metadata"]["uid"], "step"), 0)) + 1
    ctx.marks[(job["metadata"]["uid"], "step")] = step
    ctx.marks[(job["metadata"]["uid"], "last-log")] = time.monotonic()
    throughput = round(40.0 + (step % 7) * 0.5, 1)
    for rank, p in enumerate(sorted(running, key=lambda x: x["metadata"]["name"])):
        loss = round(2.5 / (1 + 0.05 * step) + 0.01 * rank, 4)
        ctx.store.append_log(p["metadata"]["namespace"], p["metadata"]["name"],
                             f"{_now_ms()} [rank {rank}] step {step} loss {loss} throughput "
                             f"{throughput} samples/s\n")
    _report_mlflow(job, step, {"loss": round(2.5 / (1 + 0.05 * step), 4),
                               "train_samples_per_second": round(throughput * len(running), 1)})


def _report_mlflow(job: Obj, step: int, metrics: dict[str, float]) -> None:
    """Rank 0's MLflow logging: to the tracking server in the pod template's MLFLOW_TRACKING_URI, if any."""
    template = (((job.get("spec") or {}).get("replicaSpecs") or [{}])[0].get("template") or {}).get("spec") or {}
    env = {e.get("name"): e.get("value") for c in template.get("containers") or [] for e in c.get("env") or []}
    uri = str(env.get("MLFLOW_TRACKING_URI") or "")
    if ":mlflow-tracking-server/" not in uri:
        return
    from sandbox.aws.sagemaker import mlflow

    mlflow.log_metrics(uri, str(env.get("MLFLOW_EXPERIMENT_NAME") or ""), job["metadata"]["name"], step, metrics)


def _hang(ctx: ReconcileContext, job: Obj, running: list[Obj]) -> tuple[str, str] | None:
    """The first log-monitoring rule whose expected recurring frequency passed without a log line."""
    if (job["metadata"].get("annotations") or {}).get(HANG) != "true":
        return None
    uid = job["metadata"]["uid"]
    last = float(ctx.marks.setdefault((uid, "last-log"), time.monotonic()))
    for rule in (job.get("spec") or {}).get("runPolicy", {}).get("logMonitoringConfiguration") or []:
        every = rule.get("expectedRecurringFrequencyInSeconds")
        if not every:
            continue
        ctx.wake_at(last + ctx.delay(float(every)))
        if time.monotonic() - last >= ctx.delay(float(every)):
            return rule.get("name") or "LogMonitoring", (
                f"no log line matched {rule.get('logPattern')!r} for {every} s (rule {rule.get('name')})")
    return None


RECONCILERS: tuple[Reconciler, ...] = (reconcile_training,)
