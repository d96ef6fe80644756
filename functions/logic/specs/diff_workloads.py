"""Spec documents against the live workloads: each TrainingJob and Endpoint document diffed with the live job or
endpoint of its name, and with prune the workloads no document names (functions/logic/specs/diff.py diffs the
cluster and orders the actions)."""

from __future__ import annotations

import json
from typing import Any

from functions.domain.inference.endpoints import EndpointCreate
from functions.domain.specs.document import (
    DocumentPlan,
    EndpointDocument,
    FieldDiff,
    TrainingJobDocument,
)
from functions.domain.training import manifests as job_manifests
from functions.domain.training import rules as training
from functions.logic.specs.diff import Parsed, PlanBuilder
from functions.logic.specs.live import Live, job_spec


def _jobs_of(live: Live | None) -> dict[tuple[str, str], dict[str, Any]]:
    return live.jobs if live is not None else {}


def diff_job(p: PlanBuilder, i: int, doc: TrainingJobDocument, live: Live | None) -> None:
    m = doc.metadata
    dp = DocumentPlan(index=i, kind="TrainingJob", name=m.name, namespace=m.namespace, action="unchanged")
    p.docs.append(dp)
    body = doc.spec.submit_body(m.name, m.namespace)
    obj = _jobs_of(live).get((m.namespace, m.name))
    if obj is None:
        dp.action = "create"
        p.act(dp, "jobs", "job.submit", f"{m.namespace}/{m.name}", {"body": body.model_dump(mode="json",
                                                                                              exclude_none=True)},
              ["spec"])
        return
    have = job_spec(obj)
    exact = job_manifests.SUBMITTED_ANNOTATION in ((obj.get("metadata") or {}).get("annotations") or {})
    want = body.model_dump(mode="json", exclude={"name", "namespace"}, exclude_none=True)
    fields = sorted(set(want) | set(have)) if exact else sorted(have)
    defaults = training.JobSubmit.model_fields
    for f in fields:
        old = have.get(f, _default_json(defaults[f]) if f in defaults else None)
        new = want.get(f, _default_json(defaults[f]) if f in defaults else None)
        if not _same_json(old, new):
            dp.diffs.append(FieldDiff(path=f"spec.{f}", loc=["spec", f], old=old, new=new, change="replace-needed",
                                      note="a submitted job does not change: delete it (or prune) and apply "
                                           "again, or give it another name"))
    if not exact:
        dp.warnings.append("submitted before specs: its parameters, env and secrets are not on the job to compare")
    if dp.diffs:
        dp.action = "replace-needed"


def _default_json(f: Any) -> Any:
    if f.default_factory is not None:
        return f.default_factory()
    return f.default


