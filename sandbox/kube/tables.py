"""Server-side printing (`Accept: application/json;as=Table`): the columns `kubectl get` shows, computed by the API
server as Kubernetes 1.32's printers do for the built-in kinds (nodes: STATUS, ROLES, AGE, VERSION; pods: READY,
STATUS, RESTARTS, AGE; `-o wide` adds the priority-1 columns), and from a CRD's `additionalPrinterColumns`
(JSONPath, `date` columns as ages) for custom resources."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sandbox.kube.registry import ResourceType
from sandbox.kube.selectors import selector_string
from sandbox.kube.store import get_path

Obj = dict[str, Any]
Cell = Callable[[Obj], Any]
# (name, cell, priority, type, format)
Column = tuple[str, Cell, int, str, str]


def human_duration(seconds: float) -> str:
    """apimachinery's duration.HumanDuration."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return f"{minutes}m{s % 60}s" if s % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d{hours % 24}h" if hours % 24 else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        years, days = hours // 24 // 365, (hours // 24) % 365
        return f"{years}y{days}d" if days else f"{years}y"
    return f"{hours // 24 // 365}y"


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    for fmt in ("%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S.%fZ"):
        try:
            return datetime.strptime(value, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def since(value: Any) -> str:
    at = _parse_time(value)
    if at is None:
        return "<unknown>"
    return human_duration((datetime.now(UTC) - at).total_seconds())


def _age(o: Obj) -> str:
    return since(get_path(o, "metadata.creationTimestamp"))


def _col(name: str, cell: Cell, priority: int = 0, kind: str = "string", fmt: str = "") -> Column:
    return (name, cell, priority, kind, fmt)


AGE = _col("Age", _age)
CREATED_AT = _col("Created At", lambda o: get_path(o, "metadata.creationTimestamp") or "", kind="date")


def _containers(o: Obj, template: str = "spec.template.spec") -> list[Obj]:
    return list(get_path(o, f"{template}.containers") or [])


def _names(o: Obj, template: str = "spec.template.spec") -> str:
    return ",".join(c.get("name", "") for c in _containers(o, template))


def _images(o: Obj, template: str = "spec.template.spec") -> str:
    return ",".join(c.get("image", "") for c in _containers(o, template))


def _selector(o: Obj) -> str:
    sel = get_path(o, "spec.selector")
    return (selector_string(sel) if isinstance(sel, dict) else "") or "<none>"


# ------------------------------------------------------------------------------------------------ pods


def pod_status(o: Obj) -> str:
    """printPod's STATUS: the phase, or what holds a container (waiting/terminated reason), or Terminating."""
    status = o.get("status") or {}
    reason = status.get("reason") or status.get("phase") or "Pending"
    init_statuses = status.get("initContainerStatuses") or []
    initializing = False
    for i, c in enumerate(init_statuses):
        state = c.get("state") or {}
        term, wait = state.get("terminated"), state.get("waiting")
        if term and term.get("exitCode") == 0:
            continue
        if term:
            reason = "Init:" + (term.get("reason") or f"ExitCode:{term.get('exitCode')}")
        elif wait and wait.get("reason") and wait["reason"] != "PodInitializing":
            reason = "Init:" + wait["reason"]
        else:
            reason = f"Init:{i}/{len(get_path(o, 'spec.initContainers') or [])}"
        initializing = True
        break
    if not initializing:
        has_running = False
        for c in reversed(status.get("containerStatuses") or []):
            state = c.get("state") or {}
            wait, term = state.get("waiting"), state.get("terminated")
            if wait and wait.get("reason"):
                reason = wait["reason"]
            elif term and term.get("reason"):
                reason = term["reason"]
            elif term:
                reason = f"Signal:{term['signal']}" if term.get("signal") else f"ExitCode:{term.get('exitCode')}"
            elif c.get("ready") and state.get("running") is not None:
                has_running = True
        if reason == "Completed" and has_running:
            ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])
            reason = "Running" if ready else "NotReady"
    if get_path(o, "metadata.deletionTimestamp"):
        reason = "Unknown" if status.get("reason") == "NodeLost" else "Terminating"
    return str(reason)


