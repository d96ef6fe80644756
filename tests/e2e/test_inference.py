"""Inference on the sandbox: managed and self-managed endpoints deploy, become ready, answer invoke;
service shapes, the SGLang router and KEDA, pools retargeted by label, a failed image pull seen, bad
input refused with nothing made. Dry runs plan the objects the real runs then make, scale or delete, and the
workers a relabel then moves, with no AWS write and nothing made."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.e2e.plan_calls import aws_writes, request_writes

VLLM_IMAGE = "vllm/vllm-openai:v0.10.1"
SGLANG_IMAGE = "lmsysorg/sglang:v0.4.9.post2-cu126"
GPU_TYPE = "ml.g5.8xlarge"


def name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:5]}"


@pytest.fixture(scope="module")
def cluster(api: Any) -> str:
    cname = name("inf")
    op = api.post("/v1/clusters", json={"name": cname, "region": "us-west-2", "instance_groups": [
        # four 1-GPU nodes: the tests deploy several GPU replicas at once, and the scheduler never overcommits a GPU
        {"name": "gpu", "instance_type": GPU_TYPE, "instance_count": 4, "availability_zone": "us-west-2a"}]}).json()
    assert api.wait_terminal(op["id"], 180)["status"] == "SUCCEEDED"
    # the token Secret endpoints name: one PodStart wrote (a Secret it did not write is refused)
    r = api.post(f"/v1/clusters/{cname}/secrets", json={"name": "hf-token", "data": {"token": "hf_" + "x" * 30}})
    assert r.status_code == 201, r.text
    return cname


def vllm(ep: str, **over: Any) -> dict[str, Any]:
    return {"name": ep, "mode": "self-managed", "engine": "vllm", "image": VLLM_IMAGE,
            "model": {"source": "s3", "uri": "/data/models/Qwen/Qwen3-0.6B/main/"},
            "instance_type": GPU_TYPE, "gpus": 1, "replicas": 2, **over}


def deploy(api: Any, cluster: str, body: dict[str, Any]) -> dict[str, Any]:
    r = api.post(f"/v1/clusters/{cluster}/endpoints", json=body, key=uuid.uuid4().hex)
    assert r.status_code == 202, r.text
    return api.wait_terminal(r.json()["id"], 90)


def delete(api: Any, cluster: str, ep: str) -> None:
    r = api.http.delete(f"/v1/clusters/{cluster}/endpoints/{ep}")
    assert r.status_code == 202, r.text
    assert api.wait_terminal(r.json()["id"], 60)["status"] == "SUCCEEDED"


def chat(api: Any, cluster: str, ep: str, text: str = "hi there") -> Any:
    return api.post(f"/v1/clusters/{cluster}/endpoints/{ep}/invoke",
                    json={"messages": [{"role": "user", "content": text}]})


def test_self_managed_internal_deploys_answers_scales_and_deletes(api: Any, viewer: Any, sandbox: Any,
                                                                  cluster: str) -> None:
    ep = name("llm")
    op = deploy(api, cluster, vllm(ep))
    assert op["status"] == "SUCCEEDED", op["error"]
    assert [s["name"] for s in op["steps"]] == ["inference_operator", "keda", "objects", "ready"]
    assert [s["status"] for s in op["steps"]][:2] == ["SKIPPED", "SKIPPED"]
    kube = sandbox.kube.store(cluster)
    svc = kube.get("v1", "Service", ep, "default")
    assert svc["spec"]["type"] == "ClusterIP"
    dep = kube.get("apps/v1", "Deployment", ep, "default")
    c = dep["spec"]["template"]["spec"]["containers"][0]
    assert c["resources"]["requests"]["nvidia.com/gpu"] == c["resources"]["limits"]["nvidia.com/gpu"] == "1"
    assert kube.get("policy/v1", "PodDisruptionBudget", f"{ep}-workers", "default") is not None

    got = api.get(f"/v1/clusters/{cluster}/endpoints/{ep}").json()
    assert (got["status"], got["ready_replicas"], got["live"]) == ("READY", 2, True)
    # where and how to call it: the Service's in-cluster name, the OpenAI path and the model
    assert got["ready"] and got["url"] == f"http://{ep}.default.svc.cluster.local"
    assert "/v1/chat/completions" in got["how_to_call"] and "Qwen/Qwen3-0.6B/main" in got["how_to_call"]
    ready_step = next(s for s in op["steps"] if s["name"] == "ready")
    assert ready_step["outputs"]["url"] == got["url"]
    assert ep in [e["name"] for e in api.get(f"/v1/clusters/{cluster}/endpoints").json()["items"]]

    r = chat(api, cluster, ep, "what are you?")
    assert r.status_code == 200, r.text
    assert r.json()["content"].startswith("Hello from Qwen/Qwen3-0.6B/main") and "what are you?" not in r.json()[
        "content"]  # a model's answer, not the prompt echoed
    usage = r.json()["response"]["usage"]
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
    # tokens in/out and how long the engine took, said by PodStart (the test console shows them)
    said = r.json()
    assert (said["prompt_tokens"], said["completion_tokens"]) == (usage["prompt_tokens"], usage["completion_tokens"])
    assert isinstance(r.json()["latency_ms"], int) and r.json()["latency_ms"] >= 0
    assert r.json()["path"] == "/v1/chat/completions"
    assert chat(viewer, cluster, ep).status_code == 403
    # a completion: the engine's /v1/completions, its text as the content
    r = api.post(f"/v1/clusters/{cluster}/endpoints/{ep}/invoke", json={"prompt": "Once upon a time", "max_tokens": 32})
    assert r.status_code == 200, r.text
    assert r.json()["path"] == "/v1/completions" and r.json()["response"]["object"] == "text_completion"
    assert r.json()["content"] == r.json()["response"]["choices"][0]["text"] and r.json()["content"]
    assert r.json()["completion_tokens"] <= 32
    # a chat and a prompt at once, or neither: refused naming why, nothing sent to the engine
    for bad in ({"prompt": "x", "messages": [{"role": "user", "content": "x"}]}, {"max_tokens": 5}):
        r = api.post(f"/v1/clusters/{cluster}/endpoints/{ep}/invoke", json=bad)
        assert r.status_code == 422 and "messages" in r.text and "prompt" in r.text, r.text

    # Listed across clusters (GET /v1/endpoints, a viewer's read), and filtered to this cluster
    everywhere = viewer.get("/v1/endpoints").json()
    mine = [e for e in everywhere["items"] if (e["cluster"], e["name"]) == (cluster, ep)]
    assert len(mine) == 1 and mine[0]["status"] == "READY" and mine[0]["region"] == "us-west-2", everywhere
    only = api.get("/v1/endpoints", params={"cluster": cluster}).json()
    assert {e["cluster"] for e in only["items"]} == {cluster} and ep in [e["name"] for e in only["items"]]
    assert api.get("/v1/endpoints", params={"cluster": "no-such-cluster"}).json() == {
        "items": [], "next_token": None, "unreachable": []}

    same = api.http.patch(f"/v1/clusters/{cluster}/endpoints/{ep}", json={"replicas": 2})
    assert same.status_code == 200 and same.json()["changed"] is False
    r = api.http.patch(f"/v1/clusters/{cluster}/endpoints/{ep}", json={"replicas": 1})
    assert r.status_code == 202, r.text
    assert api.wait_terminal(r.json()["id"], 60)["status"] == "SUCCEEDED"
    assert kube.get("apps/v1", "Deployment", ep, "default")["spec"]["replicas"] == 1

    delete(api, cluster, ep)
    assert kube.get("apps/v1", "Deployment", ep, "default") is None
    assert api.get(f"/v1/clusters/{cluster}/endpoints/{ep}").status_code == 404


def test_dry_runs_plan_what_deploy_scale_and_delete_then_do_and_change_nothing(api: Any, sandbox: Any,
                                                                               cluster: str) -> None:
    ep, kube = name("plan"), sandbox.kube.store(cluster)
    url = f"/v1/clusters/{cluster}/endpoints"
    since, ops = api.mark(), len(api.get("/v1/operations", params={"cluster": cluster}).json()["items"])
    dry = api.post(url, json=vllm(ep), params={"dry_run": "true"})
    assert dry.status_code == 200, dry.text
    plan = dry.json()
    assert plan["kind"] == "endpoint.deploy" and {c["action"] for c in plan["changes"]} == {"create"}
    planned = {(c["kind"].removeprefix("Kubernetes "), c["name"]) for c in plan["changes"] if c["step"] == "objects"}
    assert {("Deployment", ep), ("Service", ep)} <= planned
    assert plan["cost"]["hourly"] == 0 and [line["paid"] for line in plan["cost"]["lines"]] == [True]
    assert aws_writes(api, since) == [] and kube.get("apps/v1", "Deployment", ep, "default") is None
    assert request_writes(api, dry) == []  # no write at all, Kubernetes and PodStart's own tables included
    assert api.get(f"{url}/{ep}").status_code == 404  # no endpoint record
    assert len(api.get("/v1/operations", params={"cluster": cluster}).json()["items"]) == ops  # no operation
    bad = vllm(ep, image="vllm/vllm-openai:latest")
    real, dry_bad = api.post(url, json=bad), api.post(url, json=bad, params={"dry_run": "true"})
    assert real.status_code == dry_bad.status_code == 422 and real.json()["errors"] == dry_bad.json()["errors"]

    op = deploy(api, cluster, vllm(ep))
    assert op["status"] == "SUCCEEDED", op["error"]
    made = api.get(f"{url}/{ep}").json()["objects"]
    assert {(o["kind"], o["name"]) for o in made} == planned  # the plan named exactly what the deploy made
    assert all(kube.get(o["api_version"], o["kind"], o["name"], o["namespace"] or None) for o in made)
    assert api.post(url, json=vllm(ep), params={"dry_run": "true"}).status_code == 409  # the name is taken now

    since = api.mark()
    scale = api.http.patch(f"{url}/{ep}", json={"replicas": 1}, params={"dry_run": "true"})
    assert scale.status_code == 200, scale.text
    first = scale.json()["changes"][0]
    assert (first["action"], first["kind"], first["name"], first["details"]["replicas"]) == (
        "update", "Kubernetes Deployment", ep, {"from": 2, "to": 1})
    same = api.http.patch(f"{url}/{ep}", json={"replicas": 2}, params={"dry_run": "true"}).json()
    assert [c["action"] for c in same["changes"]] == ["none"]

    gone = api.http.delete(f"{url}/{ep}", params={"dry_run": "true"})
    assert gone.status_code == 200, gone.text
    assert {(c["kind"].removeprefix("Kubernetes "), c["name"]) for c in gone.json()["changes"]
            if c["step"] == "objects" and c["action"] == "delete"} == planned
    assert kube.get("apps/v1", "Deployment", ep, "default")["spec"]["replicas"] == 2  # neither plan changed it
    assert api.get(f"{url}/{ep}").json()["status"] == "READY" and aws_writes(api, since) == []
    assert request_writes(api, scale) == [] and request_writes(api, gone) == []
    delete(api, cluster, ep)
    assert all(kube.get(o["api_version"], o["kind"], o["name"], o["namespace"] or None) is None for o in made)


def test_external_shape_is_an_nlb_with_source_ranges(api: Any, sandbox: Any, cluster: str) -> None:
    ep = name("ext")
    op = deploy(api, cluster, vllm(ep, replicas=1, service="external", source_ranges=["203.0.113.0/24"]))
    assert op["status"] == "SUCCEEDED", op["error"]
    svc = sandbox.kube.store(cluster).get("v1", "Service", ep, "default")
    assert svc["spec"]["type"] == "LoadBalancer" and svc["spec"]["loadBalancerSourceRanges"] == ["203.0.113.0/24"]
    assert svc["metadata"]["annotations"]["service.beta.kubernetes.io/aws-load-balancer-scheme"] == "internal"
    # the deploy ends once the NLB has its address, and every face shows it
    host = svc["status"]["loadBalancer"]["ingress"][0]["hostname"]
    assert host.startswith("internal-k8s-default-") and host.endswith(".elb.us-west-2.amazonaws.com")
    got = api.get(f"/v1/clusters/{cluster}/endpoints/{ep}").json()
    assert got["url"] == f"http://{host}" and got["ready"] is True
    assert next(s for s in op["steps"] if s["name"] == "ready")["outputs"]["url"] == got["url"]
    delete(api, cluster, ep)


def test_managed_deploy_completes_with_kv_cache_and_routing_and_answers(api: Any, sandbox: Any, cluster: str) -> None:
    ep = name("mgd")
    body = {"name": ep, "mode": "managed", "instance_type": GPU_TYPE, "replicas": 1, "gpus": 1,
            "model": {"source": "huggingface", "model_id": "meta-llama/Llama-3.1-8B-Instruct",
                      "token_secret": "hf-token"},
            "tiered_kv_cache": {"l1": True, "l2_backend": "redis"}, "routing_strategy": "kvaware"}
    plan = api.post(f"/v1/clusters/{cluster}/endpoints", json=body, params={"dry_run": "true"}).json()
    assert [(c["action"], c["kind"], c["name"]) for c in plan["changes"]][:2] == [
        ("none", "eks-addon", "amazon-sagemaker-hyperpod-inference"),  # the operator serves the kind already
        ("create", "Kubernetes InferenceEndpointConfig", ep)], plan
    op = deploy(api, cluster, body)
    assert op["status"] == "SUCCEEDED", op["error"]
    assert op["steps"][0]["status"] == "SUCCEEDED" and "InferenceEndpointConfig" in op["steps"][0]["message"]
    cr = sandbox.kube.store(cluster).get("inference.sagemaker.aws.amazon.com/v1", "InferenceEndpointConfig", ep,
                                         "default")
    assert cr["status"]["state"] == "DeploymentComplete"
    assert cr["spec"]["kvCacheSpec"]["l2CacheSpec"]["l2CacheBackend"] == "redis"
    assert cr["spec"]["intelligentRoutingSpec"] == {"enabled": True, "routingStrategy": "kvaware"}
    assert "hf-token" in str(cr["spec"]["modelSourceConfig"]) and "token\": \"hf_" not in str(cr)
    got = api.get(f"/v1/clusters/{cluster}/endpoints/{ep}").json()
    assert got["status"] == "READY" and got["state"] == "DeploymentComplete"
    r = chat(api, cluster, ep)
    assert r.status_code == 200 and "meta-llama/Llama-3.1-8B-Instruct" in r.json()["content"]
    delete(api, cluster, ep)


def test_an_image_that_cannot_be_pulled_fails_the_deploy_and_shows_on_the_endpoint(api: Any, cluster: str) -> None:
    ep = name("bad")
    op = deploy(api, cluster, vllm(ep, replicas=1, image="sandbox.invalid/vllm:v1"))
    assert op["status"] == "FAILED"
    assert op["error"]["code"] == "ImagePullFailed" and "ErrImagePull" in op["error"]["message"]
    got = api.get(f"/v1/clusters/{cluster}/endpoints/{ep}").json()
    assert got["status"] == "FAILED" and "ErrImagePull" in got["message"]
    delete(api, cluster, ep)


def test_sglang_router_with_keda_installs_keda_once_and_scopes_the_router(api: Any, sandbox: Any,
                                                                          cluster: str) -> None:
    ep = name("sgl")
    body = {"name": ep, "mode": "self-managed", "engine": "sglang", "image": SGLANG_IMAGE,
            "model": {"source": "huggingface", "model_id": "Qwen/Qwen3-0.6B"}, "instance_type": GPU_TYPE,
            "gpus": 1, "replicas": 2, "router": {"enabled": True, "policy": "cache_aware"},
            "autoscaling": {"keda": {"min": 1, "max": 4, "metric": "queue_depth", "target": 4}}}
    first = api.post(f"/v1/clusters/{cluster}/endpoints", json=body, params={"dry_run": "true"}).json()
    assert "Kubernetes CustomResourceDefinition" in [c["kind"] for c in first["changes"] if c["step"] == "keda"]
    op = deploy(api, cluster, body)
    assert op["status"] == "SUCCEEDED", op["error"]
    assert "installed KEDA 2.17.1" in op["steps"][1]["message"]
    kube = sandbox.kube.store(cluster)
    role = kube.get("rbac.authorization.k8s.io/v1", "Role", f"{ep}-router", "default")
    assert role["rules"][0]["resources"] == ["pods"] and role["rules"][0]["verbs"] == ["get", "list", "watch"]
    so = kube.get("keda.sh/v1alpha1", "ScaledObject", f"{ep}-workers", "default")
    assert so["spec"]["scaleTargetRef"]["name"] == ep and so["spec"]["maxReplicaCount"] == 4
    assert kube.get("v1", "Service", ep, "default")["spec"]["selector"]["podstart.dev/role"] == "router"
    r = api.http.patch(f"/v1/clusters/{cluster}/endpoints/{ep}", json={"autoscaling_max": 6})
    assert r.status_code == 202 and api.wait_terminal(r.json()["id"], 60)["status"] == "SUCCEEDED"
    assert kube.get("keda.sh/v1alpha1", "ScaledObject", f"{ep}-workers", "default")["spec"]["maxReplicaCount"] == 6
    second = {**body, "name": name("sgl")}
    kept = api.post(f"/v1/clusters/{cluster}/endpoints", json=second, params={"dry_run": "true"}).json()
    assert [c["action"] for c in kept["changes"] if c["step"] == "keda"] == ["none"], kept  # installed once
    again = deploy(api, cluster, second)
    assert again["status"] == "SUCCEEDED" and "kept as it is" in again["steps"][1]["message"]
    delete(api, cluster, ep)
    delete(api, cluster, again["request"]["endpoint"]["name"])


def test_pool_workers_move_to_an_endpoint_by_label_and_back(api: Any, sandbox: Any, cluster: str) -> None:
    pool = name("warm")
    kube = sandbox.kube.store(cluster)
    spec = {"name": pool, "engine": "vllm", "image": VLLM_IMAGE, "instance_type": GPU_TYPE, "gpus_per_worker": 1,
            "workers": 2}
    dry = api.post(f"/v1/clusters/{cluster}/pools", json=spec, params={"dry_run": "true"})
    assert dry.status_code == 200, dry.text
    [workers] = [c for c in dry.json()["changes"] if c["kind"] == "Kubernetes Deployment"]
    assert workers["details"]["replicas"] == 2 and kube.get("apps/v1", "Deployment", workers["name"], "default") is None
    r = api.post(f"/v1/clusters/{cluster}/pools", json=spec)
    assert r.status_code == 202, r.text
    assert api.wait_terminal(r.json()["id"], 60)["status"] == "SUCCEEDED"
    assert kube.get("apps/v1", "Deployment", workers["name"], "default") is not None  # the one the plan named
    ep = name("pooled")
    # the pool's workers serve it: an endpoint that says otherwise is refused, naming the field
    bad = api.post(f"/v1/clusters/{cluster}/endpoints", json=vllm(ep, service="model_pool", pool=pool, gpus=2,
                                                                  engine_args=["--tensor-parallel-size", "2"]))
    assert bad.status_code == 422 and bad.json()["errors"][0]["loc"] == ["body", "gpus"], bad.text
    op = deploy(api, cluster, vllm(ep, service="model_pool", pool=pool, replicas=1))
    assert op["status"] == "SUCCEEDED", op["error"]
    refused = chat(api, cluster, ep)  # no worker bound yet: the Service has no endpoints
    assert refused.status_code == 502 and f"pool {pool}" in refused.text, refused.text
    seen = api.get(f"/v1/clusters/{cluster}/endpoints/{ep}").json()
    assert (seen["status"], seen["replicas"]) == ("NO_WORKERS", 0) and pool in seen["message"], seen

    # what a worker cannot load is refused, naming the model, and moves nothing
    for bad in ({"source": "huggingface", "model_id": "meta/gated", "token_secret": "hf-token"},
                {"source": "jumpstart", "model_id": "huggingface-llm-qwen"}):
        r = api.post(f"/v1/clusters/{cluster}/pools/{pool}/assign", json={"endpoint": ep, "model": bad, "workers": 1})
        assert r.status_code == 422 and r.json()["errors"][0]["loc"][:2] == ["body", "model"], r.text
    model = {"source": "huggingface", "model_id": "Qwen/Qwen3-1.7B"}
    assign = {"endpoint": ep, "model": model, "workers": 1}
    dry = api.post(f"/v1/clusters/{cluster}/pools/{pool}/assign", json=assign, params={"dry_run": "true"})
    assert dry.status_code == 200, dry.text
    [move] = dry.json()["changes"]
    assert move["details"]["label"] == {"key": "podstart.dev/model", "from": "unassigned", "to": ep}
    assert not kube.list("v1", "Pod", "default", label_selector=f"podstart.dev/pool={pool},podstart.dev/model={ep}")
    r = api.post(f"/v1/clusters/{cluster}/pools/{pool}/assign", json=assign)
    assert r.status_code == 202, r.text
    assert api.wait_terminal(r.json()["id"], 60)["status"] == "SUCCEEDED"
    bound = kube.list("v1", "Pod", "default", label_selector=f"podstart.dev/pool={pool},podstart.dev/model={ep}")
    free = kube.list("v1", "Pod", "default", label_selector=f"podstart.dev/pool={pool},podstart.dev/model=unassigned")
    assert (len(bound), len(free)) == (1, 1)
    assert bound[0]["metadata"]["name"] == move["name"]  # the worker the plan said would move
    answer = chat(api, cluster, ep).json()
    assert "Qwen/Qwen3-1.7B" in answer["content"]
    seen = api.get(f"/v1/clusters/{cluster}/endpoints/{ep}").json()
    assert (seen["status"], seen["ready_replicas"], seen["replicas"]) == ("READY", 1, 1), seen
    assert seen["model"] == "Qwen/Qwen3-1.7B", seen  # what the assignment gave its worker, not the deploy's model
    assert answer["response"]["system_fingerprint"] == f"sandbox/{bound[0]['metadata']['name']}"
    listed = api.get(f"/v1/clusters/{cluster}/pools").json()["items"]
    assert next(p for p in listed if p["name"] == pool)["by_model"] == {ep: 1, "unassigned": 1}

    dry = api.post(f"/v1/clusters/{cluster}/pools/{pool}/release", json={"endpoint": ep}, params={"dry_run": "true"})
    assert [c["name"] for c in dry.json()["changes"]] == [bound[0]["metadata"]["name"]], dry.text
    r = api.post(f"/v1/clusters/{cluster}/pools/{pool}/release", json={"endpoint": ep})
    assert api.wait_terminal(r.json()["id"], 60)["status"] == "SUCCEEDED"
    assert not kube.list("v1", "Pod", "default", label_selector=f"podstart.dev/pool={pool},podstart.dev/model={ep}")
    assert api.get(f"/v1/clusters/{cluster}/endpoints/{ep}").json()["status"] == "NO_WORKERS"
    delete(api, cluster, ep)


@pytest.mark.parametrize(("over", "loc", "words"), [
    ({"image": "vllm/vllm-openai:latest"}, ["body", "image"], "latest"),
    ({"gpus": 2, "engine_args": ["--tensor-parallel-size", "4"]}, ["body"], "= 4 GPUs per replica, but gpus is 2"),
    ({"instance_type": "ml.p5.48xlarge"}, ["body", "instance_type"], GPU_TYPE),
    ({"engine_args": ["--max-model-len 4096"]}, ["body", "engine_args"], "one argument per element"),
])
def test_bad_deploys_are_refused_naming_the_field(api: Any, sandbox: Any, cluster: str, over: dict[str, Any],
                                                  loc: list[str], words: str) -> None:
    ep = name("nope")
    r = api.post(f"/v1/clusters/{cluster}/endpoints", json=vllm(ep, **over))
    assert r.status_code == 422, r.text
    err = r.json()["errors"][0]
    assert err["loc"][:len(loc)] == loc and words in err["msg"]
    assert api.get(f"/v1/clusters/{cluster}/endpoints/{ep}").status_code == 404
    assert sandbox.kube.store(cluster).get("apps/v1", "Deployment", ep, "default") is None


def test_invoke_takes_no_target_from_the_request(api: Any, cluster: str) -> None:
    for extra in ({"url": "http://169.254.169.254/latest/meta-data"}, {"host": "evil.example"},
                  {"model": "other-endpoint"}):
        r = api.post(f"/v1/clusters/{cluster}/endpoints/nothing/invoke",
                     json={"messages": [{"role": "user", "content": "x"}], **extra})
        assert r.status_code == 422 and r.json()["errors"][0]["loc"][-1] == next(iter(extra))
    big = {"messages": [{"role": "user", "content": "x" * 30000}] * 3}
    assert api.post(f"/v1/clusters/{cluster}/endpoints/nothing/invoke", json=big).status_code in (404, 413)
