"""The KubeRay operator (v1.x), simulated: active only while its Deployment `kuberay-system/kuberay-operator` is
Available (PodStart's `kuberay_operator` feature applies it with the ray.io CRDs; kubectl could too).

- A RayJob gets a RayCluster (`ray.io/v1`, owned by the RayJob, named `<job>-<5 chars>`, labels
  `ray.io/originated-from-crd: RayJob`) with the job's `rayClusterSpec`.
- A RayCluster gets a head pod and, per `workerGroupSpecs[]`, `replicas` worker pods (owned by the RayCluster,
  labels `ray.io/cluster`, `ray.io/node-type`, `ray.io/group` plus the template's). Pods are placed on Ready
  Nodes their selector admits with enough free `nvidia.com/gpu` (GPUs of live pods already bound counted); a pod
  that fits nowhere stays Pending, `PodScheduled=False` `Unschedulable` with the numbers, and is placed once
  GPUs free up. They carry `schedulerName: sandbox-kuberay` so the default scheduler (which overcommits) leaves
  them to this operator. A deleted worker pod is recreated. RayCluster `status.state` is `ready` once every pod
  runs.
- RayJob status as KubeRay v1 reports it: `jobDeploymentStatus` Initializing -> Running (-> Complete/Failed,
  or Retrying -> Initializing with a new RayCluster), `jobStatus` "" -> PENDING -> RUNNING (-> SUCCEEDED/FAILED),
  `rayClusterName`, `jobId`, `startTime`/`endTime`, `failed`/`succeeded`. The head pod prints the driver's log
  (`ray job logs`): steps, loss and throughput; workers print a line per step.
- Knobs: deleting the head pod of a running job fails that attempt (the driver dies with it): `failed` + 1 and,
  while it is within `spec.backoffLimit`, Retrying on a new RayCluster; past it, Failed (`reason:
  AppFailed`). The annotation `sandbox.podstart.dev/finish: "succeeded"` (or `"failed"`) ends a running job.
- Deleting a RayJob deletes its RayCluster and the pods through ownerReferences (`garbage.py`).
"""

from __future__ import annotations

import copy
import secrets
import string
from datetime import UTC, datetime
from typing import Any

from sandbox.kube.errors import ApiError
from sandbox.kube.operators.base import ReconcileContext, Reconciler, condition, update_status
from sandbox.kube.operators.scheduler import admits
from sandbox.kube.store import Obj, now_rfc3339

API_VERSION = "ray.io/v1"
NAMESPACE, NAME = "kuberay-system", "kuberay-operator"
SCHEDULER = "sandbox-kuberay"
GPU = "nvidia.com/gpu"
FINISH = "sandbox.podstart.dev/finish"
LOG_EVERY_S = 10.0  # realistic seconds between the driver's log lines
SUBMIT_S = 5.0  # PENDING -> RUNNING: `ray job submit` reaching the head's dashboard
TERMINAL = ("Complete", "Failed")


def _suffix() -> str:
    return "".join(secrets.choice(string.ascii_lowercase + string.digits) for _ in range(5))


def _running(ctx: ReconcileContext) -> bool:
    try:
        dep = ctx.store.get("apps/v1", "Deployment", NAME, NAMESPACE)
    except ApiError:
        return False
    return dep is not None and int((dep.get("status") or {}).get("availableReplicas") or 0) > 0


def reconcile_kuberay(ctx: ReconcileContext) -> None:
    if not _running(ctx):
        return
    try:
        jobs = ctx.store.list(API_VERSION, "RayJob")
        clusters = ctx.store.list(API_VERSION, "RayCluster")
    except ApiError:
        return  # the CRDs are not installed
    for job in jobs:
        try:
            _reconcile_job(ctx, job)
        except ApiError:
            continue
    nodes = [n for n in ctx.store.list("v1", "Node")
             if any(c.get("type") == "Ready" and c.get("status") == "True"
                    for c in (n.get("status") or {}).get("conditions") or [])]
    for rc in clusters:
        try:
            _reconcile_cluster(ctx, rc, nodes)
        except ApiError:
            continue


# -- RayJob ----------------------------------------------------------------------------------------
def _owner(obj: Obj) -> dict[str, Any]:
    m = obj["metadata"]
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": m["name"], "uid": m["uid"],
            "controller": True, "blockOwnerDeletion": True}


