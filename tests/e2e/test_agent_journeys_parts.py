"""Issue 26's parts, each through REST against the running sandbox (the scripted agent's journeys run them over MCP):

- your own data: GET /v1/data browses the buckets PodStart may read; a job's and an endpoint's paths take /data/...
  or s3://bucket/key on a registered bucket mounted in the namespace, and the dry run (and the submit) checks every
  input exists, refusing with a 422 that names the field and what was looked for;
- GPU accounting: the scheduler never overcommits a node's GPUs (a pod that does not fit stays Pending with the
  reason), the plan says DOES NOT FIT NOW, the job's and the endpoint's status say why they wait, and each node in
  the list says its GPUs requested and allocatable;
- health in the list: the last fault, HyperPod's own repairs counted by the ladder (the next rung is replace, and a
  replace is admitted), the `unhealthy` and `faulted_since` filters.
"""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from sandbox.resources import OTHER_TEAM_BUCKET, TEAM_BUCKET

DRY = {"dry_run": "true"}
LF_IMAGE = "hiyouga/llamafactory:0.9.3"
VLLM = "vllm/vllm-openai:v0.10.1"


@pytest.fixture(scope="module")
def world(api: Any, aws: Any) -> dict[str, Any]:
    """A cluster of two 1-GPU nodes with the training operator, the team's bucket mounted read-write in default and
    read-only in a namespace `ro`, and the team's data in it."""
    run = uuid.uuid4().hex[:6]
    name = api.make_cluster("byo", [{"name": "accel", "instance_type": "ml.g5.8xlarge", "instance_count": 2,
                                     "availability_zone": "us-west-2a"}], node_recovery="none")
    op = api.http.patch(f"/v1/clusters/{name}/features", json={"training_operator": {"enabled": True}}).json()
    assert api.wait_terminal(op["id"])["status"] == "SUCCEEDED"
    ns = api.post(f"/v1/clusters/{name}/namespaces", json={"name": "ro"}).json()
    assert api.wait_terminal(ns["id"])["status"] == "SUCCEEDED"
    for volume, namespace, ro in (("team", "default", False), ("team-ro", "ro", True)):
        made = api.post(f"/v1/clusters/{name}/storage", json={"kind": "s3", "name": volume, "bucket": TEAM_BUCKET,
                                                              "namespace": namespace, "read_only": ro}).json()
        assert api.wait_terminal(made["id"])["status"] == "SUCCEEDED", made
    s3 = aws("s3")
    for key, body in {f"{run}/sft/dataset_info.json": b'{"chats": {"file_name": "chats.jsonl"}, '
                                                      b'"missing": {"file_name": "gone.jsonl"}}',
                      f"{run}/sft/chats.jsonl": b"{}\n", f"{run}/model/config.json": b"{}",
                      f"{run}/nomodel/weights.bin": b"x"}.items():
        s3.put_object(Bucket=TEAM_BUCKET, Key=key, Body=body)
    return {"cluster": name, "run": run, "base": f"s3://{TEAM_BUCKET}/{run}"}


def _job(world: dict[str, Any], name: str, **over: Any) -> dict[str, Any]:
    params = {"model_name_or_path": "Qwen/Qwen3-0.6B", "dataset_dir": f"{world['base']}/sft/", "dataset": "chats"}
    return {"name": name, "recipe": "llama-factory", "image": LF_IMAGE, "instance_type": "ml.g5.8xlarge",
            "gpus_per_node": 1, "parameters": {**params, **over.pop("parameters", {})}, **over}


def _errors(r: Any) -> dict[str, str]:
    assert r.status_code == 422 and r.headers["content-type"].startswith("application/problem+json"), r.text
    return {".".join(str(x) for x in e["loc"]): e["msg"] for e in r.json()["errors"]}


# --- your own data -------------------------------------------------------------------------------------------------

