"""nodes.reboot, nodes.replace, nodes.delete: HyperPod's Batch*ClusterNodes in batches of at most 25 ids
(each batch recorded as it is sent, so a retry never sends it again), then every node watched to the end:
back Running and Ready (reboot), gone with new instances Running and Ready in its group (replace), or
gone (delete). A node that does not get there fails the operation naming it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from functions.domain.errors import PermanentStepError
from functions.domain.nodes.models import BATCH, GROUP_LABEL, HEALTH_LABEL, batches, kube_name
from functions.domain.workflow import Done, Outcome, Wait
from functions.workflows.context import StepContext, Workflow
from functions.workflows.hyperpod import elapsed

if TYPE_CHECKING:
    from functions.adapters.nodes import AwsNodeReader

REBOOT_SECONDS = 300.0
REPLACE_SECONDS = 900.0
DELETE_SECONDS = 180.0
GIVE_UP_SECONDS = 3000.0  # a node not back in 50 minutes fails the operation, named
ASSUME_SENT_SECONDS = 900.0  # a rebooted node never seen down: believed back once Ready this long after


def _reader(ctx: StepContext) -> AwsNodeReader:
    from functions.adapters.nodes import AwsNodeReader  # the steps function's; the events one loads no reader

    return AwsNodeReader(client=lambda service, region: ctx.aws(service, region))


def _send(ctx: StepContext, operation: str, verb: str) -> Outcome:
    req = ctx.request
    ids: list[str] = list(req["node_ids"])
    sent = set(ctx.outputs.get("sent") or [])
    failed: dict[str, str] = dict(ctx.outputs.get("failed") or {})
    calls = int(ctx.outputs.get("calls") or 0)
    sm = ctx.aws("sagemaker")
    sent_at = ctx.outputs.get("sent_at") or _now()  # before the first call: transitions after it are ours
    if operation != "BatchRebootClusterNodes" and "groups" not in ctx.outputs:
        ctx.record(groups=_groups(ctx, ids))
    for batch in batches([i for i in ids if i not in sent], int(req.get("batch_size") or BATCH)):
        hp = req["hyperpod_cluster"]
        if operation == "BatchRebootClusterNodes":
            out = sm.batch_reboot_cluster_nodes(ClusterName=hp, NodeIds=batch)
        elif operation == "BatchReplaceClusterNodes":
            out = sm.batch_replace_cluster_nodes(ClusterName=hp, NodeIds=batch)
        else:
            out = sm.batch_delete_cluster_nodes(ClusterName=hp, NodeIds=batch)
        calls += 1
        for f in out.get("Failed") or []:
            failed[f.get("NodeId", "?")] = f"{f.get('ErrorCode') or f.get('Code') or 'Failed'}: {f.get('Message', '')}"
        sent.update(batch)
        ctx.record(sent=sorted(sent), failed=failed, calls=calls, sent_at=sent_at)
    if failed:
        names = "; ".join(f"{k} ({v})" for k, v in sorted(failed.items())[:10])
        raise PermanentStepError("NodeActionRefused", f"HyperPod refused to {verb} {len(failed)} node(s): {names}")
    return Done(message=f"{verb} requested for {len(ids)} node(s) in {calls} {operation} call(s)",
                outputs={"sent": sorted(sent), "calls": calls, "sent_at": sent_at})


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _groups(ctx: StepContext, ids: list[str]) -> dict[str, str]:
    """Each node's instance group, from its Kubernetes labels (one call), else DescribeClusterNode."""
    req, reader = ctx.request, _reader(ctx)
    out: dict[str, str] = {}
    nodes, _ = reader.kube_nodes(ctx.region, req["eks_cluster"],
                                 f"kubernetes.io/hostname in ({','.join(kube_name(i) for i in ids)})")
    for n in nodes:
        out[str(n["metadata"]["name"]).removeprefix("hyperpod-")] = (n["metadata"].get("labels") or {}).get(
            GROUP_LABEL, "")
    for node_id in ids:
        if not out.get(node_id):
            detail = reader.describe_cluster_node(ctx.region, req["hyperpod_cluster"], node_id)
            if detail is None:
                raise PermanentStepError("NodeNotFound", f"{req['cluster']} has no node {node_id}")
            out[node_id] = detail["InstanceGroupName"]
    return out