def _new_cluster(ctx: ReconcileContext, job: Obj, name: str) -> None:
    meta = job["metadata"]
    labels = {**(meta.get("labels") or {}), "ray.io/originated-from-crd": "RayJob",
              "ray.io/originated-from-cr-name": meta["name"]}
    ctx.store.create({"apiVersion": API_VERSION, "kind": "RayCluster",
                      "metadata": {"name": name, "namespace": meta["namespace"], "labels": labels,
                                   "ownerReferences": [_owner(job)]},
                      "spec": copy.deepcopy((job.get("spec") or {}).get("rayClusterSpec") or {})})
    ctx.store.record_event(job, "Normal", "CreatedRayCluster", f"Created RayCluster {meta['namespace']}/{name}",
                           "ray-job-controller")


def _reconcile_job(ctx: ReconcileContext, job: Obj) -> None:
    meta, spec = job["metadata"], job.get("spec") or {}
    if meta.get("deletionTimestamp"):
        return
    st: dict[str, Any] = copy.deepcopy(job.get("status") or {})
    dep = st.get("jobDeploymentStatus")
    if dep in TERMINAL:
        return
    ns, name = meta["namespace"], meta["name"]
    if not dep or not st.get("rayClusterName"):
        st.update(jobDeploymentStatus="Initializing", jobStatus="", rayClusterName=f"{name}-{_suffix()}",
                  jobId=f"{name}-{_suffix()}", startTime=st.get("startTime") or now_rfc3339(),
                  observedGeneration=meta.get("generation", 1))
        st.setdefault("failed", 0)
        update_status(ctx, job, st)
        return
    rc = ctx.store.get(API_VERSION, "RayCluster", st["rayClusterName"], ns)
    if dep == "Retrying":
        if rc is None:
            st.update(jobDeploymentStatus="Initializing", jobStatus="", rayClusterName=f"{name}-{_suffix()}",
                      jobId=f"{name}-{_suffix()}")
            st.pop("message", None)
            update_status(ctx, job, st)
        return
    if rc is None:
        _new_cluster(ctx, job, st["rayClusterName"])
        return
    rc_status = rc.get("status") or {}
    st["rayClusterStatus"] = {k: v for k, v in rc_status.items() if k in ("state", "desiredWorkerReplicas",
                                                                        "readyWorkerReplicas",
                                                                        "availableWorkerReplicas")}
    head = (rc_status.get("head") or {}).get("podName")
    alive = head and ctx.store.get("v1", "Pod", head, ns) is not None
    if head and not alive:
        _attempt_failed(ctx, job, st, f"the head pod {head} of {st['rayClusterName']} is gone: the driver died")
        return
    if dep == "Initializing":
        if rc_status.get("state") == "ready":
            st.update(jobDeploymentStatus="Running", jobStatus="PENDING",
                      dashboardURL=f"{st['rayClusterName']}-head-svc.{ns}.svc.cluster.local:8265")
        update_status(ctx, job, st)
        return
    # Running: the driver's attempt lives as long as the head pod it started on (checked above).
    if st.get("jobStatus") == "PENDING" and ctx.waited(job, SUBMIT_S, f"submit-{st['jobId']}"):
        st["jobStatus"] = "RUNNING"
        _log(ctx, job, st, head, first=True)
    finish = (meta.get("annotations") or {}).get(FINISH)
    if st.get("jobStatus") == "RUNNING" and finish in ("succeeded", "failed"):
        ok = finish == "succeeded"
        st.update(jobStatus="SUCCEEDED" if ok else "FAILED", jobDeploymentStatus="Complete" if ok else "Failed",
                  endTime=now_rfc3339(), **({"succeeded": 1} if ok else {"failed": int(st.get("failed") or 0) + 1,
                                                                        "reason": "AppFailed",
                                                                        "message": "the entrypoint exited 1"}))
        update_status(ctx, job, st)
        if ok and spec.get("shutdownAfterJobFinishes"):
            ctx.store.delete(API_VERSION, "RayCluster", st["rayClusterName"], ns)
        return
    if st.get("jobStatus") == "RUNNING":
        _log(ctx, job, st, head)
    update_status(ctx, job, st)


def _attempt_failed(ctx: ReconcileContext, job: Obj, st: dict[str, Any], why: str) -> None:
    ns = job["metadata"]["namespace"]
    failed = int(st.get("failed") or 0) + 1
    limit = int((job.get("spec") or {}).get("backoffLimit") or 0)
    st["failed"] = failed
    if failed > limit:
        st.update(jobDeploymentStatus="Failed", jobStatus="FAILED", reason="AppFailed", endTime=now_rfc3339(),
                  message=f"{why}; backoffLimit {limit} reached ({failed} failed attempts)")
    else:
        st.update(jobDeploymentStatus="Retrying", jobStatus="FAILED",
                  message=f"{why}; retrying on a new RayCluster ({failed} of {limit} retries)")
    update_status(ctx, job, st)
    ctx.store.delete(API_VERSION, "RayCluster", st["rayClusterName"], ns)