def _pod_ready(o: Obj) -> str:
    statuses = get_path(o, "status.containerStatuses") or []
    total = len(get_path(o, "spec.containers") or [])
    return f"{sum(1 for c in statuses if c.get('ready'))}/{total}"


def _pod_restarts(o: Obj) -> str:
    statuses = get_path(o, "status.containerStatuses") or []
    restarts = sum(int(c.get("restartCount") or 0) for c in statuses)
    last = max((get_path(c, "lastState.terminated.finishedAt") or "" for c in statuses), default="")
    return f"{restarts} ({since(last)} ago)" if restarts and last else str(restarts)


def _readiness_gates(o: Obj) -> str:
    gates = get_path(o, "spec.readinessGates") or []
    if not gates:
        return "<none>"
    conds = {c.get("type"): c.get("status") for c in get_path(o, "status.conditions") or []}
    return f"{sum(1 for g in gates if conds.get(g.get('conditionType')) == 'True')}/{len(gates)}"


# ------------------------------------------------------------------------------------------------ nodes


def _node_status(o: Obj) -> str:
    ready = next((c.get("status") for c in get_path(o, "status.conditions") or [] if c.get("type") == "Ready"), None)
    out = "Ready" if ready == "True" else ("NotReady" if ready == "False" else "Unknown")
    return out + (",SchedulingDisabled" if get_path(o, "spec.unschedulable") else "")


def _node_roles(o: Obj) -> str:
    labels = get_path(o, "metadata.labels") or {}
    roles = sorted({k.split("/", 1)[1] for k in labels if k.startswith("node-role.kubernetes.io/") and "/" in k}
                   | ({labels["kubernetes.io/role"]} if labels.get("kubernetes.io/role") else set()))
    return ",".join(r for r in roles if r) or "<none>"


def _address(o: Obj, kind: str) -> str:
    return next((a.get("address") for a in get_path(o, "status.addresses") or [] if a.get("type") == kind),
                None) or "<none>"


# ------------------------------------------------------------------------------------------------ services


def _external_ip(o: Obj) -> str:
    spec = o.get("spec") or {}
    kind = spec.get("type", "ClusterIP")
    if kind == "ExternalName":
        return str(spec.get("externalName") or "<none>")
    ips = list(spec.get("externalIPs") or [])
    if kind == "LoadBalancer":
        ingress = get_path(o, "status.loadBalancer.ingress") or []
        ips += [i.get("ip") or i.get("hostname") for i in ingress if i.get("ip") or i.get("hostname")]
        return ",".join(ips) or "<pending>"
    return ",".join(ips) or "<none>"


def _ports(o: Obj) -> str:
    out = []
    for p in get_path(o, "spec.ports") or []:
        port = f"{p.get('port')}"
        if p.get("nodePort"):
            port += f":{p['nodePort']}"
        out.append(f"{port}/{p.get('protocol', 'TCP')}")
    return ",".join(out) or "<none>"


def _service_selector(o: Obj) -> str:
    sel = get_path(o, "spec.selector") or {}
    return ",".join(f"{k}={v}" for k, v in sorted(sel.items())) or "<none>"


# ------------------------------------------------------------------------------------------------ jobs


def _job_status(o: Obj) -> str:
    conds = {c.get("type"): c.get("status") for c in get_path(o, "status.conditions") or []}
    for kind in ("Failed", "Complete", "Suspended"):
        if conds.get(kind) == "True":
            return kind
    if conds.get("FailureTarget") == "True":
        return "FailureTarget"
    if conds.get("SuccessCriteriaMet") == "True":
        return "SuccessCriteriaMet"
    return "Running"


def _job_completions(o: Obj) -> str:
    completions = get_path(o, "spec.completions")
    succeeded = get_path(o, "status.succeeded") or 0
    if completions is None:
        parallelism = get_path(o, "spec.parallelism") or 1
        return f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"
    return f"{succeeded}/{completions}"


def _job_duration(o: Obj) -> str:
    start = _parse_time(get_path(o, "status.startTime"))
    if start is None:
        return ""
    end = _parse_time(get_path(o, "status.completionTime")) or datetime.now(UTC)
    return human_duration((end - start).total_seconds())


