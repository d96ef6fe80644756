"""The simulated KubeRay operator in the embedded Kubernetes, as a user sees it with the real objects: nothing happens
until the operator the kuberay_operator feature applies is Available; a VERL RayJob becomes a RayCluster it owns and
head/worker pods on nodes with free GPUs (Pending, Unschedulable with the numbers, when none are free); a dead head
pod is a failed attempt retried on a new RayCluster within `backoffLimit`, past it the job is Failed; deleting the
RayJob removes its RayCluster and pods."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from functions.domain.features import kuberay
from functions.domain.training import jobs as training
from functions.domain.training import recipes
from sandbox.kube import KubeApiServer
from sandbox.kube.store import ClusterStore

IMAGE = "verlai/verl:app-verl0.5-vllm0.9.1-mcore0.12.2-te2.2"


@pytest.fixture
def store() -> Iterator[ClusterStore]:
    srv = KubeApiServer(time_scale=600.0)
    srv.start()
    srv.add_cluster("ray")
    s = srv.store("ray")
    for i in range(2):  # two 1-GPU nodes, as HyperPod ml.g5.8xlarge instances
        s.create({"apiVersion": "v1", "kind": "Node",
                  "metadata": {"name": f"hyperpod-i-{i}", "labels": {
                      "node.kubernetes.io/instance-type": "ml.g5.8xlarge",
                      "sagemaker.amazonaws.com/instance-group-name": "gpu"}},
                  "status": {"allocatable": {"nvidia.com/gpu": "1", "cpu": "32"},
                             "conditions": [{"type": "Ready", "status": "True"}]}})
    yield s
    srv.stop()


def _until(check: Callable[[], Any], timeout: float = 15.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (out := check()):
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.05)
    return out


def _rayjob(name: str, nodes: int, max_retries: int = 1) -> dict[str, Any]:
    job = training.JobSubmit(name=name, recipe="verl", image=IMAGE, instance_type="ml.g5.8xlarge", nodes=nodes,
                             gpus_per_node=1, max_retries=max_retries)
    return training.render(job, recipes.parse_parameters("verl", "1", {}))


def _status(store: ClusterStore, name: str) -> dict[str, Any]:
    return (store.get("ray.io/v1", "RayJob", name, "default") or {}).get("status") or {}


def _pods(store: ClusterStore, name: str) -> list[dict[str, Any]]:
    return store.list("v1", "Pod", "default", label_selector=f"podstart.dev/job={name}")


def _install(store: ClusterStore) -> None:
    for obj in kuberay.objects():
        store.create(obj)


def test_nothing_runs_until_the_operator_is_available_then_the_job_runs_on_gpu_nodes(store: ClusterStore) -> None:
    # Given the CRDs alone (the operator's Deployment not there), a RayJob stays as created
    for c in kuberay.crds():
        store.create(c)
    store.create(_rayjob("grpo", nodes=2))
    time.sleep(0.5)
    assert _status(store, "grpo") == {} and store.list("ray.io/v1", "RayCluster") == []
    # When the operator is installed and Available
    for obj in kuberay.operator_objects():
        store.create(obj)
    # Then the job gets a RayCluster it owns, one head and two 1-GPU workers on the two GPU nodes, and runs
    st = _until(lambda: (s := _status(store, "grpo")).get("jobStatus") == "RUNNING" and s)
    assert st["jobDeploymentStatus"] == "Running" and st["failed"] == 0
    rc = store.get("ray.io/v1", "RayCluster", st["rayClusterName"], "default")
    assert rc["metadata"]["ownerReferences"][0]["kind"] == "RayJob" and rc["status"]["state"] == "ready"
    pods = _pods(store, "grpo")
    kinds = sorted(p["metadata"]["labels"]["ray.io/node-type"] for p in pods)
    assert kinds == ["head", "worker", "worker"]
    workers = [p for p in pods if p["metadata"]["labels"]["ray.io/node-type"] == "worker"]
    assert sorted(p["spec"]["nodeName"] for p in workers) == ["hyperpod-i-0", "hyperpod-i-1"]
    head = rc["status"]["head"]["podName"]
    _until(lambda: any("samples/s" in line for line in store.read_log("default", head).splitlines()))
    # When the RayJob is deleted, its RayCluster and its pods go with it (ownerReferences)
    store.delete("ray.io/v1", "RayJob", "grpo", "default")
    _until(lambda: not _pods(store, "grpo") and not store.list("ray.io/v1", "RayCluster"))


def test_a_worker_that_finds_no_free_gpu_waits_unschedulable_with_the_numbers(store: ClusterStore) -> None:
    _install(store)
    store.create(_rayjob("big", nodes=3))  # three 1-GPU workers, two 1-GPU nodes
    pending = _until(lambda: [p for p in _pods(store, "big") if not p["spec"].get("nodeName")])
    [why] = [c["message"] for c in pending[0]["status"]["conditions"] if c["type"] == "PodScheduled"]
    assert "Insufficient nvidia.com/gpu" in why and "0/2 nodes are available" in why
    time.sleep(0.5)
    assert _status(store, "big")["jobDeploymentStatus"] == "Initializing"  # not all pods run: not submitted


def test_a_dead_head_is_a_failed_attempt_retried_within_backoff_limit_then_failed(store: ClusterStore) -> None:
    _install(store)
    store.create(_rayjob("flaky", nodes=1, max_retries=1))
    first = _until(lambda: (s := _status(store, "flaky")).get("jobStatus") == "RUNNING" and s)
    rc = store.get("ray.io/v1", "RayCluster", first["rayClusterName"], "default")
    store.delete("v1", "Pod", rc["status"]["head"]["podName"], "default")
    # the attempt failed: retried on a new RayCluster, one retry of the budget used
    second = _until(lambda: (s := _status(store, "flaky")).get("jobStatus") == "RUNNING"
                    and s["rayClusterName"] != first["rayClusterName"] and s)
    assert second["failed"] == 1
    obj = store.get("ray.io/v1", "RayJob", "flaky", "default")
    assert training.budget_of("ray", obj).model_dump() == {"used": 1, "max": 1, "exhausted": False}
    rc = store.get("ray.io/v1", "RayCluster", second["rayClusterName"], "default")
    store.delete("v1", "Pod", rc["status"]["head"]["podName"], "default")
    # past backoffLimit: Failed, the budget exhausted, the reason said
    final = _until(lambda: (s := _status(store, "flaky")).get("jobDeploymentStatus") == "Failed" and s)
    assert final["jobStatus"] == "FAILED" and final["failed"] == 2 and "backoffLimit 1" in final["message"]
    obj = store.get("ray.io/v1", "RayJob", "flaky", "default")
    assert training.status_of("ray", obj) == "Failed"
    assert training.budget_of("ray", obj).model_dump() == {"used": 1, "max": 1, "exhausted": True}
