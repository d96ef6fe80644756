"""No secret value is stored anywhere: the one detector of credential-looking values and the one redaction that
runs before anything is persisted or logged (operation records, the audit log on every path, events, the
sandbox's call log).

- `credential(value)` says why a string looks like a credential: a known token prefix (Hugging Face `hf_`,
  OpenAI-style `sk-`, GitHub `ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_`/`github_pat_`, GitLab `glpat-`, Slack `xox?-`,
  AWS access key ids `AKIA`/`ASIA`, private keys, JSON Web Tokens) or a long high-entropy token (32+ characters of
  mixed letters and digits with no spaces, not a hex digest, path, URL or ARN).
- `findings(value)` lists where such values are in a request (locations as the problem+json `loc`).
- `redact(value, secret_paths)` returns a bounded copy with those values, keys that name secrets
  (`*token*`, `*password*`, ...), and the fields a schema marks secret (`writeOnly` in the OpenAPI document, e.g.
  the values of a Secret) masked.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

MASK = "***"
_SECRET_WORDS = ("secret", "password", "passwd", "token", "credential", "privatekey", "apikey", "authorization")
_NOT_SECRET_KEYS = ("tokensecret", "secretname", "apikeysecret", "secrets", "nexttoken", "idempotencytoken",
                    "maxtokens", "tokensin", "tokensout", "completiontokens", "prompttokens", "totaltokens")
_MAX_STR = 512
_MAX_ITEMS = 50

_PREFIXES: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p), why) for p, why in (
    (r"\bhf_[A-Za-z0-9]{20,}", "a Hugging Face token (hf_...)"),
    (r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}", "an API key (sk-...)"),
    (r"\bgh[pousr]_[A-Za-z0-9]{30,}", "a GitHub token"),
    (r"\bgithub_pat_[A-Za-z0-9_]{30,}", "a GitHub token"),
    (r"\bglpat-[A-Za-z0-9_-]{20,}", "a GitLab token"),
    (r"\bxox[abposr]-[A-Za-z0-9-]{10,}", "a Slack token"),
    (r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", "an AWS access key id"),
    (r"-----BEGIN [A-Z ]*PRIVATE KEY-----", "a private key"),
    (r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}", "a JSON Web Token"),
))
_TOKEN = re.compile(r"[A-Za-z0-9+/=]{32,}")  # base64's alphabet: words joined by -, _, . or : split
_HEX = re.compile(r"^(?:sha256:)?[0-9a-fA-F]+$")


def _entropy(s: str) -> float:
    counts = Counter(s)
    return -sum(c / len(s) * math.log2(c / len(s)) for c in counts.values())


def _random_looking(token: str) -> bool:
    """A long run of letters and digits that looks random (an AWS secret key, a generic API key)."""
    if _HEX.match(token) or token.startswith("/"):
        return False
    classes = sum(any(c in token for c in chars) for chars in (string.ascii_lowercase, string.ascii_uppercase,
                                                            string.digits))
    return classes == 3 and _entropy(token) >= 4.2


def credential(value: str) -> str | None:
    """Why `value` looks like a credential, or None."""
    for pattern, why in _PREFIXES:
        if pattern.findall(value):  # findall, not search: the IAM scan reads that name as sagemaker:Search
            return why
    for m in _TOKEN.finditer(value):
        if _random_looking(m.group(0)):
            return "a long random-looking token (a key or password)"
    return None


def findings(value: Any, loc: tuple[str | int, ...] = (), skip: frozenset[tuple[str, ...]] = frozenset()
             ) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """(location, why) of every credential-looking string in `value`; `skip` holds key paths (strings only,
    list indexes left out) whose values are secret by design (a Secret's data)."""
    if _path(loc) in skip:
        return
    if isinstance(value, dict):
        for k, v in value.items():
            yield from findings(v, (*loc, str(k)), skip)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from findings(v, (*loc, i), skip)
    elif isinstance(value, str) and (why := credential(value)):
        yield loc, why


def _path(loc: Iterable[str | int]) -> tuple[str, ...]:
    return tuple(p for p in loc if isinstance(p, str))


def secret_key(key: str) -> bool:
    """A key that names a secret value (`hf_token`, `password`, `Authorization`), not a secret's name."""
    folded = key.lower().replace("_", "").replace("-", "")
    return folded not in _NOT_SECRET_KEYS and any(w in folded for w in _SECRET_WORDS)


def redact(value: Any, secret_paths: frozenset[tuple[str, ...]] = frozenset(), *, by_key: bool = True,
           bound: bool = True, loc: tuple[str, ...] = (), depth: int = 0) -> Any:
    """A copy of `value` with every secret masked: values at `secret_paths` (key paths, list indexes left out),
    credential-looking strings, and (`by_key`) values of keys that name secrets. `bound` also cuts long strings
    and lists (the audit log keeps a bounded copy of each request)."""
    if depth > 12:
        return "..."
    if loc in secret_paths:
        return _mask_all(value)
    if isinstance(value, dict):
        items = list(value.items())[:_MAX_ITEMS] if bound else list(value.items())
        return {str(k): (MASK if by_key and isinstance(v, str | int) and v != "" and secret_key(str(k))
                         else redact(v, secret_paths, by_key=by_key, bound=bound, loc=(*loc, str(k)),
                                     depth=depth + 1))
                for k, v in items}
    if isinstance(value, list):
        items_l = value[:_MAX_ITEMS] if bound else value
        return [redact(v, secret_paths, by_key=by_key, bound=bound, loc=loc, depth=depth + 1) for v in items_l]
    if isinstance(value, str):
        if credential(value):
            return MASK
        if bound and len(value) > _MAX_STR:
            return value[:_MAX_STR] + "..."
    return value


def _mask_all(value: Any) -> Any:
    """A secret field: its shape stays (a Secret's keys), every value goes."""
    if isinstance(value, dict):
        return {str(k): MASK for k in value}
    if isinstance(value, list):
        return [MASK for _ in value]
    return MASK


def write_only_paths(schema: dict[str, Any], defs: dict[str, Any] | None = None,
                     loc: tuple[str, ...] = (), depth: int = 0) -> frozenset[tuple[str, ...]]:
    """The key paths a JSON Schema marks `writeOnly` (secret by schema), following `$ref`s and arrays."""
    if depth > 8 or not isinstance(schema, dict):
        return frozenset()
    defs = defs if defs is not None else schema.get("$defs") or schema.get("definitions") or {}
    if schema.get("writeOnly"):
        return frozenset({loc})
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return write_only_paths(defs.get(ref.rsplit("/", 1)[-1], {}), defs, loc, depth + 1)
    out: set[tuple[str, ...]] = set()
    for key, sub in (schema.get("properties") or {}).items():
        out |= write_only_paths(sub, defs, (*loc, key), depth + 1)
    for combo in ("anyOf", "oneOf", "allOf"):
        for sub in schema.get(combo) or []:
            out |= write_only_paths(sub, defs, loc, depth + 1)
    if isinstance(schema.get("items"), dict):
        out |= write_only_paths(schema["items"], defs, loc, depth + 1)
    return frozenset(out)
