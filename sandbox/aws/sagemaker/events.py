"""Cluster events (ListClusterEvents, DescribeClusterEvent) and the EventBridge
'SageMaker HyperPod Cluster State Change' events a status change emits."""

from __future__ import annotations

import uuid
from typing import Any

from sandbox.aws.runtime import RUNTIME, now
from sandbox.aws.sagemaker.common import not_found, paginate, ts
from sandbox.aws.sagemaker.store import HyperPodCluster, store


def record_event(
    c: HyperPodCluster, resource: str, description: str, group: str | None = None, node: str | None = None,
    level: str = "Info",
) -> None:
    event: dict[str, Any] = {
        "EventId": str(uuid.uuid4()),
        "ClusterArn": c.arn,
        "ClusterName": c.name,
        "ResourceType": resource,
        "EventTime": now(),
        "Description": description,
        "EventLevel": level,
    }
    if group:
        event["InstanceGroupName"] = group
    if node:
        event["InstanceId"] = node
    c.events.append(event)


def set_status(c: HyperPodCluster, status: str) -> None:
    if c.status == status:
        return
    c.status = status
    record_event(c, "Cluster", f"Cluster {c.name} status changed to {status}")
    RUNTIME.put_event(
        c.region,
        "aws.sagemaker",
        "SageMaker HyperPod Cluster State Change",
        {"ClusterArn": c.arn, "ClusterName": c.name, "ClusterStatus": status},
        [c.arn],
    )


def list_cluster_events(self: Any) -> Any:
    from moto.core.responses import ActionResult

    params = self._get_params()
    with RUNTIME.lock:
        events = list(store(self.region).get(params["ClusterName"]).events)
    for key, field_name in (
        ("InstanceGroupName", "InstanceGroupName"),
        ("NodeId", "InstanceId"),
        ("ResourceType", "ResourceType"),
    ):
        if params.get(key):
            events = [e for e in events if e.get(field_name) == params[key]]
    if params.get("EventTimeAfter"):
        events = [e for e in events if e["EventTime"].timestamp() > ts(params["EventTimeAfter"])]
    if params.get("EventTimeBefore"):
        events = [e for e in events if e["EventTime"].timestamp() < ts(params["EventTimeBefore"])]
    if params.get("SortOrder") == "Descending":
        events.reverse()
    page, token = paginate(events, params.get("MaxResults"), params.get("NextToken"))
    return ActionResult({"Events": page, "NextToken": token})


def describe_cluster_event(self: Any) -> Any:
    from moto.core.responses import ActionResult

    params = self._get_params()
    with RUNTIME.lock:
        for e in store(self.region).get(params["ClusterName"]).events:
            if e["EventId"] == params["EventId"]:
                return ActionResult({"EventDetails": dict(e)})
    raise not_found(f"Resource Not Found: Event '{params['EventId']}' does not exist.")


# --- training plans --------------------------------------------------------------------------
