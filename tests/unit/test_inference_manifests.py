"""Every inference object PodStart renders validates against the upstream schemas, and says what was asked."""

from __future__ import annotations

from typing import Any

import jsonschema
import kubernetes_validate
import pytest
from pydantic import ValidationError

from functions.assets import download_script, pool_worker_script
from functions.domain.inference import manifests as im
from functions.domain.inference.endpoints import EndpointCreate
from functions.domain.inference.requests import DOWNLOAD_IMAGE, ModelDownload, PoolCreate, download_job_name
from tests.reference import crd_schema

K8S_VERSION = "1.33"


def validate_crd(obj: dict[str, Any], file: str, version: str = "v1") -> None:
    jsonschema.validate(obj, crd_schema(file, version))


def endpoint(**kw: Any) -> EndpointCreate:
    return EndpointCreate.model_validate(kw)


SGLANG = dict(name="chat", mode="self-managed", engine="sglang", image="lmsysorg/sglang:v0.4.9.post2-cu126",
              model={"source": "huggingface", "model_id": "Qwen/Qwen3-8B", "token_secret": "hf-token"},
              instance_type="ml.g5.12xlarge", gpus=2, replicas=3, engine_args=["--tp-size", "2"],
              router={"enabled": True, "policy": "cache_aware"},
              autoscaling={"keda": {"min": 1, "max": 8, "metric": "queue_depth", "target": 4}})
VLLM = dict(name="llama", mode="self-managed", engine="vllm", image="vllm/vllm-openai:v0.10.1",
            model={"source": "s3", "uri": "/data/models/meta-llama/Llama-3.1-8B/main/"},
            instance_type="ml.g5.12xlarge", gpus=4, replicas=2)
MANAGED = dict(name="managed-llama", mode="managed", instance_type="ml.g5.8xlarge", replicas=2, gpus=1,
               model={"source": "huggingface", "model_id": "meta-llama/Llama-3.1-8B-Instruct",
                      "token_secret": "hf-token"},
               tiered_kv_cache={"l1": True, "l2_backend": "tieredstorage"}, routing_strategy="prefixaware",
               autoscaling={"min": 1, "max": 4, "trigger": "cloudwatch"})


def render(kw: dict[str, Any]) -> list[dict[str, Any]]:
    return im.endpoint_objects(endpoint(**kw).normalized(), region="us-west-2", bucket="data-bucket",
                               tls_bucket="tls-bucket")


def builtin_objects() -> list[dict[str, Any]]:
    objs = [*render(SGLANG), *render(VLLM),
            *render({**VLLM, "name": "ext", "service": "external", "internet_facing": True,
                     "source_ranges": ["203.0.113.0/24"]}),
            *render({**VLLM, "name": "bound", "service": "model_pool", "pool": "warm"}),
            *render({**VLLM, "name": "keyed", "api_key_secret": "keyed-key"}),
            *render({**SGLANG, "name": "keyed-routed", "api_key_secret": "keyed-key"}),
            *im.pool_objects(PoolCreate(name="warm", engine="vllm", image="vllm/vllm-openai:v0.10.1",
                                        instance_type="ml.g5.2xlarge", gpus_per_worker=1, workers=3).model_dump(),
                             pool_worker_script()),
            im.download_job(name=download_job_name("org/m", "main"), model_id="org/m", revision="main",
                            bucket="b", prefix="models/org/m/main/", region="us-west-2", token_secret="hf-token",
                            image=DOWNLOAD_IMAGE),
            im.downloader_service_account(), im.download_script_configmap(download_script())]
    return [o for o in objs if not o["apiVersion"].startswith(("keda.sh", "inference."))]


@pytest.mark.parametrize("obj", builtin_objects(), ids=lambda o: f"{o['kind']}/{o['metadata']['name']}")
def test_builtin_objects_validate_against_kubernetes(obj: dict[str, Any]) -> None:
    kubernetes_validate.validate(obj, K8S_VERSION, strict=True)


