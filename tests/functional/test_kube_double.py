"""The embedded Kubernetes API double, driven by the official client and kubectl over real sockets."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import urllib3
import yaml
from kubernetes import client, watch
from kubernetes.client.rest import ApiException
from kubernetes.dynamic import DynamicClient

from sandbox.kube import KubeApiServer
from tests.reference import load_crd

RAYCLUSTER_CRD = "kuberay_v1.7.0_rayclusters.yaml"
TOKEN = "k8s-aws-v1.aHR0cHM6Ly9zdHMuYW1hem9uYXdzLmNvbS8"
KUBECTL = shutil.which("kubectl")


def _api(base_url: str) -> client.ApiClient:
    cfg = client.Configuration(host=base_url)
    cfg.api_key = {"authorization": f"Bearer {TOKEN}"}
    return client.ApiClient(cfg)


@pytest.fixture(scope="module")
def server() -> Iterator[KubeApiServer]:
    srv = KubeApiServer(time_scale=60.0)
    srv.start()
    srv.add_cluster("demo")
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def api(server: KubeApiServer) -> client.ApiClient:
    return _api(server.clusters()["demo"])


@pytest.fixture
def namespace(api: client.ApiClient, request: pytest.FixtureRequest) -> str:
    name = request.node.name.replace("_", "-")[:50].strip("-").lower()
    client.CoreV1Api(api).create_namespace({"metadata": {"name": name}})
    return name


def _deployment(name: str, replicas: int, image: str = "nginx:1.27") -> dict:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "web", "image": image}]},
            },
        },
    }


def test_namespace_and_configmap_crud(api: client.ApiClient) -> None:
    v1 = client.CoreV1Api(api)
    # Given a new namespace
    ns = v1.create_namespace({"metadata": {"name": "crud"}})
    assert ns.status.phase == "Active"
    assert {"default", "kube-system", "crud"} <= {n.metadata.name for n in v1.list_namespace().items}
    # When a ConfigMap is created in it
    cm = v1.create_namespaced_config_map("crud", {"metadata": {"name": "settings"}, "data": {"k": "v"}})
    # Then it carries server-set metadata and reads back
    assert cm.metadata.uid and cm.metadata.resource_version and cm.metadata.creation_timestamp
    assert v1.read_namespaced_config_map("settings", "crud").data == {"k": "v"}
    listed = v1.list_namespaced_config_map("crud")
    assert [c.metadata.name for c in listed.items] == ["settings"]
    assert int(listed.metadata.resource_version) >= int(cm.metadata.resource_version)
    # And deleting it makes a later read 404 with a Status body
    v1.delete_namespaced_config_map("settings", "crud")
    with pytest.raises(ApiException) as err:
        v1.read_namespaced_config_map("settings", "crud")
    assert err.value.status == 404
    assert json.loads(err.value.body)["reason"] == "NotFound"


def test_label_and_field_selectors_and_pagination(api: client.ApiClient, namespace: str) -> None:
    v1 = client.CoreV1Api(api)
    for name, env in (("a", "prod"), ("b", "dev"), ("c", "prod"), ("d", None)):
        labels = {"tier": "web", **({"env": env} if env else {})}
        v1.create_namespaced_config_map(namespace, {"metadata": {"name": name, "labels": labels}})

    def names(**kw: str) -> list[str]:
        return [c.metadata.name for c in v1.list_namespaced_config_map(namespace, **kw).items]

    assert names(label_selector="env=prod") == ["a", "c"]
    assert names(label_selector="env==prod,tier=web") == ["a", "c"]
    assert names(label_selector="env!=prod") == ["b", "d"]
    assert names(label_selector="env in (dev, prod)") == ["a", "b", "c"]
    assert names(label_selector="env notin (prod)") == ["b", "d"]
    assert names(label_selector="env") == ["a", "b", "c"]
    assert names(label_selector="!env") == ["d"]
    assert names(field_selector="metadata.name=b") == ["b"]
    assert names(field_selector="metadata.name!=b") == ["a", "c", "d"]
    # cluster-wide list across namespaces honours selectors too
    everywhere = v1.list_config_map_for_all_namespaces(field_selector=f"metadata.namespace={namespace}")
    assert len(everywhere.items) == 4
    # limit/continue pages through the list
    first = v1.list_namespaced_config_map(namespace, limit=3)
    rest = v1.list_namespaced_config_map(namespace, limit=3, _continue=first.metadata._continue)
    assert [c.metadata.name for c in first.items + rest.items] == ["a", "b", "c", "d"]
    assert rest.metadata._continue is None


def test_conflicts_on_duplicate_create_and_stale_replace(api: client.ApiClient, namespace: str) -> None:
    v1 = client.CoreV1Api(api)
    cm = v1.create_namespaced_config_map(namespace, {"metadata": {"name": "x"}, "data": {"n": "1"}})
    with pytest.raises(ApiException) as dup:
        v1.create_namespaced_config_map(namespace, {"metadata": {"name": "x"}})
    assert (dup.value.status, json.loads(dup.value.body)["reason"]) == (409, "AlreadyExists")
    # Given a replace that bumps the resourceVersion
    cm.data = {"n": "2"}
    fresh = v1.replace_namespaced_config_map("x", namespace, cm)
    assert fresh.metadata.resource_version != cm.metadata.resource_version
    # When the stale copy is replaced again, then the server says Conflict
    cm.data = {"n": "3"}
    with pytest.raises(ApiException) as stale:
        v1.replace_namespaced_config_map("x", namespace, cm)
    assert (stale.value.status, json.loads(stale.value.body)["reason"]) == (409, "Conflict")


def test_merge_json_and_strategic_patch(api: client.ApiClient, namespace: str) -> None:
    v1, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    v1.create_namespaced_config_map(namespace, {"metadata": {"name": "p"}, "data": {"a": "1", "b": "2"}})
    merged = v1.patch_namespaced_config_map("p", namespace, {"data": {"b": None, "c": "3"}})
    assert merged.data == {"a": "1", "c": "3"}
    api.default_headers["Content-Type"] = "application/json-patch+json"
    try:
        patched = v1.patch_namespaced_config_map("p", namespace, [{"op": "replace", "path": "/data/a", "value": "9"}])
    finally:
        del api.default_headers["Content-Type"]
    assert patched.data == {"a": "9", "c": "3"}
    # strategic merge (the typed client's default for a dict body) merges containers by name
    apps.create_namespaced_deployment(namespace, _deployment("sm", 1))
    body = {"spec": {"template": {"spec": {"containers": [{"name": "sidecar", "image": "busybox"}]}}}}
    dep = apps.patch_namespaced_deployment("sm", namespace, body)
    assert [c.name for c in dep.spec.template.spec.containers] == ["web", "sidecar"]
    assert dep.metadata.generation == 2


def test_server_side_apply_deployment_becomes_ready(api: client.ApiClient, namespace: str) -> None:
    deployments = DynamicClient(api).resources.get(api_version="apps/v1", kind="Deployment")
    # Given a Deployment created by server-side apply
    created = deployments.server_side_apply(
        body=_deployment("web", 2), namespace=namespace, name="web", field_manager="podstart"
    )
    assert created.metadata.generation == 1
    assert created.metadata.managedFields[0].manager == "podstart"
    # When it is applied again with more replicas and a new image
    updated = deployments.server_side_apply(
        body=_deployment("web", 3, "nginx:1.28"), namespace=namespace, name="web", field_manager="podstart"
    )
    assert updated.metadata.generation == 2
    assert updated.spec.template.spec.containers[0].image == "nginx:1.28"
    # Then the simulated controller reports it ready, as seen through a watch
    apps = client.AppsV1Api(api)
    ready = None
    for event in watch.Watch().stream(
        apps.list_namespaced_deployment, namespace, field_selector="metadata.name=web", timeout_seconds=5
    ):
        dep = event["object"]
        status = dep.status
        if (
            status
            and status.observed_generation == dep.metadata.generation
            and status.ready_replicas == 3
            and status.available_replicas == 3
        ):
            ready = dep
            break
    assert ready is not None, "deployment never became ready"
    assert {c.type: c.status for c in ready.status.conditions}["Available"] == "True"
    scale = apps.read_namespaced_deployment_scale("web", namespace)
    assert (scale.spec.replicas, scale.status.selector) == (3, "app=web")


def test_crd_registration_then_custom_objects_crud(api: client.ApiClient, namespace: str) -> None:
    ext, co = client.ApiextensionsV1Api(api), client.CustomObjectsApi(api)
    # Given the KubeRay RayCluster CRD
    crd = ext.create_custom_resource_definition(load_crd(RAYCLUSTER_CRD))
    assert {c.type: c.status for c in crd.status.conditions}["Established"] == "True"
    groups = {g.name for g in client.ApisApi(api).get_api_versions().groups}
    assert "ray.io" in groups
    resources = client.CustomObjectsApi(api).get_api_resources("ray.io", "v1")
    assert any(r.name == "rayclusters" and r.namespaced for r in resources.resources)
    # When a RayCluster is created, read, listed and status-patched
    body = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "rc", "labels": {"team": "ml"}},
        "spec": {"headGroupSpec": {"rayStartParams": {}, "template": {"spec": {"containers": []}}}},
    }
    made = co.create_namespaced_custom_object("ray.io", "v1", namespace, "rayclusters", body)
    assert made["metadata"]["uid"] and made["kind"] == "RayCluster"
    got = co.get_namespaced_custom_object("ray.io", "v1", namespace, "rayclusters", "rc")
    assert got["spec"] == body["spec"]
    listed = co.list_namespaced_custom_object("ray.io", "v1", namespace, "rayclusters", label_selector="team=ml")
    assert listed["kind"] == "RayClusterList" and len(listed["items"]) == 1
    co.patch_namespaced_custom_object_status(
        "ray.io", "v1", namespace, "rayclusters", "rc", {"status": {"state": "ready"}}
    )
    # Then status changes via /status and spec is untouched
    got = co.get_namespaced_custom_object("ray.io", "v1", namespace, "rayclusters", "rc")
    assert got["status"] == {"state": "ready"} and got["metadata"]["generation"] == 1
    # And deleting the CRD removes its objects and its API
    ext.delete_custom_resource_definition("rayclusters.ray.io")
    with pytest.raises(ApiException) as gone:
        co.list_namespaced_custom_object("ray.io", "v1", namespace, "rayclusters")
    assert gone.value.status == 404


def test_watch_streams_added_modified_deleted_and_times_out(api: client.ApiClient, namespace: str) -> None:
    v1 = client.CoreV1Api(api)
    rv = v1.list_namespaced_config_map(namespace).metadata.resource_version
    v1.create_namespaced_config_map(namespace, {"metadata": {"name": "w"}, "data": {"n": "1"}})
    v1.patch_namespaced_config_map("w", namespace, {"data": {"n": "2"}})
    v1.delete_namespaced_config_map("w", namespace)
    started = time.monotonic()
    events = [
        (e["type"], e["object"].metadata.name)
        for e in watch.Watch().stream(v1.list_namespaced_config_map, namespace, resource_version=rv, timeout_seconds=1)
    ]
    assert events == [("ADDED", "w"), ("MODIFIED", "w"), ("DELETED", "w")]
    assert 0.9 <= time.monotonic() - started < 10  # it ended on its timeout (a loaded machine may be slow)


def test_watch_without_resource_version_lists_current_objects_first(api: client.ApiClient, namespace: str) -> None:
    v1 = client.CoreV1Api(api)
    v1.create_namespaced_config_map(namespace, {"metadata": {"name": "existing"}})
    stream = watch.Watch().stream(v1.list_namespaced_config_map, namespace, timeout_seconds=1)
    first = next(stream)
    assert (first["type"], first["object"].metadata.name) == ("ADDED", "existing")
    stream.close()


def test_pod_runs_and_serves_logs(server: KubeApiServer, api: client.ApiClient, namespace: str) -> None:
    v1 = client.CoreV1Api(api)
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "main", "image": "busybox"}]}}
    assert v1.create_namespaced_pod(namespace, pod).status.phase == "Pending"
    deadline = time.monotonic() + 5
    while v1.read_namespaced_pod("p", namespace).status.phase != "Running":
        assert time.monotonic() < deadline, "pod never ran"
        time.sleep(0.05)
    assert v1.read_namespaced_pod("p", namespace).status.container_statuses[0].ready is True
    server.store("demo").append_log(namespace, "p", "one\ntwo\nthree\n")
    assert v1.read_namespaced_pod_log("p", namespace) == "one\ntwo\nthree\n"
    assert v1.read_namespaced_pod_log("p", namespace, tail_lines=1, container="main") == "three\n"
    running = v1.list_namespaced_pod(namespace, field_selector="status.phase=Running")
    assert [p.metadata.name for p in running.items] == ["p"]


def test_job_completes(api: client.ApiClient, namespace: str) -> None:
    batch = client.BatchV1Api(api)
    template = {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}
    batch.create_namespaced_job(namespace, {"metadata": {"name": "j"}, "spec": {"template": template}})
    deadline = time.monotonic() + 5
    while not getattr(batch.read_namespaced_job_status("j", namespace).status, "succeeded", None):
        assert time.monotonic() < deadline, "job never completed"
        time.sleep(0.05)
    job = batch.read_namespaced_job("j", namespace)
    assert {c.type: c.status for c in job.status.conditions}["Complete"] == "True"
    pods = client.CoreV1Api(api).list_namespaced_pod(namespace, label_selector="job-name=j").items
    assert [p.status.phase for p in pods] == ["Succeeded"]


def test_pvc_binds_to_named_pv(api: client.ApiClient, namespace: str) -> None:
    v1 = client.CoreV1Api(api)
    v1.create_persistent_volume(
        {
            "metadata": {"name": f"pv-{namespace}"},
            "spec": {
                "capacity": {"storage": "1200Gi"},
                "accessModes": ["ReadWriteMany"],
                "csi": {"driver": "fsx.csi.aws.com", "volumeHandle": "fs-0123"},
            },
        }
    )
    v1.create_namespaced_persistent_volume_claim(
        namespace,
        {
            "metadata": {"name": "data"},
            "spec": {
                "volumeName": f"pv-{namespace}",
                "accessModes": ["ReadWriteMany"],
                "storageClassName": "",
                "resources": {"requests": {"storage": "1200Gi"}},
            },
        },
    )
    deadline = time.monotonic() + 5
    while v1.read_namespaced_persistent_volume_claim("data", namespace).status.phase != "Bound":
        assert time.monotonic() < deadline, "claim never bound"
        time.sleep(0.05)
    pv = v1.read_persistent_volume(f"pv-{namespace}")
    assert pv.status.phase == "Bound"
    assert (pv.spec.claim_ref.namespace, pv.spec.claim_ref.name) == (namespace, "data")


def _pv(name: str, size: str = "1200Gi", claim: tuple[str, str] | None = None) -> dict:
    spec: dict = {"capacity": {"storage": size}, "accessModes": ["ReadWriteMany"], "storageClassName": "",
                  "persistentVolumeReclaimPolicy": "Retain",
                  "csi": {"driver": "fsx.csi.aws.com", "volumeHandle": "fs-0123"}}
    if claim:
        spec["claimRef"] = {"namespace": claim[0], "name": claim[1]}
    return {"metadata": {"name": name}, "spec": spec}


def _pvc(name: str, volume: str | None = None, size: str = "1200Gi") -> dict:
    spec: dict = {"accessModes": ["ReadWriteMany"], "storageClassName": "",
                  "resources": {"requests": {"storage": size}}}
    if volume:
        spec["volumeName"] = volume
    return {"metadata": {"name": name}, "spec": spec}


def _phase_becomes(read: Callable[[], Any], phase: str, timeout: float = 5) -> Any:
    deadline = time.monotonic() + timeout
    while (obj := read()).status is None or obj.status.phase != phase:
        assert time.monotonic() < deadline, f"never {phase}: {obj.status}"
        time.sleep(0.05)
    return obj


def test_static_pvc_binds_to_the_pv_whose_claim_ref_names_it(api: client.ApiClient, namespace: str) -> None:
    """The FSx way: a PV pre-bound with claimRef {namespace, name} and a claim asking for no class."""
    v1 = client.CoreV1Api(api)
    v1.create_persistent_volume(_pv(f"pre-{namespace}", claim=(namespace, "shared")))
    pvc = v1.create_namespaced_persistent_volume_claim(namespace, _pvc("shared"))
    bound = _phase_becomes(lambda: v1.read_namespaced_persistent_volume_claim("shared", namespace), "Bound")
    assert bound.spec.volume_name == f"pre-{namespace}"
    assert bound.status.capacity == {"storage": "1200Gi"} and bound.status.access_modes == ["ReadWriteMany"]
    pv = _phase_becomes(lambda: v1.read_persistent_volume(f"pre-{namespace}"), "Bound")
    assert (pv.spec.claim_ref.name, pv.spec.claim_ref.uid) == ("shared", pvc.metadata.uid)


def test_pvc_stays_pending_until_its_pv_exists(api: client.ApiClient, namespace: str) -> None:
    v1 = client.CoreV1Api(api)
    v1.create_namespaced_persistent_volume_claim(namespace, _pvc("later", volume=f"late-{namespace}"))
    _phase_becomes(lambda: v1.read_namespaced_persistent_volume_claim("later", namespace), "Pending")
    time.sleep(0.5)  # many controller ticks: still no volume to bind to
    assert v1.read_namespaced_persistent_volume_claim("later", namespace).status.phase == "Pending"
    v1.create_persistent_volume(_pv(f"late-{namespace}", claim=(namespace, "later")))
    _phase_becomes(lambda: v1.read_namespaced_persistent_volume_claim("later", namespace), "Bound")
    assert v1.read_persistent_volume(f"late-{namespace}").status.phase == "Bound"


def test_a_pv_claimed_by_another_claim_or_too_small_is_not_bound(api: client.ApiClient, namespace: str) -> None:
    v1 = client.CoreV1Api(api)
    v1.create_persistent_volume(_pv(f"taken-{namespace}", claim=(namespace, "owner")))
    v1.create_persistent_volume(_pv(f"small-{namespace}", size="100Gi"))
    v1.create_namespaced_persistent_volume_claim(namespace, _pvc("thief", volume=f"taken-{namespace}"))
    v1.create_namespaced_persistent_volume_claim(namespace, _pvc("big", volume=f"small-{namespace}", size="1.2Ti"))
    _phase_becomes(lambda: v1.read_namespaced_persistent_volume_claim("thief", namespace), "Pending")
    _phase_becomes(lambda: v1.read_namespaced_persistent_volume_claim("big", namespace), "Pending")
    time.sleep(0.5)
    assert v1.read_namespaced_persistent_volume_claim("thief", namespace).status.phase == "Pending"
    assert v1.read_persistent_volume(f"taken-{namespace}").spec.claim_ref.name == "owner"
    assert v1.read_namespaced_persistent_volume_claim("big", namespace).status.phase == "Pending"
    assert v1.read_persistent_volume(f"small-{namespace}").status.phase == "Available"


def test_a_claim_in_use_waits_for_its_pod_then_its_volume_is_released(api: client.ApiClient, namespace: str) -> None:
    v1 = client.CoreV1Api(api)
    v1.create_persistent_volume(_pv(f"rel-{namespace}", claim=(namespace, "gone")))
    v1.create_namespaced_persistent_volume_claim(namespace, _pvc("gone"))
    _phase_becomes(lambda: v1.read_persistent_volume(f"rel-{namespace}"), "Bound")
    v1.create_namespaced_pod(namespace, {"metadata": {"name": "user"}, "spec": {
        "containers": [{"name": "c", "image": "busybox"}],
        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "gone"}}]}})

    deleting = v1.delete_namespaced_persistent_volume_claim("gone", namespace)
    assert deleting.metadata.deletion_timestamp and "kubernetes.io/pvc-protection" in deleting.metadata.finalizers
    time.sleep(0.5)  # the pod still mounts it: the claim stays, bound
    assert v1.read_namespaced_persistent_volume_claim("gone", namespace).status.phase == "Bound"

    v1.delete_namespaced_pod("user", namespace)
    _phase_becomes(lambda: v1.read_persistent_volume(f"rel-{namespace}"), "Released")
    with pytest.raises(ApiException) as gone:
        v1.read_namespaced_persistent_volume_claim("gone", namespace)
    assert gone.value.status == 404


def test_clusters_are_isolated(server: KubeApiServer, api: client.ApiClient) -> None:
    # Given a second cluster: its API is at the root of its own port, and under /clusters/<name> on the main one
    other_url = server.add_cluster("other")
    assert server.add_cluster("other") == other_url == server.clusters()["other"]
    assert other_url != server.clusters()["demo"] and not other_url.startswith(f"{server.url}/")
    assert server.cluster_of(f"{other_url}/api/v1/namespaces/default/secrets") == "other"
    assert server.cluster_of(f"{server.url}/clusters/other/api/v1/nodes") == "other"
    assert server.cluster_of("http://127.0.0.1:1/api/v1/nodes") is None
    other = client.CoreV1Api(_api(other_url))
    other.create_namespace({"metadata": {"name": "only-in-other"}})
    prefixed = client.CoreV1Api(_api(f"{server.url}/clusters/other"))
    assert "only-in-other" in {n.metadata.name for n in prefixed.list_namespace().items}
    names = {n.metadata.name for n in client.CoreV1Api(api).list_namespace().items}
    assert "only-in-other" not in names
    assert server.store("other").get("v1", "Namespace", "only-in-other") is not None
    # When one of its two holders (same-named clusters in two regions) removes it, it is still served
    server.remove_cluster("other")
    assert "only-in-other" in {n.metadata.name for n in prefixed.list_namespace().items}
    # When the last holder removes it, then neither address serves it
    server.remove_cluster("other")
    with pytest.raises(ApiException) as gone:
        prefixed.list_namespace()
    assert gone.value.status == 404
    with pytest.raises(urllib3.exceptions.MaxRetryError):
        client.CoreV1Api(_api(other_url)).list_namespace(_request_timeout=2)


def test_requests_without_a_token_are_refused_when_required() -> None:
    strict = KubeApiServer(require_token=True)
    strict.start()
    try:
        url = strict.add_cluster("c")
        anonymous = client.CoreV1Api(client.ApiClient(client.Configuration(host=url)))
        with pytest.raises(ApiException) as refused:
            anonymous.list_namespace()
        assert (refused.value.status, json.loads(refused.value.body)["kind"]) == (401, "Status")
        assert len(client.CoreV1Api(_api(url)).list_namespace().items) == 4
    finally:
        strict.stop()


@pytest.mark.skipif(KUBECTL is None, reason="kubectl not installed")
def test_kubectl_get_apply_delete(server: KubeApiServer, tmp_path: Path) -> None:
    url = server.clusters()["demo"]

    def kubectl(*args: str) -> str:
        cmd = [str(KUBECTL), "--server", url, "--token", TOKEN, *args]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=20, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        return done.stdout

    namespaces = json.loads(kubectl("get", "ns", "-o", "json"))
    assert namespaces["kind"] == "List" or namespaces["kind"] == "NamespaceList"
    assert "kube-system" in {n["metadata"]["name"] for n in namespaces["items"]}
    manifest = tmp_path / "app.yaml"
    dep = _deployment("kubectl-app", 1) | {"metadata": {"name": "kubectl-app", "labels": {"app": "x"}}}
    manifest.write_text(yaml.safe_dump(dep))
    assert "serverside-applied" in kubectl("apply", "--server-side", "-f", str(manifest))
    assert "kubectl-app" in kubectl("get", "deploy", "-l", "app=x")
    assert kubectl("get", "deploy", "-l", "app=nope", "-o", "name") == ""
    assert "deleted" in kubectl("delete", "-f", str(manifest))
    assert server.store("demo").get("apps/v1", "Deployment", "kubectl-app", "default") is None


def test_apply_drops_fields_the_manager_no_longer_applies(api: client.ApiClient, namespace: str) -> None:
    cms = DynamicClient(api).resources.get(api_version="v1", kind="ConfigMap")
    first = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "ssa", "labels": {"a": "1", "b": "2"}},
        "data": {"x": "1", "y": "2"},
    }
    cms.server_side_apply(body=first, namespace=namespace, field_manager="podstart")
    second = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "ssa", "labels": {"a": "1"}},
        "data": {"x": "9"},
    }
    applied = cms.server_side_apply(body=second, namespace=namespace, field_manager="podstart")
    assert dict(applied.metadata.labels) == {"a": "1"}
    assert dict(applied.data) == {"x": "9"}


def test_statefulset_and_daemonset_report_ready(server: KubeApiServer, api: client.ApiClient, namespace: str) -> None:
    apps = client.AppsV1Api(api)
    server.store("demo").put({"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{namespace}"}})
    sts = _deployment("db", 2) | {"kind": "StatefulSet"}
    sts["spec"]["serviceName"] = "db"
    apps.create_namespaced_stateful_set(namespace, sts)
    ds = _deployment("agent", 1) | {"kind": "DaemonSet"}
    del ds["spec"]["replicas"]
    apps.create_namespaced_daemon_set(namespace, ds)
    deadline = time.monotonic() + 5
    while True:
        s = apps.read_namespaced_stateful_set_status("db", namespace).status
        d = apps.read_namespaced_daemon_set_status("agent", namespace).status
        if s and s.ready_replicas == 2 and d and d.number_ready and d.number_ready == d.desired_number_scheduled:
            break
        assert time.monotonic() < deadline, "workloads never became ready"
        time.sleep(0.05)
    assert d.desired_number_scheduled == len(client.CoreV1Api(api).list_node().items) >= 1


def test_follow_logs_until_the_pod_goes_away(server: KubeApiServer, api: client.ApiClient, namespace: str) -> None:
    v1, store = client.CoreV1Api(api), server.store("demo")
    v1.create_namespaced_pod(namespace, {"metadata": {"name": "f"}, "spec": {"containers": [{"name": "c"}]}})
    store.append_log(namespace, "f", "early\n")

    def later() -> None:
        time.sleep(0.2)
        store.append_log(namespace, "f", "late\n")
        time.sleep(0.1)
        store.delete("v1", "Pod", "f", namespace)

    threading.Thread(target=later, daemon=True).start()
    resp = v1.read_namespaced_pod_log("f", namespace, follow=True, _preload_content=False)
    assert resp.data.decode() == "early\nlate\n"


def test_delete_collection_and_namespace_cascade(api: client.ApiClient, namespace: str) -> None:
    v1 = client.CoreV1Api(api)
    for name, tier in (("a", "x"), ("b", "x"), ("c", "y")):
        v1.create_namespaced_config_map(namespace, {"metadata": {"name": name, "labels": {"tier": tier}}})
    v1.delete_collection_namespaced_config_map(namespace, label_selector="tier=x")
    assert [c.metadata.name for c in v1.list_namespaced_config_map(namespace).items] == ["c"]
    v1.delete_namespace(namespace)
    assert v1.list_config_map_for_all_namespaces(field_selector=f"metadata.namespace={namespace}").items == []
    with pytest.raises(ApiException) as gone:
        v1.read_namespace(namespace)
    assert gone.value.status == 404


def test_the_adapter_sees_a_crd_go_and_come_back_whatever_a_discovery_cache_says(server: KubeApiServer) -> None:
    """A job's operator step asks `has_kind` before it submits: a stale discovery answer (the kubernetes client's
    default cache file in /tmp is shared by every process talking to the same endpoint) once let a submit skip the
    operator and fail its dry run with a 404."""
    from functions.adapters.kube import KubeCluster

    server.add_cluster("crd-cache")
    api = _api(server.clusters()["crd-cache"])
    adapter = KubeCluster(api=api)
    crd = load_crd(RAYCLUSTER_CRD)
    ext = client.ApiextensionsV1Api(api)
    assert not adapter.has_kind("ray.io/v1", "RayCluster")
    ext.create_custom_resource_definition(crd)
    # Given another process's discovery cache, written while the CRD was served
    DynamicClient(_api(server.clusters()["crd-cache"])).resources.get(api_version="ray.io/v1", kind="RayCluster")
    assert adapter.has_kind("ray.io/v1", "RayCluster")
    assert adapter.list("ray.io/v1", "RayCluster", "default") == []
    # When the CRD goes, the adapter says so at once; when it comes back, it serves it again
    ext.delete_custom_resource_definition("rayclusters.ray.io")
    assert not adapter.has_kind("ray.io/v1", "RayCluster")
    assert not KubeCluster(api=_api(server.clusters()["crd-cache"])).has_kind("ray.io/v1", "RayCluster")
    assert not adapter.has_kind("ray.io/v1", "NoSuchKind")
    ext.create_custom_resource_definition(crd)
    assert adapter.has_kind("ray.io/v1", "RayCluster")
    server.remove_cluster("crd-cache")
