"""The protobuf wire format of Kubernetes request bodies, read into the JSON a client would have sent.

A body is the magic `k8s\\0` and a `runtime.Unknown` {typeMeta {apiVersion, kind}, raw}; `raw` is the typed
object (e.g. `k8s.io.api.core.v1.Secret`). The field tables come from `messages.json` (see `generate.py`).

The Go types behind the messages decide what JSON looks like, and the wire does not say which fields are
pointers: Kubernetes' marshaller writes every non-pointer field, empty or not, and a pointer field only when
set. So, as `encoding/json` with `omitempty` would: empty strings and zero times are dropped; zero numbers and
false are dropped except for the fields whose zero is a choice (`KEPT_WHEN_ZERO`: replicas 0, a grace period
of 0, `automountServiceAccountToken: false`, ...); messages are kept even when empty (`emptyDir: {}` is a
volume, and Go never omits a struct).
"""

from __future__ import annotations

import base64
import functools
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sandbox.kube.errors import ApiError

PROTOBUF = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"
_META = "k8s.io.apimachinery.pkg.apis.meta.v1"

KEPT_WHEN_ZERO = frozenset({
    "replicas", "value", "parallelism", "completions", "backoffLimit", "backoffLimitPerIndex", "maxFailedIndexes",
    "activeDeadlineSeconds", "ttlSecondsAfterFinished", "terminationGracePeriodSeconds", "gracePeriodSeconds",
    "expirationSeconds", "revisionHistoryLimit", "successfulJobsHistoryLimit", "failedJobsHistoryLimit",
    "startingDeadlineSeconds", "progressDeadlineSeconds", "automountServiceAccountToken", "immutable", "suspend",
    "privileged", "runAsUser", "runAsGroup", "runAsNonRoot", "fsGroup", "readOnlyRootFilesystem",
    "allowPrivilegeEscalation", "defaultMode", "mode", "optional", "enableServiceLinks", "hostUsers",
    "tolerationSeconds", "minReplicas", "allowVolumeExpansion",
})


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        if i >= len(buf):
            raise ValueError("truncated varint")
        byte = buf[i]
        i += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, i
        shift += 7
        if shift > 70:
            raise ValueError("varint too long")


def fields(buf: bytes) -> Iterator[tuple[int, int | bytes]]:
    """(field number, value) in order: an int for varints and fixed-width fields, bytes for length-delimited."""
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(buf, i)
            yield number, value
        elif wire == 2:
            size, i = _varint(buf, i)
            if i + size > len(buf):
                raise ValueError("truncated field")
            yield number, buf[i:i + size]
            i += size
        elif wire == 1:
            yield number, int.from_bytes(buf[i:i + 8], "little")
            i += 8
        elif wire == 5:
            yield number, int.from_bytes(buf[i:i + 4], "little")
            i += 4
        else:
            raise ValueError(f"unsupported wire type {wire}")


@functools.cache
def messages() -> dict[str, dict[str, Any]]:
    loaded: dict[str, dict[str, Any]] = json.loads(Path(__file__).with_name("messages.json").read_text())
    return loaded


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _packed(raw: bytes) -> list[int]:
    out, i = [], 0
    while i < len(raw):
        value, i = _varint(raw, i)
        out.append(_signed(value))
    return out