def test_managed_endpoint_config_carries_kv_cache_routing_and_autoscaling() -> None:
    (cr,) = render(MANAGED)
    validate_crd(cr, "hp_inferenceendpointconfigs.yaml")
    spec = cr["spec"]
    assert cr["kind"] == "InferenceEndpointConfig"
    assert spec["kvCacheSpec"] == {"enableL1Cache": True, "enableL2Cache": True,
                                   "l2CacheSpec": {"l2CacheBackend": "tieredstorage"}}
    assert spec["intelligentRoutingSpec"] == {"enabled": True, "routingStrategy": "prefixaware"}
    assert spec["autoScalingSpec"]["maxReplicaCount"] == 4 and "cloudWatchTrigger" in spec["autoScalingSpec"]
    assert spec["modelSourceConfig"]["huggingFaceModel"]["tokenSecretRef"] == {"name": "hf-token", "key": "token"}
    assert spec["tlsConfig"]["tlsCertificateOutputS3Uri"].startswith("s3://tls-bucket/")
    assert spec["worker"]["resources"]["requests"] == spec["worker"]["resources"]["limits"]


@pytest.mark.parametrize("source", [{"source": "s3", "uri": "/data/models/org/m/main/"},
                                    {"source": "fsx", "uri": "/fsx/models/m"}])
def test_managed_s3_and_fsx_sources_validate(source: dict[str, Any]) -> None:
    (cr,) = render({**MANAGED, "model": source, "tiered_kv_cache": {"l1": False, "l2_backend": "redis"},
                    "autoscaling": {"max": 3}})
    validate_crd(cr, "hp_inferenceendpointconfigs.yaml")
    assert cr["spec"]["modelSourceConfig"]["modelSourceType"] == source["source"]
    assert "prometheusTrigger" in cr["spec"]["autoScalingSpec"]


def test_jumpstart_model_validates() -> None:
    (cr,) = render({**MANAGED, "model": {"source": "jumpstart", "model_id": "meta-textgeneration-llama-3-8b",
                                         "accept_eula": True}})
    validate_crd(cr, "hp_jumpstartmodels.yaml")
    assert cr["kind"] == "JumpStartModel" and cr["spec"]["model"]["acceptEula"] is True
    assert cr["spec"]["intelligentRoutingSpec"]["routingStrategy"] == "prefixaware"


def test_scaled_object_validates_against_keda_2_17_1_and_targets_the_workers() -> None:
    so = next(o for o in render(SGLANG) if o["kind"] == "ScaledObject")
    validate_crd(so, "keda_v2.17.1_scaledobjects.yaml", "v1alpha1")
    assert so["spec"]["scaleTargetRef"]["name"] == "chat"
    assert (so["spec"]["minReplicaCount"], so["spec"]["maxReplicaCount"]) == (1, 8)


def test_router_role_is_namespaced_and_only_reads_pods() -> None:
    objs = {(o["kind"], o["metadata"]["name"]): o for o in render(SGLANG)}
    role = objs[("Role", "chat-router")]
    assert role["metadata"]["namespace"] == "default"
    assert role["rules"] == [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}]
    assert not any(k == "ClusterRole" for k, _ in objs)
    assert objs[("RoleBinding", "chat-router")]["subjects"][0]["name"] == "chat-router"
    assert objs[("Service", "chat")]["spec"]["selector"]["podstart.dev/role"] == "router"


def test_service_shapes() -> None:
    internal = next(o for o in render(VLLM) if o["kind"] == "Service")
    assert internal["spec"]["type"] == "ClusterIP"
    ext = next(o for o in render({**VLLM, "service": "external", "source_ranges": ["10.0.0.0/8"]})
               if o["kind"] == "Service")
    assert ext["spec"]["type"] == "LoadBalancer"
    assert ext["metadata"]["annotations"]["service.beta.kubernetes.io/aws-load-balancer-scheme"] == "internal"
    assert ext["spec"]["loadBalancerSourceRanges"] == ["10.0.0.0/8"]
    public = next(o for o in render({**VLLM, "service": "external", "internet_facing": True,
                                     "source_ranges": ["203.0.113.0/24"]})
                  if o["kind"] == "Service")
    assert public["metadata"]["annotations"]["service.beta.kubernetes.io/aws-load-balancer-scheme"] == \
        "internet-facing"
    (bound,) = render({**VLLM, "service": "model_pool", "pool": "warm"})
    assert bound["spec"]["selector"] == {"podstart.dev/pool": "warm", "podstart.dev/model": "llama"}


