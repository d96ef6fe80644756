"""Patch semantics: JSON patch, JSON merge patch, an approximate strategic merge, server-side apply."""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch  # type: ignore[import-untyped]

from sandbox.kube.errors import ApiError

# Strategic-merge list keys of the built-in types (approximate: the field name decides).
_MERGE_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "env": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "imagePullSecrets": "name",
    "conditions": "type",
    "hostAliases": "ip",
    "ownerReferences": "uid",
    "topologySpreadConstraints": "topologyKey",
}


def json_patch(obj: dict[str, Any], ops: Any) -> dict[str, Any]:
    if not isinstance(ops, list):
        raise ApiError(400, "BadRequest", "json patch body must be a list of operations")
    try:
        result: dict[str, Any] = jsonpatch.apply_patch(obj, ops)
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as err:
        raise ApiError(
            422, "Invalid", f"the server rejected our request due to an error in our request: {err}"
        ) from err
    return result


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def _list_key(field: str, items: list[Any]) -> str | None:
    if not items or not all(isinstance(i, dict) for i in items):
        return None
    if field == "ports":
        if all("containerPort" in i for i in items):
            return "containerPort"
        if all("port" in i for i in items):
            return "port"
        return None
    key = _MERGE_KEYS.get(field)
    if key is None and all("name" in i for i in items):
        key = "name"
    if key and all(key in i or i.get("$patch") for i in items):
        return key
    return None


def _merge_list(field: str, live: list[Any], patch: list[Any]) -> list[Any]:
    key = _list_key(field, [i for i in patch if not (isinstance(i, dict) and i.get("$patch") == "replace")])
    if key is None or not all(isinstance(i, dict) and key in i for i in live):
        return [i for i in copy.deepcopy(patch) if not (isinstance(i, dict) and "$patch" in i)]
    out = copy.deepcopy(live)
    for item in patch:
        if item.get("$patch") == "replace":
            return [i for i in copy.deepcopy(patch) if "$patch" not in i]
        idx = next((n for n, cur in enumerate(out) if cur.get(key) == item.get(key)), None)
        if item.get("$patch") == "delete":
            if idx is not None:
                out.pop(idx)
        elif idx is None:
            out.append(strategic_merge({}, item))
        else:
            out[idx] = strategic_merge(out[idx], item)
    return out


def strategic_merge(live: Any, patch: Any) -> Any:
    """Merge patch, except that lists of named items (containers, env, ports, volumes...) merge by key."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if patch.get("$patch") == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    out = copy.deepcopy(live) if isinstance(live, dict) else {}
    for key, value in patch.items():
        if key.startswith("$"):
            continue
        if value is None:
            out.pop(key, None)
        elif isinstance(value, list) and isinstance(out.get(key), list):
            out[key] = _merge_list(key, out[key], value)
        elif isinstance(value, list):
            out[key] = [i for i in copy.deepcopy(value) if not (isinstance(i, dict) and "$patch" in i)]
        else:
            out[key] = strategic_merge(out.get(key), value)
    return out


def prune_unapplied(live: dict[str, Any], previous: dict[str, Any], current: dict[str, Any]) -> None:
    """Remove from `live` the fields a manager applied before and no longer applies (SSA ownership lite)."""
    for key, old in previous.items():
        if key not in live:
            continue
        if key not in current:
            del live[key]
            continue
        new, cur = current[key], live[key]
        if isinstance(old, dict) and isinstance(new, dict) and isinstance(cur, dict):
            prune_unapplied(cur, old, new)
        elif isinstance(old, list) and isinstance(new, list) and isinstance(cur, list):
            lkey = _list_key(key, old + new)
            if lkey is None:
                continue
            new_by_key = {i.get(lkey): i for i in new}
            old_by_key = {i.get(lkey): i for i in old}
            kept = []
            for item in cur:
                ident = item.get(lkey) if isinstance(item, dict) else None
                if ident in old_by_key and ident not in new_by_key:
                    continue
                if ident in old_by_key and isinstance(item, dict):
                    prune_unapplied(item, old_by_key[ident], new_by_key[ident])
                kept.append(item)
            live[key] = kept


def fields_v1(obj: Any, top: bool = True) -> dict[str, Any]:
    """A minimal `FieldsV1` description of the fields set in `obj`."""
    if not isinstance(obj, dict):
        return {}
    out: dict[str, Any] = {}
    for key, value in obj.items():
        if top and key in ("apiVersion", "kind", "status"):
            continue
        if top and key == "metadata":
            meta = {k: v for k, v in value.items() if k in ("labels", "annotations", "finalizers")}
            if meta:
                out["f:metadata"] = fields_v1(meta, top=False)
            continue
        out[f"f:{key}"] = fields_v1(value, top=False) if isinstance(value, dict) else {}
    return out
