"""nodes.health_check: HyperPod's StartClusterHealthCheck on a group's nodes (one call, at most 500 ids per
configuration; recorded once sent, so a retry never starts the checks again), then every node watched until
its deep health check ends, and a result per node and check reported on the operation.

A node has finished when DescribeClusterNode no longer says DeepHealthCheckInProgress and it was seen in
progress (or its verdict events are there, or long after the call). Each check's verdict is its cluster event
(`functions.domain.nodes.health_checks.parse_event`); a check with none follows the Node's
`deep-health-check-status` label. A node failing a check does not fail the operation: it is the result."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from functions.domain.errors import PermanentStepError
from functions.domain.nodes.health_checks import (
    CHECK_SECONDS,
    DEEP_CHECK_LABEL,
    FAULT_REASON_LABEL,
    MAX_PER_CALL,
    node_result,
    parse_event,
)
from functions.domain.nodes.models import HEALTH_LABEL, batches, kube_name
from functions.domain.workflow import Done, Outcome, Wait
from functions.workflows.context import StepContext, Workflow
from functions.workflows.hyperpod import elapsed

if TYPE_CHECKING:
    from functions.adapters.nodes import AwsNodeReader

ASSUME_STARTED_SECONDS = 900.0  # a node never seen in progress: finished once out of it this long after the call


def _reader(ctx: StepContext) -> AwsNodeReader:
    from functions.adapters.nodes import AwsNodeReader

    return AwsNodeReader(client=lambda service, region: ctx.aws(service, region))


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def start(ctx: StepContext) -> Outcome:
    req = ctx.request
    ids: list[str] = list(req["node_ids"])
    if ctx.outputs.get("started_at"):
        return Done(message=f"deep health checks already started on {len(ids)} node(s)",
                    outputs={"started_at": ctx.outputs["started_at"]})
    started_at = _now()
    configs = [{"InstanceGroupName": req["group"], "InstanceIds": chunk, "DeepHealthChecks": list(req["checks"])}
               for chunk in batches(ids, MAX_PER_CALL)]
    try:
        ctx.aws("sagemaker").start_cluster_health_check(ClusterName=req["hyperpod_cluster"],
                                                        DeepHealthCheckConfigurations=configs)
    except ClientError as err:
        # A re-run after a call whose record was lost: HyperPod refuses nodes already being checked. Every node
        # in DeepHealthCheckInProgress is that call's checks running; anything else is the refusal it says.
        if err.response["Error"]["Code"] not in ("ValidationException", "ValidationError") or not _all_in_progress(
                ctx, ids):
            raise
    ctx.record(started_at=started_at)
    return Done(message=f"deep health checks ({', '.join(req['checks'])}) started on {len(ids)} node(s)",
                outputs={"started_at": started_at})


def _all_in_progress(ctx: StepContext, ids: list[str]) -> bool:
    reader = _reader(ctx)
    for node_id in ids:
        detail = reader.describe_cluster_node(ctx.region, ctx.request["hyperpod_cluster"], node_id)
        if ((detail or {}).get("InstanceStatus") or {}).get("Status") != "DeepHealthCheckInProgress":
            return False
    return True


def _verdicts(ctx: StepContext, node_id: str, since: datetime) -> dict[str, tuple[bool, str | None]]:
    """This node's verdict events since the call (ListClusterEvents, every page)."""
    reader = _reader(ctx)
    out: dict[str, tuple[bool, str | None]] = {}
    token: str | None = None
    while True:
        events, token = reader.cluster_events(ctx.region, ctx.request["hyperpod_cluster"], node_id=node_id,
                                              since=since, limit=100, token=token)
        for e in reversed(events):  # oldest first: the latest verdict of a check wins
            parsed = parse_event(str(e.get("Description") or ""))
            if parsed and parsed[1] == node_id:
                out[parsed[0]] = (parsed[2], parsed[3])
        if not token:
            return out


def results(ctx: StepContext) -> Outcome:
    req, reader = ctx.request, _reader(ctx)
    ids: list[str] = list(req["node_ids"])
    checks: list[str] = list(req["checks"])
    done: dict[str, Any] = dict(ctx.outputs.get("results_by_node") or {})
    seen_running = set(ctx.outputs.get("seen_in_progress") or [])
    started_at = str(ctx.outputs.get("started_at") or _now())
    since = datetime.fromisoformat(started_at.replace("Z", "+00:00")).replace(microsecond=0)
    long_after = elapsed(started_at) > ASSUME_STARTED_SECONDS
    pending = [i for i in ids if i not in done]
    kube = {}
    if pending:
        nodes, _ = reader.kube_nodes(ctx.region, req["eks_cluster"],
                                     f"kubernetes.io/hostname in ({','.join(kube_name(i) for i in pending)})")
        kube = {n["metadata"]["name"]: n for n in nodes}
    for node_id in pending:
        detail = reader.describe_cluster_node(ctx.region, req["hyperpod_cluster"], node_id)
        status = ((detail or {}).get("InstanceStatus") or {}).get("Status")
        if status == "DeepHealthCheckInProgress":
            seen_running.add(node_id)
            continue
        labels = ((kube.get(kube_name(node_id)) or {}).get("metadata") or {}).get("labels") or {}
        verdicts = _verdicts(ctx, node_id, since)
        if node_id not in seen_running and not verdicts and not long_after and detail is not None:
            continue  # not started yet as far as we can tell
        message = ((detail or {}).get("InstanceStatus") or {}).get("Message")
        reason = labels.get(FAULT_REASON_LABEL) or message or (
            "the instance is gone (replaced or deleted) before its deep health check finished" if detail is None
            else None)
        done[node_id] = node_result(node_id, checks, verdicts, labels.get(DEEP_CHECK_LABEL), reason,
                                    labels.get(HEALTH_LABEL)).model_dump()
    ctx.record(results_by_node=done, seen_in_progress=sorted(seen_running))
    waiting = [i for i in ids if i not in done]
    if waiting:
        if elapsed(ctx.step.started_at) > 3 * CHECK_SECONDS:
            raise PermanentStepError("HealthChecksNotFinished",
                                     f"{len(waiting)} node(s) still in deep health checks: {', '.join(waiting[:20])}")
        return Wait(message=f"{len(ids) - len(waiting)}/{len(ids)} node(s) checked; waiting for {waiting[0]}"
                            + (f" and {len(waiting) - 1} more" if len(waiting) > 1 else ""),
                    expected_seconds=CHECK_SECONDS)
    ordered = [done[i] for i in ids]
    failed = [r for r in ordered if not r["passed"]]
    names = "; ".join(f"{r['node_id']} failed {', '.join(c['check'] for c in r['checks'] if not c['passed'])}"
                      for r in failed[:10])
    return Done(message=f"{len(ids)} node(s) checked: {len(ids) - len(failed)} passed, {len(failed)} failed"
                        + (f" ({names})" if failed else ""),
                outputs={"results": ordered, "passed": len(ids) - len(failed), "failed": len(failed),
                         "failed_node_ids": [r["node_id"] for r in failed]})


WORKFLOW = Workflow(kind="nodes.health_check", steps={"start": start, "results": results})
