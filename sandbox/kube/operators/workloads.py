"""Workloads: Deployments, StatefulSets, ReplicaSets and DaemonSets become ready; a Job runs a pod
to completion; pods go Pending -> Running (-> Succeeded when a Job owns them)."""

from __future__ import annotations

import copy
from typing import Any

from sandbox.kube.errors import ApiError
from sandbox.kube.operators.base import ReconcileContext, Reconciler, condition, update_status
from sandbox.kube.operators.scheduler import node_ip
from sandbox.kube.store import Obj, now_rfc3339, random_suffix


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
                    condition(
                        "Available",
                        "True" if ready else "False",
                        "MinimumReplicasAvailable" if ready else "MinimumReplicasUnavailable",
                    ),
                    condition("Progressing", "True", "NewReplicaSetAvailable" if ready else "ReplicaSetUpdated"),
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
            update_status(ctx, obj, status)


def _expression_holds(labels: dict[str, str], e: dict[str, Any]) -> bool:
    key, op, values = e.get("key", ""), e.get("operator", "In"), e.get("values") or []
    if op == "In":
        return labels.get(key) in values
    if op == "NotIn":
        return labels.get(key) not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    return True


def schedulable_on(pod_spec: dict[str, Any], node: Obj) -> bool:
    """Does the pod template's nodeSelector and required node affinity admit this node (as the scheduler
    decides where a DaemonSet runs)?"""
    labels = (node.get("metadata") or {}).get("labels") or {}
    if any(labels.get(k) != v for k, v in (pod_spec.get("nodeSelector") or {}).items()):
        return False
    required = (((pod_spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms = required.get("nodeSelectorTerms") or []
    return not terms or any(all(_expression_holds(labels, e) for e in t.get("matchExpressions") or [])
                            for t in terms)


def reconcile_daemonsets(ctx: ReconcileContext) -> None:
    all_nodes = ctx.store.list("v1", "Node")
    for obj in ctx.store.list("apps/v1", "DaemonSet"):
        pod_spec = (((obj.get("spec") or {}).get("template") or {}).get("spec")) or {}
        nodes = sum(1 for n in all_nodes if schedulable_on(pod_spec, n))
        ready = ctx.waited(obj, 10)
        n = nodes if ready else 0
        update_status(
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
                created = ctx.store.create(
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
            ctx.store.record_event(job, "Normal", "SuccessfulCreate", f"Created pod: {created['metadata']['name']}",
                                   "job-controller")
            update_status(ctx, job, {**status, "active": 1, "startTime": status.get("startTime") or now_rfc3339()})
            continue
        phases = [p.get("status", {}).get("phase") for p in pods]
        if "Succeeded" in phases:
            update_status(
                ctx,
                job,
                {
                    "startTime": status.get("startTime") or now_rfc3339(),
                    "completionTime": now_rfc3339(),
                    "succeeded": 1,
                    "ready": 0,
                    "conditions": [
                        condition("SuccessCriteriaMet", "True", "CompletionsReached"),
                        condition("Complete", "True", "CompletionsReached"),
                    ],
                },
            )
            ctx.store.record_event(job, "Normal", "Completed", "Job completed", "job-controller")
        elif "Failed" in phases:
            update_status(
                ctx,
                job,
                {
                    **status,
                    "failed": 1,
                    "active": 0,
                    "conditions": [condition("Failed", "True", "BackoffLimitExceeded")],
                },
            )
            ctx.store.record_event(job, "Warning", "BackoffLimitExceeded",
                                   "Job has reached the specified backoff limit", "job-controller")
        elif "Running" in phases:
            update_status(ctx, job, {**status, "active": 1, "ready": 1})


STUCK = ("ErrImagePull", "CreateContainerConfigError")  # waiting reasons that keep a pod Pending


def reconcile_pods(ctx: ReconcileContext) -> None:
    """Pending -> Running ~5 s after the scheduler bound it to a Node (at once if the cluster has no
    Nodes); pods owned by a Job -> Succeeded ~10 s later."""
    has_nodes = ctx.store.count("v1", "Node") > 0
    for pod in ctx.store.list("v1", "Pod"):
        status = pod.get("status") or {}
        phase = status.get("phase", "Pending")
        containers = [c.get("name", "") for c in pod.get("spec", {}).get("containers") or []]
        images = {c.get("name", ""): c.get("image", "") for c in pod.get("spec", {}).get("containers") or []}
        if pod["metadata"].get("deletionTimestamp"):
            continue
        node_name = (pod.get("spec") or {}).get("nodeName")
        if phase == "Pending" and has_nodes and not node_name:
            continue  # the scheduler has not placed it (yet)
        if any((cs.get("state") or {}).get("waiting", {}).get("reason") in STUCK
               for cs in status.get("containerStatuses") or []):
            continue  # an image that cannot be pulled, or a Secret env that does not exist, keeps its pod Pending
        if phase == "Pending" and ctx.waited(pod, 5):
            now = now_rfc3339()
            host_ip = (node_ip(ctx.store, node_name) if node_name else None) or "10.0.0.10"
            update_status(
                ctx,
                pod,
                {
                    **status,
                    "phase": "Running",
                    "hostIP": host_ip,
                    "podIP": _pod_ip(pod["metadata"]["uid"]),
                    "startTime": now,
                    "conditions": [
                        condition(t, "True", "") for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")
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
            _kubelet_events(ctx, pod, node_name or "")
        elif (phase == "Running" and _owned_by(pod, "Job") and ctx.waited(pod, 10, "running")
              and "podstart.dev/download" not in (pod["metadata"].get("labels") or {})):  # operators/downloads
            now = now_rfc3339()
            update_status(
                ctx,
                pod,
                {
                    **status,
                    "phase": "Succeeded",
                    "conditions": [
                        condition(t, "True" if t in ("PodScheduled", "Initialized") else "False", "PodCompleted")
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


def _kubelet_events(ctx: ReconcileContext, pod: Obj, node: str) -> None:
    """What the kubelet reports while it starts a pod's containers."""
    for c in (pod.get("spec") or {}).get("containers") or []:
        image, name = c.get("image", ""), c.get("name", "")
        ref = {**pod, "metadata": {**pod["metadata"]}}
        for etype, reason, message in (
            ("Normal", "Pulling", f'Pulling image "{image}"'),
            ("Normal", "Pulled", f'Successfully pulled image "{image}" in 2.1s (2.1s including waiting)'),
            ("Normal", "Created", f"Created container: {name}"),
            ("Normal", "Started", f"Started container {name}"),
        ):
            ctx.store.record_event(ref, etype, reason, message, "kubelet", node)


def _pod_ip(uid: str) -> str:
    return f"10.1.{int(uid[:2], 16)}.{int(uid[2:4], 16) or 1}"


def _owned_by(obj: Obj, kind: str) -> bool:
    return any(o.get("kind") == kind for o in obj["metadata"].get("ownerReferences") or [])


RECONCILERS: tuple[Reconciler, ...] = (reconcile_workloads, reconcile_daemonsets, reconcile_jobs, reconcile_pods)
