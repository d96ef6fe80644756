"""Inference endpoints: deploy (endpoint.deploy), list and detail with live status, PATCH under the diff
contract (endpoint.update), delete (endpoint.delete), and invoke through the endpoint's own Service."""

from __future__ import annotations

import base64
import json
import time
from dataclasses import dataclass
from typing import Any

from functions.domain.clusters.record import ClusterRecord, ClusterStatus
from functions.domain.errors import Conflict, InvalidInput, PayloadTooLarge, Problem
from functions.domain.inference import manifests as im
from functions.domain.inference.endpoints import NAMESPACE, EndpointCreate, EndpointPatch, model_label
from functions.domain.inference.record import EndpointRecord, EndpointRecords, EndpointStatus, PoolRecords
from functions.domain.inference.requests import InvokeRequest
from functions.domain.operations import Actor, Operation, Target, now_iso
from functions.domain.plans import Plan, none
from functions.domain.ports import ClusterKube
from functions.domain.storage import data
from functions.domain.storage.data import DataMap
from functions.domain.views import InvokeResult, NoChange
from functions.logic import live_reads
from functions.logic.clusters.views import find_record
from functions.logic.deps import Deps
from functions.logic.inference.endpoint_views import IN_FLIGHT, _live, load_endpoint, view
from functions.logic.namespaces import require_podstart_secrets
from functions.logic.plans import Started, start_or_plan
from functions.logic.storage import data as data_logic

MAX_REQUEST_BYTES = 64 * 1024
MAX_RESPONSE_BYTES = 1024 * 1024
INVOKE_TIMEOUT_S = 60.0
NAME_TAKEN = {"loc": ["body", "name"], "msg": "an endpoint with this name exists in the cluster"}


class EndpointUnavailable(Problem):
    status = 502
    title = "Endpoint unavailable"
    slug = "endpoint-unavailable"


def require_ready_cluster(rec: ClusterRecord) -> None:
    if rec.status is not ClusterStatus.ACTIVE:
        raise Conflict(f"cluster {rec.name} is {rec.status.value}; endpoints deploy on an ACTIVE cluster")


def status_kind(req: dict[str, Any]) -> str:
    if req["mode"] == "managed":
        return "JumpStartModel" if req["model"]["source"] == "jumpstart" else "InferenceEndpointConfig"
    return "Deployment"


def served_model(req: dict[str, Any]) -> str:
    return model_label(req["model"])


@dataclass
class DeployAdmission:
    deps: Deps
    rec: ClusterRecord
    body: EndpointCreate
    actor: Actor
    key: str | None
    where: DataMap
    normalized: dict[str, Any] | None = None

    def normalize(self) -> dict[str, Any]:
        require_ready_cluster(self.rec)
        b = self.body
        if EndpointRecords(self.deps.state).load(self.rec.region, self.rec.name, b.name) is not None:
            raise Conflict(f"{self.rec.name} already has an endpoint {b.name!r}", errors=[NAME_TAKEN])
        kube = self.deps.kube(self.rec.eks_cluster_name, self.rec.region)
        require_podstart_secrets(kube, NAMESPACE, [(s, loc) for s, loc in (
            (b.api_key_secret, ["body", "api_key_secret"]), (b.model.token_secret, ["body", "model", "token_secret"]))
            if s])
        types = sorted({g.instance_type for g in self.rec.instance_groups})
        if b.service != "model_pool" and b.instance_type not in types:
            raise InvalidInput.field(["body", "instance_type"],
                                     f"{self.rec.name} has no instance group of {b.instance_type}; "
                                     f"its types: {', '.join(types) or 'none'}")
        if b.service == "model_pool":
            assert b.pool is not None
            pool = PoolRecords(self.deps.state).load(self.rec.region, self.rec.name, b.pool)
            if pool is None:
                raise InvalidInput.field(["body", "pool"], f"{self.rec.name} has no model pool {b.pool!r}")
            if pool.engine != b.engine:
                raise InvalidInput.field(["body", "engine"], f"pool {pool.name} runs {pool.engine}, not {b.engine}")
            # the pool's workers serve it: the endpoint describes them as they are
            if b.instance_type != pool.instance_type:
                raise InvalidInput.field(["body", "instance_type"], f"pool {pool.name}'s workers run on "
                                                                    f"{pool.instance_type}, not {b.instance_type}")
            if b.gpus != pool.gpus_per_worker:
                raise InvalidInput.field(["body", "gpus"], f"pool {pool.name}'s workers have {pool.gpus_per_worker} "
                                                           f"GPU(s) each, not {b.gpus}")
        self.normalized = {"cluster": self.rec.name, "region": self.rec.region,
                           "eks_cluster_name": self.rec.eks_cluster_name, "endpoint": b.normalized(),
                           **({"data": self.where.model_dump(mode="json")} if self.where.mounts else {})}
        return self.normalized

    def claim(self, op: Operation) -> None:
        assert self.normalized is not None
        req = self.normalized["endpoint"]
        rec = EndpointRecord(
            name=req["name"], cluster=self.rec.name, region=self.rec.region,
            eks_cluster_name=self.rec.eks_cluster_name, mode=req["mode"], namespace=NAMESPACE,
            kind=status_kind(req), service_name=im.service_name(req["name"]), service_port=im.SERVICE_PORT,
            model=served_model(req), request=req, status=EndpointStatus.DEPLOYING, operation_id=op.id,
            created_by=self.actor.name, created_at=now_iso())
        if not EndpointRecords(self.deps.state).create(rec):
            raise Conflict(f"{self.rec.name} already has an endpoint {rec.name!r}", errors=[NAME_TAKEN])

    def unclaim(self, op: Operation) -> None:
        EndpointRecords(self.deps.state).delete(self.rec.region, self.rec.name, self.body.name)