# ------------------------------------------------------------------------------------------------ the rest


def _count(path: str) -> Cell:
    return lambda o: len(get_path(o, path) or {})


def _quantity_pairs(o: Obj, prefix: str) -> str:
    hard = get_path(o, "spec.hard") or {}
    used = get_path(o, "status.used") or {}
    keys = sorted(k for k in hard if (k.startswith(prefix) if prefix else not k.startswith(("limits.", "requests."))
                                      or k.startswith("requests.")))
    return ", ".join(f"{k}: {used.get(k, '0')}/{hard[k]}" for k in keys)


def _binding_subjects(kind: str) -> Cell:
    def cell(o: Obj) -> str:
        subjects = [s for s in o.get("subjects") or [] if s.get("kind") == kind]
        if kind == "ServiceAccount":
            return ", ".join(f"{s.get('namespace', '')}/{s.get('name', '')}" for s in subjects)
        return ", ".join(str(s.get("name", "")) for s in subjects)
    return cell


def _event_object(o: Obj) -> str:
    ref = o.get("involvedObject") or o.get("regarding") or {}
    return f"{str(ref.get('kind', '')).lower()}/{ref.get('name', '')}"


def _event_last_seen(o: Obj) -> str:
    return since(o.get("lastTimestamp") or o.get("eventTime") or get_path(o, "metadata.creationTimestamp"))


def _storage_class_name(o: Obj) -> str:
    name = str(get_path(o, "metadata.name"))
    default = (get_path(o, "metadata.annotations") or {}).get("storageclass.kubernetes.io/is-default-class")
    return f"{name} (default)" if default == "true" else name


def _ready_of(ready: str, want: str) -> Cell:
    return lambda o: f"{get_path(o, ready) or 0}/{get_path(o, want) or 0}"


def _num(path: str) -> Cell:
    return lambda o: get_path(o, path) or 0


def _text(path: str, empty: str = "") -> Cell:
    return lambda o: get_path(o, path) or empty


def _hpa_targets(o: Obj) -> str:
    """`cpu: 45%/70%` per metric (`<unknown>` until the autoscaler measured it), as the printer shows it."""
    spec_metrics = get_path(o, "spec.metrics") or []
    if not spec_metrics and get_path(o, "spec.targetCPUUtilizationPercentage") is not None:  # autoscaling/v1
        current = get_path(o, "status.currentCPUUtilizationPercentage")
        now = f"{current}%" if current is not None else "<unknown>"
        return f"cpu: {now}/{get_path(o, 'spec.targetCPUUtilizationPercentage')}%"
    currents = {(m.get("resource") or {}).get("name"): (m.get("resource") or {}).get("current") or {}
                for m in get_path(o, "status.currentMetrics") or [] if m.get("type") == "Resource"}
    out = []
    for m in spec_metrics:
        resource = m.get("resource") or {}
        if m.get("type") != "Resource":
            out.append(f"<unknown>/{m.get('type', '')}")
            continue
        target = resource.get("target") or {}
        current = currents.get(resource.get("name")) or {}
        if target.get("averageUtilization") is not None:
            used = current.get("averageUtilization")
            out.append(f"{resource.get('name')}: {f'{used}%' if used is not None else '<unknown>'}/"
                       f"{target['averageUtilization']}%")
        else:
            wanted = target.get("averageValue") or target.get("value")
            out.append(f"{resource.get('name')}: {current.get('averageValue') or '<unknown>'}/{wanted}")
    return ", ".join(out) or "<none>"


WORKLOAD_WIDE = [_col("Containers", _names, 1), _col("Images", _images, 1), _col("Selector", _selector, 1)]