def _now_ms() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _log(ctx: ReconcileContext, job: Obj, st: dict[str, Any], head: str | None, first: bool = False) -> None:
    uid, ns = job["metadata"]["uid"], job["metadata"]["namespace"]
    if head is None:
        return
    if first:
        ctx.store.append_log(ns, head, f"{_now_ms()} Job '{st['jobId']}' submitted; entrypoint: "
                                       f"{(job.get('spec') or {}).get('entrypoint', '')[:200]}\n")
        return
    step = int(ctx.marks.get((uid, "step"), 0))
    if not ctx.waited(job, LOG_EVERY_S, f"log-{st['jobId']}-{step}"):
        return
    step += 1
    ctx.marks[(uid, "step")] = step
    loss = round(1.8 / (1 + 0.04 * step), 4)
    ctx.store.append_log(ns, head, f"{_now_ms()} (TaskRunner) step:{step} - actor/pg_loss:{loss} "
                                   f"critic/score/mean:{round(0.2 + 0.01 * step, 3)} "
                                   f"perf/throughput:{round(900 + (step % 5) * 12.5, 1)} tokens/s "
                                   f"({round(24.0 + (step % 7) * 0.5, 1)} samples/s)\n")
    rc = ctx.store.get(API_VERSION, "RayCluster", st["rayClusterName"], ns)
    for p in _pods(ctx, rc) if rc else []:
        if (p["metadata"].get("labels") or {}).get("ray.io/node-type") == "worker" and \
                (p.get("status") or {}).get("phase") == "Running":
            ctx.store.append_log(ns, p["metadata"]["name"], f"{_now_ms()} (WorkerDict) step {step} rollout and "
                                                            f"update done\n")


# -- RayCluster ------------------------------------------------------------------------------------
def _pods(ctx: ReconcileContext, rc: Obj) -> list[Obj]:
    return [p for p in ctx.store.list("v1", "Pod", rc["metadata"]["namespace"],
                                      label_selector=f"ray.io/cluster={rc['metadata']['name']}")
            if not p["metadata"].get("deletionTimestamp")]


def _gpus(spec: dict[str, Any]) -> int:
    total = 0
    for c in spec.get("containers") or []:
        r = c.get("resources") or {}
        try:
            total += int(str((r.get("limits") or {}).get(GPU) or (r.get("requests") or {}).get(GPU) or 0))
        except ValueError:
            pass
    return total


def _live(p: Obj) -> bool:
    return not p["metadata"].get("deletionTimestamp") and (p.get("status") or {}).get("phase") not in (
        "Succeeded", "Failed")


def _place(ctx: ReconcileContext, spec: dict[str, Any], nodes: list[Obj]) -> tuple[str | None, str]:
    """A Ready node the pod's selector admits with enough free GPUs (every live bound pod's GPUs counted)."""
    want = _gpus(spec)
    bound = [p for p in ctx.store.list("v1", "Pod") if _live(p) and (p.get("spec") or {}).get("nodeName")]
    fitting = [n for n in nodes if admits(spec, n)]
    for n in fitting:
        have = int(str(((n.get("status") or {}).get("allocatable") or {}).get(GPU) or 0))
        used = sum(_gpus(p.get("spec") or {}) for p in bound if p["spec"]["nodeName"] == n["metadata"]["name"])
        if have - used >= want:
            return n["metadata"]["name"], ""
    return None, (f"0/{len(nodes)} nodes are available: {len(nodes) - len(fitting)} didn't match Pod's node "
                  f"affinity/selector, {len(fitting)} Insufficient {GPU} (needs {want})")


def _pod(rc: Obj, template: dict[str, Any], kind: str, group: str, node: str | None, why: str) -> Obj:
    meta = rc["metadata"]
    tpl = copy.deepcopy(template or {})
    spec = tpl.get("spec") or {"containers": []}
    spec["schedulerName"] = SCHEDULER
    if node:
        spec["nodeName"] = node
    labels = {**((tpl.get("metadata") or {}).get("labels") or {}), "ray.io/cluster": meta["name"],
              "ray.io/node-type": kind, "ray.io/group": group, "ray.io/is-ray-node": "yes",
              "app.kubernetes.io/created-by": "kuberay-operator", "app.kubernetes.io/name": "kuberay"}
    name = f"{meta['name']}-head-{_suffix()}" if kind == "head" else f"{meta['name']}-{group}-worker-{_suffix()}"
    pod: Obj = {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": meta["namespace"], "labels": labels,
                             "ownerReferences": [_owner(rc)]},
                "spec": spec}
    if not node:
        pod["status"] = {"phase": "Pending", "conditions": [condition("PodScheduled", "False", "Unschedulable", why)]}
    return pod


