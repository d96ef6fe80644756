"""What an agent sees of a REST answer: compact views, pure functions over the REST JSON.

REST keeps its full documents; the gateway chooses the view. Every tool result fits `BUDGET` bytes
(the result as MCP sends it: the text block and the structured content, as JSON) unless the caller
passes `detail="full"`:

- an operation is a summary: status, phase, attempt, version, each step's status and one-line message,
  the error, how many steps are done, and the next call to make (`operation`);
- an endpoint is its model, replicas ready, status and message, objects as `Kind/name`, and the next
  call (`endpoint`); a pool row is workers by model (`_pool_row`); an answer drops the engine's raw JSON (`invoke`);
- a cluster is its status, groups with counts, EKS/HyperPod status, one line each for dependencies and
  storage, and its latest operation (`cluster`);
- a features document keeps, per feature, on/off, status (and why, when DEGRADED), version, what it needs and
  what needs it, its settings, and of tiered checkpointing's identity chain only the broken links (`features`);
- a capacity advice keeps every option's where, when, cost and the tool calls that act on it, and one line per near
  miss (`advice`);
- a list keeps the fields an agent decides on (`ROWS`) and as many rows as fit, then says how many
  more there are and how to get them: a narrowing filter, `next_token`, or `detail="full"` (`page`).

Nothing here does I/O: the server fetches, these functions shape, the tests feed recorded answers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

BUDGET = 4096  # bytes of one tool result (text + structured content) in the default, compact view
# What the SDK adds to every result on the latest protocol: "resultType" and "_meta" with the server's name
# and version (~110 bytes); counted so the result on the wire, not just our part of it, fits the budget.
SDK_EXTRA = 160
LINE = 160  # one-line messages are cut to this many characters
TERMINAL = ("SUCCEEDED", "FAILED", "CANCELLED")
DONE_STEP = ("SUCCEEDED", "SKIPPED")
TOKEN_MARK = "~"  # gateway page tokens: "~<offset>~<REST token or empty>"

Row = Callable[[dict[str, Any]], dict[str, Any]]


def result_bytes(structured: Any, text: str | None = None, is_error: bool = False) -> int:
    """Size of the tool result as MCP serializes it: a text block (by default the structured content's
    JSON, as the gateway sends it) plus the structured content itself."""
    if text is None:
        text = dumps(structured)
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": is_error}
    if structured is not None:
        result["structuredContent"] = structured
    return len(json.dumps(result, separators=(",", ":"), ensure_ascii=False, default=str).encode()) + SDK_EXTRA


def dumps(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False, default=str)


def line(text: Any, limit: int = LINE) -> str | None:
    """One line of at most `limit` characters (None stays None)."""
    if text is None:
        return None
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3].rstrip() + "..."


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _drop_none(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


# --- operations ------------------------------------------------------------------------------------

def operation(op: dict[str, Any], polled: bool = False) -> dict[str, Any]:
    """What a watcher needs of an operation, never the steps' raw outputs: where it is (status, how many steps are
    done, the running step with its one-line message), its version to pass back, and the next call. A finished one
    says its last step's message (the result in a line) and an endpoint's url; a failed one its failed step and
    error. Every step, with outputs: detail="full". `polled`: a get_operation answer, where a running operation's id
    is said once (in `next`); a write's answer always names it."""
    steps = [s for s in op.get("steps") or [] if isinstance(s, dict)]
    done = sum(1 for s in steps if s.get("status") in DONE_STEP)
    status = op.get("status")
    error = _obj(op.get("error"))
    view: dict[str, Any] = {}
    if status in TERMINAL or not polled:  # the answer a write returns, and the last one, say what it is
        view |= {"id": op.get("id"), "kind": op.get("kind")}  # (a watch while it runs: `next` names the id)
    view |= {"status": status, "version": op.get("version"), "steps_done": f"{done}/{len(steps)}"}
    if (op.get("attempt") or 1) > 1:
        view["attempt"] = op.get("attempt")
    if status not in TERMINAL:
        current = next((s for s in steps if s.get("status") == "RUNNING"), None) or \
            next((s for s in reversed(steps) if s.get("status") in DONE_STEP), None)
        if current is not None:
            view["step"] = line(_step_line(current), 80)
        elif op.get("phase"):
            view["step"] = op.get("phase")
    elif status == "FAILED":
        view["phase"] = op.get("phase")
        failed = next((s for s in steps if s.get("status") == "FAILED"), None)
        if failed is not None:
            view["failed"] = _step(failed)
        if error:
            view["error"] = _drop_none({"code": error.get("code"), "message": line(error.get("message"), 300)})
    elif status == "SUCCEEDED":
        last = next((s for s in reversed(steps) if s.get("status") == "SUCCEEDED" and s.get("message")), None)
        if last is not None:
            view["result"] = line(last.get("message"), 200)
    results = _health_results(op)
    if results:
        view["results"] = results
    view["next"] = next_action(op)
    url = _url(op) if status == "SUCCEEDED" else None
    if url:  # said once
        view["url"] = url
        view["next"] = view["next"].replace(f"; it answers at {url}", "")
        view["result"] = str(view.get("result") or "").replace(f" at {url}", "") or None
    return _drop_none(view)


def _step_line(step: dict[str, Any]) -> str:
    """`name (STATUS): message` in a line; RUNNING goes without saying."""
    state = "" if step.get("status") == "RUNNING" else f" ({step.get('status')})"
    message = line(step.get("message"))
    return f"{step.get('name')}{state}" + (f": {message}" if message else "")


def _url(op: dict[str, Any]) -> str | None:
    return next((s.get("outputs", {}).get("url") for s in op.get("steps") or []
                 if isinstance(s, dict) and isinstance(s.get("outputs"), dict) and s["outputs"].get("url")), None)


def _health_results(op: dict[str, Any]) -> dict[str, Any] | None:
    """A finished deep health check's verdict: counts, and the first failed nodes with their failed checks."""
    result = _obj(op.get("result"))
    if op.get("kind") != "nodes.health_check" or "failed_node_ids" not in result:
        return None
    failed = [r for r in result.get("results") or [] if isinstance(r, dict) and not r.get("passed")]
    return {"passed": result.get("passed"), "failed": result.get("failed"),
            "failed_nodes": [{"node_id": r.get("node_id"),
                              "failed": [f"{c.get('check')}: {line(c.get('reason'), 100)}"
                                         for c in r.get("checks") or [] if isinstance(c, dict) and not c.get("passed")]}
                             for r in failed[:5]]}


