"""Health in the list: a node's last fault in one line, the repairs HyperPod made by itself (from its cluster events)
counted by the escalation ladder, so the next suggestion is the next rung; and the list row's `fix`, the call for
that rung."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from functions.domain.nodes.models import LastAction, fault_of, ladder, latest, may_replace, repair_of
from mcp_gateway.views import compact

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
NODE = "i-0abc123def4567890"


def event(description: str, level: str = "Warn", minutes_ago: int = 5, node: str | None = NODE) -> dict[str, Any]:
    return {"EventId": "e", "EventTime": NOW - timedelta(minutes=minutes_ago), "EventLevel": level,
            "Description": description, "ResourceType": "Instance", **({"InstanceId": node} if node else {})}


def test_hyperpods_own_reboots_and_replacements_are_read_from_its_events() -> None:
    reboot = repair_of(event(f"Node recovery: rebooting instance {NODE} (NvidiaXID48Error)"))
    replace = repair_of(event(f"Node recovery: replacing instance {NODE} (EFADeviceDown)"))
    assert reboot is not None and (reboot.action, reboot.by, reboot.operation_id) == ("reboot", "hyperpod", None)
    assert replace is not None and replace.action == "replace"
    assert repair_of(event(f"Instance {NODE} was automatically rebooted by HyperPod")) is not None
    # a status change (PodStart's own reboot shows as one) and a fault are not HyperPod's repairs
    assert repair_of(event(f"Instance {NODE} status changed to Pending", level="Info")) is None
    assert repair_of(event(f"Instance {NODE}: GPU 0 reported Xid 48; reboot required", level="Error")) is None
    assert repair_of(event("Node recovery: rebooting instance", node=None)) is None


def test_the_last_fault_is_one_line_of_what_went_wrong() -> None:
    line = fault_of(event(f"Instance {NODE} health status changed to UnschedulablePendingReboot: GPU 0 (PCI "
                          f"0000:53:00.0) reported Xid 48: double-bit ECC error; reboot required"))
    assert line is not None and line.startswith("2026-12-01T11:55:00Z GPU 0") and "Xid 48" in line
    assert fault_of(event(f"Instance {NODE}: EFA device rdmap0s6 is down", level="Error")).endswith(  # type: ignore[union-attr]
        "EFA device rdmap0s6 is down")
    assert fault_of(event(f"Instance {NODE} health status changed to Schedulable: Running", level="Info")) is None
    assert fault_of(event(f"Node recovery: rebooting instance {NODE} (NvidiaXID48Error)")) is None


def test_an_automatic_reboot_counts_as_the_reboot_rung() -> None:
    auto = LastAction(action="reboot", by="hyperpod", at=(NOW - timedelta(hours=1)).isoformat())
    # still unhealthy after HyperPod's own reboot: the next rung is replace (not another reboot)
    step = ladder("UnschedulablePendingReboot", auto, NOW)
    assert step.rung == "replace" and "HyperPod's node recovery rebooted it" in step.reason
    assert step.rebooted_at == auto.at
    assert may_replace("UnschedulablePendingReboot", auto, NOW)  # so replace_nodes is admitted without force
    # healthy since: nothing to do; a day later the reboot no longer counts
    assert ladder("Schedulable", auto, NOW).rung == "investigate"
    assert ladder("UnschedulablePendingReboot", auto, NOW + timedelta(hours=30)).rung == "reboot"


def test_the_latest_of_podstarts_action_and_hyperpods_repair_counts() -> None:
    mine = LastAction(action="reboot", operation_id="op-1", at="2026-12-01T10:00:00+00:00")
    theirs = LastAction(action="reboot", by="hyperpod", at="2026-12-01T11:00:00+00:00")
    assert latest(mine, theirs) is theirs and latest(None, mine) is mine and latest(None, None) is None


def test_a_list_row_shows_health_and_the_call_for_its_rung() -> None:
    row = {"node_id": NODE, "group": "accel", "instance_type": "ml.g5.8xlarge", "status": "Running",
           "health": "UnschedulablePendingReboot", "ready": True, "deep_health_check": "Passed", "healthy": False,
           "last_fault": "2026-12-01T11:55:00Z GPU 0 reported Xid 48: double-bit ECC error", "gpus_allocatable": 8,
           "gpus_requested": 8, "auto_repairs": 1, "rung": "replace",
           "last_action": {"action": "reboot", "at": "2026-12-01T11:00:00Z", "by": "hyperpod"}}
    healthy = {"node_id": "i-0def", "group": "accel", "instance_type": "ml.g5.8xlarge", "status": "Running",
               "health": "Schedulable", "ready": True, "healthy": True, "gpus_allocatable": 8, "gpus_requested": 0,
               "auto_repairs": 0, "rung": "investigate"}

    view = compact("list_nodes", {"cluster": "demo", "region": "us-west-2", "items": [row, healthy]})

    broken, fine = view["items"]
    assert broken["fault"].endswith("double-bit ECC error") and broken["gpus"] == "8/8"
    assert broken["auto_repairs"] == 1 and broken["last_action"].endswith("by hyperpod")
    assert broken["fix"] == {"tool": "replace_nodes", "args": {
        "cluster": "demo", "node_ids": [NODE], "reason": "GPU 0 reported Xid 48: double-bit ECC error",
        "confirm": "replace"}}
    assert "deep_check" not in broken and "ready" not in broken  # only what is not fine
    assert fine == {"node_id": "i-0def", "group": "accel", "type": "ml.g5.8xlarge", "health": "Schedulable",
                    "gpus": "0/8"}
