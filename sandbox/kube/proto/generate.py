"""Regenerate `messages.json`: the field tables of the Kubernetes API messages, read from the protobuf file
descriptors a kubectl binary carries (each Go `generated.pb.go` registers its gzipped FileDescriptorProto).

    python -m sandbox.kube.proto.generate /usr/bin/kubectl

The table maps a message's full name to {field number: [json name, kind, message type or "", repeated]},
where kind is one of string, bytes, bool, int, msg, map (an entry message with key 1 and value 2) or inline (an
embedded Go struct, whose fields the JSON inlines). Names are the JSON names of the Go types, as the OpenAPI
schemas (kubernetes-validate's) spell them. Only the packages of the API groups the sandbox serves are kept.
"""

from __future__ import annotations

import json
import re
import sys
import zlib
from pathlib import Path
from typing import Any

from sandbox.kube.openapi import builtin_schemas
from sandbox.kube.proto.wire import fields

PACKAGES = (
    "k8s.io.api.core.v1", "k8s.io.api.apps.v1", "k8s.io.api.batch.v1", "k8s.io.api.rbac.v1",
    "k8s.io.api.storage.v1", "k8s.io.api.policy.v1", "k8s.io.api.networking.v1", "k8s.io.api.discovery.v1",
    "k8s.io.api.autoscaling.v1", "k8s.io.api.autoscaling.v2", "k8s.io.api.scheduling.v1",
    "k8s.io.api.coordination.v1", "k8s.io.api.authorization.v1", "k8s.io.api.authentication.v1",
    "k8s.io.api.admissionregistration.v1", "k8s.io.apimachinery.pkg.apis.meta.v1", "k8s.io.apimachinery.pkg.runtime",
    "k8s.io.apimachinery.pkg.util.intstr", "k8s.io.apimachinery.pkg.api.resource",
)
# FieldDescriptorProto.type -> the kind the decoder needs
_KINDS = {1: "double", 2: "float", 3: "int", 4: "int", 5: "int", 6: "int", 7: "int", 8: "bool", 9: "string",
          11: "msg", 12: "bytes", 13: "int", 14: "int", 15: "int", 16: "int", 17: "sint", 18: "sint"}
_GZIP = b"\x1f\x8b\x08\x00\x00\x00\x00\x00"


def _message(raw: bytes, prefix: str, out: dict[str, dict[str, Any]]) -> None:
    name, field_raws, nested, map_entry = "", [], [], False
    for num, value in fields(raw):
        if num == 1 and isinstance(value, bytes):
            name = value.decode()
        elif num == 2 and isinstance(value, bytes):
            field_raws.append(value)
        elif num == 3 and isinstance(value, bytes):
            nested.append(value)
        elif num == 7 and isinstance(value, bytes):
            map_entry = any(n == 7 and v for n, v in fields(value))
    full = f"{prefix}.{name}"
    table: dict[str, Any] = {}
    for f in field_raws:
        d: dict[int, Any] = dict(fields(f))
        json_name = (d.get(10) or d.get(1) or b"").decode()
        kind = _KINDS.get(int(d.get(5, 0)), "unknown")
        type_name = (d.get(6) or b"").decode().lstrip(".")
        table[str(d.get(3))] = [json_name, kind, type_name, int(d.get(4, 1)) == 3]
    out[full] = {"fields": table, "map_entry": map_entry}
    for n in nested:
        _message(n, full, out)


def extract(binary: bytes) -> dict[str, dict[str, Any]]:
    messages: dict[str, dict[str, Any]] = {}
    for m in re.finditer(re.escape(_GZIP), binary):
        try:
            raw = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(binary[m.start():m.start() + 4_000_000])
            parsed = list(fields(raw))
        except (zlib.error, ValueError, IndexError):
            continue
        name = next((v for n, v in parsed if n == 1 and isinstance(v, bytes)), b"").decode(errors="replace")
        package = next((v for n, v in parsed if n == 2 and isinstance(v, bytes)), b"").decode(errors="replace")
        if not name.startswith("k8s.io/") or package not in PACKAGES:
            continue
        for n, v in parsed:
            if n == 4 and isinstance(v, bytes):
                _message(v, package, messages)
    schemas = builtin_schemas()
    table: dict[str, dict[str, Any]] = {}
    for full, msg in sorted(messages.items()):
        entry: dict[str, Any] = dict(msg["fields"])
        json_props = (schemas.get("io.k8s." + full.removeprefix("k8s.io.")) or {}).get("properties")
        for spec in entry.values():
            target = messages.get(spec[2])
            if spec[1] == "msg" and target is not None and target["map_entry"]:
                spec[1] = "map"
            if isinstance(json_props, dict) and spec[0] not in json_props:
                # the JSON of the Go type names the field otherwise (`uid`, not protoc's `uID`), or inlines
                # an embedded struct (a Volume's VolumeSource, a Probe's ProbeHandler)
                same = [p for p in json_props if p.lower() == spec[0].lower()]
                if same:
                    spec[0] = same[0]
                elif spec[1] == "msg":
                    spec[1] = "inline"
        if msg["map_entry"]:
            entry["map_entry"] = True
        table[full] = entry
    return table


def main() -> int:
    binary = Path(sys.argv[1] if len(sys.argv) > 1 else "/usr/bin/kubectl").resolve().read_bytes()
    table = extract(binary)
    if "k8s.io.api.core.v1.Pod" not in table:
        print("no Kubernetes message descriptors found in that binary", file=sys.stderr)
        return 1
    out = Path(__file__).with_name("messages.json")
    out.write_text(json.dumps(table, separators=(",", ":"), sort_keys=True) + "\n")
    print(f"{len(table)} messages -> {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
