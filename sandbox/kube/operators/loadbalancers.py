"""The AWS Load Balancer Controller, simulated: a Service of type LoadBalancer gets its Network Load Balancer's
DNS name in `status.loadBalancer.ingress` a few (time-scaled) minutes after it is made, as the controller writes
it once the NLB exists: `k8s-<namespace>-<name>-<hash>.elb.<region>.amazonaws.com` (`internal-...` for an
internal scheme)."""

from __future__ import annotations

import hashlib

from sandbox.kube.operators.base import ReconcileContext, Reconciler

PROVISION_SECONDS = 150.0  # an NLB becomes active in about 2-3 minutes
SCHEME = "service.beta.kubernetes.io/aws-load-balancer-scheme"


def hostname(cluster: str, namespace: str, name: str, region: str, internal: bool) -> str:
    digest = hashlib.sha256(f"{cluster}/{namespace}/{name}".encode()).hexdigest()[:16]
    base = f"k8s-{namespace[:8]}-{name[:9]}-{digest[:10]}-{digest[10:16]}.elb.{region}.amazonaws.com"
    return ("internal-" if internal else "") + base


def _region(ctx: ReconcileContext) -> str:
    for node in ctx.store.list("v1", "Node"):
        region = (node["metadata"].get("labels") or {}).get("topology.kubernetes.io/region")
        if region:
            return str(region)
    return "us-west-2"


def reconcile_load_balancers(ctx: ReconcileContext) -> None:
    for svc in ctx.store.list("v1", "Service"):
        spec, status = svc.get("spec") or {}, svc.get("status") or {}
        if spec.get("type") != "LoadBalancer" or (status.get("loadBalancer") or {}).get("ingress"):
            continue
        if not ctx.waited(svc, PROVISION_SECONDS):
            continue
        meta = svc["metadata"]
        internal = (meta.get("annotations") or {}).get(SCHEME) != "internet-facing"
        host = hostname(ctx.store.name, meta.get("namespace", "default"), meta["name"], _region(ctx), internal)
        ctx.set_status(svc, {**status, "loadBalancer": {"ingress": [{"hostname": host}]}})


RECONCILERS: tuple[Reconciler, ...] = (reconcile_load_balancers,)
