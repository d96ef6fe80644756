"""The catalog keeps tools/list small without losing meaning: slimmed schemas, gateway arguments where an
answer can be big, every argument described, every tool annotated; rarer fields folded into `more`, nested objects
as one-line signatures, shared arguments (region, detail, limit, idempotency_key) taken but not repeated, and the
whole schema in each tool's resource."""

from __future__ import annotations

from typing import Any

from mcp_gateway.calls import ArgumentError, build_request
from mcp_gateway.catalog import DETAIL_ARG, IDEMPOTENCY_ARG, MORE_ARG, Known, build_catalog, gateway_args, reference


def doc(paths: dict[str, Any]) -> dict[str, Any]:
    return {"openapi": "3.1.0", "paths": paths}


def test_optional_arguments_lose_their_null_option_but_a_put_keeps_it() -> None:
    nullable = {"anyOf": [{"type": "string", "pattern": "^x$", "maxLength": 9}, {"type": "null"}],
                "description": "d", "title": "T"}
    body = {"content": {"application/json": {"schema": {
        "type": "object", "properties": {"a": nullable, "b": nullable}, "required": ["b"],
        "additionalProperties": False}}}}
    specs = {s.name: s for s in build_catalog(doc({
        "/v1/things": {"post": {"operationId": "create_thing", "requestBody": body,
                                "parameters": [{"name": "q", "in": "query", "schema": nullable}]},
                       "put": {"operationId": "set_thing", "requestBody": body}}}))}

    post = specs["create_thing"].input_schema["properties"]
    put = specs["set_thing"].input_schema["properties"]

    assert post["q"] == {"type": "string", "description": "d"}
    assert post["a"] == {"type": "string", "description": "d"}
    assert post["b"]["anyOf"] == [{"type": "string"}, {"type": "null"}]  # required and nullable: null means null
    assert put["a"]["anyOf"] == [{"type": "string"}, {"type": "null"}]  # a PUT clears with null


def test_numbers_are_integers_where_they_are_whole_and_bounds_stay_in_the_resource() -> None:
    specs = build_catalog(doc({"/v1/things": {"get": {"operationId": "list_things", "parameters": [
        {"name": "size", "in": "query", "schema": {"type": "integer", "minimum": 1.0, "maximum": 100.0}}]}}}))

    full = specs[0].full_schema["properties"]["size"]
    assert full["maximum"] == 100 and isinstance(full["maximum"], int)
    # tools/list leaves the bounds to the REST API's 422 (the budget); the resource keeps them
    assert "maximum" not in specs[0].input_schema["properties"]["size"]
    assert reference(specs[0])["arguments"]["properties"]["size"]["maximum"] == 100


def test_reads_that_can_be_big_take_detail_and_lists_page() -> None:
    specs = {s.name: s for s in build_catalog(doc({
        "/v1/things": {"get": {"operationId": "list_things"}},
        "/v1/things/{thing}": {"get": {"operationId": "get_thing", "parameters": [
            {"name": "thing", "in": "path", "required": True, "schema": {"type": "string"}}]}},
        "/v1/paged": {"get": {"operationId": "list_paged", "parameters": [
            {"name": "next_token", "in": "query", "schema": {"type": "string"}}]}},
        "/v1/catalog/regions": {"get": {"operationId": "regions"}},
    }))}

    assert gateway_args(specs["list_things"]) == {DETAIL_ARG, "limit", "next_token"}
    assert specs["list_things"].paging == "gateway"
    # detail and limit are taken by every read that has them, but listed once (the server's instructions)
    assert set(specs["list_things"].input_schema["properties"]) == {"next_token"}
    assert gateway_args(specs["get_thing"]) == {DETAIL_ARG} and specs["get_thing"].paging is None
    assert gateway_args(specs["list_paged"]) == {DETAIL_ARG} and specs["list_paged"].paging == "rest"
    assert gateway_args(specs["list_regions"]) == set()  # known small: no detail


def test_every_live_tool_is_described_and_annotated() -> None:
    from functions.api.handler import openapi_document

    for spec in build_catalog(openapi_document()):
        assert spec.description, spec.name
        assert all(p.get("description") for p in spec.input_schema["properties"].values()), spec.name
        # MCP's defaults say the rest: readOnlyHint false, idempotentHint false; destructiveHint is always said
        assert spec.annotations.get("readOnlyHint", False) is spec.read_only, spec.name
        if spec.mutating:
            assert "destructiveHint" in spec.annotations, spec.name
            assert spec.annotations.get("idempotentHint", False) is spec.idempotent, spec.name
            assert IDEMPOTENCY_ARG in reference(spec)["taken_but_not_listed"], spec.name
        # No pattern keyword and no additionalProperties flag anywhere (a map's value schema may stay; a field
        # may be named log_pattern).
        assert not _keys_in(spec.input_schema, "pattern"), spec.name
        assert not any(isinstance(v, bool) for v in _keys_in(spec.input_schema, "additionalProperties")), spec.name