def _same_json(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


ENDPOINT_SCALABLE = ("replicas", "autoscaling")


def diff_endpoint(p: PlanBuilder, i: int, doc: EndpointDocument, live: Live | None) -> None:
    m = doc.metadata
    dp = DocumentPlan(index=i, kind="Endpoint", name=m.name, action="unchanged")
    p.docs.append(dp)
    body = doc.spec.deploy_body(m.name)
    found = live.endpoints.get(m.name) if live is not None else None
    if found is None:
        dp.action = "create"
        p.act(dp, "endpoints", "endpoint.deploy", m.name, {"body": body.model_dump(mode="json", exclude_none=True)},
              ["spec"])
        return
    rec, view = found
    want = {k: v for k, v in body.normalized().items() if k != "name"}
    have = {k: v for k, v in rec.request.items() if k != "name" and v is not None}
    defaults = EndpointCreate.model_fields
    for f in sorted(set(want) | set(have)):
        if f in ENDPOINT_SCALABLE:
            continue
        # a field the endpoint's record lacks (deployed before the field existed) had its default
        old = have.get(f, _default_json(defaults[f]) if f in defaults else None)
        new = want.get(f, _default_json(defaults[f]) if f in defaults else None)
        if not _same_json(old, new):
            dp.diffs.append(FieldDiff(path=f"spec.{f}", loc=["spec", f], old=old, new=new,
                                      change="replace-needed",
                                      note="only replicas and autoscaling bounds change on a live endpoint: delete "
                                           "it (or prune) and apply again, or give it another name"))
    patch: dict[str, Any] = {}
    auto_have, auto_want = have.get("autoscaling") or {}, want.get("autoscaling") or {}
    if bool(auto_have) != bool(auto_want) or bool(auto_have.get("keda")) != bool(auto_want.get("keda")):
        dp.diffs.append(FieldDiff(path="spec.autoscaling", loc=["spec", "autoscaling"], old=auto_have or None,
                                  new=auto_want or None, change="replace-needed",
                                  note="autoscaling is chosen at deploy"))
    elif auto_want:
        bounds_have = auto_have.get("keda") or auto_have
        bounds_want = auto_want.get("keda") or auto_want
        sub = ["autoscaling", "keda"] if auto_want.get("keda") else ["autoscaling"]
        for f, key in (("min", "autoscaling_min"), ("max", "autoscaling_max")):
            old, new = bounds_have.get(f, 1 if f == "min" else None), bounds_want.get(f, 1 if f == "min" else None)
            if old != new:
                dp.diffs.append(FieldDiff(path=f"spec.{'.'.join(sub)}.{f}", loc=["spec", *sub, f], old=old, new=new,
                                          change="update"))
                patch[key] = new
        rest = {k for k in set(bounds_have) | set(bounds_want) if k not in ("min", "max")}
        for f in sorted(rest):
            if not _same_json(bounds_have.get(f), bounds_want.get(f)):
                dp.diffs.append(FieldDiff(path=f"spec.{'.'.join(sub)}.{f}", loc=["spec", *sub, f],
                                          old=bounds_have.get(f), new=bounds_want.get(f), change="replace-needed",
                                          note="only the autoscaling bounds change on a live endpoint"))
    elif want.get("service") != "model_pool":
        old_r = view.replicas if view.live else int(have.get("replicas", 1))
        if old_r != want.get("replicas", 1):
            dp.diffs.append(FieldDiff(path="spec.replicas", loc=["spec", "replicas"], old=old_r,
                                      new=want.get("replicas", 1), change="update"))
            patch["replicas"] = want.get("replicas", 1)
    if any(f.change == "replace-needed" for f in dp.diffs):
        dp.action = "replace-needed"
    elif patch:
        dp.action = "update"
        p.act(dp, "endpoints", "endpoint.update", m.name, {"name": m.name, "body": patch}, ["spec"])


def prune_workloads(p: PlanBuilder, parsed: Parsed, live: Live | None) -> None:
    if live is None:
        return
    if parsed.jobs:
        named = {(d.metadata.namespace, d.metadata.name) for _, d in parsed.jobs}
        for (ns, name), _obj in sorted(live.jobs.items()):
            if (ns, name) in named:
                continue
            if p.prune:
                dp = DocumentPlan(index=None, kind="TrainingJob", name=name, namespace=ns, action="delete")
                p.docs.append(dp)
                p.act(dp, "prune", "job.delete", f"{ns}/{name}", {"name": name, "namespace": ns})
            else:
                p.warnings.append(f"job {ns}/{name} is not in the documents: kept (prune deletes it)")
    if parsed.endpoints:
        named_eps = {d.metadata.name for _, d in parsed.endpoints}
        for name in sorted(live.endpoints):
            if name in named_eps:
                continue
            if p.prune:
                dp = DocumentPlan(index=None, kind="Endpoint", name=name, action="delete")
                p.docs.append(dp)
                p.act(dp, "prune", "endpoint.delete", name, {"name": name})
            else:
                p.warnings.append(f"endpoint {name} is not in the documents: kept (prune deletes it)")
