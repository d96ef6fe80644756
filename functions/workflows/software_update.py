"""cluster.software_update: one UpdateClusterSoftware call (recorded once sent: a retry never sends it again),
then the rolling update watched batch by batch until the cluster is InService again and every instance of the
groups is Running on the new software (updated after the call, or launched after it), or failed naming the node.

Progress per group is recorded on the operation (`progress`: batch k of K, nodes updating, nodes updated) and
the step message says it: "accel: batch 2 of 5: 3 node(s) updating (4/10 updated)"."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from functions.domain.clusters.software_update import UPDATE_SECONDS_PER_BATCH, batch_count, batch_size
from functions.domain.errors import PermanentStepError
from functions.domain.workflow import Done, Outcome, Wait
from functions.workflows import hyperpod
from functions.workflows.context import StepContext, Workflow

GROUP_FAILED = ("Failed", "RollbackInProgress", "RollbackComplete")


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _at(value: Any) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None


def deployment(req: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"RollingUpdatePolicy": {"MaximumBatchSize": {"Type": "CAPACITY_PERCENT",
                                                                        "Value": int(req["batch_percent"])}}}
    if req.get("wait_seconds") is not None:
        out["WaitIntervalInSeconds"] = int(req["wait_seconds"])
    return out


def update(ctx: StepContext) -> Outcome:
    req = ctx.request
    groups: list[str] = list(req["groups"])
    if ctx.outputs.get("requested_at"):
        return Done(message=f"software update already requested for {', '.join(groups)}",
                    outputs={"requested_at": ctx.outputs["requested_at"]})
    cluster = hyperpod.require(ctx, req["hyperpod_cluster"])
    busy = hyperpod.wait_until_updatable(cluster)
    if busy is not None:
        return busy
    requested_at = _now()
    params: dict[str, Any] = {"ClusterName": req["hyperpod_cluster"],
                              "InstanceGroups": [{"InstanceGroupName": g} for g in groups],
                              "DeploymentConfig": deployment(req)}
    if req.get("image_id"):
        params["ImageId"] = req["image_id"]
    ctx.aws("sagemaker").update_cluster_software(**params)
    ctx.record(requested_at=requested_at)
    pct = int(req["batch_percent"])
    sizes = {g: int((req.get("instances") or {}).get(g, 0)) for g in groups}
    return Done(message="UpdateClusterSoftware accepted: "
                        + ", ".join(f"{g} in {batch_count(n, pct)} batch(es) of at most {batch_size(n, pct)}"
                                    for g, n in sizes.items()),
                outputs={"requested_at": requested_at})


def _nodes(ctx: StepContext, groups: set[str]) -> list[dict[str, Any]]:
    sm, out, token = ctx.aws("sagemaker"), [], None
    while True:
        params: dict[str, Any] = {"ClusterName": ctx.request["hyperpod_cluster"], "MaxResults": 100}
        if token:
            params["NextToken"] = token
        page = sm.list_cluster_nodes(**params)
        out += [n for n in page.get("ClusterNodeSummaries", []) if n.get("InstanceGroupName") in groups]
        token = page.get("NextToken")
        if not token:
            return out


def _updated(node: dict[str, Any], since: datetime) -> bool:
    """On the new software: updated after the call, or launched after it (a replacement boots the new image)."""
    last, launched = _at(node.get("LastSoftwareUpdateTime")), _at(node.get("LaunchTime"))
    return bool((last and last >= since) or (launched and launched >= since))


def watch(ctx: StepContext) -> Outcome:
    req = ctx.request
    groups: list[str] = list(req["groups"])
    pct = int(req["batch_percent"])
    since = (_at(ctx.outputs.get("requested_at")) or datetime.now(UTC)).replace(microsecond=0)
    cluster = hyperpod.require(ctx, req["hyperpod_cluster"])
    hyperpod.raise_if_failed(cluster)
    detail = {g["InstanceGroupName"]: g for g in cluster.get("InstanceGroups", [])}
    for g in groups:
        status = (detail.get(g) or {}).get("SoftwareUpdateStatus")
        if status in GROUP_FAILED:
            raise PermanentStepError("SoftwareUpdateFailed", f"HyperPod reports the software update of {g} {status}"
                                     + (f": {cluster['FailureMessage']}" if cluster.get("FailureMessage") else ""))
    nodes = _nodes(ctx, set(groups))
    failed = [n for n in nodes if (n.get("InstanceStatus") or {}).get("Status") == "Failure"]
    if failed:
        n = failed[0]
        raise PermanentStepError("NodeUpdateFailed", f"node {n['InstanceId']} of {n['InstanceGroupName']} failed "
                                 f"during the software update: {(n.get('InstanceStatus') or {}).get('Message', '')}"
                                 + (f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""))
    progress: dict[str, dict[str, Any]] = {}
    earlier: dict[str, Any] = dict(ctx.outputs.get("progress") or {})
    for g in groups:
        mine = [n for n in nodes if n["InstanceGroupName"] == g]
        total = len(mine)
        updating = [n["InstanceId"] for n in mine if (n.get("InstanceStatus") or {}).get("Status") != "Running"]
        updated = [n["InstanceId"] for n in mine
                   if _updated(n, since) and (n.get("InstanceStatus") or {}).get("Status") == "Running"]
        size, of = batch_size(total, pct), batch_count(total, pct)
        batch = min(of, len(updated) // size + 1) if updating else min(of, -(-len(updated) // size))
        most = max(int((earlier.get(g) or {}).get("most_updating") or 0), len(updating))
        progress[g] = {"batch": batch, "of": of, "updating": len(updating), "updated": len(updated),
                       "nodes": total, "batch_size": size, "updating_ids": updating[:25], "most_updating": most}
    ctx.record(progress=progress)
    status = cluster.get("ClusterStatus")
    left = [g for g in groups if progress[g]["updated"] < progress[g]["nodes"] or progress[g]["updating"]]
    if status == "InService" and not left:
        versions = sorted({str(n.get("CurrentImageReleaseVersion")) for n in nodes
                           if n.get("CurrentImageReleaseVersion")})
        return Done(message=f"{sum(p['nodes'] for p in progress.values())} node(s) of {', '.join(groups)} updated in "
                            f"{sum(p['of'] for p in progress.values())} batch(es)"
                            + (f"; release {', '.join(versions)}" if versions else ""),
                    outputs={"progress": progress, "release": versions})
    if status == "InService" and not any(p["updating"] for p in progress.values()) and \
            hyperpod.elapsed(ctx.outputs.get("requested_at")) > 2 * UPDATE_SECONDS_PER_BATCH:
        names = [i for g in left for i in (n["InstanceId"] for n in nodes if n["InstanceGroupName"] == g
                                           and not _updated(n, since))]
        raise PermanentStepError("SoftwareUpdateIncomplete",
                                 f"HyperPod is InService but {len(names)} node(s) were not updated: "
                                 + ", ".join(names[:20]))
    active = next((g for g in groups if progress[g]["updating"]), left[0] if left else groups[-1])
    p = progress[active]
    message = (f"{active}: batch {p['batch']} of {p['of']}: {p['updating']} node(s) updating "
               f"({p['updated']}/{p['nodes']} updated)")
    others = [f"{g} {progress[g]['updated']}/{progress[g]['nodes']}" for g in groups if g != active]
    if others:
        message += "; " + ", ".join(others)
    return Wait(message=f"{message}; HyperPod cluster {status}", expected_seconds=UPDATE_SECONDS_PER_BATCH / 3,
                outputs={"progress": progress})


WORKFLOW = Workflow(kind="cluster.software_update", steps={"update": update, "watch": watch})