def test_list_data_shows_what_pods_may_read_and_browses_it(viewer: Any, world: dict[str, Any]) -> None:
    roots = viewer.get("/v1/data", params={"cluster": world["cluster"]})
    assert roots.status_code == 200, roots.text
    by_uri = {r["uri"]: r for r in roots.json()["roots"]}
    assert by_uri[f"s3://{TEAM_BUCKET}/"]["mounted"] == [
        {"cluster": world["cluster"], "namespace": "default", "storage": "team", "read_only": False,
         "path": f"/s3/{TEAM_BUCKET}"},
        {"cluster": world["cluster"], "namespace": "ro", "storage": "team-ro", "read_only": True,
         "path": f"/s3/{TEAM_BUCKET}"}]
    assert next(r for r in roots.json()["roots"] if r["owned"])["path"] == "/data"
    listed = viewer.get("/v1/data", params={"uri": f"{world['base']}/sft/"}).json()
    assert {f["uri"] for f in listed["files"]} == {f"{world['base']}/sft/dataset_info.json",
                                                  f"{world['base']}/sft/chats.jsonl"}
    assert listed["path"] == f"/s3/{TEAM_BUCKET}/{world['run']}/sft/"
    data = viewer.get("/v1/data", params={"uri": "/data/datasets/"}).json()
    assert f"{data['uri']}dataset_info.json" in {f["uri"] for f in data["files"]} and data["path"] == "/data/datasets/"
    # another team's bucket (not registered) and a path outside the grammar: 422 naming query.uri
    assert "query.uri" in _errors(viewer.get("/v1/data", params={"uri": f"s3://{OTHER_TEAM_BUCKET}/payroll/"}))
    assert "s3://team-datasets/sft/train.jsonl" in _errors(viewer.get("/v1/data", params={"uri": "/etc/"}))["query.uri"]


def test_the_dry_run_checks_every_input_and_names_what_it_looked_for(operator: Any, world: dict[str, Any]) -> None:
    url = f"/v1/clusters/{world['cluster']}/jobs"
    base = world["base"]
    before = len(operator.get("/v1/operations", params={"cluster": world["cluster"]}).json()["items"])

    ok = operator.post(url, json=_job(world, "in-ok", output=f"{base}/out/"), params=DRY)
    assert ok.status_code == 200, ok.text
    [job] = [c for c in ok.json()["changes"] if c["kind"] == "Kubernetes HyperPodPyTorchJob"]
    assert f"parameters.dataset_dir: {base}/sft/" in job["details"]["reads"]
    assert job["details"]["writes"] == [f"{base}/out/", f"{base}/out/checkpoints/"]
    assert job["details"]["volumes"] == [f"team (s3://{TEAM_BUCKET}/ at /s3/{TEAM_BUCKET}, as team-s3)"]

    cases = {
        "parameters.dataset_dir": ({"parameters": {"dataset_dir": f"{base}/nothing/"}}, "looked for"),
        "parameters.dataset": ({"parameters": {"dataset": "missing"}}, "gone.jsonl"),
        "parameters.model_name_or_path": ({"parameters": {"model_name_or_path": f"{base}/nomodel/"}},
                                          f"looked for {base}/nomodel/config.json"),
    }
    for field, (over, said) in cases.items():
        errors = _errors(operator.post(url, json=_job(world, "in-bad", **over), params=DRY))
        assert said in errors[f"body.{field}"], errors
    # on a bucket PodStart may not read; registered but read-only where the job writes; not mounted in the namespace
    errors = _errors(operator.post(url, json=_job(world, "in-bad", parameters={
        "dataset_dir": f"s3://{OTHER_TEAM_BUCKET}/payroll/"}), params=DRY))
    assert "may not read" in errors["body.parameters.dataset_dir"]
    errors = _errors(operator.post(url, json=_job(world, "in-bad", namespace="ro", output=f"{base}/out/"), params=DRY))
    assert "read-only" in errors["body.output"]
    errors = _errors(operator.post(url, json=_job(world, "in-bad", output="/etc/out"), params=DRY))
    assert "s3://team-datasets/sft/train.jsonl" in errors["body.output"]  # the accepted forms, with an example
    # the real submit checks the same; nothing was started by any of these
    assert "body.parameters.dataset_dir" in _errors(operator.post(url, json=_job(world, "in-bad", parameters={
        "dataset_dir": f"{base}/nothing/"})))
    after = len(operator.get("/v1/operations", params={"cluster": world["cluster"]}).json()["items"])
    assert after == before


