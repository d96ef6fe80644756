"""Kubernetes objects for inference, rendered as dicts from a normalized endpoint request.

Managed: an InferenceEndpointConfig (or a JumpStartModel for catalog models) the HyperPod inference
operator turns into a Deployment, a Service and a SageMaker endpoint. Self-managed: a vLLM/SGLang
Deployment PodStart owns, its Service in one of three shapes, a PodDisruptionBudget, and for SGLang
the router (its own ServiceAccount, namespaced Role, RoleBinding) with a KEDA ScaledObject.
"""

from __future__ import annotations

from typing import Any

from functions.domain.inference.endpoints import ENGINE_PORT, NAMESPACE, model_label
from functions.domain.manifests import DATA_VOLUME, HYPERPOD_NODE_AFFINITY, MANAGED_LABELS
from functions.domain.storage.api import DataMap, data

INFERENCE_API = "inference.sagemaker.aws.amazon.com/v1"
KEDA_API = "keda.sh/v1alpha1"
ENDPOINT_LABEL = "podstart.dev/endpoint"
POOL_LABEL = "podstart.dev/pool"
MODEL_LABEL = "podstart.dev/model"
ROLE_LABEL = "podstart.dev/role"
UNASSIGNED = "unassigned"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
SGLANG_ROUTER_IMAGE = "lmsysorg/sglang-router:v0.1.9"
MANAGED_WORKER_IMAGE = "763104351884.dkr.ecr.{region}.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128"
MANAGED_PORT = 8080
SERVICE_PORT = 80
TOKEN_KEY = "token"
ROUTER_METRICS_PORT = 29000
PROMETHEUS = "http://prometheus-server.monitoring.svc.cluster.local:80"
KEDA_QUERIES = {
    "queue_depth": 'sum(sgl_router_queue_depth{{endpoint="{name}"}})',
    "qps": 'sum(rate(sgl_router_requests_total{{endpoint="{name}"}}[1m]))',
}


