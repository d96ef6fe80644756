"""Spec documents against the live state: export a cluster, plan documents (a diff per document plus the dry-run
plans of the child operations), apply them as one `spec.apply` operation, and run its phases.

Everything here goes through the use cases the REST routes call: a child operation is started by the same
function its route calls (same admission, same idempotency, same plan), so a spec can do nothing a REST client
could not. The diff reads what the read routes read: the cluster's view (EKS, HyperPod), its instance groups as
HyperPod describes them, its storage list, the features document, the jobs' live objects and the endpoints' live
state; never the create request PodStart stored.

spec.apply's steps are the phases (functions.domain.specs.document.PHASES): each starts its child operations one at a
time, with an Idempotency-Key derived from the parent's id, the phase and the child's position (a step that
runs again finds the same operation instead of starting another), watches each to its end, and fails naming
the child that failed. A retried apply resumes a failed child (POST .../retry) instead of starting a new one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from functions.domain.clusters.models import ClusterCreate, InstanceGroupAdd, InstanceGroupPatch
from functions.domain.errors import Conflict, Forbidden, InvalidInput, PermanentStepError, Problem
from functions.domain.features.changes import FeaturesPatch
from functions.domain.features.document import FeaturesUnchanged
from functions.domain.inference.endpoints import EndpointCreate, EndpointPatch
from functions.domain.kinds import required_role
from functions.domain.operations import Actor, Operation, OperationStatus, Target
from functions.domain.plans import HOURS_PER_MONTH, Cost, Plan
from functions.domain.principal import Principal, Role
from functions.domain.specs.document import PHASES, ChildAction, SpecPlan, SpecRequest, SpecUnchanged
from functions.domain.storage.volumes import StorageAdd
from functions.domain.training import rules as training
from functions.domain.views import NoChange
from functions.domain.wakes import OPERATION
from functions.domain.workflow import Done, Outcome, Wait, WakeOn
from functions.logic import features as features_logic
from functions.logic.clusters import create as cluster_create
from functions.logic.clusters import group_add, group_delete, group_scale
from functions.logic.deps import Deps
from functions.logic.inference import endpoints
from functions.logic.plans import Started, replay_of, start_or_plan
from functions.logic.specs.diff import PlanBuilder, diff_cluster, doc_loc, ordered, parse, resolve
from functions.logic.specs.diff_workloads import diff_endpoint, diff_job, prune_workloads
from functions.logic.specs.live import export, read_live
from functions.logic.storage import volumes as storage
from functions.logic.training import jobs

__all__ = ["action_role", "apply", "export", "plan", "run_child", "run_phase"]

KIND = "spec.apply"
RESOURCE = "specs/apply"  # the parent's lock: its children take the cluster's own (Target.lock_key)


def action_role(a: ChildAction) -> Role:
    """The role a child operation needs (its kind's, and an admin for what destroys data or reaches the internet:
    functions.domain.kinds.required_role reads that from the request, here the child's arguments). Its start
    checks again on the request admission normalized (a registered bucket, say)."""
    raw = a.args.get("body")
    body: dict[str, Any] = raw if isinstance(raw, dict) else {}
    request = {"endpoint": body} if a.kind == "endpoint.deploy" else {**a.args, **body}
    return required_role(a.kind, request)


def child_key(parent_id: str, phase: str, index: int) -> str:
    return f"{parent_id}/{phase}/{index}"


def is_child(op: Operation, parent_id: str) -> bool:
    return (op.idempotency_key or "").startswith(parent_id + "/")


# -- child operations: the use cases the routes call --------------------------------------------------------------
Result = Started | Plan | Operation | NoChange | FeaturesUnchanged


def run_child(deps: Deps, cluster: str, region: str, a: ChildAction, actor: Actor, key: str | None,
              dry_run: bool) -> Result:
    k, args = a.kind, a.args
    if k == "cluster.create":
        return cluster_create.create_cluster(deps, ClusterCreate.model_validate(args["body"]), actor, key, dry_run)
    if k == "instance_group.add":
        return group_add.add_instance_group(deps, cluster, region, InstanceGroupAdd.model_validate(args["body"]),
                                            actor, key, dry_run)
    if k == "instance_group.scale":
        return group_scale.scale_instance_group(deps, cluster, region, args["group"],
                                                InstanceGroupPatch(instance_count=args["instance_count"]), actor,
                                                key, dry_run)
    if k == "instance_group.delete":
        return group_delete.delete_instance_group(deps, cluster, region, args["group"], args["group"], actor, key,
                                                  dry_run)
    if k == "storage.add":
        return storage.add_storage(deps, cluster, region, StorageAdd.model_validate(args["body"]), actor, key,
                                   dry_run)
    if k == "storage.remove":
        return storage.remove_storage(deps, cluster, region, args["name"], args.get("confirm"), actor, key, dry_run)
    if k == "features.update":
        return features_logic.update_features(deps, cluster, region, FeaturesPatch.model_validate(args["body"]),
                                              actor, key, dry_run)
    if k == "job.submit":
        return jobs.submit_job(deps, cluster, region, training.JobSubmit.model_validate(args["body"]), actor, key,
                               dry_run)
    if k == "job.delete":
        return jobs.remove_job(deps, cluster, region, args["name"], args["namespace"], actor, key, dry_run)
    if k == "endpoint.deploy":
        return endpoints.deploy_endpoint(deps, cluster, region, EndpointCreate.model_validate(args["body"]), actor,
                                         key, dry_run)
    if k == "endpoint.update":
        return endpoints.update_endpoint(deps, cluster, region, args["name"],
                                         EndpointPatch.model_validate(args["body"]), actor, key, dry_run)
    if k == "endpoint.delete":
        return endpoints.delete_endpoint(deps, cluster, region, args["name"], actor, key, dry_run)
    raise ValueError(f"spec.apply has no child operation {k!r}")


def _started(result: Result) -> Operation | None:
    if isinstance(result, Started):
        return result.operation
    if isinstance(result, Operation):
        return result
    return None


METADATA_FIELDS = {"cluster.create": {"name", "region"}, "job.submit": {"name", "namespace"},
                   "endpoint.deploy": {"name"}}


def _child_locs(errors: list[dict[str, Any]], a: ChildAction, base: list[str | int]) -> list[dict[str, Any]]:
    """A child's field errors located in the document: body.x -> documents[i].<base>.x (names: metadata)."""
    out = []
    for e in errors:
        loc = list(e.get("loc") or [])
        if loc[:1] == ["body"] and len(loc) > 1 and loc[1] in METADATA_FIELDS.get(a.kind, set()):
            where = ["metadata", *loc[1:]]
        elif loc[:1] == ["body"]:
            where = [*base, *loc[1:]]
        else:
            where = list(base)
        out.append({"loc": doc_loc(a.document if a.document is not None else 0, *where), "msg": e.get("msg", "")})
    return out


def _child_plans(deps: Deps, p: PlanBuilder, actor: Actor) -> Cost:
    """Each child operation's dry-run plan, from the same use case (same checks, same 4xx). A check that an earlier
    phase of this apply may change (a group it adds, the cluster it creates) is a note, checked again on apply."""
    hourly = 0.0
    ops = [o for d in p.docs for o in d.operations]
    for n, a in enumerate(p.actions):
        child = next((o for o in ops if o.phase == a.phase and o.kind == a.kind and o.resource == a.resource
                      and o.plan is None and o.note is None), None)
        earlier = any(PHASES.index(b.phase) < PHASES.index(a.phase) for b in p.actions)
        if p.creating and a.kind != "cluster.create":
            if child is not None:
                child.note = "planned once the cluster exists (this apply creates it first)"
            continue
        try:
            result = run_child(deps, p.cluster, p.region, a, actor, None, dry_run=True)
        except Problem as exc:
            if isinstance(exc, Conflict) and exc.extra.get("running_operation"):
                if child is not None:
                    child.note = f"{exc.detail}; apply waits for it"
                continue
            if isinstance(exc, Forbidden):  # a diff is a read: the plan shows it, without this child's own plan
                if child is not None:
                    child.note = f"no plan: {exc.detail}"
                continue
            if earlier and isinstance(exc, InvalidInput | Conflict):
                if child is not None:
                    child.note = f"checked again when applied, after the earlier phases: {exc.detail}"
                continue
            if exc.errors:
                mapped = _child_locs(exc.errors, a, p.base_locs.get(n, []))
                detail = "; ".join(f"{'.'.join(str(x) for x in e['loc'][1:])}: {e['msg']}" for e in mapped)
                raise type(exc)(f"{a.kind} {a.resource}: {detail}", errors=mapped, **exc.extra) from None
            raise
        if isinstance(result, Plan):
            if child is not None:
                child.plan = result
            hourly += result.cost.hourly
        elif child is not None:
            child.note = "nothing differs now: it starts nothing"
    return Cost(hourly=round(hourly, 2), monthly_estimate=round(hourly * HOURS_PER_MONTH, 2))


def plan(deps: Deps, req: SpecRequest, actor: Actor, *, child_plans: bool = True) -> tuple[SpecPlan, list[ChildAction]]:
    parsed = parse(req)
    rec, region = resolve(deps, parsed)
    if rec is None and parsed.cluster_doc is None:
        raise InvalidInput.field(doc_loc(0, "metadata", "cluster"),
                                 f"no cluster {parsed.cluster!r} in {region}; add its Cluster document to create it")
    live = read_live(deps, rec, want_jobs=bool(parsed.jobs), want_endpoints=bool(parsed.endpoints)) if rec else None
    p = PlanBuilder(cluster=parsed.cluster, region=region, prune=req.prune, creating=rec is None)
    if live is not None:
        p.warnings += live.warnings
    if parsed.cluster_doc is not None:
        diff_cluster(deps, p, parsed.cluster_doc[0], parsed.cluster_doc[1], live)
    for i, jdoc in parsed.jobs:
        diff_job(p, i, jdoc, live)
    for i, edoc in parsed.endpoints:
        diff_endpoint(p, i, edoc, live)
    prune_workloads(p, parsed, live)
    ordered(p)
    cost = _child_plans(deps, p, actor) if child_plans else Cost(hourly=0.0, monthly_estimate=0.0)
    summary = {k: 0 for k in ("create", "update", "unchanged", "replace-needed", "delete")}
    for d in p.docs:
        summary[d.action] += 1
        summary["delete"] += sum(1 for f in d.diffs if f.change == "delete")
    changed = bool(p.actions) or summary["replace-needed"] > 0
    out = SpecPlan(changed=changed, cluster=p.cluster, region=region, prune=req.prune, documents=p.docs,
                   summary=summary, cost=cost, warnings=p.warnings)
    return out, p.actions


# -- apply -------------------------------------------------------------------------------------------------------
@dataclass
class _ApplyAdmission:
    normalized: dict[str, Any]

    def normalize(self) -> dict[str, Any]:
        return self.normalized

    def claim(self, op: Operation) -> None:
        return None

    def unclaim(self, op: Operation) -> None:
        return None


def apply(deps: Deps, req: SpecRequest, principal: Principal, actor: Actor, key: str | None,
          dry_run: bool = False) -> Started | SpecPlan | SpecUnchanged:
    """One spec.apply operation running the child operations the plan lists; 200 `changed: false` when nothing
    differs; 409 for a field no operation can change (nothing starts); 403 when a child needs a stronger role."""
    splan, actions = plan(deps, req, actor, child_plans=dry_run)
    if dry_run:
        return splan
    if splan.replace_needed:
        errors: list[dict[str, Any]] = [
            {"loc": doc_loc(d.index, *(f.loc or [])) if d.index is not None else ["body", "documents"],
             "msg": f"{f.path}: {f.old!r} -> {f.new!r} cannot change in place ({f.note})"}
            for d, f in splan.replace_needed]
        raise Conflict("; ".join(str(e["msg"]) for e in errors) + ". Nothing was started.", errors=errors)
    target = Target(cluster=splan.cluster, region=splan.region, resource=RESOURCE)
    request = {"cluster": splan.cluster, "region": splan.region, "prune": req.prune, "documents": req.documents}
    if not actions:
        again = replay_of(deps, kind=KIND, target=target, request=request, principal=actor, idempotency_key=key)
        return again or SpecUnchanged(plan=splan)
    need = max((action_role(a) for a in actions), default=Role.operator)
    for a in actions:
        if principal.role < action_role(a):
            raise Forbidden(f"{a.kind} {a.resource} needs the {action_role(a).name} role; you are "
                            f"{principal.role.name}. Nothing was started.")
    phases = tuple(ph for ph in PHASES if any(a.phase == ph for a in actions))
    normalized = {**request, "required_role": need.name, "actions": [a.model_dump(mode="json") for a in actions],
                  "summary": splan.summary}
    result = start_or_plan(deps, dry_run=False, kind=KIND, target=target, request=request, principal=actor,
                           idempotency_key=key, admission=_ApplyAdmission(normalized), steps=phases)
    assert isinstance(result, Started)
    return result


# -- spec.apply's steps ------------------------------------------------------------------------------------------
def run_phase(deps: Deps, op: Operation, phase: str, record: Callable[..., None]) -> Outcome:
    """Start this phase's child operations one at a time and watch each to its end (they share the cluster's
    lock); `record(**outputs)` keeps what was started even when the step then fails."""
    step = op.step(phase)
    out_key = f"{phase}_operations"
    actor = op.attempts[-1].principal if op.attempts else op.principal
    role = Role[actor.role] if actor.role and actor.role in Role.__members__ else Role.viewer
    cluster, region = str(op.target.cluster), str(op.target.region)
    children: dict[str, dict[str, Any]] = {str(k): dict(v) for k, v in (step.outputs.get(out_key) or {}).items()}
    actions = [(n, ChildAction.model_validate(a)) for n, a in enumerate(op.request.get("actions") or [])]
    mine = [(n, a) for n, a in actions if a.phase == phase]
    done = 0
    for n, a in mine:
        label = f"{a.kind} {a.resource}"
        entry = children.get(str(n))
        if entry is None:
            if role < action_role(a):
                raise PermanentStepError("Forbidden", f"{label} needs the {action_role(a).name} role; "
                                                      f"{actor.name} is {actor.role}")
            try:
                result = run_child(deps, cluster, region, a, actor, child_key(op.id, phase, n), dry_run=False)
            except Conflict as exc:
                if exc.extra.get("running_operation") or exc.extra.get("idempotency_key_in_progress"):
                    return Wait(message=f"{label}: waiting: {exc.detail}", outputs={out_key: children})
                raise PermanentStepError("Conflict", f"{label}: {exc.detail}") from None
            except Problem as exc:
                raise PermanentStepError(type(exc).__name__, f"{label}: {exc.detail}") from None
            child = _started(result)
            children[str(n)] = {"kind": a.kind, "resource": a.resource,
                                "operation_id": child.id if child else None, "attempt": step.attempts}
            record(**{out_key: children})
            if child is None:
                done += 1
                continue  # the live state already is what the document says
            return Wait(message=f"{label}: started {child.id}", outputs={out_key: children},
                        wake_on=WakeOn(kind=OPERATION, resource=child.id, status=child.status.value))
        if entry.get("operation_id") is None:
            done += 1
            continue
        child = deps.operations.get(str(entry["operation_id"]))
        if not child.status.terminal:
            return Wait(message=f"{label}: {child.id} {child.status.value}" + (f" at {child.phase}" if child.phase
                                                                                  else ""),
                        outputs={out_key: children},
                        wake_on=WakeOn(kind=OPERATION, resource=child.id, status=child.status.value))
        if child.status is OperationStatus.SUCCEEDED:
            done += 1
            continue
        if step.attempts > int(entry.get("attempt") or 0):  # this apply was retried: resume its failed child
            try:
                deps.operations.retry(child.id, actor)
            except Problem as exc:
                raise PermanentStepError(type(exc).__name__, f"{label}: retrying {child.id}: {exc.detail}") from None
            children[str(n)] = {**entry, "attempt": step.attempts}
            record(**{out_key: children})
            return Wait(message=f"{label}: retrying {child.id}", outputs={out_key: children})
        why = child.error.message if child.error else child.status.value
        raise PermanentStepError("ChildOperationFailed",
                                 f"{label}: operation {child.id} {child.status.value} at {child.phase}: {why}")
    return Done(message=f"{done} of {len(mine)} operation(s) done", outputs={out_key: children})