def test_a_job_reads_and_writes_the_users_bucket_through_the_volume(operator: Any, sandbox: Any,
                                                                   world: dict[str, Any]) -> None:
    name = f"byo-{world['run']}"
    op = operator.post(f"/v1/clusters/{world['cluster']}/jobs", json=_job(world, name, output=f"{world['base']}/out/"))
    assert op.status_code == 202, op.text
    assert operator.wait_terminal(op.json()["id"])["status"] == "SUCCEEDED"
    job = sandbox.kube.store(world["cluster"]).get("sagemaker.amazonaws.com/v1", "HyperPodPyTorchJob", name,
                                                   "default")
    pod = job["spec"]["replicaSpecs"][0]["template"]["spec"]
    cmd = pod["containers"][0]["command"]
    assert cmd[cmd.index("--dataset_dir") + 1] == f"/s3/{TEAM_BUCKET}/{world['run']}/sft"
    assert {"name": "s3-team", "persistentVolumeClaim": {"claimName": "team", "readOnly": False}} in pod["volumes"]
    assert pod["serviceAccountName"] == "team-s3"  # the volume's Pod Identity role reads the bucket
    detail = operator.get(f"/v1/clusters/{world['cluster']}/jobs/{name}").json()
    assert detail["data"]["outputs"] == f"{world['base']}/out/"
    assert operator.post(f"/v1/clusters/{world['cluster']}/jobs/{name}", json=None).status_code in (404, 405)
    dl = operator.http.delete(f"/v1/clusters/{world['cluster']}/jobs/{name}")
    assert operator.wait_terminal(dl.json()["id"])["status"] == "SUCCEEDED"


def test_an_endpoint_model_on_the_users_bucket(operator: Any, world: dict[str, Any]) -> None:
    url = f"/v1/clusters/{world['cluster']}/endpoints"
    body = {"name": "byo-chat", "mode": "self-managed", "engine": "vllm", "image": VLLM, "instance_type":
            "ml.g5.8xlarge", "gpus": 1, "model": {"source": "s3", "uri": f"{world['base']}/model/"}}
    plan = operator.post(url, json=body, params=DRY)
    assert plan.status_code == 200, plan.text
    [dep] = [c for c in plan.json()["changes"] if c["kind"] == "Kubernetes Deployment"]
    assert "model.uri" in str(plan.json()) or dep  # the plan renders the worker on the mounted volume
    errors = _errors(operator.post(url, json={**body, "model": {"source": "s3", "uri": f"{world['base']}/nomodel/"}},
                                   params=DRY))
    assert "config.json" in errors["body.model.uri"]
    errors = _errors(operator.post(url, json={"name": "byo-m", "mode": "managed", "instance_type": "ml.g5.8xlarge",
                                              "model": {"source": "s3", "uri": f"{world['base']}/model/"}},
                                   params=DRY))
    assert "data bucket" in errors["body.model.uri"]


# --- GPU accounting ------------------------------------------------------------------------------------------------

def test_gpus_are_never_overcommitted_and_waiting_says_why(operator: Any, api: Any, world: dict[str, Any]) -> None:
    cluster = world["cluster"]
    url = f"/v1/clusters/{cluster}/endpoints"
    bodies = [{"name": f"gpu-{i}", "mode": "self-managed", "engine": "vllm", "image": VLLM,
               "instance_type": "ml.g5.8xlarge", "gpus": 1, "model": {"source": "huggingface",
                                                                       "model_id": "Qwen/Qwen3-0.6B"}}
              for i in range(3)]
    for body in bodies[:2]:  # two 1-GPU replicas take both GPUs
        op = operator.post(url, json=body).json()
        assert "id" in op, op
        assert operator.wait_terminal(op["id"])["status"] == "SUCCEEDED", op
    # a third: the plan flags it, and once deployed its pod stays Pending with the scheduler's reason
    plan = operator.post(url, json=bodies[2], params=DRY).json()
    assert any(w.startswith("DOES NOT FIT NOW") for w in plan["warnings"]), plan["warnings"]
    assert plan["placement"]["fits_now"] is False
    job = operator.post(f"/v1/clusters/{cluster}/jobs", json=_job(world, "nofit"), params=DRY).json()
    assert any(w.startswith("DOES NOT FIT NOW") for w in job["warnings"]), job["warnings"]
    op = operator.post(url, json=bodies[2]).json()
    assert "id" in op, op
    # the deploy ends (it does not hold the cluster) saying it waits for capacity; the endpoint's status says why
    done = operator.wait_terminal(op["id"])
    assert done["status"] == "SUCCEEDED" and "waiting for capacity" in done["steps"][-1]["message"], done
    view = operator.get(f"{url}/gpu-2").json()
    assert view["status"] == "DEGRADED" and "Insufficient nvidia.com/gpu" in view["message"], view
    nodes = api.get(f"/v1/clusters/{cluster}/nodes").json()["items"]
    assert [(n["gpus_requested"], n["gpus_allocatable"]) for n in nodes] == [(1, 1), (1, 1)]
    # freeing a GPU lets it run: the scheduler places it then, and the endpoint is READY by itself
    gone = operator.http.delete(f"{url}/gpu-0").json()
    assert "id" in gone, gone
    assert operator.wait_terminal(gone["id"])["status"] == "SUCCEEDED"
    deadline = time.monotonic() + 30
    while (view := operator.get(f"{url}/gpu-2").json())["status"] != "READY":
        assert time.monotonic() < deadline, view
        time.sleep(0.2)
    for name in ("gpu-1", "gpu-2"):
        assert operator.wait_terminal(operator.http.delete(f"{url}/{name}").json()["id"])["status"] == "SUCCEEDED"