def _step(step: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"name": step.get("name"), "status": step.get("status")}
    message = line(step.get("message"))
    if message:
        out["message"] = message
    error = step.get("error")
    if isinstance(error, dict) and error.get("code"):
        out["error"] = error["code"]  # the message is the step's message (or the operation's error)
    return out


def next_action(op: dict[str, Any]) -> str:
    """The call to make next, written as the call."""
    op_id, status = op.get("id"), op.get("status")
    tool = op.get("status_tool") or "get_operation"
    if status not in TERMINAL:
        return f'wait: {tool}(operation_id="{op_id}", version={op.get("version")}, wait_seconds=60)'
    if status == "FAILED":
        return (f'fix the cause, then retry_operation(operation_id="{op_id}") (resumes at the failed step); '
                f'{tool}(operation_id="{op_id}", detail="full") shows step outputs')
    if status == "CANCELLED":
        return f'none; retry_operation(operation_id="{op_id}") would resume it'
    call = result_call(op)
    url = _url(op)
    where = f"; it answers at {url}" if url else ""
    return f"done; {call} shows the result{where}" if call else "done"


def _call(tool: str, **args: Any) -> str:
    return f"{tool}(" + ", ".join(f'{k}="{v}"' for k, v in args.items() if v is not None) + ")"


def result_call(op: dict[str, Any]) -> str | None:
    """The status tool of what a finished operation acted on, with its arguments (not get_cluster for all)."""
    target = _obj(op.get("target"))
    kind, resource = str(op.get("kind") or ""), str(target.get("resource") or "")
    where = {"cluster": target.get("cluster"), "region": target.get("region")}
    if not where["cluster"]:
        return None
    request = _obj(op.get("request"))
    family, _, verb = kind.partition(".")
    if kind == "cluster.delete":
        return _call("list_clusters")
    if family == "job":
        _, namespace, name = [*resource.split("/", 2), "", ""][:3]
        if verb == "delete":
            return _call("list_jobs", **where)
        return _call("get_job", **where, job=name, **({"namespace": namespace} if namespace != "default" else {}))
    if family == "endpoint":
        return _call("list_endpoints", **where) if verb == "delete" else _call("get_endpoint", **where,
                                                                                 endpoint=resource)
    if family == "nodes":
        ids = [str(i) for i in (request.get("node_ids") or [])]
        if verb != "delete" and len(ids) == 1:
            return _call("get_node", **where, node_id=ids[0])
        return _call("list_nodes", **where)
    tool = {"model": "list_models", "features": "get_features", "pool": "list_pools", "storage": "list_storage",
            "namespace": "list_namespaces"}.get(family, "get_cluster")
    return _call(tool, **where)


def is_operation(data: Any) -> bool:
    return isinstance(data, dict) and str(data.get("id", "")).startswith("op-") and "steps" in data


# --- clusters --------------------------------------------------------------------------------------

def group(g: dict[str, Any]) -> dict[str, Any]:
    """An instance group: what it is and how many nodes it has (last known) against how many it should."""
    return _drop_none({
        "name": g.get("name"), "instance_type": g.get("instance_type"),
        "availability_zone": g.get("availability_zone"), "capacity_type": g.get("capacity_type"),
        "target_count": g.get("target_count", g.get("instance_count")), "current_count": g.get("current_count"),
        "counts_as_of": g.get("counts_as_of"), "status": g.get("status"),
        "training_plan_arn": g.get("training_plan_arn"), "efa_only": g.get("efa_only") or None,
    })


def cluster(c: dict[str, Any]) -> dict[str, Any]:
    eks = _obj(c.get("eks"))
    hyperpod = _obj(c.get("hyperpod"))
    ops = [o for o in c.get("operations") or [] if isinstance(o, dict)]
    latest = max(ops, key=lambda o: str(o.get("created_at") or "")) if ops else None
    return _drop_none({
        "name": c.get("name"), "status": c.get("status"), "active": c.get("active"),
        "managed": False if c.get("managed") is False else None, "kubernetes_version": c.get("kubernetes_version"),
        "node_recovery": c.get("node_recovery"),
        # an ACTIVE cluster's EKS is ACTIVE and HyperPod InService: said only when they differ
        "eks": eks.get("status") if eks.get("status") != "ACTIVE" else None,
        "hyperpod": None if (hp := hyperpod.get("status") or c.get("hyperpod_status")) == "InService" else hp,
        "instance_groups": [{k: v for k, v in group(g).items() if k != "counts_as_of"}
                            for g in c.get("instance_groups") or [] if isinstance(g, dict)],
        "dependencies": _ready_line(c.get("dependencies"), "name"),
        "storage": _storage_line(c.get("storage")),
        "latest_operation": f"{latest.get('id')} {latest.get('kind')} {latest.get('status')}" if latest else None,
    })


READY = ("ACTIVE", "SUCCEEDED", "READY", "AVAILABLE", "InService", "Ready", "Available")


def _ready_line(items: Any, key: str) -> str | None:
    """'12/12 ready' or '10/12 ready; not ready: coredns DEGRADED, ...', one line."""
    if not isinstance(items, list):
        return None
    rows = [i for i in items if isinstance(i, dict)]
    bad = [f"{i.get(key)} {i.get('status')}" for i in rows if i.get("status") not in READY]
    text = f"{len(rows) - len(bad)}/{len(rows)} ready"
    return line(f"{text}; not ready: {', '.join(bad)}" if bad else text)


def _storage_line(items: Any) -> str | None:
    if not isinstance(items, list):
        return None
    rows = [i for i in items if isinstance(i, dict)]
    if not rows:
        return "none"
    return line("; ".join(f"{i.get('name')} ({i.get('kind')}) {i.get('status')}" for i in rows))


