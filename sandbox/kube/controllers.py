"""Simulated controllers that make a stored cluster look alive, time-scaled.

A reconciler is a function of a `ReconcileContext`; the server calls every reconciler in its list
for every cluster on each tick. Add more with `KubeApiServer.add_reconciler` (e.g. HyperPod job kinds).
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from sandbox.kube.errors import ApiError
from sandbox.kube.store import ClusterStore, Obj, now_rfc3339, random_suffix

log = logging.getLogger(__name__)


@dataclass
class ReconcileContext:
    """What a reconciler sees: one cluster's store and the time scale."""

    store: ClusterStore
    time_scale: float
    min_delay: float = 0.1
    marks: dict[tuple[str, str], float] = field(default_factory=dict)

    def delay(self, realistic_seconds: float) -> float:
        """Wall seconds for a realistic delay."""
        return max(realistic_seconds / self.time_scale, self.min_delay)

    def waited(self, obj: Obj, realistic_seconds: float, label: str = "") -> bool:
        """True once `realistic_seconds` (scaled) passed since the object's generation changed,
        or, with a label, since this reconciler first asked about (object, label)."""
        if not label:
            return self.store.elapsed(obj) >= self.delay(realistic_seconds)
        key = (obj["metadata"].get("uid", ""), label)
        start = self.marks.setdefault(key, time.monotonic())
        return time.monotonic() - start >= self.delay(realistic_seconds)

    def set_status(self, obj: Obj, status: dict[str, Any]) -> None:
        meta = obj["metadata"]
        self.store.set_status(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace"), status)


Reconciler = Callable[[ReconcileContext], None]


def _condition(ctype: str, status: str, reason: str, message: str = "") -> dict[str, Any]:
    now = now_rfc3339()
    return {
        "type": ctype,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": now,
        "lastUpdateTime": now,
    }


def _same_conditions(old: list[dict[str, Any]] | None, new: list[dict[str, Any]]) -> bool:
    def strip(conds: Iterable[dict[str, Any]]) -> list[tuple[Any, Any, Any]]:
        return [(c.get("type"), c.get("status"), c.get("reason")) for c in conds]

    return strip(old or []) == strip(new)


def _update(ctx: ReconcileContext, obj: Obj, status: dict[str, Any]) -> None:
    """Write status unless only condition timestamps differ."""
    old = obj.get("status") or {}
    if "conditions" in status and _same_conditions(old.get("conditions"), status["conditions"]):
        status = {**status, "conditions": old.get("conditions")}
    if old != status:
        ctx.set_status(obj, status)


def reconcile_workloads(ctx: ReconcileContext) -> None:
    """Deployments, StatefulSets and ReplicaSets become ready ~20 s (realistic) after a spec change."""
    for kind in ("Deployment", "StatefulSet", "ReplicaSet"):
        for obj in ctx.store.list("apps/v1", kind):
            want = int(obj.get("spec", {}).get("replicas", 1))
            gen = obj["metadata"].get("generation", 1)
            ready = ctx.waited(obj, 20)
            n = want if ready else 0
            status: dict[str, Any] = {
                "observedGeneration": gen,
                "replicas": want,
                "readyReplicas": n,
                "availableReplicas": n,
            }
            if kind == "Deployment":
                status["updatedReplicas"] = want
                if want - n:
                    status["unavailableReplicas"] = want - n
                status["conditions"] = [
                    _condition(
                        "Available",
                        "True" if ready else "False",
                        "MinimumReplicasAvailable" if ready else "MinimumReplicasUnavailable",
                    ),
                    _condition("Progressing", "True", "NewReplicaSetAvailable" if ready else "ReplicaSetUpdated"),
                ]
            elif kind == "StatefulSet":
                rev = f"{obj['metadata']['name']}-{gen}"
                status |= {
                    "currentReplicas": want,
                    "updatedReplicas": want,
                    "currentRevision": rev,
                    "updateRevision": rev,
                }
            else:
                status["fullyLabeledReplicas"] = want
            if not n:
                status = {k: v for k, v in status.items() if v != 0 or k in ("replicas", "observedGeneration")}
            _update(ctx, obj, status)


def reconcile_daemonsets(ctx: ReconcileContext) -> None:
    nodes = len(ctx.store.list("v1", "Node"))
    for obj in ctx.store.list("apps/v1", "DaemonSet"):
        ready = ctx.waited(obj, 10)
        n = nodes if ready else 0
        _update(
            ctx,
            obj,
            {
                "observedGeneration": obj["metadata"].get("generation", 1),
                "desiredNumberScheduled": nodes,
                "currentNumberScheduled": nodes,
                "updatedNumberScheduled": nodes,
                "numberReady": n,
                "numberAvailable": n,
                "numberMisscheduled": 0,
                **({"numberUnavailable": nodes - n} if nodes - n else {}),
            },
        )


def reconcile_jobs(ctx: ReconcileContext) -> None:
    """A Job runs one pod; the Job completes when the pod succeeds."""
    for job in ctx.store.list("batch/v1", "Job"):
        meta, status = job["metadata"], dict(job.get("status") or {})
        if any(c.get("type") in ("Complete", "Failed") for c in status.get("conditions") or []):
            continue
        if job.get("spec", {}).get("suspend"):
            continue
        uid, ns = meta["uid"], meta["namespace"]
        pods = ctx.store.list("v1", "Pod", ns, label_selector=f"controller-uid={uid}")
        if not pods:
            template = copy.deepcopy(job.get("spec", {}).get("template") or {})
            pod_meta = template.get("metadata") or {}
            labels = {
                **(pod_meta.get("labels") or {}),
                "controller-uid": uid,
                "job-name": meta["name"],
                "batch.kubernetes.io/job-name": meta["name"],
            }
            try:
                ctx.store.create(
                    {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "metadata": {
                            **pod_meta,
                            "name": f"{meta['name']}-{random_suffix()}",
                            "namespace": ns,
                            "labels": labels,
                            "ownerReferences": [
                                {
                                    "apiVersion": "batch/v1",
                                    "kind": "Job",
                                    "name": meta["name"],
                                    "uid": uid,
                                    "controller": True,
                                    "blockOwnerDeletion": True,
                                }
                            ],
                        },
                        "spec": template.get("spec") or {"containers": []},
                    }
                )
            except ApiError:
                continue
            _update(ctx, job, {**status, "active": 1, "startTime": status.get("startTime") or now_rfc3339()})
            continue
        phases = [p.get("status", {}).get("phase") for p in pods]
        if "Succeeded" in phases:
            _update(
                ctx,
                job,
                {
                    "startTime": status.get("startTime") or now_rfc3339(),
                    "completionTime": now_rfc3339(),
                    "succeeded": 1,
                    "ready": 0,
                    "conditions": [
                        _condition("SuccessCriteriaMet", "True", "CompletionsReached"),
                        _condition("Complete", "True", "CompletionsReached"),
                    ],
                },
            )
        elif "Failed" in phases:
            _update(
                ctx,
                job,
                {
                    **status,
                    "failed": 1,
                    "active": 0,
                    "conditions": [_condition("Failed", "True", "BackoffLimitExceeded")],
                },
            )
        elif "Running" in phases:
            _update(ctx, job, {**status, "active": 1, "ready": 1})


def reconcile_pods(ctx: ReconcileContext) -> None:
    """Pending -> Running after ~5 s; pods owned by a Job -> Succeeded ~10 s later."""
    for pod in ctx.store.list("v1", "Pod"):
        status = pod.get("status") or {}
        phase = status.get("phase", "Pending")
        containers = [c.get("name", "") for c in pod.get("spec", {}).get("containers") or []]
        images = {c.get("name", ""): c.get("image", "") for c in pod.get("spec", {}).get("containers") or []}
        if pod["metadata"].get("deletionTimestamp"):
            continue
        if phase == "Pending" and ctx.waited(pod, 5):
            now = now_rfc3339()
            _update(
                ctx,
                pod,
                {
                    **status,
                    "phase": "Running",
                    "hostIP": "10.0.0.10",
                    "podIP": _pod_ip(pod["metadata"]["uid"]),
                    "startTime": now,
                    "conditions": [
                        _condition(t, "True", "") for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")
                    ],
                    "containerStatuses": [
                        {
                            "name": n,
                            "image": images[n],
                            "imageID": "",
                            "ready": True,
                            "started": True,
                            "restartCount": 0,
                            "state": {"running": {"startedAt": now}},
                        }
                        for n in containers
                    ],
                },
            )
        elif phase == "Running" and _owned_by(pod, "Job") and ctx.waited(pod, 10, "running"):
            now = now_rfc3339()
            _update(
                ctx,
                pod,
                {
                    **status,
                    "phase": "Succeeded",
                    "conditions": [
                        _condition(t, "True" if t in ("PodScheduled", "Initialized") else "False", "PodCompleted")
                        for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")
                    ],
                    "containerStatuses": [
                        {
                            "name": n,
                            "image": images[n],
                            "imageID": "",
                            "ready": False,
                            "started": False,
                            "restartCount": 0,
                            "state": {"terminated": {"exitCode": 0, "reason": "Completed", "finishedAt": now}},
                        }
                        for n in containers
                    ],
                },
            )


def _pod_ip(uid: str) -> str:
    return f"10.1.{int(uid[:2], 16)}.{int(uid[2:4], 16) or 1}"


def _owned_by(obj: Obj, kind: str) -> bool:
    return any(o.get("kind") == kind for o in obj["metadata"].get("ownerReferences") or [])


def reconcile_volumes(ctx: ReconcileContext) -> None:
    """PVCs naming an existing PV bind to it; unclaimed PVs are Available."""
    pvs = {pv["metadata"]["name"]: pv for pv in ctx.store.list("v1", "PersistentVolume")}
    claimed: set[str] = set()
    for pvc in ctx.store.list("v1", "PersistentVolumeClaim"):
        vol = pvc.get("spec", {}).get("volumeName")
        pv = pvs.get(vol or "")
        if pv is None:
            continue
        claimed.add(pv["metadata"]["name"])
        meta = pvc["metadata"]
        ref = {
            "kind": "PersistentVolumeClaim",
            "namespace": meta["namespace"],
            "name": meta["name"],
            "uid": meta["uid"],
            "apiVersion": "v1",
        }
        if pv.get("spec", {}).get("claimRef") != ref:
            body = copy.deepcopy(pv)
            body["spec"]["claimRef"] = ref
            ctx.store.put(body)
            pv = ctx.store.get("v1", "PersistentVolume", pv["metadata"]["name"]) or pv
        _update(ctx, pv, {"phase": "Bound"})
        _update(
            ctx,
            pvc,
            {
                "phase": "Bound",
                "accessModes": pv.get("spec", {}).get("accessModes") or pvc.get("spec", {}).get("accessModes") or [],
                "capacity": pv.get("spec", {}).get("capacity") or {},
            },
        )
    for name, pv in pvs.items():
        if name not in claimed and not pv.get("spec", {}).get("claimRef"):
            _update(ctx, pv, {"phase": "Available"})


def reconcile_garbage(ctx: ReconcileContext) -> None:
    """Delete dependents whose owners (by uid) are gone; collect pods owned by a deleted Job etc."""
    store = ctx.store
    for kind, av in (("Pod", "v1"), ("ReplicaSet", "apps/v1"), ("Job", "batch/v1")):
        for obj in store.list(av, kind):
            refs = obj["metadata"].get("ownerReferences") or []
            if not refs:
                continue
            alive = False
            for ref in refs:
                try:
                    owner = store.get(
                        ref.get("apiVersion", ""),
                        ref.get("kind", ""),
                        ref.get("name", ""),
                        obj["metadata"].get("namespace"),
                    )
                except ApiError:
                    owner = None
                if owner is None:
                    try:
                        owner = store.get(ref.get("apiVersion", ""), ref.get("kind", ""), ref.get("name", ""))
                    except ApiError:
                        owner = None
                if owner is not None and owner["metadata"]["uid"] == ref.get("uid"):
                    alive = True
            if not alive:
                store.delete(av, kind, obj["metadata"]["name"], obj["metadata"].get("namespace"))


DEFAULT_RECONCILERS: tuple[Reconciler, ...] = (
    reconcile_workloads,
    reconcile_daemonsets,
    reconcile_jobs,
    reconcile_pods,
    reconcile_volumes,
    reconcile_garbage,
)


class ControllerLoop:
    """A daemon thread calling each reconciler for each cluster every `interval` seconds."""

    def __init__(
        self,
        stores: Callable[[], list[ClusterStore]],
        reconcilers: list[Reconciler],
        time_scale: float,
        interval: float = 0.05,
    ) -> None:
        self._stores = stores
        self.reconcilers = reconcilers
        self._time_scale = time_scale
        self._interval = interval
        self._stop = threading.Event()
        self._contexts: dict[int, ReconcileContext] = {}
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="kube-controllers", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=5)

    def tick(self) -> None:
        for store in self._stores():
            ctx = self._contexts.setdefault(id(store), ReconcileContext(store, self._time_scale))
            for reconcile in list(self.reconcilers):
                try:
                    reconcile(ctx)
                except ApiError:
                    pass  # raced with a client write; the next tick retries
                except Exception:  # a broken reconciler must not stop the others
                    log.exception("reconciler %s failed", getattr(reconcile, "__name__", reconcile))

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            self.tick()
