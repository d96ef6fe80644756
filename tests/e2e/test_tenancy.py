"""Tenancy and security, attacked as each role would through REST and MCP: operators act only inside PodStart's
namespaces and buckets, nothing reaches the internet or destroys data without an admin, no secret value is stored,
owned engine flags and odd model ids are refused by meaning, and one user cannot hold the shared capacity.

Each refusal is made by the weakest role that should fail, on both faces, and the test then checks that nothing
changed: the Kubernetes objects, the buckets, the operations and the audit trail."""

from __future__ import annotations

import base64
import json
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from mcp import Client

from sandbox.resources import OTHER_TEAM_BUCKET, TEAM_BUCKET
from tests.e2e.conftest import eventually
from tests.e2e.test_mcp_sandbox import over_http, text

DRY = {"dry_run": "true"}
IMAGE = "vllm/vllm-openai:v0.10.1"
HF_VALUE = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz012345"
KEY_VALUE = "sk-" + "ZyXwVuTsRqPoNmLkJiHgFeDcBa987654"


@pytest.fixture(scope="module")
def cluster(api: Any) -> str:
    return api.make_cluster("ten", [{"name": "gpu", "instance_type": "ml.g5.8xlarge", "instance_count": 1,
                                      "availability_zone": "us-west-2a"}])


def mcp(sandbox: Any, token: str, tool: str, args: dict[str, Any]) -> Any:
    async def go(client: Client) -> Any:
        return await client.call_tool(tool, args)
    return over_http(sandbox, go, token=token)


def refused(result: Any, *words: str) -> str:
    body = text(result)
    assert result.is_error, body
    for w in words:
        assert w in body, body
    return body


def ops_on(api: Any, cluster: str) -> list[str]:
    return [o["id"] for o in api.get("/v1/operations", params={"cluster": cluster, "limit": 100}).json()["items"]]


def self_managed(name: str, **over: Any) -> dict[str, Any]:
    return {"name": name, "mode": "self-managed", "engine": "vllm", "image": IMAGE, "instance_type": "ml.g5.8xlarge",
            "gpus": 1, "model": {"source": "huggingface", "model_id": "Qwen/Qwen3-0.6B"}, **over}


# -- namespaces ---------------------------------------------------------------------------------------

