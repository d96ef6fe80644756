"""The catalog keeps tools/list small without losing meaning: slimmed schemas, gateway arguments where an
answer can be big, every argument described, every tool annotated."""

from __future__ import annotations

from typing import Any

from mcp_gateway.catalog import DETAIL_ARG, IDEMPOTENCY_ARG, build_catalog, gateway_args


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


def test_numbers_are_integers_where_they_are_whole_and_bounds_stay() -> None:
    specs = build_catalog(doc({"/v1/things": {"get": {"operationId": "list_things", "parameters": [
        {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1.0, "maximum": 100.0}}]}}}))

    assert specs[0].input_schema["properties"]["limit"]["maximum"] == 100
    assert isinstance(specs[0].input_schema["properties"]["limit"]["maximum"], int)


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
    assert gateway_args(specs["get_thing"]) == {DETAIL_ARG} and specs["get_thing"].paging is None
    assert gateway_args(specs["list_paged"]) == {DETAIL_ARG} and specs["list_paged"].paging == "rest"
    assert gateway_args(specs["list_regions"]) == set()  # known small: no detail


def test_every_live_tool_is_described_and_annotated() -> None:
    from functions.api.handler import openapi_document

    for spec in build_catalog(openapi_document()):
        assert spec.description, spec.name
        assert all(p.get("description") for p in spec.input_schema["properties"].values()), spec.name
        assert spec.annotations["readOnlyHint"] is spec.read_only, spec.name
        if spec.mutating:
            assert {"destructiveHint", "idempotentHint"} <= set(spec.annotations), spec.name
            assert IDEMPOTENCY_ARG in spec.input_schema["properties"], spec.name
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