def _meta(name: str, namespace: str | None = NAMESPACE, **labels: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": {**MANAGED_LABELS, **labels}}
    if namespace:
        meta["namespace"] = namespace
    return meta


def worker_name(endpoint: str) -> str:
    return endpoint


def router_name(endpoint: str) -> str:
    return f"{endpoint}-router"


def service_name(endpoint: str) -> str:
    return endpoint


def pool_deployment(pool: str) -> str:
    return f"pool-{pool}"


# ------------------------------------------------------------------------------------------ managed

def _autoscaling_spec(req: dict[str, Any]) -> dict[str, Any] | None:
    a = req.get("autoscaling") or {}
    if a.get("max") is None:
        return None
    name, target = req["name"], float(a.get("target") or 10)
    spec: dict[str, Any] = {"minReplicaCount": int(a.get("min", 1) if a.get("min") is not None else 1),
                            "maxReplicaCount": int(a["max"]), "pollingInterval": 30, "cooldownPeriod": 300}
    if (a.get("trigger") or "prometheus") == "cloudwatch":
        spec["cloudWatchTrigger"] = {
            "name": f"{name}-invocations", "namespace": "AWS/SageMaker", "metricName": "Invocations",
            "metricStat": "Sum", "metricType": "Average", "targetValue": target, "minValue": 0.0,
            "metricCollectionPeriod": 60, "useCachedMetrics": False,
            "dimensions": [{"name": "EndpointName", "value": name}, {"name": "VariantName", "value": "AllTraffic"}]}
    else:
        # serverAddress "": the operator's own Prometheus (the CRD takes an AMP workspace URL or nothing)
        spec["prometheusTrigger"] = {
            "name": f"{name}-queue", "serverAddress": "", "metricType": "Average", "targetValue": target,
            "query": f'sum(num_requests_waiting{{endpoint="{name}"}})', "useCachedMetrics": False}
    return spec


def _managed_common(req: dict[str, Any], tls_bucket: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"replicas": int(req.get("replicas", 1)),
                            "tlsConfig": {"tlsCertificateOutputS3Uri": f"s3://{tls_bucket}/certificates/{req['name']}/"}}
    kv = req.get("tiered_kv_cache")
    if kv is not None:
        spec["kvCacheSpec"] = {"enableL1Cache": bool(kv.get("l1", True)),
                               "enableL2Cache": kv.get("l2_backend") is not None}
        if kv.get("l2_backend"):
            spec["kvCacheSpec"]["l2CacheSpec"] = {"l2CacheBackend": kv["l2_backend"]}
    if req.get("routing_strategy"):
        spec["intelligentRoutingSpec"] = {"enabled": True, "routingStrategy": req["routing_strategy"]}
    auto = _autoscaling_spec(req)
    if auto:
        spec["autoScalingSpec"] = auto
    return spec


def inference_endpoint_config(req: dict[str, Any], *, region: str, bucket: str, tls_bucket: str,
                              fsx_id: str | None = None) -> dict[str, Any]:
    """InferenceEndpointConfig for a model in S3, on FSx, or on Hugging Face."""
    name, model, gpus = req["name"], req["model"], int(req.get("gpus") or 1)
    source: dict[str, Any]
    if model["source"] == "s3":  # PodStart's data bucket (admission refuses another for a managed endpoint)
        ref = data.parse(model["uri"])
        source = {"modelSourceType": "s3", "s3Storage": {"bucketName": bucket, "region": region},
                  "modelLocation": ref.key}
    elif model["source"] == "fsx":
        source = {"modelSourceType": "fsx", "fsxStorage": {"fileSystemId": fsx_id or "fs-unknown"},
                  "modelLocation": model["uri"]}
    else:
        hf: dict[str, Any] = {"modelId": model["model_id"]}
        rev = model.get("revision") or ""
        if len(rev) == 40 and all(c in "0123456789abcdef" for c in rev):
            hf["commitSHA"] = rev
        if model.get("token_secret"):
            hf["tokenSecretRef"] = {"name": model["token_secret"], "key": TOKEN_KEY}
        source = {"modelSourceType": "huggingface", "huggingFaceModel": hf}
    gpu = {"nvidia.com/gpu": str(gpus)}
    spec = {
        "modelName": name, "endpointName": name, "instanceType": req["instance_type"],
        "modelSourceConfig": source,
        "worker": {
            "image": req.get("image") or MANAGED_WORKER_IMAGE.format(region=region),
            "modelInvocationPort": {"containerPort": MANAGED_PORT, "name": "http"},
            "modelVolumeMount": {"name": "model-weights", "mountPath": "/opt/ml/model"},
            "resources": {"requests": gpu, "limits": gpu},
            "environmentVariables": [{"name": "OPTION_TENSOR_PARALLEL_DEGREE", "value": str(gpus)}],
        },
        **_managed_common(req, tls_bucket),
    }
    return {"apiVersion": INFERENCE_API, "kind": "InferenceEndpointConfig",
            "metadata": _meta(name, **{ENDPOINT_LABEL: name}), "spec": spec}


def jumpstart_model(req: dict[str, Any], *, tls_bucket: str) -> dict[str, Any]:
    name, model = req["name"], req["model"]
    m: dict[str, Any] = {"modelId": model["model_id"], "acceptEula": bool(model.get("accept_eula"))}
    if model.get("revision"):
        m["modelVersion"] = model["revision"]
    spec = {"model": m, "server": {"instanceType": req["instance_type"]}, "sageMakerEndpoint": {"name": name},
            **_managed_common(req, tls_bucket)}
    return {"apiVersion": INFERENCE_API, "kind": "JumpStartModel",
            "metadata": _meta(name, **{ENDPOINT_LABEL: name}), "spec": spec}


def managed_object(req: dict[str, Any], *, region: str, bucket: str, tls_bucket: str) -> dict[str, Any]:
    if req["model"]["source"] == "jumpstart":
        return jumpstart_model(req, tls_bucket=tls_bucket)
    return inference_endpoint_config(req, region=region, bucket=bucket, tls_bucket=tls_bucket)


# ------------------------------------------------------------------------------------- self-managed

def engine_command(engine: str, model_arg: str, served_name: str, args: list[str], *, host: str = "0.0.0.0",
                   port: int = ENGINE_PORT) -> list[str]:
    """argv of the serving container (no shell): the engine's OpenAI-compatible server."""
    if engine == "vllm":
        return ["vllm", "serve", model_arg, "--host", host, "--port", str(port),
                "--served-model-name", served_name, *args]
    return ["python3", "-m", "sglang.launch_server", "--model-path", model_arg, "--host", host,
            "--port", str(port), "--served-model-name", served_name, "--enable-metrics", *args]


# -- the API key gate (functions/assets/podstart_gate.py) in front of a self-managed endpoint -------------------
GATE = "podstart-gate"
GATE_SCRIPT_KEY = "podstart_gate.py"
GATE_MOUNT = "/opt/podstart-gate"
API_KEY_KEY = "api_key"  # the key of the endpoint's Secret
GATE_IMAGE = "python:3.12.12-slim-bookworm"  # the official Python image at an exact tag (the gate is stdlib only)
GATE_PORT, UPSTREAM_PORT = ENGINE_PORT, ENGINE_PORT + 1


def gate_configmap(script: str) -> dict[str, Any]:
    """The constant gate script, mounted read-only into the pods of endpoints that require an API key."""
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta(GATE), "data": {GATE_SCRIPT_KEY: script}}


