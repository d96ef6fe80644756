"""Plans of namespace.create and namespace.delete (the objects functions.workflows.namespaces applies and deletes)."""

from __future__ import annotations

from typing import Any

from functions.domain.namespaces import models as nsd
from functions.domain.plans import Change, Draft, create, delete, none
from functions.domain.plans.base import PlanInput


def _name(m: dict[str, Any]) -> str:
    meta = m["metadata"]
    return f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else str(meta["name"])


def plan_namespace_create(p: PlanInput) -> Draft:
    r = p.request
    name = r["name"]
    changes = [create(f"Kubernetes {m['kind']}", _name(m), "namespace",
                      **({"labels": m["metadata"]["labels"]} if m["kind"] == "Namespace" else {}))
               for m in [nsd.namespace_object(name), *nsd.access_objects(name)]]
    pv, pvc = nsd.data_volume(r.get("bucket") or "", r["region"], name)
    changes += [create("Kubernetes PersistentVolume", _name(pv), "data_volume", bucket=r.get("bucket")),
                create("Kubernetes PersistentVolumeClaim", _name(pvc), "data_volume", mounted_at="/data in pods",
                       then="watched to Bound")]
    return Draft(changes=[c for c in changes if c.step not in p.skip_steps],
                 warnings=[f"operators may then run jobs, write job Secrets and add volumes in {name}"])


def plan_namespace_delete(p: PlanInput) -> Draft:
    r = p.request
    name = r["name"]
    f = p.facts
    changes: list[Change] = [delete("Kubernetes Namespace", name, "namespace", note="and every object in it")]
    changes += [delete(f"Kubernetes {kind}", f"{name}/{obj}", "namespace")
                for kind, objs in (("HyperPodPyTorchJob", f.get("pytorch_jobs") or []),
                                   ("RayJob", f.get("ray_jobs") or []),
                                   ("Secret", f.get("secrets") or []),
                                   ("PersistentVolumeClaim", f.get("claims") or []))
                for obj in objs]
    changes += [delete("Kubernetes PersistentVolume", nsd.pv_name(name), "gone"),
                none("AWS::S3::Bucket", str(r.get("bucket") or "data bucket"), "gone", note="kept, with every object")]
    jobs = len(f.get("pytorch_jobs") or []) + len(f.get("ray_jobs") or [])
    warnings = [f"deleting namespace {name} deletes everything in it"
                + (f": {jobs} job{'s' if jobs != 1 else ''} stop" if jobs else "")
                + (f", {len(f.get('secrets') or [])} Secret(s) go" if f.get("secrets") else "")]
    return Draft(changes=[c for c in changes if c.step not in p.skip_steps], warnings=warnings)