def _healthy(node: dict[str, Any] | None) -> bool:
    if node is None:
        return False
    ready = any(c.get("type") == "Ready" and c.get("status") == "True"
                for c in (node.get("status") or {}).get("conditions") or [])
    return ready and (node["metadata"].get("labels") or {}).get(HEALTH_LABEL, "Schedulable") == "Schedulable"


def _ready_since(node: dict[str, Any] | None) -> datetime | None:
    for c in ((node or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready" and c.get("status") == "True" and c.get("lastTransitionTime"):
            try:
                return datetime.fromisoformat(str(c["lastTransitionTime"]).replace("Z", "+00:00"))
            except ValueError:
                return None
    return None


def _kube_by_name(ctx: StepContext, ids: list[str]) -> dict[str, dict[str, Any]]:
    if not ids:
        return {}
    nodes, _ = _reader(ctx).kube_nodes(ctx.region, ctx.request["eks_cluster"],
                                       f"kubernetes.io/hostname in ({','.join(kube_name(i) for i in ids)})")
    return {n["metadata"]["name"]: n for n in nodes}


def _give_up(ctx: StepContext, waiting: list[str], what: str) -> None:
    if elapsed(ctx.step.started_at) > GIVE_UP_SECONDS / 1.0 and waiting:
        raise PermanentStepError("NodesNotBack", f"{len(waiting)} node(s) not {what}: {', '.join(waiting[:20])}")


def reboot(ctx: StepContext) -> Outcome:
    return _send(ctx, "BatchRebootClusterNodes", "reboot")


def rebooted(ctx: StepContext) -> Outcome:
    """Every node seen down (or long enough after the call), then Running in HyperPod and Ready and
    Schedulable in Kubernetes."""
    req, reader = ctx.request, _reader(ctx)
    ids: list[str] = list(req["node_ids"])
    back = set(ctx.outputs.get("back") or [])
    seen_down = set(ctx.outputs.get("seen_down") or [])
    pending = [i for i in ids if i not in back]
    kube = _kube_by_name(ctx, pending)
    long_after = elapsed(ctx.outputs.get("sent_at")) > ASSUME_SENT_SECONDS
    sent = datetime.fromisoformat(str(ctx.outputs.get("sent_at") or _now()).replace("Z", "+00:00"))
    sent = sent.replace(microsecond=0)  # Kubernetes times are whole seconds
    for node_id in pending:
        node = kube.get(kube_name(node_id))
        if not _healthy(node):
            seen_down.add(node_id)
            continue
        ready_since = _ready_since(node)
        came_back = ready_since is not None and ready_since >= sent  # went NotReady and back after our call
        if node_id in seen_down or came_back or long_after:
            detail = reader.describe_cluster_node(ctx.region, req["hyperpod_cluster"], node_id)
            if detail is None:
                raise PermanentStepError("NodeNotFound", f"node {node_id} is gone from {req['cluster']}")
            if (detail.get("InstanceStatus") or {}).get("Status") == "Running":
                back.add(node_id)
    ctx.record(back=sorted(back), seen_down=sorted(seen_down))
    waiting = [i for i in ids if i not in back]
    if not waiting:
        return Done(message=f"{len(ids)} node(s) back Running and Ready", outputs={"back": sorted(back)})
    _give_up(ctx, waiting, "back Running and Ready")
    return Wait(message=f"{len(ids) - len(waiting)}/{len(ids)} node(s) back; waiting for {waiting[0]}"
                        + (f" and {len(waiting) - 1} more" if len(waiting) > 1 else ""),
                expected_seconds=REBOOT_SECONDS)


def replace(ctx: StepContext) -> Outcome:
    return _send(ctx, "BatchReplaceClusterNodes", "replace")


def _gone(ctx: StepContext, ids: list[str]) -> list[str]:
    """The ids no longer in HyperPod (DescribeClusterNode only for nodes gone from Kubernetes)."""
    req, reader = ctx.request, _reader(ctx)
    gone = set(ctx.outputs.get("gone") or [])
    kube = _kube_by_name(ctx, [i for i in ids if i not in gone])
    for node_id in ids:
        if node_id in gone or kube_name(node_id) in kube:
            continue
        if reader.describe_cluster_node(ctx.region, req["hyperpod_cluster"], node_id) is None:
            gone.add(node_id)
    ctx.record(gone=sorted(gone))
    return sorted(gone)


def replaced(ctx: StepContext) -> Outcome:
    """The old instances gone, and as many new instances in each of their groups (launched after the
    call) Running, Ready and Schedulable."""
    req, reader = ctx.request, _reader(ctx)
    ids: list[str] = list(req["node_ids"])
    groups: dict[str, str] = dict(ctx.outputs.get("groups") or {})
    gone = _gone(ctx, ids)
    since = datetime.fromisoformat(str(ctx.outputs.get("sent_at") or _now()).replace("Z", "+00:00"))
    since -= timedelta(seconds=5)
    fresh: dict[str, list[str]] = {}
    for group in sorted(set(groups.values())):
        summaries = _new_in_group(ctx, group, since)
        fresh[group] = [s["InstanceId"] for s in summaries if (s.get("InstanceStatus") or {}).get("Status") == "Running"
                        and s["InstanceId"] not in ids]
    kube = _kube_by_name(ctx, [i for v in fresh.values() for i in v])
    ready = {g: [i for i in v if _healthy(kube.get(kube_name(i)))] for g, v in fresh.items()}
    short = {g: sum(1 for v in groups.values() if v == g) - len(ready[g]) for g in ready}
    waiting = [i for i in ids if i not in gone]
    if not waiting and all(n <= 0 for n in short.values()):
        new = sorted(i for v in ready.values() for i in v)
        return Done(message=f"{len(ids)} node(s) replaced: {', '.join(new[:10])}" + ("..." if len(new) > 10 else ""),
                    outputs={"new_node_ids": new})
    _give_up(ctx, waiting or [g for g, n in short.items() if n > 0], "replaced")
    del reader
    return Wait(message=f"{len(gone)}/{len(ids)} old node(s) gone; new Ready: "
                        + ", ".join(f"{g} {len(ready[g])}/{len(ready[g]) + max(short[g], 0)}" for g in ready),
                expected_seconds=REPLACE_SECONDS)


def _new_in_group(ctx: StepContext, group: str, since: datetime) -> list[dict[str, Any]]:
    sm = ctx.aws("sagemaker")
    out: list[dict[str, Any]] = []
    token = None
    while True:
        params: dict[str, Any] = {"ClusterName": ctx.request["hyperpod_cluster"], "InstanceGroupNameContains": group,
                                  "CreationTimeAfter": since, "MaxResults": 100}
        if token:
            params["NextToken"] = token
        page = sm.list_cluster_nodes(**params)
        out += [s for s in page.get("ClusterNodeSummaries", []) if s.get("InstanceGroupName") == group]
        token = page.get("NextToken")
        if not token:
            return out


def delete(ctx: StepContext) -> Outcome:
    return _send(ctx, "BatchDeleteClusterNodes", "delete")


def deleted(ctx: StepContext) -> Outcome:
    ids: list[str] = list(ctx.request["node_ids"])
    gone = _gone(ctx, ids)
    waiting = [i for i in ids if i not in gone]
    if not waiting:
        return Done(message=f"{len(ids)} node(s) deleted; their groups shrank", outputs={"gone": gone})
    _give_up(ctx, waiting, "gone")
    return Wait(message=f"{len(gone)}/{len(ids)} node(s) gone", expected_seconds=DELETE_SECONDS)


REBOOT = Workflow(kind="nodes.reboot", steps={"reboot": reboot, "ready": rebooted})
REPLACE = Workflow(kind="nodes.replace", steps={"replace": replace, "ready": replaced})
DELETE = Workflow(kind="nodes.delete", steps={"delete": delete, "gone": deleted})