def _gate_container(secret: str) -> dict[str, Any]:
    """The gate: the Service's `http` port; the pod's probes read the engine's /health through it."""
    return {
        "name": GATE, "image": GATE_IMAGE, "command": ["python3", f"{GATE_MOUNT}/{GATE_SCRIPT_KEY}"],
        "ports": [{"name": "http", "containerPort": GATE_PORT}],
        "env": [{"name": "PODSTART_API_KEY", "valueFrom": {"secretKeyRef": {"name": secret, "key": API_KEY_KEY}}}],
        "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "1", "memory": "256Mi"}},
        "volumeMounts": [{"name": GATE, "mountPath": GATE_MOUNT, "readOnly": True}],
        "securityContext": {"runAsNonRoot": True, "runAsUser": 65534, "allowPrivilegeEscalation": False,
                            "readOnlyRootFilesystem": True},
    }


def gated(spec: dict[str, Any], secret: str | None) -> dict[str, Any]:
    """A pod spec with the gate in front of its first container when `secret` names the endpoint's API key: the
    served container then listens on 127.0.0.1 only (its command says so), keeps no `http` port, and the probes
    move to the gate (which passes /health through)."""
    if not secret:
        return spec
    main = dict(spec["containers"][0])
    probes = {k: main.pop(k) for k in ("startupProbe", "readinessProbe", "livenessProbe") if k in main}
    main["ports"] = [p for p in main.get("ports") or [] if p.get("name") != "http"]
    gate = {**_gate_container(secret), **probes}
    return {**spec, "containers": [main, gate, *spec["containers"][1:]],
            "volumes": [*(spec.get("volumes") or []), {"name": GATE, "configMap": {"name": GATE}}]}


def _model_arg(model: dict[str, Any], where: DataMap | None = None) -> str:
    """What the engine loads: a Hub id, or the model folder as the pod sees it (/data/... or /s3/<bucket>/...)."""
    if model["source"] == "s3":
        ref = data.parse(model["uri"])
        if ref.bucket is None:
            return f"{data.DATA_MOUNT}/{ref.key}"
        return (where or DataMap(data_bucket="")).pod_path(ref)
    return str(model["model_id"])


def _probes() -> dict[str, Any]:
    http = {"path": "/health", "port": "http"}
    return {
        "startupProbe": {"httpGet": http, "periodSeconds": 10, "failureThreshold": 180},
        "readinessProbe": {"httpGet": http, "periodSeconds": 5, "failureThreshold": 3},
        "livenessProbe": {"httpGet": http, "periodSeconds": 15, "failureThreshold": 4},
    }


def worker_pod_spec(*, engine: str, image: str, gpus: int, instance_type: str, model: dict[str, Any] | None,
                    served_name: str, args: list[str], spread_labels: dict[str, str],
                    api_key_secret: str | None = None, where: DataMap | None = None) -> dict[str, Any]:
    """A serving pod: GPU requests equal to limits, probes, spread across nodes, the shared bucket at /data, and
    the registered volume its model is on (at /s3/<bucket>/<prefix>, the pod running as the volume's
    ServiceAccount: Mountpoint mounts with the pod's credentials)."""
    mounts = where.mounts if where else []
    volumes, mounted = data.pod_volumes(mounts)
    gpu = {"nvidia.com/gpu": str(gpus)}
    env: list[dict[str, Any]] = [{"name": "HF_HOME", "value": "/data/hf-cache"}]
    if model and model.get("token_secret"):
        env.append({"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": model["token_secret"],
                                                                       "key": TOKEN_KEY}}})
    model_arg = _model_arg(model, where) if model else "/data/models/unassigned"
    host, port = ("127.0.0.1", UPSTREAM_PORT) if api_key_secret else ("0.0.0.0", ENGINE_PORT)
    return gated({
        "affinity": HYPERPOD_NODE_AFFINITY,
        "nodeSelector": {INSTANCE_TYPE_LABEL: instance_type},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                                       "whenUnsatisfiable": "ScheduleAnyway",
                                       "labelSelector": {"matchLabels": spread_labels}}],
        "terminationGracePeriodSeconds": 60,
        "containers": [{
            "name": engine, "image": image,
            "command": engine_command(engine, model_arg, served_name, args, host=host, port=port),
            "ports": [{"name": "http", "containerPort": ENGINE_PORT}],
            "env": env,
            "resources": {"requests": {**gpu, "cpu": "4", "memory": "32Gi"},
                          "limits": {**gpu, "cpu": "4", "memory": "32Gi"}},
            "volumeMounts": [{"name": "data", "mountPath": "/data"}, {"name": "shm", "mountPath": "/dev/shm"},
                             *mounted],
            **_probes(),
        }],
        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": DATA_VOLUME}},
                    {"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}}, *volumes],
        **({"serviceAccountName": sa} if (sa := data.service_account(mounts)) else {}),
    }, api_key_secret)


