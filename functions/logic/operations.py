"""Retry and cancel: each needs the role the operation's kind needs (admin for cluster.delete), and a
retry resumes only the latest operation on a target that still exists, so a retried cluster.create
whose cluster was deleted meanwhile can never build an untracked cluster."""

from __future__ import annotations

from functions.domain import operations as ops
from functions.domain.errors import Conflict
from functions.domain.kinds import required_role
from functions.domain.limits import Leases, Limits
from functions.domain.operations import Actor, Operation
from functions.domain.plans import Change, Plan
from functions.domain.principal import Principal
from functions.logic import plans
from functions.logic.deps import Deps
from functions.logic.plans import Started


def actor_of(p: Principal) -> Actor:
    return Actor(sub=p.sub, name=p.name, role=p.role.name)


def _latest_on_target(deps: Deps, op: Operation) -> Operation | None:
    if not op.target.cluster:
        return None
    items, _ = deps.operations.list(cluster=op.target.cluster, status=None, limit=25, token=None)
    # a spec.apply's own child operations (keys derived from its id) come after it: they do not count
    return next((o for o in items if o.target.region == op.target.region
                 and not (o.idempotency_key or "").startswith(op.id + "/")), None)


def check_resumable(deps: Deps, op: Operation) -> None:
    if not op.target.cluster or not op.target.region:
        return
    rec = deps.records.load(op.target.region, op.target.cluster)
    if rec is None and op.kind != "spec.apply":  # an apply may create its cluster (its child checks it)
        raise Conflict(f"cluster {op.target.cluster} no longer exists in {op.target.region}: operation {op.id} "
                       f"cannot be resumed; start a new request", operation_id=op.id)
    if rec is not None and op.kind in ("cluster.create", "cluster.import") and rec.operation_id not in (None, op.id):
        raise Conflict(f"cluster {op.target.cluster} is now tracked by operation {rec.operation_id}; "
                       f"{op.id} cannot be resumed", operation_id=op.id, latest_operation=rec.operation_id)
    latest = _latest_on_target(deps, op)
    if latest is not None and latest.id != op.id:
        raise Conflict(f"{latest.kind} operation {latest.id} came after {op.id} on {op.target.cluster}; only the "
                       f"latest operation on a cluster can be resumed", operation_id=op.id, latest_operation=latest.id)


def retry(deps: Deps, op_id: str, principal: Principal, dry_run: bool = False) -> Started | Plan:
    op = deps.operations.get(op_id)
    principal.require(required_role(op.kind, op.request))
    check_resumable(deps, op)
    if not dry_run:
        return Started(deps.operations.retry(op_id, actor_of(principal)))
    ops.prepare_retry(op, actor_of(principal))  # the same 409 unless FAILED or CANCELLED
    holder = deps.operations.repo.holder(op.target)
    if holder != op.id:
        deps.operations.check_free(op.target)
    done = frozenset(s.name for s in op.steps if s.status.done)
    resume = next((s.name for s in op.steps if not s.status.done), None)
    p = plans.plan(deps, op.kind, op.target, op.request, {}, skip_steps=done,
                   warnings=[f"steps already done are skipped: {', '.join(sorted(done))}"] if done else None)
    head = Change(action="update", kind="PodStart operation", name=op.id,
                  details={"status": {"from": op.status.value, "to": "PENDING"}, "resume_at": resume,
                           "attempt": op.attempt + 1})
    return p.model_copy(update={"kind": "operation.retry", "changes": [head, *p.changes]})


def cancel(deps: Deps, op_id: str, principal: Principal, dry_run: bool = False) -> Started | Plan:
    op = deps.operations.get(op_id)
    principal.require(required_role(op.kind, op.request))
    if not dry_run:
        return Started(deps.operations.cancel(op_id, actor_of(principal)))
    ops.cancel(op)  # the same 409 when it already ended
    changes = [Change(action="update", kind="PodStart operation", name=op.id,
                      details={"status": {"from": op.status.value, "to": "CANCELLED"}, "phase": op.phase})]
    if op.execution_arn:
        changes.append(Change(action="update", kind="AWS::StepFunctions::Execution",
                              name=op.execution_arn.rsplit(":", 1)[-1], details={"stop": True}))
    return Plan(kind="operation.cancel", target=op.target.model_dump(exclude_none=True), changes=changes,
                warnings=["what the finished steps made stays: retry the operation to resume it, or delete the "
                          "cluster to remove it"])


def watch(deps: Deps, leases: Leases | None, limits: Limits, principal: Principal, op_id: str, wait: int,
          version: int | None) -> tuple[Operation, int | None]:
    """Read an operation, as a long poll when `wait` > 0 and the caller's share allows it: (the operation, the
    Retry-After seconds to answer with when a limit was reached and the current state is answered at once)."""
    if wait <= 0 or leases is None:
        return deps.operations.watch(op_id, wait, version), None
    current = deps.operations.get(op_id)  # 404 first; an ended operation answers at once, holding nothing
    if current.status.terminal:
        return current, None
    held = leases.hold("long-poll", principal.sub, limits.long_polls_per_user, limits.long_polls_total, wait + 10)
    if isinstance(held, str):
        return deps.operations.get(op_id), limits.retry_after_s
    try:
        return deps.operations.watch(op_id, wait, version), None
    finally:
        leases.release(held)
