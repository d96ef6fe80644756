"""The OpenAPI documents a cluster publishes (`/openapi/v2`, `/openapi/v3` and its per-group-version documents),
and the server-side field validation they promise (`?fieldValidation=Strict|Warn|Ignore`).

kubectl 1.32 reads `/openapi/v3` before `apply|create|replace -f` (does the server validate fields itself? then it
sends `fieldValidation=Strict` and skips client-side validation), for `kubectl explain`, and for the patch
strategy of built-in kinds in `kubectl apply`. The schemas of built-in kinds are Kubernetes 1.32's own, as
`kubernetes-validate` ships them (descriptions, `x-kubernetes-group-version-kind`, patch strategies and merge
keys, list types); a CRD's come from its `openAPIV3Schema`, so every CRD installed in the cluster is in the
documents as soon as it is created, and gone when it is deleted.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import importlib.util
import json
from pathlib import Path
from typing import Any

from sandbox.kube.registry import ResourceType

Obj = dict[str, Any]

KUBE_VERSION = "v1.32.0"
META = "io.k8s.apimachinery.pkg.apis.meta.v1"
OBJECT_META = f"{META}.ObjectMeta"
LIST_META = f"{META}.ListMeta"
_V3_REF, _V2_REF = "#/components/schemas/", "#/definitions/"
_PATCH_TYPES = ("application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json",
                "application/strategic-merge-patch+json")
_WRITE_PARAMS = (
    ("dryRun", "When present, indicates that modifications should not be persisted. Valid values are: All"),
    ("fieldManager", "fieldManager is a name associated with the actor or entity that is making these changes."),
    ("fieldValidation", "fieldValidation instructs the server on how to handle objects in the request "
                        "(POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: Ignore, Warn "
                        "(the default), Strict."),
)


# ---------------------------------------------------------------------------------------------- built-in schemas


def _definitions_file() -> Path:
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or spec.origin is None:
        raise RuntimeError("the kubernetes-validate package (requirements.lock) is not installed")
    return Path(spec.origin).parent / "kubernetes-json-schema" / f"{KUBE_VERSION}-local" / "_definitions.json"


def _plain(node: Any) -> Any:
    """kubernetes-validate's JSON Schema back to the OpenAPI form of the API server: `type: [X, "null"]` -> `X`,
    `#/$defs/` references as a marker the documents rewrite, int-or-string and quantities as strings."""
    if isinstance(node, list):
        return [_plain(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: Obj = {}
    for key, value in node.items():
        if key in ("$schema", "$id"):
            continue
        if key == "type" and isinstance(value, list):
            kinds = [t for t in value if t != "null"]
            if kinds:
                out["type"] = kinds[0]
            continue
        if key == "$ref" and isinstance(value, str):
            out["$ref"] = value.rsplit("/", 1)[-1]
            continue
        if key == "enum" and isinstance(value, list):
            out["enum"] = [v for v in value if v is not None]
            continue
        out[key] = _plain(value) if key != "properties" else {k: _plain(v) for k, v in value.items()}
    return out


@functools.cache
def builtin_schemas() -> dict[str, Obj]:
    """Kubernetes 1.32's definitions by name (`io.k8s.api.core.v1.Pod`); `$ref` values are bare names."""
    raw = json.loads(_definitions_file().read_text())["$defs"]
    defs = {name: _plain(schema) for name, schema in raw.items()}
    for name, fmt in (("io.k8s.apimachinery.pkg.util.intstr.IntOrString", "int-or-string"),
                      ("io.k8s.apimachinery.pkg.api.resource.Quantity", "")):
        described = {k: v for k, v in defs[name].items() if k == "description"}
        defs[name] = {**described, "type": "string", **({"format": fmt} if fmt else {})}
    return defs


@functools.cache
def _by_gvk() -> dict[tuple[str, str, str], str]:
    out: dict[tuple[str, str, str], str] = {}
    for name, schema in builtin_schemas().items():
        for gvk in schema.get("x-kubernetes-group-version-kind") or []:
            key = (gvk.get("group", ""), gvk.get("version", ""), gvk.get("kind", ""))
            # meta types (DeleteOptions, WatchEvent) carry one GVK per group; the kinds' own names win
            if key not in out or not name.startswith(META):
                out[key] = name
    return out