def test_worker_gpu_requests_equal_limits_probes_spread_and_no_token_literal() -> None:
    objs = render(SGLANG)
    dep = next(o for o in objs if o["kind"] == "Deployment" and o["metadata"]["name"] == "chat")
    pod = dep["spec"]["template"]["spec"]
    c = pod["containers"][0]
    assert c["resources"]["requests"]["nvidia.com/gpu"] == c["resources"]["limits"]["nvidia.com/gpu"] == "2"
    assert {"readinessProbe", "livenessProbe", "startupProbe"} <= set(c)
    assert pod["topologySpreadConstraints"][0]["topologyKey"] == "kubernetes.io/hostname"
    hf = next(e for e in c["env"] if e["name"] == "HF_TOKEN")
    assert "value" not in hf and hf["valueFrom"]["secretKeyRef"]["name"] == "hf-token"
    assert any(o["kind"] == "PodDisruptionBudget" for o in objs)


def test_latest_and_unpinned_images_are_refused() -> None:
    for image in ("vllm/vllm-openai:latest", "vllm/vllm-openai"):
        with pytest.raises(ValidationError) as err:
            endpoint(**{**VLLM, "image": image})
        assert err.value.errors()[0]["loc"] == ("image",)
    assert endpoint(**{**VLLM, "image": "vllm/vllm-openai@sha256:" + "a" * 64}).image


def test_gpus_must_match_tensor_and_pipeline_parallel_with_the_numbers() -> None:
    with pytest.raises(ValidationError) as err:
        endpoint(**{**VLLM, "gpus": 2, "engine_args": ["--tensor-parallel-size", "4", "-pp=2"]})
    msg = str(err.value)
    assert "tensor parallel 4 x pipeline parallel 2 = 8 GPUs" in msg and "gpus is 2" in msg
    ok = endpoint(**{**VLLM, "gpus": 4}).normalized()
    assert ok["engine_args"][-2:] == ["--tensor-parallel-size", "4"]


def test_engine_args_are_a_validated_list() -> None:
    with pytest.raises(ValidationError, match="one argument per element"):
        endpoint(**{**VLLM, "engine_args": ["--max-model-len 4096; rm -rf /"]})
    with pytest.raises(ValidationError, match="set by PodStart"):
        endpoint(**{**VLLM, "engine_args": ["--port=9000"]})


def test_paths_refuse_the_other_paths_fields() -> None:
    with pytest.raises(ValidationError, match="managed-only"):
        endpoint(**{**VLLM, "routing_strategy": "kvaware"})
    with pytest.raises(ValidationError, match="self-managed fields"):
        endpoint(**{**MANAGED, "engine": "vllm"})
    with pytest.raises(ValidationError, match="engine must be sglang"):
        endpoint(**{**VLLM, "router": {"enabled": True}})


def test_download_job_name_is_deterministic_and_token_is_a_secret_ref() -> None:
    req = ModelDownload(model_id="Qwen/Qwen3-0.6B", revision="main", token_secret="hf-token")
    a, b = download_job_name(req.model_id, req.revision), download_job_name(req.model_id, req.revision)
    assert a == b != download_job_name(req.model_id, "v2")
    job = im.download_job(name=a, model_id=req.model_id, revision=req.revision, bucket="b",
                          prefix="models/Qwen/Qwen3-0.6B/main/", region="us-west-2", token_secret="hf-token",
                          image=DOWNLOAD_IMAGE)
    env = job["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf-token", "key": "token"}}} in env


def test_the_download_job_runs_the_constant_script_from_its_configmap_as_the_downloader_service_account() -> None:
    job = im.download_job(name="dl-x", model_id="org/m", revision="v1", bucket="b", prefix="models/org/m/v1/",
                          region="us-west-2", token_secret=None, image=DOWNLOAD_IMAGE)
    pod = job["spec"]["template"]["spec"]
    c = pod["containers"][0]
    assert c["command"] == ["python3", "/opt/podstart/podstart_download.py"]  # no shell, nothing from input
    assert pod["serviceAccountName"] == im.DOWNLOADER and pod["restartPolicy"] == "Never"
    assert {"name": "script", "configMap": {"name": im.DOWNLOADER, "defaultMode": 0o444}} in pod["volumes"]
    assert {e["name"]: e.get("value") for e in c["env"]}["PREFIX"] == "models/org/m/v1/"
    assert not any(e["name"] == "HF_TOKEN" for e in c["env"])
    assert job["spec"]["podFailurePolicy"]["rules"][0]["onExitCodes"]["values"] == [im.EXIT_PERMANENT]
    assert ":" in DOWNLOAD_IMAGE and not DOWNLOAD_IMAGE.endswith((":latest", ":3.12-slim"))  # an exact version
    assert im.download_script_configmap(download_script())["data"][im.SCRIPT_KEY] == download_script()