# the columns after Name, by (group, plural)
BUILTIN: dict[tuple[str, str], list[Column]] = {
    ("", "pods"): [
        _col("Ready", _pod_ready), _col("Status", pod_status), _col("Restarts", _pod_restarts), AGE,
        _col("IP", _text("status.podIP", "<none>"), 1), _col("Node", _text("spec.nodeName", "<none>"), 1),
        _col("Nominated Node", _text("status.nominatedNodeName", "<none>"), 1),
        _col("Readiness Gates", _readiness_gates, 1),
    ],
    ("", "nodes"): [
        _col("Status", _node_status), _col("Roles", _node_roles), AGE,
        _col("Version", _text("status.nodeInfo.kubeletVersion")),
        _col("Internal-IP", lambda o: _address(o, "InternalIP"), 1),
        _col("External-IP", lambda o: _address(o, "ExternalIP"), 1),
        _col("OS-Image", _text("status.nodeInfo.osImage"), 1),
        _col("Kernel-Version", _text("status.nodeInfo.kernelVersion"), 1),
        _col("Container-Runtime", _text("status.nodeInfo.containerRuntimeVersion"), 1),
    ],
    ("", "namespaces"): [_col("Status", _text("status.phase")), AGE],
    ("", "services"): [
        _col("Type", _text("spec.type", "ClusterIP")), _col("Cluster-IP", _text("spec.clusterIP", "<none>")),
        _col("External-IP", _external_ip), _col("Port(s)", _ports), AGE, _col("Selector", _service_selector, 1),
    ],
    ("", "configmaps"): [_col("Data", lambda o: len(o.get("data") or {}) + len(o.get("binaryData") or {}),
                              kind="integer"), AGE],
    ("", "secrets"): [_col("Type", _text("type")), _col("Data", _count("data"), kind="integer"), AGE],
    ("", "serviceaccounts"): [_col("Secrets", _count("secrets"), kind="integer"), AGE],
    ("", "events"): [
        _col("Last Seen", _event_last_seen), _col("Type", _text("type")), _col("Reason", _text("reason")),
        _col("Object", _event_object), _col("Subobject", _text("involvedObject.fieldPath"), 1),
        _col("Source", lambda o: get_path(o, "source.component") or get_path(o, "reportingController") or "", 1),
        _col("Message", _text("message")),
        _col("First Seen", lambda o: since(o.get("firstTimestamp") or o.get("eventTime")), 1),
        _col("Count", lambda o: o.get("count") or 1, 1, kind="integer"),
        _col("Name", _text("metadata.name"), 1),
    ],
    ("", "endpoints"): [
        _col("Endpoints", lambda o: ",".join(f"{a.get('ip')}:{p.get('port')}" for s in o.get("subsets") or []
                                             for a in s.get("addresses") or [] for p in s.get("ports") or [])
             or "<none>"), AGE,
    ],
    ("", "persistentvolumeclaims"): [
        _col("Status", _text("status.phase")), _col("Volume", _text("spec.volumeName")),
        _col("Capacity", _text("status.capacity.storage")),
        _col("Access Modes", lambda o: _access_modes(get_path(o, "status.accessModes") or [])),
        _col("StorageClass", _text("spec.storageClassName", "<unset>")),
        _col("VolumeAttributesClass", _text("spec.volumeAttributesClassName", "<unset>")), AGE,
        _col("VolumeMode", _text("spec.volumeMode", "Filesystem"), 1),
    ],
    ("", "persistentvolumes"): [
        _col("Capacity", _text("spec.capacity.storage")),
        _col("Access Modes", lambda o: _access_modes(get_path(o, "spec.accessModes") or [])),
        _col("Reclaim Policy", _text("spec.persistentVolumeReclaimPolicy")), _col("Status", _text("status.phase")),
        _col("Claim", lambda o: "/".join(filter(None, (get_path(o, "spec.claimRef.namespace"),
                                                       get_path(o, "spec.claimRef.name"))))),
        _col("StorageClass", _text("spec.storageClassName")),
        _col("VolumeAttributesClass", _text("spec.volumeAttributesClassName", "<unset>")),
        _col("Reason", _text("status.reason")), AGE, _col("VolumeMode", _text("spec.volumeMode", "Filesystem"), 1),
    ],
    ("", "resourcequotas"): [AGE, _col("Request", lambda o: _quantity_pairs(o, "")),
                             _col("Limit", lambda o: _quantity_pairs(o, "limits."))],
    ("apps", "deployments"): [
        _col("Ready", _ready_of("status.readyReplicas", "spec.replicas")),
        _col("Up-to-date", _num("status.updatedReplicas"), kind="integer"),
        _col("Available", _num("status.availableReplicas"), kind="integer"), AGE, *WORKLOAD_WIDE,
    ],
    ("apps", "replicasets"): [
        _col("Desired", _num("spec.replicas"), kind="integer"), _col("Current", _num("status.replicas"),
                                                                     kind="integer"),
        _col("Ready", _num("status.readyReplicas"), kind="integer"), AGE, *WORKLOAD_WIDE,
    ],
    ("apps", "statefulsets"): [_col("Ready", _ready_of("status.readyReplicas", "spec.replicas")), AGE,
                               *WORKLOAD_WIDE[:2]],
    ("apps", "daemonsets"): [
        _col("Desired", _num("status.desiredNumberScheduled"), kind="integer"),
        _col("Current", _num("status.currentNumberScheduled"), kind="integer"),
        _col("Ready", _num("status.numberReady"), kind="integer"),
        _col("Up-to-date", _num("status.updatedNumberScheduled"), kind="integer"),
        _col("Available", _num("status.numberAvailable"), kind="integer"),
        _col("Node Selector", lambda o: ",".join(f"{k}={v}" for k, v in sorted(
            (get_path(o, "spec.template.spec.nodeSelector") or {}).items())) or "<none>"), AGE, *WORKLOAD_WIDE,
    ],
    ("batch", "jobs"): [
        _col("Status", _job_status), _col("Completions", _job_completions), _col("Duration", _job_duration), AGE,
        *WORKLOAD_WIDE,
    ],
    ("batch", "cronjobs"): [
        _col("Schedule", _text("spec.schedule")), _col("Timezone", _text("spec.timeZone", "<none>")),
        _col("Suspend", lambda o: "True" if get_path(o, "spec.suspend") else "False"),
        _col("Active", _count("status.active"), kind="integer"),
        _col("Last Schedule", lambda o: since(get_path(o, "status.lastScheduleTime"))
             if get_path(o, "status.lastScheduleTime") else "<none>"), AGE,
        _col("Containers", lambda o: _names(o, "spec.jobTemplate.spec.template.spec"), 1),
        _col("Images", lambda o: _images(o, "spec.jobTemplate.spec.template.spec"), 1),
        _col("Selector", lambda o: "<none>", 1),
    ],
    ("rbac.authorization.k8s.io", "roles"): [CREATED_AT],
    ("rbac.authorization.k8s.io", "clusterroles"): [CREATED_AT],
    ("rbac.authorization.k8s.io", "rolebindings"): [
        _col("Role", lambda o: f"{get_path(o, 'roleRef.kind')}/{get_path(o, 'roleRef.name')}"), AGE,
        _col("Users", _binding_subjects("User"), 1), _col("Groups", _binding_subjects("Group"), 1),
        _col("ServiceAccounts", _binding_subjects("ServiceAccount"), 1),
    ],
    ("apiextensions.k8s.io", "customresourcedefinitions"): [CREATED_AT],
    ("scheduling.k8s.io", "priorityclasses"): [
        _col("Value", _num("value"), kind="integer"),
        _col("Global-Default", lambda o: bool(o.get("globalDefault")), kind="boolean"), AGE,
        _col("PreemptionPolicy", _text("preemptionPolicy", "PreemptLowerPriority")),
    ],
    ("policy", "poddisruptionbudgets"): [
        _col("Min Available", _text("spec.minAvailable", "N/A")),
        _col("Max Unavailable", _text("spec.maxUnavailable", "N/A")),
        _col("Allowed Disruptions", _num("status.disruptionsAllowed"), kind="integer"), AGE,
    ],
    ("storage.k8s.io", "storageclasses"): [
        _col("Provisioner", _text("provisioner")), _col("ReclaimPolicy", _text("reclaimPolicy", "Delete")),
        _col("VolumeBindingMode", _text("volumeBindingMode", "Immediate")),
        _col("AllowVolumeExpansion", lambda o: bool(o.get("allowVolumeExpansion")), kind="boolean"), AGE,
    ],
    ("networking.k8s.io", "ingresses"): [
        _col("Class", _text("spec.ingressClassName", "<none>")),
        _col("Hosts", lambda o: ",".join(r.get("host") or "*" for r in get_path(o, "spec.rules") or []) or "*"),
        _col("Address", lambda o: ",".join(i.get("ip") or i.get("hostname") or ""
                                           for i in get_path(o, "status.loadBalancer.ingress") or [])),
        _col("Ports", lambda o: "80, 443" if get_path(o, "spec.tls") else "80"), AGE,
    ],
    ("networking.k8s.io", "networkpolicies"): [
        _col("Pod-Selector", lambda o: selector_string(get_path(o, "spec.podSelector") or {}) or "<none>"), AGE,
    ],
    ("coordination.k8s.io", "leases"): [_col("Holder", _text("spec.holderIdentity")), AGE],
    ("autoscaling", "horizontalpodautoscalers"): [
        _col("Reference", lambda o: f"{get_path(o, 'spec.scaleTargetRef.kind')}/"
                                    f"{get_path(o, 'spec.scaleTargetRef.name')}"),
        _col("Targets", _hpa_targets), _col("MinPods", _num("spec.minReplicas"), kind="integer"),
        _col("MaxPods", _num("spec.maxReplicas"), kind="integer"),
        _col("Replicas", _num("status.currentReplicas"), kind="integer"), AGE,
    ],
}
BUILTIN[("rbac.authorization.k8s.io", "clusterrolebindings")] = BUILTIN[("rbac.authorization.k8s.io", "rolebindings")]


