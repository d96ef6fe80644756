"""Bad input is a 4xx problem+json, never a 5xx, and is judged in a fixed order.

Who is calling (401) comes before anything about the body; then the body's size (413) before anything reads it;
then, for routes that take a body, its media type (415) and whether it is JSON at all (400); then the fields (422).
A page token this API did not issue is 400 naming `next_token`, never a DynamoDB error.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx
import pytest

LIMIT = 256 * 1024
JSON = {"Content-Type": "application/json"}
A_VALID_CREATE = {"name": "never-made", "region": "us-west-2", "instance_groups": [
    {"name": "accel", "instance_type": "ml.g5.8xlarge", "instance_count": 1,
     "availability_zone": "us-west-2a", "capacity_type": "on-demand"}]}

BODIES: dict[str, tuple[bytes, str]] = {
    "valid": (json.dumps(A_VALID_CREATE).encode(), "application/json"),
    "invalid": (b"{}", "application/json"),
    "malformed": (b"{not json", "application/json"),
    "huge": (b'{"name": "' + b"x" * LIMIT + b'"}', "application/json"),
    "wrong content type": (b"name=demo", "application/x-www-form-urlencoded"),
    "binary": (b"\xff\xfe\x00\x01", "application/octet-stream"),
}
ROUTES = [("POST", "/v1/clusters"), ("PUT", "/v1/preferences"),
          ("PATCH", "/v1/clusters/demo/instance-groups/accel"), ("POST", "/v1/operations/op-abcdef123/retry"),
          ("POST", "/v1/no-such-route")]


def _problem(r: httpx.Response, status: int) -> dict[str, Any]:
    assert r.status_code == status, r.text[:500]
    assert r.headers["content-type"].startswith("application/problem+json")
    body: dict[str, Any] = r.json()
    assert body["status"] == status and body["type"].startswith("https://podstart.dev/problems/")
    assert body["title"] and body["detail"]
    return body


def _send(client: httpx.Client, method: str, path: str, content: bytes, content_type: str | None,
          **kw: Any) -> httpx.Response:
    headers = {"Content-Type": content_type} if content_type else {}
    return client.request(method, path, content=content, headers=headers, **kw)


# -- 401 before anything else ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", BODIES)
@pytest.mark.parametrize(("method", "path"), ROUTES)
def test_no_token_is_401_whatever_the_body(anonymous: httpx.Client, method: str, path: str, kind: str) -> None:
    content, content_type = BODIES[kind]
    body = _problem(_send(anonymous, method, path, content, content_type), 401)
    assert "errors" not in body  # nothing about the body leaks before the caller is known


# -- 413 before the body is read --------------------------------------------------------------------------------------
@pytest.mark.parametrize(("content", "content_type"), [
    (b'{"name": "' + b"x" * LIMIT + b'"}', "application/json"),
    (b"{" * (LIMIT + 1), "application/json"),  # malformed too: the size is judged first
    (b"x" * (LIMIT + 1), "text/plain"),  # a wrong media type too: the size is judged first
])
def test_a_body_over_256_kib_is_413(viewer: Any, content: bytes, content_type: str) -> None:
    body = _problem(_send(viewer.http, "PUT", "/v1/preferences", content, content_type), 413)
    assert str(LIMIT) in body["detail"]


def test_413_holds_on_routes_that_take_no_body(api: Any, viewer: Any) -> None:
    _problem(_send(api.http, "POST", "/v1/operations/op-abcdef123/retry", b"x" * (LIMIT + 1), "text/plain"), 413)
    # a caller without the route's role is refused first: it learns nothing about the body rules
    _problem(_send(viewer.http, "POST", "/v1/operations/op-abcdef123/retry", b"x" * (LIMIT + 1), "text/plain"), 403)


def test_a_body_of_exactly_256_kib_is_read(viewer: Any) -> None:
    content = b'{"default_region": "' + b"x" * (LIMIT - 22) + b'"}'
    assert len(content) == LIMIT
    body = _problem(_send(viewer.http, "PUT", "/v1/preferences", content, "application/json"), 422)
    assert body["errors"][0]["loc"] == ["body", "default_region"]


# -- 400 for a body that is not JSON ----------------------------------------------------------------------------------
@pytest.mark.parametrize("content", [
    b"{not json", b'{"default_region": "us-west-2",}', b'{"default_region": "us-west-2"', b"\xff\xfe{}",
    b'{"default_region": NaN}', b"[" * 100_000 + b"]" * 100_000, b'{"n": 1' + b"0" * 5000 + b"}",
], ids=["not-json", "trailing-comma", "truncated", "not-utf8", "nan", "nested-100k-deep", "5000-digit-number"])
def test_malformed_json_is_400_naming_the_body(viewer: Any, content: bytes) -> None:
    body = _problem(_send(viewer.http, "PUT", "/v1/preferences", content, "application/json"), 400)
    assert [e["loc"] for e in body["errors"]] == [["body"]]
    assert body["errors"][0]["msg"]


def test_valid_json_of_the_wrong_shape_is_still_422(viewer: Any) -> None:
    body = _problem(_send(viewer.http, "PUT", "/v1/preferences", b"[1, 2]", "application/json"), 422)
    assert body["errors"][0]["loc"][0] == "body"


# -- 415 for a body that is not JSON by its media type ------------------------------------------------------------
@pytest.mark.parametrize("content_type", [
    "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/xml",
    "application/jsonx", "application/octet-stream",
])
def test_a_body_of_another_media_type_is_415(viewer: Any, content_type: str) -> None:
    body = _problem(_send(viewer.http, "PUT", "/v1/preferences", b"{}", content_type), 415)
    assert "application/json" in body["detail"]
    assert body["errors"] == [{"loc": ["header", "Content-Type"], "msg": body["errors"][0]["msg"]}]


@pytest.mark.parametrize("content_type", [
    None, "application/json", "application/json; charset=utf-8", "Application/JSON", "application/merge-patch+json",
])
def test_json_media_types_and_no_content_type_are_read_as_json(viewer: Any, content_type: str | None) -> None:
    r = _send(viewer.http, "PUT", "/v1/preferences", b"{}", content_type)
    assert r.status_code == 200 and r.json()["changed"] is False


def test_a_route_that_takes_no_body_ignores_one(viewer: Any) -> None:
    r = _send(viewer.http, "POST", "/v1/operations/op-abcdef123/retry", b"{not json", "text/plain")
    _problem(r, 403)  # the viewer's role is what stops it, not the body


# -- 400 for a crafted page token -----------------------------------------------------------------------------------
def _token(key: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(key).encode()).decode()


CREATED = {"pk": {"S": "op-abcdef123"}, "list_pk": {"S": "OP"},
           "created_key": {"S": "2026-01-01T00:00:00Z#op-abcdef123"}}
BY_DEMO = {"pk": {"S": "op-abcdef123"}, "target_key": {"S": "cluster/demo"},
           "created_key": {"S": "2026-01-01T00:00:00Z#op-abcdef123"}}
CRAFTED: dict[str, tuple[dict[str, str], str]] = {
    "not base64 json": ({}, "!!!"),
    "a list": ({}, _token([1])),
    "wrong keys": ({}, _token({"a": 1})),
    "another index's keys": ({}, _token(BY_DEMO)),
    "another index's keys (by cluster)": ({"cluster": "demo"}, _token(CREATED)),
    "a number where a string is": ({}, _token({**CREATED, "pk": {"N": "1"}})),
    "not a string": ({}, _token({**CREATED, "created_key": {"S": 1}})),
    "an empty string": ({}, _token({**CREATED, "pk": {"S": ""}})),
    "an extra attribute": ({}, _token({**CREATED, "status": {"S": "RUNNING"}})),
    "a second type": ({}, _token({**CREATED, "pk": {"S": "op-abcdef123", "N": "1"}})),
    "another partition": ({}, _token({**CREATED, "list_pk": {"S": "NOT-OP"}})),
    "another cluster": ({"cluster": "demo"}, _token({**BY_DEMO, "target_key": {"S": "cluster/other"}})),
}


@pytest.mark.parametrize("case", CRAFTED)
def test_a_crafted_next_token_is_400(viewer: Any, case: str) -> None:
    params, token = CRAFTED[case]
    body = _problem(viewer.get("/v1/operations", params={**params, "next_token": token}), 400)
    assert body["errors"] == [{"loc": ["query", "next_token"], "msg": body["errors"][0]["msg"]}]


@pytest.mark.parametrize(("params", "key"), [({}, CREATED), ({"cluster": "demo"}, BY_DEMO)])
def test_a_well_formed_next_token_is_accepted(viewer: Any, params: dict[str, str], key: dict[str, Any]) -> None:
    r = viewer.get("/v1/operations", params={**params, "next_token": _token(key)})
    assert r.status_code == 200, r.text


@pytest.mark.parametrize("token", ["999999", "0", "\u0661\u0662", "abc", "-1", "1" * 7, "1\n"])
def test_the_clusters_page_token_never_500s(viewer: Any, token: str) -> None:
    r = viewer.get("/v1/clusters", params={"next_token": token})
    if token.isascii() and token.isdigit() and len(token) <= 6:
        assert r.status_code == 200 and "items" in r.json()
    elif r.status_code != 200:  # Unicode digits read as a number; anything else is a field error
        _problem(r, 422)


@pytest.mark.parametrize("region", ["la-" + "abc-" * 20 + "9", "us-west-2x", "US-WEST-2", "us-west-", "us--west-2"])
def test_a_region_botocore_would_refuse_is_a_422_naming_region(viewer: Any, region: str) -> None:
    for path in ("/v1/clusters", "/v1/clusters/some-cluster"):
        r = viewer.get(path, params={"region": region})
        assert r.status_code == 422, (path, r.text)
        assert any(e["loc"][-1] == "region" for e in r.json()["errors"]), r.text


# -- every /v1 path reaches the API, whatever its characters ---------------------------------------------------------
@pytest.mark.parametrize("path", ["/v1/clusters/a%0Ab", "/v1/operations/op-a%0A/retry", "/v1/%0A"])
def test_a_path_with_an_encoded_newline_is_still_the_apis_to_answer(anonymous: httpx.Client, viewer: Any,
                                                                     path: str) -> None:
    _problem(anonymous.get(path), 401)
    _problem(viewer.get(path), 404)