def builtin_name(group: str, version: str, kind: str) -> str | None:
    return _by_gvk().get((group, version, kind))


def _refs(node: Any, into: set[str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            into.add(ref)
        for value in node.values():
            _refs(value, into)
    elif isinstance(node, list):
        for value in node:
            _refs(value, into)


def _closure(roots: list[str], schemas: dict[str, Obj]) -> list[str]:
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen or name not in schemas:
            continue
        seen.add(name)
        found: set[str] = set()
        _refs(schemas[name], found)
        todo.extend(found - seen)
    return sorted(seen)


# ---------------------------------------------------------------------------------------------- CRD schemas


def crd_schema_name(group: str, version: str, kind: str) -> str:
    """As the API server names a custom resource's schema: the group reversed, then version and kind."""
    return ".".join([*reversed(group.split(".")), version, kind])


def crd_schemas(crd: Obj) -> dict[tuple[str, str], tuple[str, Obj]]:
    """(version, kind) -> (schema name, schema) for each served version of a CRD, with apiVersion, kind and
    metadata declared as the API server publishes them (metadata is ObjectMeta whatever the CRD says)."""
    spec = crd.get("spec") or {}
    group, names = spec.get("group", ""), spec.get("names") or {}
    kind, list_kind = names.get("kind", ""), names.get("listKind") or f"{names.get('kind', '')}List"
    out: dict[tuple[str, str], tuple[str, Obj]] = {}
    for ver in spec.get("versions") or []:
        if not ver.get("served", True):
            continue
        version = ver.get("name", "")
        given = copy.deepcopy(((ver.get("schema") or {}).get("openAPIV3Schema")) or {"type": "object"})
        given = _crd_refless(given)
        props = given.setdefault("properties", {}) if given.get("type", "object") == "object" else {}
        pod = builtin_schemas()["io.k8s.api.core.v1.Pod"]["properties"]
        props["apiVersion"] = {"type": "string", "description": pod["apiVersion"].get("description", "")}
        props["kind"] = {"type": "string", "description": pod["kind"].get("description", "")}
        props["metadata"] = {"$ref": OBJECT_META, "description": "Standard object's metadata."}
        given["type"] = "object"
        given["x-kubernetes-group-version-kind"] = [{"group": group, "version": version, "kind": kind}]
        name = crd_schema_name(group, version, kind)
        out[(version, kind)] = (name, given)
        out[(version, list_kind)] = (crd_schema_name(group, version, list_kind), {
            "description": f"{list_kind} is a list of {kind}",
            "type": "object",
            "required": ["items"],
            "properties": {
                "apiVersion": {"type": "string"},
                "kind": {"type": "string"},
                "items": {"type": "array", "items": {"$ref": name},
                          "description": f"List of {names.get('plural', kind.lower())}."},
                "metadata": {"$ref": LIST_META, "description": "Standard list metadata."},
            },
            "x-kubernetes-group-version-kind": [{"group": group, "version": version, "kind": list_kind}],
        })
    return out


def _crd_refless(node: Any) -> Any:
    """A CRD schema never uses `$ref`; a property literally named `$ref` would read as one: rename nothing,
    but make sure no dict here carries a `$ref` string the documents would rewrite."""
    if isinstance(node, dict):
        return {k: (_crd_refless(v) if k != "$ref" else v) for k, v in node.items() if k != "$ref"}
    if isinstance(node, list):
        return [_crd_refless(v) for v in node]
    return node


# ---------------------------------------------------------------------------------------------- documents


def _with_refs(node: Any, prefix: str, v3: bool) -> Any:
    """Bare `$ref` names -> document references; in v3 a reference with siblings (a description) is wrapped in
    `allOf`, as the API server publishes it."""
    if isinstance(node, list):
        return [_with_refs(v, prefix, v3) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: (_with_refs(v, prefix, v3) if k not in ("enum", "default", "example") else v)
           for k, v in node.items() if k != "$ref"}
    ref = node.get("$ref")
    if isinstance(ref, str):
        if v3 and out:
            out["allOf"] = [{"$ref": prefix + ref}]
        else:
            out["$ref"] = prefix + ref
    return out


def _gvk(rt: ResourceType, kind: str | None = None) -> Obj:
    return {"group": rt.group, "version": rt.version, "kind": kind or rt.kind}


def _op_id(verb: str, rt: ResourceType, suffix: str = "") -> str:
    group = "".join(p.capitalize() for p in (rt.group.split(".")[0] if rt.group else "core").split("-"))
    scope = "Namespaced" if rt.namespaced and verb not in ("listForAllNamespaces",) else ""
    return f"{verb}{group}{rt.version.capitalize()}{scope}{rt.kind}{suffix}"


def _param(name: str, where: str, description: str, required: bool = False, v3: bool = True) -> Obj:
    p: Obj = {"name": name, "in": where, "description": description}
    if required:
        p["required"] = True
    if v3:
        p["schema"] = {"type": "string", "uniqueItems": True}
    else:
        p["type"] = "string"
        p["uniqueItems"] = True
    return p


def _operation(rt: ResourceType, action: str, verb: str, schema: str, v3: bool, *,
               kind: str | None = None, suffix: str = "", body: str | None = None) -> Obj:
    ref = (_V3_REF if v3 else _V2_REF) + schema
    op: Obj = {
        "description": f"{action} {kind or rt.kind}",
        "operationId": _op_id(verb, rt, suffix),
        "tags": [f"{rt.group or 'core'}_{rt.version}"],
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": _gvk(rt, kind),
        "parameters": [],
    }
    if action in ("post", "put", "patch"):
        op["parameters"] = [_param(n, "query", d, v3=v3) for n, d in _WRITE_PARAMS]
        if action == "patch":
            op["parameters"].append(_param("force", "query", "Force is going to \"force\" Apply requests.",
                                           v3=v3))
    ok: Obj = {"description": "OK"}
    if v3:
        ok["content"] = {t: {"schema": {"$ref": ref}} for t in ("application/json", "application/yaml")}
        if action in ("post", "put"):
            op["requestBody"] = {"required": True, "content": {"*/*": {"schema": {"$ref": ref}}}}
        elif action == "patch":
            patch_ref = {"$ref": _V3_REF + f"{META}.Patch"}
            op["requestBody"] = {"required": True, "content": {t: {"schema": patch_ref} for t in _PATCH_TYPES}}
    else:
        ok["schema"] = {"$ref": ref}
        if body is not None or action in ("post", "put", "patch"):
            body_ref = _V2_REF + (f"{META}.Patch" if action == "patch" else schema)
            op["parameters"].insert(0, {"name": "body", "in": "body", "required": True,
                                        "schema": {"$ref": body_ref}})
        op["consumes"] = list(_PATCH_TYPES) if action == "patch" else ["*/*"]
        op["produces"] = ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"]
        op["schemes"] = ["https"]
    responses: Obj = {"200": ok, "401": {"description": "Unauthorized"}}
    if action == "post":
        responses["201"] = {**ok, "description": "Created"}
        responses["202"] = {**ok, "description": "Accepted"}
    elif action == "put" or (action == "patch" and not v3):
        responses["201"] = {**ok, "description": "Created"}
    op["responses"] = responses
    return op


def _paths(rt: ResourceType, schema: str, list_schema: str, v3: bool) -> Obj:
    prefix = f"/apis/{rt.group}/{rt.version}" if rt.group else f"/api/{rt.version}"
    ns_param = _param("namespace", "path", "object name and auth scope, such as for teams and projects",
                      required=True, v3=v3)
    name_param = _param("name", "path", f"name of the {rt.kind}", required=True, v3=v3)
    coll = f"{prefix}/namespaces/{{namespace}}/{rt.plural}" if rt.namespaced else f"{prefix}/{rt.plural}"
    item = f"{coll}/{{name}}"
    scope = [ns_param] if rt.namespaced else []
    status_ref = f"{META}.Status"
    paths: Obj = {
        coll: {
            "get": _operation(rt, "list", "list", list_schema, v3, kind=rt.kind),
            "post": _operation(rt, "post", "create", schema, v3),
            "delete": _operation(rt, "deletecollection", "deleteCollection", status_ref, v3),
            "parameters": list(scope),
        },
        item: {
            "get": _operation(rt, "get", "read", schema, v3),
            "put": _operation(rt, "put", "replace", schema, v3),
            "patch": _operation(rt, "patch", "patch", schema, v3),
            "delete": _operation(rt, "delete", "delete", status_ref, v3),
            "parameters": [name_param, *scope],
        },
    }
    if rt.namespaced:
        paths[f"{prefix}/{rt.plural}"] = {
            "get": _operation(rt, "list", "listForAllNamespaces", list_schema, v3),
            "parameters": [],
        }
    if rt.status:
        paths[f"{item}/status"] = {
            "get": _operation(rt, "get", "read", schema, v3, suffix="Status"),
            "put": _operation(rt, "put", "replace", schema, v3, suffix="Status"),
            "patch": _operation(rt, "patch", "patch", schema, v3, suffix="Status"),
            "parameters": [name_param, *scope],
        }
    if rt.scale:
        scale = "io.k8s.api.autoscaling.v1.Scale"
        scale_rt = ResourceType("autoscaling", "v1", rt.plural, "Scale", rt.namespaced)
        paths[f"{item}/scale"] = {
            "get": {**_operation(scale_rt, "get", "read", scale, v3, suffix=f"{rt.kind}Scale")},
            "put": {**_operation(scale_rt, "put", "replace", scale, v3, suffix=f"{rt.kind}Scale")},
            "patch": {**_operation(scale_rt, "patch", "patch", scale, v3, suffix=f"{rt.kind}Scale")},
            "parameters": [name_param, *scope],
        }
    return paths


class Documents:
    """The documents of one cluster for its registry and CRDs at one moment (built per request; cached by the
    server while nothing changes)."""

    def __init__(self, types: list[ResourceType], crds: list[Obj]) -> None:
        self.types = [rt for rt in types if rt.kind]
        self._crd = {}
        for crd in crds:
            for (version, kind), named in crd_schemas(crd).items():
                group = (crd.get("spec") or {}).get("group", "")
                self._crd[(group, version, kind)] = named

    # the schema of one kind: (name, schema with bare $ref names)
    def schema(self, group: str, version: str, kind: str) -> tuple[str, Obj] | None:
        if (group, version, kind) in self._crd:
            return self._crd[(group, version, kind)]
        name = builtin_name(group, version, kind)
        return (name, builtin_schemas()[name]) if name else None

    def _kind_schemas(self, rts: list[ResourceType]) -> tuple[dict[str, Obj], list[tuple[ResourceType, str, str]]]:
        found: dict[str, Obj] = {}
        served = []
        for rt in rts:
            one = self.schema(rt.group, rt.version, rt.kind)
            many = self.schema(rt.group, rt.version, f"{rt.kind}List")
            if one is None:
                continue
            found[one[0]] = one[1]
            list_name = one[0]
            if many is not None:
                found[many[0]] = many[1]
                list_name = many[0]
            served.append((rt, one[0], list_name))
        builtins = builtin_schemas()
        roots = [*found, f"{META}.Status", f"{META}.Patch", f"{META}.DeleteOptions", OBJECT_META]
        if any(rt.scale for rt in rts):
            roots.append("io.k8s.api.autoscaling.v1.Scale")
        schemas = {**builtins, **found}
        return {name: schemas[name] for name in _closure(roots, schemas)}, served

    def group_versions(self) -> list[tuple[str, str]]:
        seen: list[tuple[str, str]] = []
        for rt in self.types:
            if (rt.group, rt.version) not in seen:
                seen.append((rt.group, rt.version))
        return seen

    def v3(self, group: str, version: str) -> Obj | None:
        rts = [rt for rt in self.types if rt.group == group and rt.version == version]
        if not rts:
            return None
        schemas, served = self._kind_schemas(rts)
        paths: Obj = {}
        for rt, one, many in served:
            paths.update(_paths(rt, one, many, v3=True))
        title = "Kubernetes" if not any(rt.from_crd for rt in rts) else "Kubernetes CRD Swagger"
        return {
            "openapi": "3.0.0",
            "info": {"title": title, "version": KUBE_VERSION},
            "paths": paths,
            "components": {
                "schemas": {name: _with_refs(s, _V3_REF, v3=True) for name, s in schemas.items()},
                "securitySchemes": {"BearerToken": {"type": "apiKey", "description": "Bearer Token authentication",
                                                    "name": "authorization", "in": "header"}},
            },
            "security": [{"BearerToken": []}],
        }

    def v2(self) -> Obj:
        schemas, served = self._kind_schemas(self.types)
        paths: Obj = {}
        for rt, one, many in served:
            paths.update(_paths(rt, one, many, v3=False))
        return {
            "swagger": "2.0",
            "info": {"title": "Kubernetes", "version": KUBE_VERSION},
            "paths": paths,
            "definitions": {name: _with_refs(s, _V2_REF, v3=False) for name, s in schemas.items()},
            "securityDefinitions": {"BearerToken": {"type": "apiKey", "name": "authorization", "in": "header",
                                                    "description": "Bearer Token authentication"}},
            "security": [{"BearerToken": []}],
        }


def gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def etag(body: bytes) -> str:
    return hashlib.sha512(body).hexdigest().upper()


# ---------------------------------------------------------------------------------------------- field validation


def _resolve(schema: Obj, schemas: dict[str, Obj]) -> Obj:
    for _ in range(8):
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref in schemas:
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            schema = {**schemas[ref], **{k: v for k, v in rest.items() if k != "description"}}
            continue
        all_of = schema.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict):
            schema = {**{k: v for k, v in schema.items() if k != "allOf"}, **all_of[0]}
            continue
        break
    return schema


_DIRECTIVES = ("$patch", "$retainKeys", "$deleteFromPrimitiveList", "$setElementOrder")


def unknown_fields(value: Any, schema: Obj, schemas: dict[str, Obj], path: str = "", patch: bool = False,
                   structural: bool = False) -> list[str]:
    """Paths (`spec.template.spec.containers[0].foo`) of the fields in `value` its schema does not declare,
    as the API server's strict decoding names them. A strategic merge patch's directives are not fields.
    `structural`: a CRD's schema, where an object that declares no properties and does not preserve unknown
    fields keeps none (the API server prunes them); a built-in free-form object (FieldsV1, RawExtension) keeps
    all."""
    return _walk(value, schema, schemas, path, patch, structural)[0]


def pruned(value: Any, schema: Obj, schemas: dict[str, Obj], patch: bool = False, structural: bool = False) -> Any:
    """`value` without the fields its schema does not declare: what the API server keeps of a write it does not
    refuse (a built-in kind's JSON decodes into its Go type; a CRD's object is pruned to its structural schema)."""
    return _walk(value, schema, schemas, "", patch, structural)[1]


def _walk(value: Any, schema: Obj, schemas: dict[str, Obj], path: str, patch: bool,
          structural: bool) -> tuple[list[str], Any]:
    if isinstance(schema.get("$ref"), str) or isinstance(schema.get("allOf"), list):
        structural = False  # a reference leads to a built-in schema
    schema = _resolve(schema, schemas)
    out: list[str] = []
    if isinstance(value, dict):
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        preserve = schema.get("x-kubernetes-preserve-unknown-fields") is True
        closed = not preserve and extra is not True and (bool(props) or (structural and not props))
        kept: dict[str, Any] = {}
        for key, item in value.items():
            if patch and any(str(key).startswith(d) for d in _DIRECTIVES):
                kept[key] = item
                continue
            where = f"{path}.{key}" if path else str(key)
            if isinstance(props, dict) and key in props:
                found, kept[key] = _walk(item, props[key], schemas, where, patch, structural)
                out += found
            elif isinstance(extra, dict):
                found, kept[key] = _walk(item, extra, schemas, where, patch, structural)
                out += found
            elif closed and not (structural and schema.get("x-kubernetes-embedded-resource")):
                out.append(where)
            else:
                kept[key] = item
        return out, kept
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        items = []
        for i, item in enumerate(value):
            found, one = _walk(item, schema["items"], schemas, f"{path}[{i}]", patch, structural)
            out += found
            items.append(one)
        return out, items
    return out, value


# ---------------------------------------------------------------------------------------------- per cluster


class Published:
    """What one cluster publishes, rebuilt only when its served types or CRDs change (kubectl caches documents
    by the hash in the index's URLs, so a new CRD changes its group's hash)."""

    def __init__(self) -> None:
        self._key: Any = None
        self._docs: Documents | None = None
        self._bytes: dict[str, bytes] = {}

    def documents(self, types: list[ResourceType], crds: list[Obj]) -> Documents:
        key = (tuple(sorted((rt.group, rt.version, rt.plural, rt.kind, rt.namespaced, rt.status, rt.scale)
                            for rt in types)),
               tuple(sorted((c["metadata"]["name"], c["metadata"].get("resourceVersion", "")) for c in crds)))
        if key != self._key or self._docs is None:
            self._key, self._docs, self._bytes = key, Documents(types, crds), {}
        return self._docs

    def v3_bytes(self, docs: Documents, group: str, version: str) -> bytes | None:
        path = gv_path(group, version)
        if path not in self._bytes:
            doc = docs.v3(group, version)
            if doc is None:
                return None
            self._bytes[path] = json.dumps(doc, separators=(",", ":")).encode()
        return self._bytes[path]

    def v3_index(self, docs: Documents) -> Obj:
        paths: Obj = {}
        for group, version in docs.group_versions():
            body = self.v3_bytes(docs, group, version)
            if body is not None:
                path = gv_path(group, version)
                paths[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={etag(body)}"}
        return {"paths": paths}

    def v2_bytes(self, docs: Documents) -> bytes:
        if "v2" not in self._bytes:
            self._bytes["v2"] = json.dumps(docs.v2(), separators=(",", ":")).encode()
        return self._bytes["v2"]


def validate_fields(docs: Documents, rt: ResourceType, body: Any, directive: str, *, patch: bool = False,
                    apply: bool = False, name: str = "", namespace: str | None = None) -> tuple[Any, list[str]]:
    """A write's body as the API server's field validation treats its unknown fields: Strict raises a 400 naming
    them; Warn (the default) and Ignore drop them from what is stored, Warn returning the warnings to send
    (`Warning` headers). Returns (the body to store, the warnings)."""
    from sandbox.kube.errors import ApiError

    directive = directive or "Warn"
    if directive not in ("Strict", "Warn", "Ignore"):
        raise ApiError(400, "BadRequest", f"fieldValidation must be one of Ignore, Warn, Strict, not {directive!r}")
    if not isinstance(body, dict):
        return body, []
    found = docs.schema(rt.group, rt.version, rt.kind)
    if found is None:
        return body, []
    schema = found[1]
    unknown, kept = _walk(body, schema, builtin_schemas(), "", patch, bool(rt.from_crd))
    if not unknown:
        return body, []
    if directive == "Strict":
        if apply:
            where = f"{namespace}/{name}" if namespace else name
            raise ApiError(400, "BadRequest", f"failed to create typed patch object ({where}; {rt.api_version}, "
                           f"Kind={rt.kind}): " + ", ".join(f".{u}: field not declared in schema" for u in unknown))
        listed = ", ".join(f'unknown field "{u}"' for u in unknown)
        raise ApiError(400, "BadRequest", f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: '
                       f"strict decoding error: {listed}")
    return kept, ([f'unknown field "{u}"' for u in unknown] if directive == "Warn" else [])
