"""metrics-server's aggregated API (`metrics.k8s.io/v1beta1`, what `kubectl top nodes|pods` reads), served while
the metrics-server add-on's Deployment (`kube-system/metrics-server`) is available, as on EKS.

Usage is simulated, steady and plausible: a running container uses part of what it requests (a training or
serving container with GPUs most of its CPU request), with a small wobble per scrape window; a node uses what
its pods use plus the kubelet's and system daemons' share. Only Running pods have metrics.
"""

from __future__ import annotations

import hashlib
import math
import time
from typing import Any

from sandbox.kube.errors import ApiError, not_found
from sandbox.kube.registry import ResourceType
from sandbox.kube.selectors import label_matcher
from sandbox.kube.store import ClusterStore, get_path, now_rfc3339

Obj = dict[str, Any]
GROUP, VERSION = "metrics.k8s.io", "v1beta1"
WINDOW_S = 15.0
SYSTEM_CPU_M, SYSTEM_MEMORY_MI = 120, 900  # kubelet, containerd, the add-ons' DaemonSets


def _cpu_millis(value: Any) -> float:
    text = str(value or "0")
    if text.endswith("m"):
        return float(text[:-1])
    try:
        return float(text) * 1000
    except ValueError:
        return 0.0


_MEM = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}


def _bytes(value: Any) -> float:
    text = str(value or "0")
    for suffix, factor in _MEM.items():
        if text.endswith(suffix):
            try:
                return float(text[: -len(suffix)]) * factor
            except ValueError:
                return 0.0
    try:
        return float(text)
    except ValueError:
        return 0.0


def _wobble(key: str, spread: float) -> float:
    """A factor near 1 that changes once per scrape window, the same for every reader in that window."""
    window = int(time.time() // WINDOW_S)
    digest = hashlib.sha256(f"{key}/{window}".encode()).digest()
    return 1 + spread * (digest[0] / 255 - 0.5)


def _gpus(container: Obj) -> int:
    res = container.get("resources") or {}
    value = (res.get("limits") or {}).get("nvidia.com/gpu") or (res.get("requests") or {}).get("nvidia.com/gpu")
    try:
        return int(str(value or 0))
    except ValueError:
        return 0


def container_usage(pod: Obj, container: Obj) -> tuple[int, int]:
    """(CPU millicores, memory bytes) a running container uses now."""
    key = f"{pod['metadata'].get('uid', '')}/{container.get('name', '')}"
    seed = hashlib.sha256(key.encode()).digest()
    requests = (container.get("resources") or {}).get("requests") or {}
    limits = (container.get("resources") or {}).get("limits") or {}
    cpu_req = _cpu_millis(requests.get("cpu") or limits.get("cpu"))
    mem_req = _bytes(requests.get("memory") or limits.get("memory"))
    busy = 0.85 if _gpus(container) else 0.2 + 0.5 * seed[1] / 255
    cpu = cpu_req * busy if cpu_req else 1 + 40 * seed[2] / 255 + 900 * _gpus(container)
    mem = mem_req * (0.4 + 0.4 * seed[3] / 255) if mem_req else (12 + 120 * seed[4] / 255) * 2**20
    return max(1, math.ceil(cpu * _wobble(key + "/cpu", 0.2))), int(mem * _wobble(key + "/mem", 0.04))


def _running(pod: Obj) -> bool:
    return get_path(pod, "status.phase") == "Running" and not get_path(pod, "metadata.deletionTimestamp")


def _meta(obj: Obj) -> Obj:
    meta = obj["metadata"]
    out = {"name": meta["name"], "creationTimestamp": now_rfc3339()}
    if meta.get("namespace"):
        out["namespace"] = meta["namespace"]
    if meta.get("labels"):
        out["labels"] = meta["labels"]
    return out


def pod_metrics(pod: Obj) -> Obj:
    containers = []
    for c in get_path(pod, "spec.containers") or []:
        cpu, mem = container_usage(pod, c)
        containers.append({"name": c.get("name", ""), "usage": {"cpu": f"{cpu * 1_000_000}n",
                                                                "memory": f"{mem // 1024}Ki"}})
    return {"kind": "PodMetrics", "apiVersion": f"{GROUP}/{VERSION}", "metadata": _meta(pod),
            "timestamp": now_rfc3339(), "window": f"{WINDOW_S:g}s", "containers": containers}


def node_metrics(node: Obj, pods: list[Obj]) -> Obj:
    cpu, mem = SYSTEM_CPU_M, SYSTEM_MEMORY_MI * 2**20
    for pod in pods:
        for c in get_path(pod, "spec.containers") or []:
            c_cpu, c_mem = container_usage(pod, c)
            cpu, mem = cpu + c_cpu, mem + c_mem
    name = node["metadata"]["name"]
    cpu = int(cpu * _wobble(name + "/cpu", 0.1))
    allocatable = get_path(node, "status.allocatable") or {}
    cpu = min(cpu, int(_cpu_millis(allocatable.get("cpu"))) or cpu)
    return {"kind": "NodeMetrics", "apiVersion": f"{GROUP}/{VERSION}", "metadata": _meta(node),
            "timestamp": now_rfc3339(), "window": f"{WINDOW_S:g}s",
            "usage": {"cpu": f"{cpu * 1_000_000}n", "memory": f"{int(mem) // 1024}Ki"}}


def read(store: ClusterStore, rt: ResourceType, namespace: str | None, name: str | None, query: dict[str, str]) -> Obj:
    """GET nodes or pods of metrics.k8s.io (one by name, or a list honouring labelSelector)."""
    selector = label_matcher(query.get("labelSelector"))
    pods = [p for p in store.list("v1", "Pod") if _running(p)]
    if rt.plural == "nodes":
        nodes = store.list("v1", "Node")
        if name is not None:
            nodes = [n for n in nodes if n["metadata"]["name"] == name]
            if not nodes:
                raise not_found("nodes.metrics.k8s.io", name)
        items = [node_metrics(n, [p for p in pods if get_path(p, "spec.nodeName") == n["metadata"]["name"]])
                 for n in nodes if name is not None or selector(n)]
    elif rt.plural == "pods":
        scoped = [p for p in pods if namespace is None or p["metadata"].get("namespace") == namespace]
        if name is not None:
            scoped = [p for p in scoped if p["metadata"]["name"] == name]
            if not scoped:
                raise not_found("pods.metrics.k8s.io", name)
        items = [pod_metrics(p) for p in scoped if name is not None or selector(p)]
    else:
        raise ApiError(404, "NotFound", "the server could not find the requested resource")
    if name is not None:
        return items[0]
    return {"kind": f"{rt.kind}List", "apiVersion": f"{GROUP}/{VERSION}",
            "metadata": {"resourceVersion": ""}, "items": items}


def serving(store: ClusterStore) -> bool:
    """Is metrics-server running (its Deployment available)?"""
    dep = store.get("apps/v1", "Deployment", "metrics-server", "kube-system")
    return bool(dep and (get_path(dep, "status.availableReplicas") or 0) >= 1)
