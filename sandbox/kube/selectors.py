"""Label and field selectors, as the API server parses them from query strings."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from sandbox.kube.errors import bad_request

Predicate = Callable[[dict[str, Any]], bool]

_SET_TERM = re.compile(r"^\s*([^\s!=(),]+)\s+(in|notin)\s+\(([^)]*)\)\s*$")


def _split_terms(selector: str) -> list[str]:
    terms, depth, cur = [], 0, ""
    for ch in selector:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            terms.append(cur)
            cur = ""
        else:
            cur += ch
    terms.append(cur)
    return [t.strip() for t in terms if t.strip()]


def _label_term(term: str) -> Callable[[dict[str, str]], bool]:
    m = _SET_TERM.match(term)
    if m:
        key, op, raw = m.groups()
        values = {v.strip() for v in raw.split(",") if v.strip()}
        if op == "in":
            return lambda labels: labels.get(key) in values
        return lambda labels: labels.get(key) not in values
    if term.startswith("!"):
        key = term[1:].strip()
        return lambda labels: key not in labels
    for op in ("!=", "==", "="):
        if op in term:
            key, value = (p.strip() for p in term.split(op, 1))
            if op == "!=":
                return lambda labels: labels.get(key) != value
            return lambda labels: labels.get(key) == value
    if re.search(r"[\s()<>]", term):
        raise bad_request(f"unable to parse requirement: {term!r}")
    return lambda labels: term in labels


def label_matcher(selector: str | None) -> Predicate:
    """A predicate on objects for a label selector string (`a=b,c in (d,e),!f`)."""
    if not selector:
        return lambda obj: True
    preds = [_label_term(t) for t in _split_terms(selector)]

    def match(obj: dict[str, Any]) -> bool:
        labels = (obj.get("metadata") or {}).get("labels") or {}
        return all(p(labels) for p in preds)

    return match


def field_value(obj: dict[str, Any], path: str) -> str:
    cur: Any = obj
    for part in path.split("."):
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(part)
    if cur is None:
        return ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return str(cur)


def _field_term(path: str, value: str, negate: bool) -> Predicate:
    return lambda obj: (field_value(obj, path) == value) != negate


def field_matcher(selector: str | None) -> Predicate:
    """A predicate for a field selector (`metadata.name=x,status.phase!=Running`)."""
    if not selector:
        return lambda obj: True
    preds: list[Predicate] = []
    for term in _split_terms(selector):
        for op in ("!=", "==", "="):
            if op in term:
                path, value = (p.strip() for p in term.split(op, 1))
                preds.append(_field_term(path, value, negate=op == "!="))
                break
        else:
            raise bad_request(f"invalid field selector: {term!r}")
    return lambda obj: all(p(obj) for p in preds)


def selector_string(selector: dict[str, Any] | None) -> str:
    """A `metav1.LabelSelector` (matchLabels / matchExpressions) as a selector string."""
    if not selector:
        return ""
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if op == "In":
            parts.append(f"{key} in ({','.join(values)})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({','.join(values)})")
        elif op == "Exists":
            parts.append(str(key))
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts)