def deploy_facts(deps: Deps, rec: ClusterRecord, body: EndpointCreate) -> dict[str, Any]:
    """What a dry run reads to plan the steps: is the inference operator serving (managed), is KEDA (KEDA
    autoscaling), the free GPUs of the instance type; the data bucket the objects name."""
    require_ready_cluster(rec)
    kube = deps.kube(rec.eks_cluster_name, rec.region)
    req = body.normalized()
    facts: dict[str, Any] = {"bucket": live_reads.bucket(deps)}
    if req["mode"] == "managed":
        facts["operator_served"] = live_reads.serves(kube, im.INFERENCE_API, status_kind(req))
        if not facts["operator_served"]:
            facts["feature_inputs"] = live_reads.feature_inputs(deps, rec)
    if (req.get("autoscaling") or {}).get("keda"):
        facts["keda_served"] = live_reads.serves(kube, im.KEDA_API, "ScaledObject")
    if req.get("service") != "model_pool" and req.get("instance_type"):
        keda = (req.get("autoscaling") or {}).get("keda")
        replicas = int(keda.get("min", req.get("replicas", 1)) if keda else req.get("replicas", 1))
        facts.update(live_reads.gpu_facts(kube, req["instance_type"], replicas, int(req.get("gpus") or 0),
                                          one_per_node=False))
    return facts


MODEL_URI = ("body", "model", "uri")


def model_data(deps: Deps, rec: ClusterRecord, body: EndpointCreate) -> tuple[DataMap, list[dict[str, Any]]]:
    """An s3 model's folder: on a bucket PodStart may read, mounted where the endpoint runs (a managed endpoint: the
    data bucket, which the inference operator's role reads), and a Hugging Face folder (config.json) there."""
    own = live_reads.bucket(deps)
    if body.model.source != "s3" or not body.model.uri:
        return DataMap(data_bucket=own), []
    ref = data.parse(body.model.uri)
    if body.mode == "managed" and not ref.on_data_bucket(own):
        raise InvalidInput.field(list(MODEL_URI), f"{body.model.uri}: a managed endpoint loads models from PodStart's "
                                                  f"data bucket (the inference operator's role reads only it): copy "
                                                  f"the folder under /data/models/, or deploy it self-managed")
    need = data_logic.Need(loc=MODEL_URI, value=body.model.uri, kind="model")
    where, parsed = data_logic.resolve(deps, rec, NAMESPACE, [need])
    return where, data_logic.check_exists(deps, rec, parsed)


def deploy_endpoint(deps: Deps, cluster: str, region: str | None, body: EndpointCreate, actor: Actor,
                    key: str | None, dry_run: bool = False) -> Started | Plan:
    rec = find_record(deps, cluster, region)
    require_ready_cluster(rec)
    where, inputs = model_data(deps, rec, body)
    admission = DeployAdmission(deps, rec, body, actor, key, where)
    return start_or_plan(
        deps, dry_run=dry_run, kind="endpoint.deploy",
        target=Target(cluster=rec.name, region=rec.region, resource=body.name),
        request={"cluster": rec.name, "region": rec.region, "endpoint": body.model_dump(mode="json")},
        principal=actor, idempotency_key=key, admission=admission,
        facts={**deploy_facts(deps, rec, body), "inputs": inputs,
               **({"data": where.model_dump(mode="json")} if where.mounts else {})} if dry_run else None)