def _time(msg: dict[str, Any], micro: bool) -> str | None:
    seconds, nanos = int(msg.get("seconds", 0)), int(msg.get("nanos", 0))
    if seconds <= -62135596800 or (seconds == 0 and nanos == 0):
        return None
    at = datetime.fromtimestamp(seconds, UTC)
    if micro:
        return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{nanos // 1000:06d}Z"
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def _duration(ns: int) -> str:
    """Go's time.Duration.String() for metav1.Duration."""
    if ns == 0:
        return "0s"
    sign, ns = ("-", -ns) if ns < 0 else ("", ns)
    if ns < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if ns >= size:
                return f"{sign}{ns / size:g}{unit}"
    hours, rest = divmod(ns, 3_600_000_000_000)
    minutes, rest = divmod(rest, 60_000_000_000)
    seconds = f"{rest / 1e9:.9f}".rstrip("0").rstrip(".")
    out = (f"{hours}h" if hours else "") + (f"{minutes}m" if hours or minutes else "") + f"{seconds}s"
    return sign + out


def _raw_json(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return base64.b64encode(raw).decode()


def decode_message(buf: bytes, type_name: str) -> Any:
    """One message as JSON data (special types as the JSON form of their Go type)."""
    table = messages().get(type_name)
    if table is None:
        raise ValueError(f"no protobuf message {type_name}")
    out: dict[str, Any] = {}
    for number, value in fields(buf):
        spec = table.get(str(number))
        if spec is None:
            continue  # a field newer than the table: skipped, as an older API server would
        name, kind, target, repeated = spec
        item = _field(kind, target, value)
        if kind == "map" and isinstance(item, tuple):
            out.setdefault(name, {})[item[0]] = item[1]
        elif kind == "inline" and isinstance(item, dict):
            out.update(item)
        elif repeated:
            if kind in ("int", "sint", "bool") and isinstance(value, bytes):
                out.setdefault(name, []).extend(_packed(value))
            else:
                out.setdefault(name, []).append(item)
        else:
            out[name] = item
    return _special(type_name, out)


def _field(kind: str, target: str, value: int | bytes) -> Any:
    if kind == "string":
        return value.decode() if isinstance(value, bytes) else str(value)
    if kind == "bytes":
        return base64.b64encode(value).decode() if isinstance(value, bytes) else ""
    if kind == "bool":
        return bool(value)
    if kind == "int":
        return _signed(value) if isinstance(value, int) else value
    if kind == "sint":
        return (value >> 1) ^ -(value & 1) if isinstance(value, int) else value
    if kind == "map" and isinstance(value, bytes):
        entry = messages()[target]
        key: Any = ""
        val: Any = None
        for number, raw in fields(value):
            spec = entry.get(str(number))
            if spec is None:
                continue
            decoded = _field(spec[1], spec[2], raw)
            if number == 1:
                key = decoded
            else:
                val = decoded
        if val is None:
            val = "" if entry.get("2", ["", "string"])[1] in ("string", "bytes") else {}
        return (key, val)
    if kind in ("msg", "inline") and isinstance(value, bytes):
        return decode_message(value, target)
    raise ValueError(f"field kind {kind} cannot hold {type(value).__name__}")


def _special(type_name: str, msg: dict[str, Any]) -> Any:
    """The JSON form of the types whose Go JSON is not their protobuf shape."""
    short = type_name.rsplit(".", 1)[-1]
    if type_name == f"{_META}.Time":
        return _time(msg, micro=False)
    if type_name == f"{_META}.MicroTime":
        return _time(msg, micro=True)
    if type_name == f"{_META}.Duration":
        return _duration(int(msg.get("duration", 0)))
    if type_name == "k8s.io.apimachinery.pkg.api.resource.Quantity":
        return msg.get("string", "0")
    if type_name == "k8s.io.apimachinery.pkg.util.intstr.IntOrString":
        return msg.get("strVal", "") if msg.get("type") == 1 else int(msg.get("intVal", 0))
    if type_name in ("k8s.io.apimachinery.pkg.runtime.RawExtension", f"{_META}.FieldsV1"):
        raw = msg.get("raw", msg.get("Raw", ""))
        return _raw_json(base64.b64decode(raw)) if raw else {}
    if short in ("ExtraValue", "Verbs") or type_name.endswith("v1.ExtraValue"):
        return list(msg.get("items") or [])
    return _omit_empty(msg)


def _omit_empty(msg: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in msg.items():
        if value is None or value == "" or value == []:
            continue
        if (value is False or (isinstance(value, int) and not isinstance(value, bool) and value == 0)) \
                and key not in KEPT_WHEN_ZERO:
            continue
        out[key] = value
    return out


def _package(api_version: str) -> str:
    group, _, version = api_version.rpartition("/")
    if not group:
        return f"k8s.io.api.core.{version}"
    if group == "meta.k8s.io":
        return _META
    return f"k8s.io.api.{group.split('.')[0]}.{version}"


def decode_object(body: bytes) -> dict[str, Any]:
    """A `application/vnd.kubernetes.protobuf` request body as the JSON object it stands for; 400 (as the API
    server answers a body it cannot decode) when it is not one or names a kind the sandbox does not know."""
    if not body.startswith(MAGIC):
        raise ApiError(400, "BadRequest", "the protobuf body does not start with the Kubernetes magic number")
    try:
        envelope = dict(fields(body[len(MAGIC):]))
        type_meta = envelope.get(1, b"")
        raw = envelope.get(2, b"")
        meta = dict(fields(type_meta)) if isinstance(type_meta, bytes) else {}
        api_version = bytes(meta.get(1, b"")).decode()
        kind = bytes(meta.get(2, b"")).decode()
        type_name = f"{_package(api_version)}.{kind}"
        if type_name not in messages():
            raise ApiError(415, "UnsupportedMediaType",
                           f"the sandbox API server cannot decode {kind} ({api_version}) from protobuf; send JSON")
        obj = decode_message(raw if isinstance(raw, bytes) else b"", type_name)
    except (ValueError, KeyError, UnicodeDecodeError) as err:
        raise ApiError(400, "BadRequest", f"the protobuf body could not be decoded: {err}") from err
    if not isinstance(obj, dict):
        raise ApiError(400, "BadRequest", f"{kind} is not an object")
    return {"apiVersion": api_version, "kind": kind, **obj}