def test_an_admin_makes_a_podstart_namespace_an_operator_may_not(api: Any, operator: Any, viewer: Any, sandbox: Any,
                                                                 cluster: str) -> None:
    base = f"/v1/clusters/{cluster}"
    kube = sandbox.kube.store(cluster)
    before = ops_on(api, cluster)
    # the weakest role that should fail, on both faces: an operator
    assert operator.post(f"{base}/namespaces", json={"name": "team-x"}).status_code == 403
    refused(mcp(sandbox, sandbox.tokens.operator, "create_namespace", {"cluster": cluster, "name": "team-x"}),
            "403", "admin")
    for name in ("kube-system", "kube-team", "aws-hyperpod", "cert-manager"):  # system names: 422 for anybody
        r = api.post(f"{base}/namespaces", json={"name": name})
        assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "name"], r.text
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "legacy"}})
    r = api.post(f"{base}/namespaces", json={"name": "legacy"})
    assert r.status_code == 409 and "never adopted" in r.text  # a namespace PodStart did not make stays foreign
    assert kube.get("v1", "Namespace", "team-x") is None and ops_on(api, cluster) == before

    plan = api.post(f"{base}/namespaces", json={"name": "team-x"}, params=DRY).json()
    assert {(c["action"], c["kind"]) for c in plan["changes"]} == {
        ("create", "Kubernetes Namespace"), ("create", "Kubernetes Role"), ("create", "Kubernetes RoleBinding"),
        ("create", "Kubernetes PersistentVolume"), ("create", "Kubernetes PersistentVolumeClaim")}
    r = api.post(f"{base}/namespaces", json={"name": "team-x"}, key=uuid.uuid4().hex)
    assert r.status_code == 202 and api.wait_terminal(r.json()["id"])["status"] == "SUCCEEDED", r.text
    ns = kube.get("v1", "Namespace", "team-x")
    assert ns["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "podstart"
    binding = kube.get("rbac.authorization.k8s.io/v1", "RoleBinding", "podstart-api-secrets", "team-x")
    assert binding["subjects"][0]["name"] == "podstart-api"
    listed = {n["name"]: n for n in viewer.get(f"{base}/namespaces").json()["items"]}
    assert set(listed) >= {"default", "team-x"} and "legacy" not in listed and "kube-system" not in listed
    assert listed["team-x"]["data_volume"] and listed["team-x"]["secrets_access"]
    trail = api.get("/v1/audit", params={"cluster": cluster, "action": "create_namespace"}).json()["items"]
    assert {(t["principal"]["role"], t["result"]["status"]) for t in trail} >= {("operator", 403), ("admin", 202)}


def test_operators_act_only_in_podstart_namespaces_on_both_faces(api: Any, operator: Any, sandbox: Any,
                                                                 cluster: str) -> None:
    base = f"/v1/clusters/{cluster}"
    kube = sandbox.kube.store(cluster)
    kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other-team"}})
    job = {"name": "steal", "recipe": "pytorch", "image": "repo/train:1.0", "instance_type": "ml.g5.8xlarge",
           "parameters": {"script": "train.py"}}
    for ns in ("kube-system", "other-team", "does-not-exist"):
        r = operator.post(f"{base}/secrets", json={"name": "x", "namespace": ns, "data": {"K": "v"}})
        assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "namespace"], r.text
        r = operator.post(f"{base}/jobs", json={**job, "namespace": ns})
        assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "namespace"], r.text
        r = operator.post(f"{base}/storage", json={"kind": "s3", "bucket": TEAM_BUCKET, "namespace": ns})
        assert r.status_code in (403, 422), r.text
        assert operator.get(f"{base}/secrets", params={"namespace": ns}).status_code == 422
        assert operator.get(f"{base}/jobs/steal/logs", params={"namespace": ns}).status_code in (404, 422)
    refused(mcp(sandbox, sandbox.tokens.operator, "create_secret",
                {"cluster": cluster, "name": "x", "namespace": "kube-system", "data": {"K": "v"}}), "namespace")
    refused(mcp(sandbox, sandbox.tokens.operator, "submit_job", {"cluster": cluster, **job,
                                                                 "namespace": "kube-system"}), "namespace")
    assert kube.list("v1", "Secret", "kube-system") == [] and kube.list("v1", "Secret", "other-team") == []

    # a job references only Secrets PodStart wrote in its namespace (not a system token, not another tool's)
    kube.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "cloud-creds", "namespace": "default"},
                 "data": {"AWS_SECRET_ACCESS_KEY": base64.b64encode(b"x").decode()}})
    r = operator.post(f"{base}/jobs", json={**job, "secrets": ["cloud-creds"]})
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "secrets", 0], r.text
    assert "cloud-creds" not in operator.get(f"{base}/secrets").json()["names"]  # only PodStart's are listed
    ok = operator.post(f"{base}/secrets", json={"name": "train-env", "data": {"WANDB_MODE": "offline"}})
    assert ok.status_code == 201 and "train-env" in operator.get(f"{base}/secrets").json()["names"]


# -- buckets ------------------------------------------------------------------------------------------