def _reconcile_cluster(ctx: ReconcileContext, rc: Obj, nodes: list[Obj]) -> None:
    if rc["metadata"].get("deletionTimestamp") or ctx.store.get(
            API_VERSION, "RayCluster", rc["metadata"]["name"], rc["metadata"]["namespace"]) is None:
        return  # deleted (a failed attempt, a finished job) since the list
    spec = rc.get("spec") or {}
    pods = _pods(ctx, rc)
    wanted: list[tuple[str, str, dict[str, Any], int]] = [
        ("head", "headgroup", (spec.get("headGroupSpec") or {}).get("template") or {}, 1)]
    for g in spec.get("workerGroupSpecs") or []:
        if not g.get("suspend"):
            wanted.append(("worker", str(g.get("groupName") or "workers"), g.get("template") or {},
                           int(g.get("replicas") if g.get("replicas") is not None else 1)))
    of_job = (rc["metadata"].get("labels") or {}).get("ray.io/originated-from-crd") == "RayJob"
    for kind, group, template, count in wanted:
        have = [p for p in pods if (p["metadata"].get("labels") or {}).get("ray.io/group") == group]
        if kind == "head" and not have and of_job and ((rc.get("status") or {}).get("head") or {}).get("podName"):
            continue  # the driver died with its head: the RayJob fails this attempt and tears the cluster down
        for _ in range(count - len(have)):
            node, why = _place(ctx, template.get("spec") or {}, nodes)
            made = ctx.store.create(_pod(rc, template, kind, group, node, why))
            ctx.store.record_event(rc, "Normal", "CreatedHeadPod" if kind == "head" else "CreatedWorkerPod",
                                   f"Created {kind} Pod {made['metadata']['namespace']}/{made['metadata']['name']}",
                                   "raycluster-controller")
    for p in pods:  # pods Pending for want of GPUs get a node once one frees up
        if not (p.get("spec") or {}).get("nodeName") and _live(p):
            node, _ = _place(ctx, p.get("spec") or {}, nodes)
            if node:
                ctx.store.put({**p, "spec": {**p["spec"], "nodeName": node}, "status": {"phase": "Pending"}})
    pods = _pods(ctx, rc)
    running = [p for p in pods if (p.get("status") or {}).get("phase") == "Running"]
    workers = [p for p in running if (p["metadata"].get("labels") or {}).get("ray.io/node-type") == "worker"]
    head = next((p for p in pods if (p["metadata"].get("labels") or {}).get("ray.io/node-type") == "head"), None)
    desired = sum(c for k, _, _, c in wanted if k == "worker")
    ready = head is not None and head in running and len(workers) >= desired
    status: dict[str, Any] = {
        "state": "ready" if ready else "",
        "desiredWorkerReplicas": desired, "readyWorkerReplicas": len(workers), "availableWorkerReplicas": len(workers),
        "desiredGPU": str(sum(_gpus(t.get("spec") or {}) * c for _, _, t, c in wanted)),
        "observedGeneration": rc["metadata"].get("generation", 1),
        "conditions": [condition("HeadPodReady", "True" if head in running else "False",
                                 "HeadPodRunningAndReady" if head in running else "HeadPodNotFound"),
                       condition("RayClusterProvisioned", "True" if ready else "False",
                                 "AllPodRunningAndReadyFirstTime" if ready else "RayClusterPodsProvisioning")],
    }
    if head is not None:
        status["head"] = {"podName": head["metadata"]["name"], "podIP": (head.get("status") or {}).get("podIP", ""),
                          "serviceName": f"{rc['metadata']['name']}-head-svc"}
    elif of_job and (rc.get("status") or {}).get("head"):
        # A RayJob's head died: its name stays (the RayJob reads it to fail the attempt), else the next look would
        # make a new head and the attempt would never fail (a head deleted between the two controllers' looks).
        status["head"] = rc["status"]["head"]
    if not status["state"]:
        status.pop("state")
    update_status(ctx, rc, status)


RECONCILERS: tuple[Reconciler, ...] = (reconcile_kuberay,)