def test_a_download_pods_failure_is_its_termination_message_or_why_it_cannot_start() -> None:
    def pod(name: str, created: str, state: dict[str, Any]) -> dict[str, Any]:
        return {"metadata": {"name": name, "creationTimestamp": created},
                "status": {"containerStatuses": [{"name": "download", "state": state}]}}

    first = pod("a", "2026-01-01T00:00:00Z", {"terminated": {"exitCode": 1, "message": "ConnectionError: reset"}})
    last = pod("b", "2026-01-01T00:05:00Z", {"terminated": {"exitCode": 3, "message": "permanent: 401 gated"}})
    assert im.pod_failure([first, last]) == "permanent: 401 gated"  # the newest pod says why the Job gave up
    secret = pod("c", "2026-01-01T00:00:00Z", {"waiting": {"reason": "CreateContainerConfigError",
                                                           "message": 'secret "hf" not found'}})
    assert im.pod_failure([secret]) == 'CreateContainerConfigError: secret "hf" not found'
    assert im.pod_failure([pod("d", "x", {"running": {}})]) is None
    assert im.pod_failure([pod("e", "x", {"terminated": {"exitCode": 0, "reason": "Completed"}})]) is None


def test_an_api_key_puts_the_gate_in_front_the_engine_on_localhost_and_the_key_only_in_a_secret_ref() -> None:
    # Given an endpoint that requires an API key (a PodStart Secret)
    objs = render({**VLLM, "api_key_secret": "chat-key"})
    # Then the gate's ConfigMap comes first and the worker pod runs the gate on the Service's http port
    assert objs[0]["kind"] == "ConfigMap" and objs[0]["metadata"]["name"] == im.GATE
    dep = next(o for o in objs if o["kind"] == "Deployment")
    pod = dep["spec"]["template"]["spec"]
    engine, gate = pod["containers"]
    assert gate["name"] == im.GATE and gate["ports"] == [{"name": "http", "containerPort": im.GATE_PORT}]
    # the engine listens on 127.0.0.1 only, so nothing reaches it but through the gate
    cmd = engine["command"]
    assert cmd[cmd.index("--host") + 1] == "127.0.0.1" and cmd[cmd.index("--port") + 1] == str(im.UPSTREAM_PORT)
    assert "--api-key" not in cmd and not any(p.get("name") == "http" for p in engine.get("ports") or [])
    # the probes read the engine's health through the gate; the key comes from the Secret, never a literal
    assert {"readinessProbe", "livenessProbe", "startupProbe"} <= set(gate) and "readinessProbe" not in engine
    [key] = gate["env"]
    assert key["valueFrom"]["secretKeyRef"] == {"name": "chat-key", "key": im.API_KEY_KEY} and "value" not in key
    assert {"name": im.GATE, "configMap": {"name": im.GATE}} in pod["volumes"]
    # the Service targets the gate's named port
    svc = next(o for o in objs if o["kind"] == "Service")
    assert svc["spec"]["ports"][0]["targetPort"] == "http"


def test_with_a_router_the_gate_fronts_the_router_the_workers_stay_as_they_are() -> None:
    objs = render({**SGLANG, "api_key_secret": "chat-key", "replicas": 2, "router": {"enabled": True}})
    router = next(o for o in objs if o["kind"] == "Deployment" and o["metadata"]["name"] == im.router_name("chat"))
    workers = next(o for o in objs if o["kind"] == "Deployment" and o["metadata"]["name"] == "chat")
    assert [c["name"] for c in router["spec"]["template"]["spec"]["containers"]] == ["router", im.GATE]
    assert [c["name"] for c in workers["spec"]["template"]["spec"]["containers"]] == ["sglang"]