def test_buckets_by_registration_and_browsing_stays_under_the_volume(api: Any, operator: Any, viewer: Any,
                                                                     sandbox: Any, cluster: str) -> None:
    base = f"/v1/clusters/{cluster}"
    before = ops_on(api, cluster)
    team = {"kind": "s3", "name": "team", "bucket": TEAM_BUCKET, "prefix": "datasets/", "read_only": True}
    r = operator.post(f"{base}/storage", json=team)
    assert r.status_code == 403 and "admin" in r.text, r.text  # registered, not PodStart's own: an admin mounts it
    refused(mcp(sandbox, sandbox.tokens.operator, "add_storage", {"cluster": cluster, **team}), "403")
    for bucket in (OTHER_TEAM_BUCKET, "no-such-bucket-anywhere"):  # never registered: nobody mounts it
        for who in (api, operator):
            r = who.post(f"{base}/storage", json={**team, "bucket": bucket})
            assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "bucket"], r.text
            assert "not a bucket PodStart may read" in r.text
    assert ops_on(api, cluster) == before
    own = operator.post(f"{base}/storage", params=DRY,
                        json={"kind": "s3", "name": "ops", "bucket": sandbox.info["buckets"]["data"], "prefix": "ops/"})
    assert own.status_code == 200, own.text  # PodStart's own data bucket: an operator may mount it

    r = api.post(f"{base}/storage", json=team, key=uuid.uuid4().hex)
    assert r.status_code == 202, r.text
    op = api.wait_terminal(r.json()["id"])
    assert op["status"] == "SUCCEEDED", op.get("error")
    listing = viewer.get(f"{base}/storage/team/objects").json()
    assert listing["bucket"] == TEAM_BUCKET and {o["key"] for o in listing["objects"]} == {
        "datasets/README.md", "datasets/alpaca_en_demo.json"}  # its prefix only: not checkpoints/
    for escape in ("../", "../checkpoints/", "/etc"):
        assert viewer.get(f"{base}/storage/team/objects", params={"prefix": escape}).status_code == 422


# -- exposure ------------------------------------------------------------------------------------------

def test_nothing_reaches_the_internet_by_accident(api: Any, operator: Any, sandbox: Any, cluster: str) -> None:
    base = f"/v1/clusters/{cluster}"
    before = ops_on(api, cluster)
    ext = self_managed("web", service="external", internet_facing=True)
    for body, field in ((ext, "source_ranges"), ({**ext, "source_ranges": ["0.0.0.0/0"]}, "source_ranges"),
                        ({**ext, "source_ranges": ["10.0.0.0/8", "::/0"]}, "source_ranges"),
                        ({**self_managed("web", service="external"), "public": True}, "internet_facing")):
        for who in (operator, api):
            r = who.post(f"{base}/endpoints", json=body)
            assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", field], r.text
    refused(mcp(sandbox, sandbox.tokens.operator, "deploy_endpoint", {"cluster": cluster, **ext}), "source_ranges")
    public = {**ext, "public": True}
    assert operator.post(f"{base}/endpoints", json=public).status_code == 403  # public: admin only
    assert operator.post(f"{base}/endpoints", json=public, params=DRY).status_code == 403
    refused(mcp(sandbox, sandbox.tokens.operator, "deploy_endpoint", {"cluster": cluster, **public}), "403", "admin")
    assert ops_on(api, cluster) == before and sandbox.kube.store(cluster).get("v1", "Service", "web") is None
    plan = api.post(f"{base}/endpoints", json=public, params=DRY).json()
    assert any(w.startswith("EXPOSURE: public") for w in plan["warnings"]), plan["warnings"]
    ranged = operator.post(f"{base}/endpoints", json={**ext, "source_ranges": ["203.0.113.0/24"]}, params=DRY).json()
    assert any("reachable from 203.0.113.0/24" in w and "no API key" in w for w in ranged["warnings"])