def _access_modes(modes: list[str]) -> str:
    short = {"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX", "ReadWriteOncePod": "RWOP"}
    return ",".join(short.get(m, m) for m in modes)


@functools.lru_cache(maxsize=256)
def _jsonpath(path: str) -> Any:
    from jsonpath_ng.ext import parse  # type: ignore[import-untyped]

    expr = path.strip()
    if expr.startswith("{") and expr.endswith("}"):
        expr = expr[1:-1]
    return parse("$" + (expr if expr.startswith((".", "[")) else "." + expr))


def _printer_cell(path: str, kind: str) -> Cell:
    def cell(o: Obj) -> Any:
        try:
            found = [m.value for m in _jsonpath(path).find(o)]
        except Exception:  # a column the CRD author got wrong shows empty, as the API server shows it
            return None
        if not found:
            return None
        value = found[0] if len(found) == 1 else ",".join(
            v if isinstance(v, str) else json.dumps(v) for v in found)
        if kind == "date":
            return since(value)
        if isinstance(value, dict | list):
            return json.dumps(value, separators=(",", ":"))
        return value
    return cell


def columns(rt: ResourceType) -> list[Column]:
    if rt.from_crd:
        if not rt.printer_columns:
            return [AGE]
        return [_col(name, _printer_cell(path, kind), priority, kind if kind != "date" else "string")
                for name, path, kind, priority in rt.printer_columns]
    return BUILTIN.get(rt.storage_key, [AGE])


def table(rt: ResourceType, objs: list[Obj], list_meta: Obj, include: str) -> Obj:
    cols = columns(rt)
    named = rt.storage_key != ("", "events")  # an event's name is a priority-1 column at the end
    definitions = [{"name": "Name", "type": "string", "format": "name", "description": "Name must be unique within "
                    "a namespace.", "priority": 0}] if named else []
    definitions += [{"name": n, "type": k, "format": f, "description": n, "priority": p} for n, _, p, k, f in cols]
    rows = []
    for o in objs:
        name = _storage_class_name(o) if rt.storage_key == ("storage.k8s.io", "storageclasses") \
            else o["metadata"]["name"]
        cells = [*([name] if named else []), *(cell(o) for _, cell, _, _, _ in cols)]
        row: Obj = {"cells": ["" if c is None else c for c in cells]}
        if include == "Object":
            row["object"] = o
        elif include != "None":
            row["object"] = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                             "metadata": o["metadata"]}
        rows.append(row)
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": list_meta,
            "columnDefinitions": definitions, "rows": rows}