def _keys_in(schema: Any, key: str) -> list[Any]:
    """Every value of `key` used as a schema keyword (not as a property name) anywhere in the schema."""
    found: list[Any] = []
    if isinstance(schema, list):
        for s in schema:
            found += _keys_in(s, key)
    elif isinstance(schema, dict):
        for k, v in schema.items():
            if k == key:
                found.append(v)
            if k == "properties" and isinstance(v, dict):
                for sub in v.values():
                    found += _keys_in(sub, key)
            elif k != "properties":
                found += _keys_in(v, key)
    return found


BODY = {"content": {"application/json": {"schema": {"type": "object", "required": ["name"], "properties": {
    "name": {"type": "string", "description": "Name"},
    "model": {"type": "object", "description": "Model", "required": ["source"], "properties": {
        "source": {"type": "string", "enum": ["s3", "huggingface"]}, "uri": {"type": "string"}}},
    "groups": {"type": "array", "description": "Groups", "items": {"type": "object", "required": ["n"], "properties": {
        "n": {"type": "string"}, "count": {"type": "integer", "minimum": 1}}}},
    "rare": {"type": "boolean", "description": "Rarely set"},
    "rarer": {"type": "integer", "description": "Even rarer"}}}}}}
PATHS = {"/v1/clusters/{cluster}/things": {"post": {
    "operationId": "make_thing", "requestBody": BODY,
    "parameters": [{"name": "cluster", "in": "path", "required": True, "schema": {"type": "string"}},
                   {"name": "region", "in": "query", "schema": {"type": "string"}, "description": "Region"}]}}}


def _folding(monkeypatch: Any) -> Any:
    from mcp_gateway import catalog

    monkeypatch.setitem(catalog.KNOWN, ("post", "/v1/clusters/{cluster}/things"),
                        Known("make_thing", "Make a thing.", more=("rare", "rarer")))
    return {s.name: s for s in build_catalog(doc(PATHS))}["make_thing"]


def test_nested_objects_are_one_line_signatures_and_rare_fields_fold_into_more(monkeypatch: Any) -> None:
    spec = _folding(monkeypatch)
    props = spec.input_schema["properties"]

    assert props["model"] == {"type": "object", "description": "Model: {source: s3|huggingface, uri?}"}
    assert props["groups"]["description"] == "Groups: [{n, count?: int}]"
    assert "rare" not in props and "rarer" not in props
    assert props[MORE_ARG]["description"] == "Also: rare, rarer"
    assert "region" not in props and "region/name" in spec.full_schema["properties"]["cluster"]["description"]
    # the resource has every field as the REST API describes it
    assert set(reference(spec)["arguments"]["properties"]) >= {"model", "rare", "rarer", "region"}
    assert reference(spec)["folded_into_more"] == ["rare", "rarer"]


def test_more_fields_go_into_the_body_from_more_or_the_top_level_and_region_name_splits(monkeypatch: Any) -> None:
    spec = _folding(monkeypatch)

    req, _ = build_request(spec, {"cluster": "us-east-1/demo", "name": "a", MORE_ARG: {"rare": True}, "rarer": 3})
    assert req.path == "/v1/clusters/demo/things" and req.query == {"region": "us-east-1"}
    assert req.body == {"name": "a", "rare": True, "rarer": 3}
    req, _ = build_request(spec, {"cluster": "demo", "region": "us-west-2", "name": "a"})  # region: still taken
    assert req.query == {"region": "us-west-2"}


def test_more_refuses_a_field_the_tool_does_not_fold(monkeypatch: Any) -> None:
    import pytest

    spec = _folding(monkeypatch)
    with pytest.raises(ArgumentError, match="more takes rare, rarer; not name"):
        build_request(spec, {"cluster": "demo", "name": "a", MORE_ARG: {"name": "b"}})
    with pytest.raises(ArgumentError, match="does not take bogus"):
        build_request(spec, {"cluster": "demo", "name": "a", "bogus": 1})