def test_an_api_key_guards_the_endpoint_and_invoke_sends_it(api: Any, operator: Any, sandbox: Any,
                                                            cluster: str) -> None:
    base = f"/v1/clusters/{cluster}"
    kube = sandbox.kube.store(cluster)
    # the key lives in a Secret PodStart wrote (a random-looking value is fine in a Secret's data: writeOnly)
    r = operator.post(f"{base}/secrets", json={"name": "chat-key", "data": {"api_key": KEY_VALUE}})
    assert r.status_code == 201 and KEY_VALUE not in r.text, r.text
    kube.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "foreign-key", "namespace": "default"},
                 "data": {"api_key": base64.b64encode(b"x").decode()}})
    bad = operator.post(f"{base}/endpoints", json=self_managed("keyed", api_key_secret="foreign-key"))
    assert bad.status_code == 422 and bad.json()["errors"][0]["loc"] == ["body", "api_key_secret"], bad.text
    r = operator.post(f"{base}/endpoints", json=self_managed("keyed", api_key_secret="chat-key"), key=uuid.uuid4().hex)
    assert r.status_code == 202, r.text
    assert api.wait_terminal(r.json()["id"], timeout=180)["status"] == "SUCCEEDED"
    # the endpoint's view says a key is required (what the UI shows), not which Secret holds it
    view = operator.get(f"{base}/endpoints/keyed").json()
    assert view["api_key_required"] is True and "chat-key" not in json.dumps(view), view
    # invoke through PodStart passes the key to the gate
    said = operator.post(f"{base}/endpoints/keyed/invoke", json={"messages": [{"role": "user", "content": "hi"}]})
    assert said.status_code == 200 and said.json()["content"], said.text
    # anyone else reaching the Service without the key is refused by the gate; with it, answered
    url = f"{sandbox.kube.clusters()[cluster]}/api/v1/namespaces/default/services/keyed:80/proxy/v1/chat/completions"
    chat = {"model": "Qwen/Qwen3-0.6B", "messages": [{"role": "user", "content": "hi"}]}
    assert httpx.post(url, json=chat).status_code == 401
    assert httpx.post(url, json=chat, headers={"X-Api-Key": "wrong"}).status_code == 401
    assert httpx.post(url, json=chat, headers={"X-Api-Key": KEY_VALUE}).status_code == 200
    pod = kube.list("v1", "Pod", "default", label_selector="podstart.dev/endpoint=keyed")[0]
    assert [c["name"] for c in pod["spec"]["containers"]] == ["vllm", "podstart-gate"]
    assert KEY_VALUE not in json.dumps(pod)  # a secretKeyRef, never the value


# -- destroying data ---------------------------------------------------------------------------------

def test_destroying_data_needs_an_admin_on_both_faces_and_on_retry(api: Any, operator: Any, sandbox: Any,
                                                                   cluster: str) -> None:
    base = f"/v1/clusters/{cluster}"
    kube = sandbox.kube.store(cluster)
    r = operator.post(f"{base}/storage", json={"kind": "fsx_lustre", "name": "scratch", "storage_capacity_gib": 1200},
                      key=uuid.uuid4().hex)
    assert r.status_code == 202, r.text  # making a file system is an operator's
    assert api.wait_terminal(r.json()["id"], timeout=180)["status"] == "SUCCEEDED"
    gone = operator.http.delete(f"{base}/storage/scratch", params={"confirm": "scratch"})
    assert gone.status_code == 403 and "FSx file system" in gone.text, gone.text
    assert operator.http.delete(f"{base}/storage/scratch", params={"confirm": "scratch", **DRY}).status_code == 403
    refused(mcp(sandbox, sandbox.tokens.operator, "remove_storage",
                {"cluster": cluster, "name": "scratch", "confirm": "scratch"}), "403")
    assert "scratch" in {i["name"] for i in api.get(f"{base}/storage").json()["items"]}

    # an admin removes it; an operator may not cancel (or retry) that removal either
    removal = api.http.delete(f"{base}/storage/scratch", params={"confirm": "scratch"})
    assert removal.status_code == 202, removal.text
    assert operator.post(f"/v1/operations/{removal.json()['id']}/cancel").status_code == 403
    assert api.wait_terminal(removal.json()["id"], timeout=180)["status"] == "SUCCEEDED"

    # a namespace goes with everything in it: an admin's action, with the name typed again
    made = api.post(f"{base}/namespaces", json={"name": "team-gone"}, key=uuid.uuid4().hex)
    assert api.wait_terminal(made.json()["id"])["status"] == "SUCCEEDED"
    assert operator.http.delete(f"{base}/namespaces/team-gone", params={"confirm": "team-gone"}).status_code == 403
    refused(mcp(sandbox, sandbox.tokens.operator, "delete_namespace",
                {"cluster": cluster, "namespace": "team-gone", "confirm": "team-gone"}), "403")
    r = api.http.delete(f"{base}/namespaces/team-gone")
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["query", "confirm"], r.text
    assert api.http.delete(f"{base}/namespaces/default", params={"confirm": "default"}).status_code == 409
    assert api.http.delete(f"{base}/namespaces/kube-system", params={"confirm": "kube-system"}).status_code == 422
    assert kube.get("v1", "Namespace", "team-gone") is not None
    plan = api.http.delete(f"{base}/namespaces/team-gone", params={"confirm": "team-gone", **DRY}).json()
    assert plan["changes"][0]["kind"] == "Kubernetes Namespace" and "deletes everything" in plan["warnings"][0]
    r = api.http.delete(f"{base}/namespaces/team-gone", params={"confirm": "team-gone"})
    assert r.status_code == 202 and api.wait_terminal(r.json()["id"])["status"] == "SUCCEEDED", r.text
    assert kube.get("v1", "Namespace", "team-gone") is None
    assert kube.get("v1", "PersistentVolume", "podstart-data-team-gone") is None