def features(doc: dict[str, Any]) -> dict[str, Any]:
    """One line per feature: `ACTIVE v1.2.0`, `off (needs cert_manager, pod_identity_agent)`, `DEGRADED: why`,
    its settings and (tiered checkpointing) the broken links of its identity chain. The whole document:
    detail="full"."""
    out: dict[str, Any] = {}
    for name, v in doc.items():
        if not isinstance(v, dict):
            continue
        identity = _obj(v.get("identity"))
        broken = [str(k.get("name")) for k in identity.get("links") or [] if isinstance(k, dict)
                  and not k.get("intact")]
        pools = [f"{p.get('name')} ({','.join(p.get('instance_groups') or [])})" for p in v.get("node_pools") or []
                 if isinstance(p, dict)]
        status = str(v.get("status") or "")
        head = "off" if status == "DISABLED" or (not v.get("enabled") and not status) else status
        if v.get("version") and head != "off":
            head += f" {v.get('version')}"
        if v.get("reason") and status not in ("ACTIVE", "DISABLED"):
            head += f": {line(v.get('reason'), 120)}"
        extras = [f"{k}={v[k]}" for k in ("memory_percent", "cpu_limit", "consolidate_after", "disruption_budget")
                  if v.get(k) is not None]
        if v.get("instance_groups"):
            extras.append(f"groups={','.join(v['instance_groups'])}")
        if pools:
            extras.append(f"pools={'; '.join(pools)}")
        if identity and v.get("enabled") and broken:
            extras.append(f"broken links: {', '.join(broken)}")
        if head == "off" and v.get("depends_on"):
            extras.append(f"needs {', '.join(v['depends_on'])}")
        if head != "off" and v.get("required_by"):
            extras.append(f"required by {', '.join(v['required_by'])}")
        out[name] = head + (f" ({'; '.join(extras)})" if extras else "")
    return out


# --- list rows -------------------------------------------------------------------------------------

def _quota(q: dict[str, Any]) -> dict[str, Any]:
    return _drop_none({"instance_type": q.get("instance_type"), "available": q.get("available"),
                       "limit": q.get("limit")})


def _instance_type(t: dict[str, Any]) -> dict[str, Any]:
    acc = _obj(t.get("accelerator"))
    accelerator = None
    if acc:
        memory = f" {acc['memory_gib']:g} GiB" if isinstance(acc.get("memory_gib"), int | float) else ""
        accelerator = f"{acc.get('count')}x {acc.get('model') or acc.get('kind')}{memory}"
    return _drop_none({"name": t.get("name"), "accelerator": accelerator, "vcpus": t.get("vcpus"),
                       "memory_gib": t.get("memory_gib"),
                       "efa": t.get("efa_max_interfaces") if t.get("efa_supported") else 0})


def _training_plan(p: dict[str, Any]) -> dict[str, Any]:
    return _drop_none({k: p.get(k) for k in ("name", "arn", "status", "instance_type", "availability_zone",
                                             "available_instance_count", "start_time", "end_time")})


def _operation_row(o: dict[str, Any]) -> dict[str, Any]:
    target = _obj(o.get("target"))
    return _drop_none({"id": o.get("id"), "kind": o.get("kind"), "cluster": target.get("cluster"),
                       "region": target.get("region"), "resource": target.get("resource"),
                       "status": o.get("status"), "phase": o.get("phase"), "created_at": o.get("created_at")})


def _audit_row(r: dict[str, Any]) -> dict[str, Any]:
    who, target, result = _obj(r.get("principal")), _obj(r.get("target")), _obj(r.get("result"))
    return _drop_none({"at": r.get("at"), "who": who.get("name") or who.get("sub"), "role": who.get("role"),
                       "face": r.get("face"), "action": r.get("action"), "cluster": target.get("cluster"),
                       "resource": target.get("resource"), "status": result.get("status"),
                       "operation_id": result.get("operation_id"), "replay": r.get("replay") or None})


def _cluster_row(c: dict[str, Any]) -> dict[str, Any]:
    """A cluster in a list: where, its status, each group in a line (`accel ml.g5.8xlarge 2/2`: current of target,
    `?` when not known yet, as of `counts_as_of`), and the operation only while one runs or failed."""
    groups = [g for g in c.get("instance_groups") or [] if isinstance(g, dict)]
    as_of = sorted(str(g["counts_as_of"]) for g in groups if g.get("counts_as_of"))
    return _drop_none({
        "name": c.get("name"), "region": c.get("region"), "status": c.get("status"),
        "hyperpod_status": c.get("hyperpod_status") if c.get("status") != "ACTIVE" else None,
        "active": c.get("active") or None,
        # only what differs from a cluster PodStart created: imported, or external and importable
        "origin": c.get("origin") if c.get("origin") not in (None, "created") else None,
        "importable": c.get("importable") or None,
        "groups": [f"{g.get('name')} {g.get('instance_type')} "
                   f"{'?' if g.get('current_count') is None else g.get('current_count')}/"
                   f"{g.get('target_count', g.get('instance_count'))}" for g in groups] or None,
        "counts_as_of": as_of[0] if as_of else None,
        "operation_id": c.get("operation_id") if c.get("status") != "ACTIVE" else None,
    })


def _storage_row(v: dict[str, Any]) -> dict[str, Any]:
    pvc = _obj(v.get("pvc"))
    return _drop_none({"name": v.get("name"), "kind": v.get("kind"), "status": v.get("status"),
                       "bucket": v.get("bucket"), "prefix": v.get("prefix") or None,
                       "file_system_id": v.get("file_system_id"), "namespace": pvc.get("namespace"),
                       "pvc_phase": pvc.get("phase"), "service_account": v.get("service_account"),
                       "message": line(v.get("message"))})