# --------------------------------------------------------------------------------------------- update

def update_endpoint(deps: Deps, cluster: str, region: str | None, name: str, patch: EndpointPatch, actor: Actor,
                    key: str | None, dry_run: bool = False) -> Started | Plan | NoChange:
    rec = find_record(deps, cluster, region)
    ep = load_endpoint(deps, rec, name)
    sent = {k: v for k, v in patch.model_dump(exclude_unset=True).items() if v is not None}
    current = view(ep, _live(deps, rec))
    auto = ep.request.get("autoscaling") or {}
    bounds = auto.get("keda") if auto.get("keda") is not None else auto
    if ("autoscaling_min" in sent or "autoscaling_max" in sent) and not bounds:
        loc = "autoscaling_min" if "autoscaling_min" in sent else "autoscaling_max"
        raise InvalidInput.field(["body", loc], f"endpoint {name} has no autoscaling; set replicas instead")
    if "replicas" in sent and bounds:
        raise InvalidInput.field(["body", "replicas"], f"endpoint {name} autoscales between {bounds.get('min', 1)} "
                                                       f"and {bounds.get('max')}: change the bounds instead")
    lo = sent.get("autoscaling_min", bounds.get("min", 1) if bounds else None)
    hi = sent.get("autoscaling_max", bounds.get("max") if bounds else None)
    if lo is not None and hi is not None and lo > hi:
        raise InvalidInput.field(["body", "autoscaling_min"], f"{lo} is above the maximum {hi}")
    change: dict[str, Any] = {}
    if "replicas" in sent and sent["replicas"] != current.replicas:
        if ep.request.get("service") == "model_pool":
            raise InvalidInput.field(["body", "replicas"], "a model_pool endpoint grows by assigning pool workers")
        change["replicas"] = sent["replicas"]
    for k_, key_ in (("autoscaling_min", "min"), ("autoscaling_max", "max")):
        if k_ in sent and bounds and sent[k_] != bounds.get(key_, 1 if key_ == "min" else None):
            change[k_] = sent[k_]
    target = Target(cluster=rec.name, region=rec.region, resource=name)
    if not change:
        if dry_run:  # the real request answers changed: false and starts nothing
            return Plan(kind="endpoint.update", target=target.model_dump(exclude_none=True),
                        changes=[none(f"Kubernetes {ep.kind}", name, "scale", note="nothing differs")])
        return NoChange(endpoint=current)
    if ep.status in IN_FLIGHT:
        raise Conflict(f"endpoint {name} is {ep.status.value}; wait for operation {ep.operation_id}")
    facts = {"live": live_reads.live_gpus(deps.kube(rec.eks_cluster_name, rec.region), ep.request["instance_type"])} \
        if dry_run and "replicas" in change else None
    return start_or_plan(
        deps, dry_run=dry_run, kind="endpoint.update", target=target,
        request={"cluster": rec.name, "region": rec.region, "eks_cluster_name": rec.eks_cluster_name,
                 "endpoint": ep.request, "change": change},
        principal=actor, idempotency_key=key, facts=facts)


# --------------------------------------------------------------------------------------------- delete

def delete_endpoint(deps: Deps, cluster: str, region: str | None, name: str, actor: Actor,
                    key: str | None, dry_run: bool = False) -> Started | Plan:
    rec = find_record(deps, cluster, region)
    ep = load_endpoint(deps, rec, name)
    result = start_or_plan(
        deps, dry_run=dry_run, kind="endpoint.delete", target=Target(cluster=rec.name, region=rec.region,
                                                                     resource=name),
        request={"cluster": rec.name, "region": rec.region, "eks_cluster_name": rec.eks_cluster_name,
                 "endpoint": ep.request},
        principal=actor, idempotency_key=key, facts={"bucket": live_reads.bucket(deps)} if dry_run else None)
    if isinstance(result, Started) and not result.replayed:
        EndpointRecords(deps.state).update(rec.region, rec.name, name, status=EndpointStatus.DELETING,
                                           operation_id=result.operation.id)
    return result