# -- secret values ------------------------------------------------------------------------------------

def test_no_secret_value_is_stored_anywhere_refused_or_not(api: Any, operator: Any, viewer: Any, sandbox: Any,
                                                           cluster: str) -> None:
    base = f"/v1/clusters/{cluster}"
    job = {"name": "leaky", "recipe": "pytorch", "image": "repo/train:1.0", "instance_type": "ml.g5.8xlarge",
           "parameters": {"script": "train.py"}, "env": {"HUB_AUTH": HF_VALUE, "LOG_LEVEL": "debug"}}
    r = operator.post(f"{base}/jobs", json=job)
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "env", "HUB_AUTH"], r.text
    assert "POST /v1/clusters/{cluster}/secrets" in r.text and HF_VALUE not in r.text
    refused(mcp(sandbox, sandbox.tokens.operator, "submit_job", {"cluster": cluster, **job}), "env", "secrets")
    # refused elsewhere first (a namespace PodStart does not own): the audit record masks the values all the same
    operator.post(f"{base}/secrets", json={"name": "x", "namespace": "kube-system", "data": {"K": KEY_VALUE}})
    operator.post(f"{base}/models", json={"model_id": "Qwen/Qwen3-0.6B", "token_secret": HF_VALUE})
    # a value that is a credential under a harmless key, in any body
    r = operator.post(f"{base}/endpoints", json=self_managed("leak", engine_args=["--max-model-len", KEY_VALUE]))
    assert r.status_code == 422, r.text
    stores = {"audit": api.get("/v1/audit", params={"limit": 100}).text,
              "operations": api.get("/v1/operations", params={"limit": 100}).text,
              "call log": api.get("/v1/sandbox/calls").text}
    for where, dump in stores.items():
        assert HF_VALUE not in dump and KEY_VALUE not in dump, f"a secret value is in the {where}"
    assert "***" in stores["audit"]

    # env values that are not credentials run, but readers see the names only
    ok = operator.post(f"{base}/jobs", json={**job, "env": {"LOG_LEVEL": "debug"}}, key=uuid.uuid4().hex)
    assert ok.status_code == 202, ok.text
    seen = viewer.get(f"/v1/operations/{ok.json()['id']}").json()
    assert seen["request"]["job"]["env"] == {"LOG_LEVEL": "***"}


# -- engine flags and model ids ------------------------------------------------------------------------

@pytest.mark.parametrize("args", [["--served_model_name=x"], ["--download_dir", "/tmp"], ["--served-model", "x"],
                                  ["--port=9000"], ["--api_key", "k"]])
def test_owned_engine_flags_are_refused_whatever_the_spelling(operator: Any, sandbox: Any, cluster: str,
                                                              args: list[str]) -> None:
    r = operator.post(f"/v1/clusters/{cluster}/endpoints", json=self_managed("flags", engine_args=args), params=DRY)
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "engine_args"], r.text
    assert "set by PodStart" in r.text