def worker_deployment(req: dict[str, Any], where: DataMap | None = None) -> dict[str, Any]:
    name = req["name"]
    labels = {ENDPOINT_LABEL: name, ROLE_LABEL: "worker"}
    pod = worker_pod_spec(engine=req["engine"], image=req["image"], gpus=int(req["gpus"]),
                          instance_type=req["instance_type"], model=req["model"], served_name=_served(req["model"]),
                          args=list(req.get("engine_args") or []), spread_labels=labels,
                          api_key_secret=None if _routed(req) else req.get("api_key_secret"), where=where)
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta(worker_name(name), **labels),
        "spec": {"replicas": int(req.get("replicas", 1)), "selector": {"matchLabels": labels},
                 "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
                 "template": {"metadata": {"labels": {**MANAGED_LABELS, **labels},
                                           "annotations": {"podstart.dev/model-name": _served(req["model"])}},
                              "spec": pod}},
    }


def _routed(req: dict[str, Any]) -> bool:
    return bool((req.get("router") or {}).get("enabled"))


def _served(model: dict[str, Any]) -> str:
    return model_label(model)


def service(req: dict[str, Any]) -> dict[str, Any]:
    """The endpoint's Service in its shape: external NLB, internal ClusterIP, or a pool binding by label."""
    name, shape = req["name"], req.get("service", "internal")
    if shape == "model_pool":
        selector = {POOL_LABEL: req["pool"], MODEL_LABEL: name}
    elif (req.get("router") or {}).get("enabled"):
        selector = {ENDPOINT_LABEL: name, ROLE_LABEL: "router"}
    else:
        selector = {ENDPOINT_LABEL: name, ROLE_LABEL: "worker"}
    meta = _meta(service_name(name), **{ENDPOINT_LABEL: name})
    spec: dict[str, Any] = {"selector": selector,
                            "ports": [{"name": "http", "port": SERVICE_PORT, "targetPort": "http", "protocol": "TCP"}]}
    if shape == "external":
        meta["annotations"] = {
            "service.beta.kubernetes.io/aws-load-balancer-type": "external",
            "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip",
            "service.beta.kubernetes.io/aws-load-balancer-scheme":
                "internet-facing" if req.get("internet_facing") else "internal",
            "service.beta.kubernetes.io/aws-load-balancer-healthcheck-path": "/health",
        }
        spec["type"] = "LoadBalancer"
        if req.get("source_ranges"):
            spec["loadBalancerSourceRanges"] = list(req["source_ranges"])
    else:
        spec["type"] = "ClusterIP"
    return {"apiVersion": "v1", "kind": "Service", "metadata": meta, "spec": spec}


def disruption_budget(req: dict[str, Any]) -> dict[str, Any]:
    name = req["name"]
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": _meta(f"{name}-workers", **{ENDPOINT_LABEL: name}),
            "spec": {"maxUnavailable": 1,
                     "selector": {"matchLabels": {ENDPOINT_LABEL: name, ROLE_LABEL: "worker"}}}}