def _second(at: Any) -> Any:
    """An ISO time to the second (2026-12-05T18:39:36.953000Z -> 2026-12-05T18:39:36Z)."""
    return re.sub(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.\d+", r"\1", at) if isinstance(at, str) else at


def _node_row(n: dict[str, Any], cluster: str | None = None) -> dict[str, Any]:
    """A node in a list: what it is, its health (only what is not fine), GPUs requested/allocatable, the repairs
    HyperPod made by itself, and for a node on the reboot or replace rung the call that fixes it (`fix`), written
    out for the user to approve."""
    last = _obj(n.get("last_action"))
    alloc, used = n.get("gpus_allocatable"), n.get("gpus_requested")
    rung = n.get("rung")
    row = _drop_none({
        "node_id": n.get("node_id"), "group": n.get("group"), "type": n.get("instance_type"),
        "status": n.get("status") if n.get("status") != "Running" else None, "health": n.get("health"),
        "ready": False if n.get("ready") is False else None,
        "deep_check": n.get("deep_health_check") if n.get("deep_health_check") not in (None, "Passed") else None,
        "fault": line(_second(n.get("last_fault")), 140),
        "gpus": f"{'?' if used is None else used}/{alloc}" if alloc else None,
        "auto_repairs": n.get("auto_repairs") or None,
        "last_action": (f"{last.get('action')} {last.get('at')}" + (" by hyperpod" if last.get("by") == "hyperpod"
                                                                    else "")) if last else None,
        "rung": rung if rung not in (None, "investigate") or n.get("healthy") is False else None})
    if cluster and rung in ("reboot", "replace") and n.get("node_id"):
        fault = str(n.get("last_fault") or "")
        why = (fault.partition(" ")[2] if fault[:4].isdigit() else fault) or f"health {n.get('health')}"
        args: dict[str, Any] = {"cluster": cluster, "node_ids": [n.get("node_id")], "reason": line(why, 80)}
        row["fix"] = ({"tool": "reboot_nodes", "args": args} if rung == "reboot"
                      else {"tool": "replace_nodes", "args": {**args, "confirm": "replace"}})
    return row


def _event_row(e: dict[str, Any]) -> dict[str, Any]:
    return _drop_none({"time": e.get("time"), "level": e.get("level"), "node_id": e.get("node_id"),
                       "group": e.get("group"), "description": line(e.get("description"))})


HEALTHY_CONDITION = {"Ready": "True", "MemoryPressure": "False", "DiskPressure": "False", "PIDPressure": "False",
                     "NetworkUnavailable": "False"}


def node(n: dict[str, Any]) -> dict[str, Any]:
    """A node's detail: its row, where it is, the conditions that are not what a healthy node shows (one line
    each), taints, pods, the last few events (one line each) and the ladder; labels and healthy conditions: the
    whole document (detail="full")."""
    pods = [p for p in n.get("pods") or [] if isinstance(p, dict)]
    events = [e for e in n.get("events") or [] if isinstance(e, dict)]
    conditions = [c for c in n.get("conditions") or [] if isinstance(c, dict)
                  and c.get("status") != HEALTHY_CONDITION.get(str(c.get("type")), "True")]
    ladder = _drop_none(dict(_obj(n.get("ladder")))) or None
    fault = str(n.get("last_fault") or "")
    me = f"Instance {n.get('node_id')}"

    def said(c: dict[str, Any]) -> str:  # a condition's message, unless the fault line says it already
        message = str(c.get("message") or "")
        return "" if message and message in fault else f": {message}" if message else ""

    return _drop_none({
        **_node_row(n), "zone": n.get("zone"),
        "status_message": line(n.get("status_message")) if n.get("status_message") != n.get("status") else None,
        "ladder": ladder,
        "conditions": [line(f"{c.get('type')} {c.get('status')} {c.get('reason') or ''}{said(c)}", 160)
                       for c in conditions] or None,
        "taints": [f"{t.get('key')}={t.get('value', '')}:{t.get('effect')}" for t in n.get("taints") or []
                   if isinstance(t, dict)] or None,
        "pods": [f"{p.get('namespace')}/{p.get('name')} {p.get('phase')}" for p in pods[:10]] or None,
        "pods_total": len(pods) if len(pods) > 10 else None,
        # the node's own events: "Instance <this node>" goes without saying
        "events": [line(f"{_second(e.get('time'))} {e.get('level')}: "
                        f"{str(e.get('description') or '').replace(me + ': ', '').replace(me + ' ', '')}", 140)
                   for e in events[:2]] or None,
        "events_more": len(events) - 2 if len(events) > 2 else None,
    })


def _param(spec: dict[str, Any]) -> str:
    """One recipe parameter in a few words: type, default, bounds or choices."""
    kind = spec.get("type") or "|".join(str(a.get("type")) for a in spec.get("anyOf") or [] if a.get("type"))
    out = [str(kind or "any")]
    if "enum" in spec:
        out = ["|".join(str(v) for v in spec["enum"])]
    if "default" in spec:
        out.append(f"={dumps(spec['default'])}")
    lo = spec.get("minimum", spec.get("exclusiveMinimum"))
    hi = spec.get("maximum", spec.get("exclusiveMaximum"))
    if lo is not None or hi is not None:
        out.append(f" [{'' if lo is None else lo}..{'' if hi is None else hi}]")
    return "".join(out)


def _recipe_row(r: dict[str, Any]) -> dict[str, Any]:
    params = _obj(_obj(r.get("parameters")).get("properties"))
    return _drop_none({"name": r.get("name"), "version": r.get("version"), "kind": r.get("kind"),
                       "example_image": r.get("example_image"),
                       "parameters": {k: _param(_obj(v)) for k, v in params.items()}})


def endpoint(e: dict[str, Any]) -> dict[str, Any]:
    """An endpoint: what serves, where, its live state, and what to call next; objects as `Kind/name`."""
    ready = e.get("status") == "READY"
    view = _drop_none({
        "name": e.get("name"), "mode": e.get("mode"), "engine": e.get("engine"), "model": e.get("model"),
        "instance_type": e.get("instance_type"), "gpus": e.get("gpus"),
        "replicas": e.get("replicas"), "ready_replicas": e.get("ready_replicas"), "status": e.get("status"),
        "state": e.get("state"), "message": line(e.get("message"), 300), "service": e.get("service"),
        "service_name": e.get("service_name") if e.get("service_name") != e.get("name") else None,
        "pool": e.get("pool"), "autoscaling": e.get("autoscaling") or None,
        "routing_strategy": e.get("routing_strategy"), "tiered_kv_cache": e.get("tiered_kv_cache") or None,
        "router": e.get("router") or None, "operation_id": None if ready else e.get("operation_id"),
        "url": e.get("url"), "ready": e.get("ready"), "how_to_call": e.get("how_to_call"),
        "api_key_required": e.get("api_key_required") or None,
        # its objects (Kind/name) while it is not serving: what to look at; all of them: detail="full"
        "objects": None if ready else [f"{o.get('kind')}/{o.get('name')}" for o in e.get("objects") or []
                                       if isinstance(o, dict)] or None,
    })
    if e.get("status") == "READY":
        view["next"] = (f'test: invoke_endpoint(cluster="{e.get("cluster")}", endpoint="{e.get("name")}", '
                        'messages=[...])')
    elif e.get("operation_id") and e.get("status") not in ("FAILED",):
        view["next"] = f'watch: get_operation(operation_id="{e.get("operation_id")}")'
    return view


def _endpoint_row(e: dict[str, Any]) -> dict[str, Any]:
    """One endpoint in a list: `serves` is the engine (self-managed) or `managed`; `ready` is ready/asked."""
    ready = e.get("ready_replicas")
    return _drop_none({"name": e.get("name"), "serves": e.get("engine") if e.get("mode") != "managed" else "managed",
                       "model": e.get("model"), "instance_type": e.get("instance_type"),
                       "ready": f"{'?' if ready is None else ready}/{e.get('replicas')}",
                       "service": f"model_pool {e.get('pool')}" if e.get("pool") else e.get("service"),
                       "status": e.get("status"), "message": line(e.get("message"))})


def _pool_row(p: dict[str, Any]) -> dict[str, Any]:
    """A pool: workers by model label and how many are ready; not every pod."""
    pods = [w for w in p.get("pods") or [] if isinstance(w, dict)]
    return _drop_none({"name": p.get("name"), "engine": p.get("engine"), "instance_type": p.get("instance_type"),
                       "gpus_per_worker": p.get("gpus_per_worker"), "workers": p.get("workers"),
                       "ready": sum(1 for w in pods if w.get("ready")), "by_model": p.get("by_model") or {}})


def job(j: dict[str, Any]) -> dict[str, Any]:
    """A job: status, budget, pods by phase and node, detections, and its MLflow experiment with the link."""
    b = _obj(j.get("budget"))
    pods = [p for p in j.get("pods") or [] if isinstance(p, dict)]
    m = _obj(j.get("mlflow"))
    return _drop_none({
        "name": j.get("name"), "namespace": j.get("namespace"), "kind": j.get("kind"), "recipe": j.get("recipe"),
        "status": j.get("status"), "waiting": line(j.get("waiting"), 240), "budget": b or None,
        "instance_type": j.get("instance_type"), "nodes": j.get("nodes"), "gpus_per_node": j.get("gpus_per_node"),
        "pods": [_drop_none({"name": p.get("name"), "node": p.get("node"), "phase": p.get("phase"),
                             "restarts": p.get("restarts") or None, "reason": line(p.get("reason"))})
                 for p in pods] or None,
        "detections": [line(f"{d.get('type')}: {d.get('message')}", 200) for d in j.get("detections") or []
                       if isinstance(d, dict)] or None,
        "started_at": j.get("started_at"), "ended_at": j.get("ended_at"),
        "outputs": _obj(j.get("data")).get("outputs"),
        "mlflow": _drop_none({"server": str(m.get("tracking_server_arn") or "").rpartition("/")[2] or None,
                              "experiment": m.get("experiment"), "url": m.get("url"),
                              "note": m.get("url_note")}) if m else None,
    })


def _mlflow_server(s: dict[str, Any]) -> dict[str, Any]:
    return _drop_none({"name": s.get("name"), "arn": s.get("arn"), "status": s.get("status"),
                       "usable": s.get("usable"), "size": s.get("size"), "mlflow_version": s.get("mlflow_version")})


def job_metrics(m: dict[str, Any]) -> dict[str, Any]:
    """Each series in a line: how many steps, the first and last (step, value), the lowest; not every point."""
    def one(s: dict[str, Any]) -> dict[str, Any]:
        pts = [p for p in s.get("points") or [] if isinstance(p, dict)]
        if not pts:
            return {"name": s.get("name"), "steps": 0}
        values: list[float] = [float(p["value"]) for p in pts if isinstance(p.get("value"), (int, float))]
        return {"name": s.get("name"), "steps": len(pts), "first": [pts[0].get("step"), pts[0].get("value")],
                "last": [pts[-1].get("step"), pts[-1].get("value")], "min": min(values) if values else None}
    return _drop_none({"source": m.get("source"), "run": m.get("run"), "pod": m.get("pod"), "note": m.get("note"),
                       "series": [one(s) for s in m.get("series") or [] if isinstance(s, dict)]})


def offerings(d: dict[str, Any]) -> dict[str, Any]:
    """Where an instance type can run: the type in a line, the quota, and the zones that offer it (spot, training
    plans with room); the zones that do not, by name."""
    inst, quota = _obj(d.get("instance")), _obj(d.get("quota"))
    acc = _obj(inst.get("accelerator"))
    what = [f"{acc.get('count')}x {acc.get('model') or acc.get('kind')}" + (
        f" {acc['memory_gib']:g} GiB" if isinstance(acc.get("memory_gib"), int | float) else "")] if acc else []
    what += [f"{inst.get('vcpus')} vCPU" if inst.get("vcpus") else "",
             f"{inst.get('memory_gib'):g} GiB" if isinstance(inst.get("memory_gib"), int | float) else "",
             "EFA" if inst.get("efa_supported") else ""]
    zones = [z for z in d.get("zones") or [] if isinstance(z, dict)]
    return _drop_none({
        "instance_type": d.get("instance_type"), "known": False if d.get("known") is False else None,
        "instance": ", ".join(w for w in what if w) or None,
        "quota": f"{quota.get('available')} available of {quota.get('limit')}" if quota else None,
        "zones": [_drop_none({"availability_zone": z.get("availability_zone"), "offered": True,
                              "spot": True if z.get("spot_offered") else None,
                              "quota_available": z.get("quota_available"),
                              "training_plans": [_training_plan(p) for p in z.get("training_plans") or []
                                                 if isinstance(p, dict)] or None})
                  for z in zones if z.get("offered")],
    })


def data_listing(d: dict[str, Any]) -> dict[str, Any]:
    """Your data: the buckets (where PodStart's is in pods, where a registered one is mounted), or one level of a
    folder (its folders, its files with their sizes)."""
    if d.get("roots"):
        return _drop_none({
            "roots": [_drop_none({"uri": r.get("uri"), "path": r.get("path"), "mounted": [
                f"{m.get('namespace')}: volume {m.get('storage')} at {m.get('path')} "
                f"({'read-only' if m.get('read_only') else 'read-write'})"
                for m in r.get("mounted") or [] if isinstance(m, dict)] or None})
                for r in d["roots"] if isinstance(r, dict)],
            "how": "name data as /data/<key> or s3://bucket/key (a registered bucket: mounted in the job's namespace)"})
    return _drop_none({
        "uri": d.get("uri"), "path": d.get("path"), "folders": d.get("folders") or None,
        "files": [f"{f.get('uri')} ({f.get('size')} B)" for f in d.get("files") or [] if isinstance(f, dict)] or None,
        "truncated": d.get("truncated") or None, "next_token": d.get("next_token")})


def invoke(r: dict[str, Any]) -> dict[str, Any]:
    """An answer: who answered, the message and token usage; not the engine's raw JSON (the message again)."""
    usage = _obj(_obj(r.get("response")).get("usage"))
    return _drop_none({"endpoint": r.get("endpoint"), "status": r.get("status"), "model": r.get("model"),
                       "content": r.get("content"), "usage": usage or None, "latency_ms": r.get("latency_ms"),
                       "truncated": r.get("truncated") or None})


ROWS: dict[str, Row] = {
    "list_nodes": _node_row,
    "list_cluster_events": _event_row,
    "list_recipes": _recipe_row,
    "list_storage": _storage_row,
    "list_endpoints": _endpoint_row,
    "list_endpoints_everywhere": lambda e: {"cluster": e.get("cluster"), "region": e.get("region"), **_endpoint_row(e)},
    "list_pools": _pool_row,
    "get_quotas": _quota,
    "list_instance_types": _instance_type,
    "list_training_plans": _training_plan,
    "list_mlflow_servers": _mlflow_server,
    "list_operations": _operation_row,
    "list_audit": _audit_row,
    "list_clusters": _cluster_row,
    "list_instance_groups": group,
}


def _plain_row(row: Any) -> Any:
    return _drop_none(row) if isinstance(row, dict) else row


# --- pages -----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Page:
    """Where a list answer starts (rows already shown of the REST page) and how many rows to show at most."""

    offset: int = 0
    limit: int | None = None
    rest_token: str | None = None  # the REST API's own token for the page being shown


def encode_token(offset: int, rest_token: str | None) -> str:
    return f"{TOKEN_MARK}{offset}{TOKEN_MARK}{rest_token or ''}"


def decode_token(token: str | None) -> tuple[int, str | None]:
    """(rows to skip, REST token). A token that is not the gateway's is the REST API's own."""
    if not token:
        return 0, None
    if token.startswith(TOKEN_MARK):
        offset, _, rest = token[len(TOKEN_MARK):].partition(TOKEN_MARK)
        if offset.isdigit():
            return int(offset), rest or None
    return 0, token


def list_key(data: dict[str, Any]) -> str | None:
    """The key of a list answer's rows: `items` by convention, else the one list of objects."""
    if isinstance(data.get("items"), list):
        return "items"
    keys = [k for k, v in data.items() if isinstance(v, list) and v and all(isinstance(r, dict) for r in v)]
    return keys[0] if len(keys) == 1 else None


def page(data: dict[str, Any], key: str, row: Row | None, at: Page, *, filters: tuple[str, ...] = (),
         used: frozenset[str] = frozenset(), budget: int = BUDGET) -> dict[str, Any]:
    """A list answer cut to what fits: rows `at.offset...` of this REST page, compacted, then `more` and a
    `next_token` when rows are left here (or the REST API has another page)."""
    shape = row or _plain_row
    rows = [shape(r) for r in data.get(key) or []]
    head = {k: v for k, v in data.items() if k not in (key, "next_token") and v is not None}
    rest_next = data.get("next_token") if isinstance(data.get("next_token"), str) else None
    start = min(max(at.offset, 0), len(rows))
    stop = len(rows) if at.limit is None else min(len(rows), start + at.limit)
    shown: list[Any] = []
    view: dict[str, Any] = {**head, key: shown}
    for r in rows[start:stop]:
        shown.append(r)
        if result_bytes(_with_more(view, key, len(rows) - start - len(shown), start + len(shown), at, rest_next,
                                   filters, used)) > budget and len(shown) > 1:
            shown.pop()
            break
    left = len(rows) - start - len(shown)
    result = _with_more(view, key, left, start + len(shown), at, rest_next, filters, used)
    return result if result_bytes(result) <= budget else fit(result, budget)  # one row alone is too big


def _with_more(view: dict[str, Any], key: str, left: int, next_offset: int, at: Page, rest_next: str | None,
               filters: tuple[str, ...], used: frozenset[str]) -> dict[str, Any]:
    if left <= 0 and not rest_next:
        return view
    # Rows left on this REST page: the same REST page again, further in; else the REST API's next page.
    token = encode_token(next_offset, at.rest_token) if left > 0 else encode_token(0, rest_next)
    count = f"{left} more" if left > 0 else "more"
    if left > 0 and rest_next:
        count += " on this page, and more pages"
    narrow = [f"{f}=" for f in filters if f not in used]
    ways = ([f"narrow with {', '.join(narrow)}"] if narrow else []) + [f'next_token="{token}"', 'detail="full"']
    return {**view, "next_token": token, "more": f"{count} {key}; " + " / ".join(ways)}


# --- the view a tool's answer gets -----------------------------------------------------------------

def compact(tool: str, data: Any, at: Page = Page(), *, filters: tuple[str, ...] = (),
            used: frozenset[str] = frozenset(), budget: int = BUDGET) -> Any:
    """The default view of one tool's successful REST answer, within `budget`."""
    if is_operation(data):
        return fit(operation(data, polled=tool == "get_operation"), budget)
    if isinstance(data, dict) and data.get("dry_run") is True and isinstance(data.get("changes"), list):
        return fit(plan(data), budget)
    if isinstance(data, dict) and isinstance(data.get("plan"), dict) and data.get("changed") is False:
        return fit({"changed": False, "plan": spec_plan(data["plan"])}, budget)  # apply_spec: nothing differs
    if isinstance(data, dict) and isinstance(data.get("documents"), list) and "summary" in data:
        return fit(spec_plan(data), budget)
    if tool == "get_cluster" and isinstance(data, dict):
        return fit(cluster(data), budget)
    if tool == "get_node" and isinstance(data, dict):
        return fit(node(data), budget)
    if tool == "get_job_logs" and isinstance(data, dict) and isinstance(data.get("lines"), list):
        return log_tail(data, budget)
    if tool == "get_endpoint" and isinstance(data, dict):
        return fit(endpoint(data), budget)
    if tool == "get_job" and isinstance(data, dict) and "budget" in data:
        return fit(job(data), budget)
    if tool == "invoke_endpoint" and isinstance(data, dict):
        return fit(invoke(data), budget)
    if tool == "get_job_metrics" and isinstance(data, dict) and isinstance(data.get("series"), list):
        return fit(job_metrics(data), budget)
    if tool == "find_capacity" and isinstance(data, dict) and isinstance(data.get("zones"), list):
        return fit(offerings(data), budget)
    if tool == "list_data" and isinstance(data, dict) and "how" in data:
        return fit(data_listing(data), budget)
    if tool == "get_cluster_gpus" and isinstance(data, dict) and isinstance(data.get("groups"), list):
        return fit({k: v for k, v in data.items() if k not in ("cluster", "region")}, budget)
    if tool == "get_features" and isinstance(data, dict):
        return fit(features(data), budget)
    if tool == "advise_capacity" and isinstance(data, dict) and isinstance(data.get("options"), list):
        return advice(data, budget)
    if tool == "update_features" and isinstance(data, dict) and isinstance(data.get("features"), dict):
        return fit({**data, "features": features(data["features"])}, budget)  # changed=false: the live state
    if isinstance(data, dict):
        key = list_key(data)
        if key is not None:
            row = ROWS.get(tool)
            if tool == "list_nodes":  # a row's `fix` is a call on this cluster
                where = data.get("cluster")
                return page({k: v for k, v in data.items() if k not in ("cluster", "region")}, key,
                            lambda n: _node_row(n, where), at, filters=filters, used=used, budget=budget)
            return page(data, key, row, at, filters=filters, used=used, budget=budget)
        if isinstance(data.get("instance_group"), dict):  # a scale that changed nothing
            return fit({**data, "instance_group": group(data["instance_group"])}, budget)
        if isinstance(data.get("endpoint"), dict):  # an endpoint update that changed nothing
            return fit({**data, "endpoint": endpoint(data["endpoint"])}, budget)
    return fit(data, budget)


def _option(o: dict[str, Any]) -> dict[str, Any]:
    """One advice option: where, what, when, what it costs, and the tool call that acts on it."""
    price = _obj(o.get("price"))
    quota = _obj(o.get("quota"))
    zones = [f"{g.get('availability_zone')} x{g.get('instance_count')}" for g in o.get("groups") or []
             if isinstance(g, dict)]
    view: dict[str, Any] = {
        "rank": o.get("rank"), "region": o.get("region"), "zones": zones, "instance_type": o.get("instance_type"),
        "count": o.get("instance_count"), "gpus": o.get("gpus"), "capacity": o.get("capacity_type"),
        "start": "now" if o.get("starts_now") else o.get("earliest_start"),
        "usd_per_hour": price.get("hourly_usd"), "usd_total": price.get("total_usd"),
        "paid": "already" if price.get("already_paid") else None,
        "quota_left_after": quota.get("headroom_after") if quota else None,
        "spot_score": o.get("spot_score")}
    needs = [r for r in o.get("requires") or [] if isinstance(r, dict)]
    if needs:
        view["first"] = [{"tool": "purchase_training_plan", "args": r.get("body"),
                          "upfront": f"{r.get('upfront_fee')} {r.get('currency')}"} for r in needs]
    create = _obj(o.get("create_cluster"))
    adds = [a for a in o.get("add_instance_groups") or [] if isinstance(a, dict)]
    if create:
        view["then"] = {"tool": "create_cluster", "args": create.get("body")}
    elif adds:
        view["then"] = [{"tool": "add_instance_group", "args": {
            "cluster": str(a.get("path", "")).split("/")[3] if str(a.get("path", "")).count("/") >= 3 else None,
            "region": o.get("region"), **_obj(a.get("body"))}} for a in adds]
    return _drop_none(view)


def _miss(m: dict[str, Any]) -> str:
    caps = "/".join(m.get("capacity_types") or []) or "any capacity"
    where = " ".join(str(x) for x in (m.get("region"), m.get("instance_type"), caps) if x)
    fix = f" (fits with: {m['would_fit_with']})" if m.get("would_fit_with") else ""
    return line(f"{where}: {m.get('reason')}: {m.get('detail')}{fix}", 200) or ""


def advice(data: dict[str, Any], budget: int = BUDGET) -> dict[str, Any]:
    """The capacity advice: every option with the calls that act on it (never cut inside a call's arguments), the
    near misses one line each; rows go from the tail (counted) until the answer fits."""
    options = [_option(o) for o in data.get("options") or [] if isinstance(o, dict)]
    misses = [_miss(m) for m in data.get("near_misses") or [] if isinstance(m, dict)]
    more_options = int(data.get("options_more") or 0)
    more_misses = int(data.get("near_misses_more") or 0)

    def build() -> dict[str, Any]:
        return _drop_none({
            "summary": data.get("summary"), "ranking": "earliest start, then cheapest, then fewer instances",
            "options": options, "options_more": more_options or None,
            "near_misses": misses, "near_misses_more": more_misses or None,
            "unavailable": data.get("unavailable") or None,
            "next": ("show the user the options; for the one chosen, call `first` (if any: admin, dry_run shows the "
                     "fee) then `then`" if options else "nothing fits: the near misses say what would")})

    view = build()
    while result_bytes(view) > budget and (len(misses) > 3 or len(options) > 1):
        if len(misses) > 3:
            misses.pop()
            more_misses += 1
        else:
            options.pop()
            more_options += 1
        view = build()
    return view if result_bytes(view) <= budget else fit(view, budget)


def _kinds(kinds: dict[str, int]) -> str:
    """'EC2: VPC, Subnet x5; IAM: Role x3; Kubernetes: DaemonSet x4': the kinds of object one action changes, by
    service, with their counts."""
    groups: dict[str, list[str]] = {}
    for kind, n in kinds.items():
        if kind.startswith("AWS::"):
            service, _, name = kind.removeprefix("AWS::").partition("::")
        elif kind.startswith("Kubernetes "):
            service, name = "Kubernetes", kind.removeprefix("Kubernetes ")
        elif kind == "eks-addon":
            service, name = "EKS", "add-on"
        else:
            service, name = "", kind
        groups.setdefault(service, []).append(name if n == 1 else f"{name} x{n}")
    parts = []
    for svc, names in groups.items():
        if svc == "Kubernetes" and len(names) > 4:  # many small objects: how many (detail="full" names them)
            n = sum(kinds[k] for k in kinds if k.startswith("Kubernetes "))
            parts.append(f"Kubernetes: {n} objects ({', '.join(names[:3])}, ...)")
        else:
            parts.append(f"{svc}: {', '.join(names)}" if svc else ", ".join(names))
    return "; ".join(parts)


def _cost_line(x: dict[str, Any]) -> str:
    if x.get("paid"):
        return "paid"
    return f"{x.get('hourly')} USD/h" if x.get("hourly") is not None else "no price"


def plan(data: dict[str, Any]) -> dict[str, Any]:
    """A dry run's plan: per action, the kinds of object changed with their counts, by service ("EC2: VPC,
    Subnet x5; ..."), the quota lines that matter, the cost in a line per item, where a job's or endpoint's pods
    would run (`placement`), the warnings. detail="full" names every object."""
    changes = [c for c in data["changes"] if isinstance(c, dict)]
    counts: dict[str, dict[str, int]] = {}
    for c in changes:
        if c.get("action") != "none":
            per = counts.setdefault(str(c.get("action")), {})
            per[str(c.get("kind"))] = per.get(str(c.get("kind")), 0) + 1
    cost = data.get("cost") or {}
    lines = [x for x in cost.get("lines", []) if isinstance(x, dict)]
    sources = sorted({str(x.get("source")) for x in lines})
    quota = [f"{q.get('instance_type')}: {q.get('requested')} more, {q.get('in_use')} in use of {q.get('limit')}"
             + ("" if q.get("ok") else " (EXCEEDS)") for q in data.get("quota", []) if isinstance(q, dict)]
    unchanged = sum(1 for c in changes if c.get("action") == "none")
    return _drop_none({
        "dry_run": True, "kind": data.get("kind"),
        "changes": {a: _kinds(per) for a, per in counts.items()}, "unchanged": unchanged or None,
        "quota": quota or None,
        "cost": _drop_none({
            "hourly_usd": cost.get("hourly"),  # a month is 730 of them (detail="full": monthly_estimate)
            "lines": [f"{x.get('item')} x{x.get('count'):g}: " + _cost_line(x) for x in lines] or None,
            "source": "; ".join(sources) or None,
            "upfront_usd": cost.get("upfront")}),
        "placement": _obj(data.get("placement")).get("summary") if data.get("placement") else None,
        "warnings": data.get("warnings") or None,
        "next": "ask the user once (changes, cost, warnings); then the same call without dry_run"})


def spec_plan(data: dict[str, Any]) -> dict[str, Any]:
    """A spec plan: per document its action, each field old -> new, the child operations with their hourly cost
    (or why they have no plan yet); the summary, the total cost, the warnings. detail="full": every child plan."""
    docs = []
    for d in data.get("documents") or []:
        if not isinstance(d, dict):
            continue
        ops = [_drop_none({"op": f"{o.get('kind')} {o.get('resource')}", "phase": o.get("phase"),
                           "hourly_usd": ((o.get("plan") or {}).get("cost") or {}).get("hourly"),
                           "note": line(o.get("note"))})
               for o in d.get("operations") or [] if isinstance(o, dict)]
        docs.append(_drop_none({
            "document": d.get("index"), "kind": d.get("kind"), "name": d.get("name"), "action": d.get("action"),
            "diffs": [f"{f.get('change')} {f.get('path')}: {dumps(f.get('old'))} -> {dumps(f.get('new'))}"
                      + (f" ({f.get('note')})" if f.get("note") else "")
                      for f in d.get("diffs") or [] if isinstance(f, dict)] or None,
            "operations": ops or None, "warnings": d.get("warnings") or None}))
    cost = data.get("cost") or {}
    changed = bool(data.get("changed"))
    return {"changed": changed, "cluster": data.get("cluster"), "region": data.get("region"),
            "summary": data.get("summary"), "documents": docs,
            "cost": {"hourly_usd": cost.get("hourly"), "monthly_estimate_usd": cost.get("monthly_estimate")},
            "warnings": data.get("warnings") or [],
            "next": ("show the user the diffs and the cost; ask once, then apply_spec with the same documents"
                     if changed else "nothing differs: nothing to apply")}


def log_tail(data: dict[str, Any], budget: int = BUDGET) -> dict[str, Any]:
    """A log answer within the budget: the newest lines are the ones kept (long lines cut), and `truncated`
    says older ones were left out (`tail` and `limit_bytes` ask the REST API for fewer)."""
    lines = [line(x, 400) or "" for x in data["lines"]]
    view = {**data, "lines": lines}
    while lines and result_bytes(view) > budget:
        lines.pop(0)
        view = {**data, "lines": lines, "truncated": True}
    return view


def fit(data: Any, budget: int = BUDGET) -> Any:
    """Any answer within the budget: the longest lists lose their tail rows first (saying how many), then
    long strings are cut. Views are built to fit; this is the guarantee for answers nobody planned for."""
    if result_bytes(data) <= budget or not isinstance(data, dict | list):
        return data
    work = json.loads(dumps(data))
    for _ in range(10_000):
        if result_bytes(work) <= budget:
            return work
        if not _shrink(work):
            break
    return {"truncated": True, "note": 'the answer does not fit the compact budget; pass detail="full"',
            "keys": sorted(work)[:40] if isinstance(work, dict) else None}


def _shrink(node: Any) -> bool:
    """One step smaller: drop the last row of the longest list (noting how many went), else cut the longest
    string. False when nothing is left to shrink."""
    lists: list[tuple[int, list[Any], Any, Any]] = []
    strings: list[tuple[int, Any, Any]] = []

    def walk(n: Any, parent: Any, key: Any) -> None:
        if isinstance(n, dict):
            for k, v in n.items():
                walk(v, n, k)
        elif isinstance(n, list):
            if len(n) > 1:
                lists.append((len(dumps(n)), n, parent, key))
            for i, v in enumerate(n):
                walk(v, n, i)
        elif isinstance(n, str) and len(n) > 80:
            strings.append((len(n), parent, key))

    walk(node, None, None)
    if lists:
        _, rows, parent, key = max(lists, key=lambda t: t[0])
        rows.pop()
        if isinstance(parent, dict) and isinstance(key, str):
            note = f"{key}_omitted"
            parent[note] = int(parent.get(note, 0)) + 1
        return True
    if strings:
        size, parent, key = max(strings, key=lambda t: t[0])
        parent[key] = parent[key][: size // 2] + "..."
        return True
    return False