def test_model_ids_and_revisions_by_grammar_on_both_faces(api: Any, operator: Any, sandbox: Any,
                                                          cluster: str) -> None:
    base = f"/v1/clusters/{cluster}"
    before = ops_on(api, cluster)
    for body, field in (({"model_id": "../..", "revision": ".."}, "model_id"),
                        ({"model_id": "Qwen/Qwen3-0.6B", "revision": ".."}, "revision"),
                        ({"model_id": "org/a--b"}, "model_id")):
        r = operator.post(f"{base}/models", json=body)
        assert r.status_code == 422 and ["body", field] in [e["loc"] for e in r.json()["errors"]], r.text
        assert "e.g." in r.text  # the accepted form, with an example
    refused(mcp(sandbox, sandbox.tokens.operator, "download_model", {"cluster": cluster, "model_id": "../..",
                                                                     "revision": ".."}), "model_id")
    assert ops_on(api, cluster) == before  # no download started


# -- fair share ---------------------------------------------------------------------------------------

def _running_operation(name: str) -> str:
    """An operation that stays PENDING (stored, no workflow) for as long as a test needs."""
    from functions.api.deps import services
    from functions.domain import operations as ops
    from functions.domain.operations import Actor, Target

    op = ops.new_operation(op_id="op-" + uuid.uuid4().hex[:20], kind="namespace.create",
                           target=Target(cluster=name, region="us-west-2", resource="namespaces/x"),
                           steps=("namespace", "data_volume"), request={"name": "x"},
                           principal=Actor(sub="sandbox-admin", name="sandbox-admin"), idempotency_key=None)
    services().operations.repo.create(op)
    return op.id


def test_one_user_holds_at_most_two_long_polls_the_third_answers_at_once(api: Any, viewer: Any,
                                                                         operator: Any) -> None:
    limits = viewer.get("/v1/me").json()["limits"]
    assert limits["long_polls_per_user"] == 2 and limits["sockets_per_user"] == 10
    op_id = _running_operation(f"poll-{uuid.uuid4().hex[:6]}")
    answers: list[tuple[float, httpx.Response]] = []

    def poll(who: Any) -> None:
        t = time.monotonic()
        got = who.get(f"/v1/operations/{op_id}", params={"wait": 3})
        answers.append((time.monotonic() - t, got))

    threads = [threading.Thread(target=poll, args=(viewer,)) for _ in range(3)]
    threads.append(threading.Thread(target=poll, args=(operator,)))  # another user has a share of their own
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(resp.status_code == 200 and resp.json()["id"] == op_id for _, resp in answers)
    quick = [(took, resp) for took, resp in answers if "Retry-After" in resp.headers]
    waited = [took for took, resp in answers if "Retry-After" not in resp.headers]
    assert len(quick) == 1 and int(quick[0][1].headers["Retry-After"]) > 0, answers
    assert len(waited) == 3 and min(waited) >= 2.5, waited
    # answered at once: before any long poll ended (a bound in seconds would measure the machine's load instead)
    assert quick[0][0] < min(waited), answers
    # the shares come back once the polls end
    assert "Retry-After" not in viewer.get(f"/v1/operations/{op_id}", params={"wait": 1}).headers


def test_live_sockets_are_capped_per_user_with_a_429_not_a_hang(sandbox: Any) -> None:
    from websockets.sync.client import connect

    url = sandbox.base_url.replace("http://", "ws://") + "/ws"
    opened = []
    try:
        for _ in range(10):
            ws = connect(url)
            ws.send(json.dumps({"token": sandbox.tokens.viewer}))
            assert json.loads(ws.recv(timeout=10))["type"] == "ready"
            opened.append(ws)
        extra = connect(url)
        extra.send(json.dumps({"token": sandbox.tokens.viewer}))
        said = json.loads(extra.recv(timeout=10))
        assert said["type"] == "error" and said["status"] == 429 and said["retry_after"] > 0, said
        assert "10 live sockets per user" in said["detail"]
        extra.close()
        # another user is not affected
        other = connect(url)
        other.send(json.dumps({"token": sandbox.tokens.operator}))
        assert json.loads(other.recv(timeout=10))["type"] == "ready"
        other.close()
    finally:
        for ws in opened:
            ws.close()
    check: Callable[[], bool] = lambda: sandbox.sockets.sockets_of("sandbox-viewer") == 0  # noqa: E731
    eventually(check, timeout=15)
