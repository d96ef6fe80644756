"""Retry and cancel: each needs the role the operation's kind needs (admin for cluster.delete), and a
retry resumes only the latest operation on a target that still exists, so a retried cluster.create
whose cluster was deleted meanwhile can never build an untracked cluster."""

from __future__ import annotations

from functions.domain.errors import Conflict
from functions.domain.kinds import required_role
from functions.domain.operations import Actor, Operation
from functions.domain.principal import Principal
from functions.logic.deps import Deps


def actor_of(p: Principal) -> Actor:
    return Actor(sub=p.sub, name=p.name, role=p.role.name)


def _latest_on_target(deps: Deps, op: Operation) -> Operation | None:
    if not op.target.cluster:
        return None
    items, _ = deps.operations.list(cluster=op.target.cluster, status=None, limit=25, token=None)
    return next((o for o in items if o.target.region == op.target.region), None)


def check_resumable(deps: Deps, op: Operation) -> None:
    if not op.target.cluster or not op.target.region:
        return
    rec = deps.records.load(op.target.region, op.target.cluster)
    if rec is None:
        raise Conflict(f"cluster {op.target.cluster} no longer exists in {op.target.region}: operation {op.id} "
                       f"cannot be resumed; start a new request", operation_id=op.id)
    if op.kind in ("cluster.create", "cluster.import") and rec.operation_id not in (None, op.id):
        raise Conflict(f"cluster {op.target.cluster} is now tracked by operation {rec.operation_id}; "
                       f"{op.id} cannot be resumed", operation_id=op.id, latest_operation=rec.operation_id)
    latest = _latest_on_target(deps, op)
    if latest is not None and latest.id != op.id:
        raise Conflict(f"{latest.kind} operation {latest.id} came after {op.id} on {op.target.cluster}; only the "
                       f"latest operation on a cluster can be resumed", operation_id=op.id, latest_operation=latest.id)


def retry(deps: Deps, op_id: str, principal: Principal) -> Operation:
    op = deps.operations.get(op_id)
    principal.require(required_role(op.kind))
    check_resumable(deps, op)
    return deps.operations.retry(op_id, actor_of(principal))


def cancel(deps: Deps, op_id: str, principal: Principal) -> Operation:
    op = deps.operations.get(op_id)
    principal.require(required_role(op.kind))
    return deps.operations.cancel(op_id)