def router_objects(req: dict[str, Any]) -> list[dict[str, Any]]:
    """The SGLang router: discovers workers by label (its Role lists pods in this namespace only)."""
    name, policy = req["name"], (req.get("router") or {}).get("policy", "cache_aware")
    rname = router_name(name)
    labels = {ENDPOINT_LABEL: name, ROLE_LABEL: "router"}
    sa = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(rname, **labels)}
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": _meta(rname, **labels),
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}]}
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": _meta(rname, **labels),
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": rname},
               "subjects": [{"kind": "ServiceAccount", "name": rname, "namespace": NAMESPACE}]}
    selector = f"{ENDPOINT_LABEL}={name},{ROLE_LABEL}=worker"
    key = req.get("api_key_secret")
    host, port = ("127.0.0.1", UPSTREAM_PORT) if key else ("0.0.0.0", ENGINE_PORT)
    args = ["python3", "-m", "sglang_router.launch_router", "--service-discovery",
            "--selector", f"{ENDPOINT_LABEL}={name}", f"{ROLE_LABEL}=worker",
            "--service-discovery-port", str(ENGINE_PORT), "--service-discovery-namespace", NAMESPACE,
            "--policy", policy, "--host", host, "--port", str(port),
            "--prometheus-host", "0.0.0.0", "--prometheus-port", str(ROUTER_METRICS_PORT)]
    deploy = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta(rname, **labels),
        "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": {**MANAGED_LABELS, **labels},
                                           "annotations": {"podstart.dev/worker-selector": selector,
                                                           "prometheus.io/scrape": "true",
                                                           "prometheus.io/port": str(ROUTER_METRICS_PORT)}},
                              "spec": gated({"serviceAccountName": rname, "containers": [{
                                  "name": "router", "image": SGLANG_ROUTER_IMAGE, "command": args,
                                  "ports": [{"name": "http", "containerPort": ENGINE_PORT},
                                            {"name": "metrics", "containerPort": ROUTER_METRICS_PORT}],
                                  "resources": {"requests": {"cpu": "1", "memory": "1Gi"},
                                                "limits": {"cpu": "2", "memory": "2Gi"}},
                                  "readinessProbe": {"httpGet": {"path": "/health", "port": "http"},
                                                     "periodSeconds": 5},
                                  "livenessProbe": {"httpGet": {"path": "/health", "port": "http"},
                                                    "periodSeconds": 15}}]}, key)}},
    }
    return [sa, role, binding, deploy]


def scaled_object(req: dict[str, Any]) -> dict[str, Any]:
    """KEDA ScaledObject: the worker Deployment scaled on the router's Prometheus metric."""
    name, k = req["name"], req["autoscaling"]["keda"]
    return {
        "apiVersion": KEDA_API, "kind": "ScaledObject", "metadata": _meta(f"{name}-workers", **{ENDPOINT_LABEL: name}),
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": worker_name(name)},
            "minReplicaCount": int(k.get("min", 1)), "maxReplicaCount": int(k["max"]),
            "pollingInterval": 15, "cooldownPeriod": 300,
            "triggers": [{"type": "prometheus", "name": f"router-{k.get('metric', 'queue_depth').replace('_', '-')}",
                          "metadata": {"serverAddress": PROMETHEUS,
                                       "query": KEDA_QUERIES[k.get("metric", "queue_depth")].format(name=name),
                                       "threshold": str(k.get("target", 8))}}],
        },
    }


def self_managed_objects(req: dict[str, Any], gate_script: str = "",
                         where: DataMap | None = None) -> list[dict[str, Any]]:
    """Every object of a self-managed endpoint, in apply order (the gate's ConfigMap first when it needs a key)."""
    if req.get("service") == "model_pool":
        return [service(req)]
    out: list[dict[str, Any]] = [gate_configmap(gate_script)] if req.get("api_key_secret") else []
    out += [worker_deployment(req, where), disruption_budget(req)]
    if (req.get("router") or {}).get("enabled"):
        out += router_objects(req)
    out.append(service(req))
    if (req.get("autoscaling") or {}).get("keda"):
        out.append(scaled_object(req))
    return out


def endpoint_objects(req: dict[str, Any], *, region: str, bucket: str, tls_bucket: str,
                     gate_script: str = "", where: DataMap | None = None) -> list[dict[str, Any]]:
    if req["mode"] == "managed":
        return [managed_object(req, region=region, bucket=bucket, tls_bucket=tls_bucket)]
    return self_managed_objects(req, gate_script, where)


def object_refs(objs: list[dict[str, Any]]) -> list[dict[str, str]]:
    """(apiVersion, kind, name, namespace) of each object: what the operation reports it created."""
    return [{"api_version": o["apiVersion"], "kind": o["kind"], "name": o["metadata"]["name"],
             "namespace": o["metadata"].get("namespace", "")} for o in objs]