# --------------------------------------------------------------------------------------------- invoke

def api_key_header(kube: ClusterKube, namespace: str, secret: str | None) -> dict[str, str]:
    """The header the endpoint's gate checks (X-Api-Key: the API server's proxy drops Authorization), read from
    the endpoint's Secret for this one call: never stored, logged or returned."""
    if not secret:
        return {}
    obj = kube.get(f"/api/v1/namespaces/{namespace}/secrets/{secret}") or {}
    raw = (obj.get("data") or {}).get(im.API_KEY_KEY)
    if not raw:
        raise Conflict(f"the endpoint's API key Secret {secret} has no key `{im.API_KEY_KEY}`: write it again "
                       f"(POST .../secrets with data.{im.API_KEY_KEY})")
    return {"X-Api-Key": base64.b64decode(raw).decode()}


def invoke_endpoint(deps: Deps, cluster: str, region: str | None, name: str, body: InvokeRequest) -> InvokeResult:
    """Only the endpoint's own Service, named by PodStart's record, is ever reached: nothing in the request
    says where to send it (the body is a chat, validated; the model field is the record's)."""
    rec = find_record(deps, cluster, region)
    ep = load_endpoint(deps, rec, name)
    if ep.status in (EndpointStatus.DEPLOYING, EndpointStatus.DELETING):
        raise Conflict(f"endpoint {name} is {ep.status.value}; invoke it once it is READY")
    sent = body.model_dump(mode="json", exclude_none=True)
    payload = json.dumps({"model": ep.model, **sent}).encode()
    if len(payload) > MAX_REQUEST_BYTES:
        raise PayloadTooLarge(f"the chat is {len(payload)} bytes; at most {MAX_REQUEST_BYTES} (64 KiB)",
                              errors=[{"loc": ["body", "messages"], "msg": "at most 64 KiB in all"}])
    try:
        kube = deps.kube(ep.eks_cluster_name, ep.region)
        if ep.request.get("service") == "model_pool":
            # its workers serve the model pool.assign gave them, under that name (the engine checks it)
            bound = kube.list(f"/api/v1/namespaces/{NAMESPACE}/pods",
                              f"{im.POOL_LABEL}={ep.request.get('pool')},{im.MODEL_LABEL}={name}")
            served = next((a for p in bound if (a := (p["metadata"].get("annotations") or {}).get(
                im.MODEL_NAME_ANNOTATION))), None)
            if served:
                payload = json.dumps({"model": served, **sent}).encode()
        headers = api_key_header(kube, ep.namespace, ep.request.get("api_key_secret"))
        started = time.monotonic()
        status, data, truncated = kube.proxy_post(ep.namespace, ep.service_name, ep.service_port,
                                                  body.path, payload,
                                                  max_response=MAX_RESPONSE_BYTES, timeout=INVOKE_TIMEOUT_S,
                                                  headers=headers)
        latency_ms = round((time.monotonic() - started) * 1000)
    except Exception as err:  # unreachable cluster or endpoint
        raise EndpointUnavailable(f"endpoint {name} did not answer: {err}") from None
    try:
        doc = json.loads(data) if not truncated else {}
    except ValueError:
        doc = {}
    if not isinstance(doc, dict):
        doc = {}
    content = None
    choices = doc.get("choices") or []
    if choices and isinstance(choices[0], dict):
        content = (choices[0].get("message") or {}).get("content") if body.messages is not None \
            else choices[0].get("text")
    if status >= 400:  # the engine's or the API server's own error (e.g. no Ready worker behind the Service)
        said_err = doc.get("error")
        said = doc.get("message") or (said_err.get("message") if isinstance(said_err, dict) else said_err)
        hint = (f" (workers of pool {ep.request.get('pool')} serve it only once assigned to it)"
                if ep.request.get("service") == "model_pool" else "")
        raise EndpointUnavailable(f"endpoint {name} answered HTTP {status}: "
                                  f"{str(said) if said else data[:300].decode(errors='replace')}{hint}")
    raw_usage = doc.get("usage")
    usage: dict[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
    tokens = {k: v for k in ("prompt_tokens", "completion_tokens") if isinstance(v := usage.get(k), int)}
    return InvokeResult(endpoint=name, status=status, model=doc.get("model"), content=content,
                        response=doc, truncated=truncated, path=body.path, latency_ms=latency_ms, **tokens)