# --- health in the list --------------------------------------------------------------------------------------------

def test_hyperpods_own_reboot_is_counted_by_the_ladder(api: Any, operator: Any) -> None:
    # Given a cluster where HyperPod repairs faulty nodes itself, and a GPU that faults again after its reboot
    name = api.make_cluster("auto", [{"name": "accel", "instance_type": "ml.g5.8xlarge", "instance_count": 1,
                                      "availability_zone": "us-west-2a"}])
    [node] = api.get(f"/v1/clusters/{name}/nodes").json()["items"]
    nid = node["node_id"]
    start = datetime.now(UTC) - timedelta(seconds=1)
    assert api.post(f"/v1/sandbox/nodes/{nid}/fault", json={"kind": "gpu_xid"}).status_code == 201
    deadline = time.monotonic() + 30
    # (the row joins HyperPod's node list and the Kubernetes node, read one after the other: for a moment around
    # the reboot's end one may say Running while the other still says rebooting, so wait for both to agree)
    while not (row := api.get(f"/v1/clusters/{name}/nodes").json()["items"][0])["auto_repairs"] or \
            row["healthy"] is not True:
        assert time.monotonic() < deadline, row
        time.sleep(0.2)
    assert row["last_action"]["by"] == "hyperpod" and row["last_action"]["action"] == "reboot"
    assert row["health"] == "Schedulable" and row["status"] == "Running" and row["rung"] == "investigate"
    assert api.get(f"/v1/clusters/{name}/nodes", params={"unhealthy": "true"}).json()["items"] == []
    # When the fault comes back before anyone acts (HyperPod will reboot again in a minute of AWS time)
    assert api.post(f"/v1/sandbox/nodes/{nid}/fault", json={"kind": "gpu_xid"}).status_code == 201
    [bad] = api.get(f"/v1/clusters/{name}/nodes", params={"unhealthy": "true"}).json()["items"]
    # Then the list says so, with the fault in a line, and the next rung is replace (a reboot already happened)
    assert bad["node_id"] == nid and bad["healthy"] is False and "Xid 48" in bad["last_fault"]
    assert bad["rung"] == "replace" and bad["auto_repairs"] >= 1
    detail = api.get(f"/v1/clusters/{name}/nodes/{nid}").json()
    assert detail["ladder"]["rung"] == "replace" and detail["ladder"]["rebooted_at"]
    faulted = api.get(f"/v1/clusters/{name}/nodes", params={"faulted_since": start.isoformat()}).json()["items"]
    assert [n["node_id"] for n in faulted] == [nid]
    later = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    assert api.get(f"/v1/clusters/{name}/nodes", params={"faulted_since": later}).json()["items"] == []
    bad_since = api.get(f"/v1/clusters/{name}/nodes", params={"faulted_since": "yesterday"})
    assert "query.faulted_since" in _errors(bad_since)
    # and a replace is admitted without force (the ladder counts HyperPod's reboot)
    plan = operator.post(f"/v1/clusters/{name}/nodes/replace", params=DRY,
                         json={"node_ids": [nid], "reason": "Xid 48 again", "confirm": "replace"})
    assert plan.status_code == 200, plan.text
