"""Inference endpoints as they run: the list and the detail of each, PodStart's record joined with the live
objects (pods, Service, the managed operator's status)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from functions.domain.capacity import placement
from functions.domain.clusters.record import ClusterRecord
from functions.domain.errors import NotFound
from functions.domain.inference import manifests as im
from functions.domain.inference.endpoints import NAMESPACE
from functions.domain.inference.record import EndpointRecord, EndpointRecords, EndpointStatus
from functions.domain.ports import ClusterKube
from functions.domain.views import EndpointList, EndpointView, ObjectRef
from functions.logic.clusters.views import find_record
from functions.logic.deps import Deps

IN_FLIGHT = (EndpointStatus.DEPLOYING, EndpointStatus.UPDATING, EndpointStatus.DELETING)


# --------------------------------------------------------------------------------------------- reads

@dataclass
class Live:
    """What the cluster says about its endpoints (one read per kind, not per endpoint)."""

    crs: dict[tuple[str, str], dict[str, Any]]
    deployments: dict[str, dict[str, Any]]
    pods: list[dict[str, Any]]
    services: dict[str, dict[str, Any]]


def read_live(kube: ClusterKube) -> Live:
    crs: dict[tuple[str, str], dict[str, Any]] = {}
    for kind, plural in (("InferenceEndpointConfig", "inferenceendpointconfigs"),
                         ("JumpStartModel", "jumpstartmodels")):
        for o in kube.list(f"/apis/{im.INFERENCE_API}/namespaces/{NAMESPACE}/{plural}"):
            crs[(kind, o["metadata"]["name"])] = o
    deps_ = {o["metadata"]["name"]: o for o in kube.list(f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments",
                                                          im.ENDPOINT_LABEL)}
    pods = kube.list(f"/api/v1/namespaces/{NAMESPACE}/pods", im.ENDPOINT_LABEL)
    pods += kube.list(f"/api/v1/namespaces/{NAMESPACE}/pods", im.POOL_LABEL)
    svcs = {o["metadata"]["name"]: o for o in kube.list(f"/api/v1/namespaces/{NAMESPACE}/services",
                                                         im.ENDPOINT_LABEL)}
    return Live(crs=crs, deployments=deps_, pods=pods, services=svcs)


def _pull_error(pods: list[dict[str, Any]]) -> str | None:
    for p in pods:
        for cs in (p.get("status") or {}).get("containerStatuses") or []:
            w = (cs.get("state") or {}).get("waiting") or {}
            if w.get("reason") in ("ErrImagePull", "ImagePullBackOff", "InvalidImageName"):
                return f"pod {p['metadata']['name']}: {w['reason']}: {w.get('message') or cs.get('image')}"
    return None


def _ready(p: dict[str, Any]) -> bool:
    st = p.get("status") or {}
    return st.get("phase") == "Running" and any(c.get("type") == "Ready" and c.get("status") == "True"
                                                for c in st.get("conditions") or [])


def view(rec: EndpointRecord, live: Live | None) -> EndpointView:
    """The endpoint as every face shows it: what was asked, its live state, and where and how to call it."""
    v = _state(rec, live)
    return v.model_copy(update=_address(v, rec, live))


def _state(rec: EndpointRecord, live: Live | None) -> EndpointView:
    req = rec.request
    auto = req.get("autoscaling")
    base = EndpointView(
        name=rec.name, cluster=rec.cluster, region=rec.region, mode=rec.mode, engine=req.get("engine"),
        model=rec.model, model_source=req["model"]["source"], instance_type=req["instance_type"],
        gpus=req.get("gpus"), replicas=int(req.get("replicas", 1)), autoscaling=auto,
        service=req.get("service", "internal"), pool=req.get("pool"), status=rec.status.value,
        message=rec.message, service_name=rec.service_name, routing_strategy=req.get("routing_strategy"),
        tiered_kv_cache=req.get("tiered_kv_cache"), router=req.get("router"),
        internet_facing=bool(req.get("internet_facing")), public=bool(req.get("public")),
        source_ranges=list(req.get("source_ranges") or []), api_key_required=bool(req.get("api_key_secret")),
        objects=[ObjectRef(**o) for o in rec.objects], operation_id=rec.operation_id,
        created_by=rec.created_by, created_at=rec.created_at)
    if live is None:
        return base
    upd: dict[str, Any] = {"live": True}
    if rec.mode == "managed":
        cr = live.crs.get((rec.kind, rec.name))
        st = (cr or {}).get("status") or {}
        state = st.get("state")
        msg = next((c.get("message") for c in reversed(st.get("conditions") or []) if c.get("message")), None)
        upd |= {"state": state, "ready_replicas": (st.get("deploymentStatus") or {}).get("status", {}).get(
            "readyReplicas"), "replicas": int((cr or {}).get("spec", {}).get("replicas", base.replicas))}
        if rec.status not in IN_FLIGHT or state in ("DeploymentComplete", "DeploymentFailed"):
            if state == "DeploymentFailed":
                upd |= {"status": EndpointStatus.FAILED.value, "message": msg or rec.message}
            elif state == "DeploymentComplete" and rec.status is not EndpointStatus.DELETING:
                upd |= {"status": EndpointStatus.READY.value, "message": None}
            elif cr is None and rec.status is not EndpointStatus.FAILED:
                upd |= {"status": "MISSING", "message": f"{rec.kind}/{rec.name} is not in the cluster"}
        return base.model_copy(update=upd)
    if base.service == "model_pool":
        mine = [p for p in live.pods if (p["metadata"].get("labels") or {}).get(im.MODEL_LABEL) == rec.name
                and (p["metadata"].get("labels") or {}).get(im.POOL_LABEL) == base.pool]
        ready = sum(1 for p in mine if _ready(p))
        upd |= {"ready_replicas": ready, "replicas": len(mine)}
        # what its workers serve is the model the assignment gave them, not the one named at deploy
        served = sorted({str(a) for p in mine if (a := (p["metadata"].get("annotations") or {}).get(
            im.MODEL_NAME_ANNOTATION))})
        if served:
            upd["model"] = ", ".join(served)
        if rec.status not in IN_FLIGHT:  # its Service is there; what serves it is the workers assigned to it
            if not mine:
                upd |= {"status": "NO_WORKERS", "message": f"no worker of pool {base.pool} serves it: assign some "
                                                           f"(assign_pool_workers, or Assign on the pool)"}
            elif ready < len(mine):
                upd |= {"status": "DEGRADED", "message": f"{ready}/{len(mine)} workers ready"}
        return base.model_copy(update=upd)
    dep = live.deployments.get(im.worker_name(rec.name))
    workers = [p for p in live.pods if (p["metadata"].get("labels") or {}).get(im.ENDPOINT_LABEL) == rec.name
               and (p["metadata"].get("labels") or {}).get(im.ROLE_LABEL) == "worker"]
    n = sum(1 for p in workers if _ready(p))
    want = int((dep or {}).get("spec", {}).get("replicas", base.replicas))
    upd |= {"ready_replicas": n, "replicas": want}
    pull = _pull_error(workers)
    waits = placement.unscheduled(workers)  # the scheduler's reason a worker waits (GPUs, taints, selectors)
    if pull:
        upd |= {"status": EndpointStatus.FAILED.value, "message": pull}
    elif rec.status not in IN_FLIGHT:
        if dep is None:
            upd |= {"status": "MISSING", "message": f"Deployment/{rec.name} is not in the cluster"}
        elif n >= max(1, want) or (want == 0):
            upd |= {"status": EndpointStatus.READY.value}
        else:
            upd |= {"status": "DEGRADED", "message": f"{n}/{want} workers ready" + (f"; {waits}" if waits else "")}
    elif waits:
        upd |= {"message": f"{n}/{want} workers ready; {waits}"}
    return base.model_copy(update=upd)


def _address(v: EndpointView, rec: EndpointRecord, live: Live | None) -> dict[str, Any]:
    """Where and how to call an endpoint: the NLB's DNS name once the controller wrote it (external), else the
    Service's in-cluster name; a managed endpoint through PodStart's invoke (its SageMaker endpoint is the
    operator's)."""
    ready = v.status == EndpointStatus.READY.value
    if v.mode == "managed":
        return {"ready": ready, "how_to_call": f"invoke_endpoint (POST .../endpoints/{v.name}/invoke), or the "
                                              f"SageMaker endpoint {v.name} (sagemaker-runtime InvokeEndpoint)"}
    port = "" if rec.service_port == 80 else f":{rec.service_port}"
    url: str | None = f"http://{rec.service_name}.{rec.namespace}.svc.cluster.local{port}"
    if v.service == "external":
        svc = (live.services.get(rec.service_name) if live else None) or {}
        ingress = ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
        host = next((i.get("hostname") or i.get("ip") for i in ingress if i.get("hostname") or i.get("ip")), None)
        url = f"http://{host}{port}" if host else None
    key = " with Authorization: Bearer <the key in its Secret>" if v.api_key_required else ""
    call = (f'POST {url or "<its address, once the load balancer exists>"}/v1/chat/completions{key}, '
            f'model "{v.model}" (OpenAI-compatible); or invoke_endpoint through PodStart')
    return {"url": url, "ready": ready, "how_to_call": call}


def _live(deps: Deps, rec: ClusterRecord) -> Live | None:
    try:
        return read_live(deps.kube(rec.eks_cluster_name, rec.region))
    except Exception:  # the cluster's API unreachable: last-known state, marked not live
        return None


def list_endpoints(deps: Deps, cluster: str, region: str | None, limit: int, token: str | None) -> EndpointList:
    rec = find_record(deps, cluster, region)
    records = EndpointRecords(deps.state).of_cluster(rec.region, rec.name)
    start = int(token or 0)
    page = records[start:start + limit]
    live = _live(deps, rec) if page else None
    nxt = str(start + limit) if start + limit < len(records) else None
    return EndpointList(cluster=rec.name, region=rec.region, items=[view(r, live) for r in page], next_token=nxt)


def load_endpoint(deps: Deps, rec: ClusterRecord, name: str) -> EndpointRecord:
    ep = EndpointRecords(deps.state).load(rec.region, rec.name, name)
    if ep is None:
        raise NotFound(f"{rec.name} has no endpoint {name!r}")
    return ep


def get_endpoint(deps: Deps, cluster: str, region: str | None, name: str) -> EndpointView:
    rec = find_record(deps, cluster, region)
    return view(load_endpoint(deps, rec, name), _live(deps, rec))
