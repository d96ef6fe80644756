"""The sandbox's one port: health, auth, problem+json, the sandbox controls, live events."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
from websockets.sync.client import connect


def test_healthz_answers_without_a_token(anonymous: httpx.Client) -> None:
    assert anonymous.get("/healthz").json() == {"status": "ok"}


def test_every_other_route_requires_the_token(anonymous: httpx.Client) -> None:
    for path in ("/v1/operations", "/v1/catalog/regions", "/v1/openapi.json", "/v1/sandbox", "/v1/sandbox/calls"):
        r = anonymous.get(path)
        assert r.status_code == 401, path
        assert r.headers["content-type"].startswith("application/problem+json")
        assert r.json()["status"] == 401


def test_unknown_route_is_a_problem_404(api: Any) -> None:
    r = api.get("/v1/no-such-thing")
    assert r.status_code == 404 and r.json()["title"] == "Not found"


def test_responses_carry_a_correlation_id(api: Any) -> None:
    assert api.get("/v1/catalog/regions").headers["x-correlation-id"]


def test_viewer_may_read_but_not_mutate(viewer: Any) -> None:
    assert viewer.get("/v1/operations").status_code == 200
    r = viewer.post("/v1/operations/op-abcdef123/retry")
    assert r.status_code == 403 and "operator" in r.json()["detail"]
    assert viewer.post("/v1/sandbox/faults", json={}).status_code == 403


def test_sandbox_info_says_where_aws_and_kubernetes_are(api: Any) -> None:
    info = api.get("/v1/sandbox").json()
    assert info["aws_endpoint"].startswith("http://127.0.0.1:") and info["time_scale"] > 1
    assert isinstance(info["kubernetes"], dict)


def test_fault_requests_are_validated(api: Any) -> None:
    r = api.post("/v1/sandbox/faults", json={"service": "ec2"})
    assert r.status_code == 422
    assert api.http.delete("/v1/sandbox/faults").status_code == 204


def test_openapi_document_is_generated_from_the_models(api: Any) -> None:
    doc = api.get("/v1/openapi.json").json()
    assert doc["openapi"].startswith("3.")
    assert "/v1/operations/{operation_id}" in doc["paths"] and "/v1/catalog/instance-types" in doc["paths"]


def test_preferences_are_per_user_and_validated(api: Any, viewer: Any) -> None:
    r = api.http.put("/v1/preferences", json={"active_cluster": {"name": "demo", "region": "us-west-2"}})
    assert r.status_code == 200 and r.json()["active_cluster"]["name"] == "demo" and r.json()["changed"]
    assert api.http.put("/v1/preferences", json={"active_cluster": {"name": "demo", "region": "us-west-2"}}
                        ).json()["changed"] is False
    assert viewer.get("/v1/preferences").json()["active_cluster"] is None
    bad = api.http.put("/v1/preferences", json={"active_cluster": {"name": "Bad_Name", "region": "us-west-2"}})
    assert bad.status_code == 422 and bad.json()["errors"][0]["loc"] == ["body", "active_cluster", "name"]


def test_live_events_over_websocket(sandbox: Any, api: Any) -> None:
    url = sandbox.base_url.replace("http://", "ws://") + "/ws"
    with connect(url, open_timeout=10) as ws:
        ws.send(json.dumps({"token": sandbox.tokens.admin}))
        assert json.loads(ws.recv(timeout=10))["type"] == "ready"
        sandbox.feed.publish({"detail_type": "Operation Status Changed", "metadata": {}, "data": {"x": 1}})
        event = json.loads(ws.recv(timeout=10))
        assert event["type"] == "event" and event["data"] == {"x": 1}


def test_websocket_without_token_is_closed(sandbox: Any) -> None:
    url = sandbox.base_url.replace("http://", "ws://") + "/ws"
    with connect(url, open_timeout=10) as ws:
        ws.send(json.dumps({"token": "wrong"}))
        assert json.loads(ws.recv(timeout=10))["status"] == 401


def test_me_says_who_is_calling_and_what_they_may_do(api: Any, operator: Any, viewer: Any) -> None:
    me = {role: client.get("/v1/me").json() for role, client in
          (("admin", api), ("operator", operator), ("viewer", viewer))}
    assert {role: m["role"] for role, m in me.items()} == {"admin": "admin", "operator": "operator", "viewer": "viewer"}
    assert [me[r]["can_mutate"] for r in ("admin", "operator", "viewer")] == [True, True, False]
    assert [me[r]["can_delete_clusters"] for r in ("admin", "operator", "viewer")] == [True, False, False]


def test_the_token_files_hold_each_roles_token_and_only_the_owner_reads_them(sandbox: Any) -> None:
    from sandbox.app import write_tokens

    files = write_tokens(sandbox)
    assert {role: p.name for role, p in files.items()} == {
        "admin": "token", "operator": "operator-token", "viewer": "viewer-token"}
    for role, path in files.items():
        assert path.read_text().strip() == getattr(sandbox.tokens, role)
        assert path.stat().st_mode & 0o777 == 0o600


def test_operator_creates_a_cluster_but_only_an_admin_deletes_it(api: Any, operator: Any, viewer: Any) -> None:
    cluster = f"op-{uuid.uuid4().hex[:6]}"
    body = {"name": cluster, "region": "us-west-2", "instance_groups": [
        {"name": "accel", "instance_type": "ml.c5.large", "instance_count": 1, "availability_zone": "us-west-2a"}]}
    assert viewer.post("/v1/clusters", json=body).status_code == 403
    r = operator.post("/v1/clusters", json=body, key=uuid.uuid4().hex)
    assert r.status_code == 202, r.text
    assert r.json()["principal"] == {"sub": "sandbox-operator", "name": "sandbox-operator", "role": "operator"}
    assert operator.wait_terminal(r.json()["id"])["status"] == "SUCCEEDED"

    for client in (operator, viewer):
        denied = client.http.delete(f"/v1/clusters/{cluster}", params={"confirm": cluster})
        assert denied.status_code == 403, denied.text
        assert denied.headers["content-type"].startswith("application/problem+json")
        assert "admin" in denied.json()["detail"]
    assert api.get(f"/v1/clusters/{cluster}").json()["status"] == "ACTIVE"
    deleted = api.http.delete(f"/v1/clusters/{cluster}", params={"confirm": cluster})
    assert deleted.status_code == 202, deleted.text
    assert api.wait_terminal(deleted.json()["id"])["status"] == "SUCCEEDED"


def test_viewer_cannot_mutate_anything(api: Any, viewer: Any) -> None:
    cluster = api.get("/v1/clusters").json()["items"]
    before = len(api.get("/v1/operations").json()["items"])
    valid_create = {"name": "viewer-try", "region": "us-west-2", "instance_groups": [
        {"name": "accel", "instance_type": "ml.c5.large", "instance_count": 1, "availability_zone": "us-west-2a"}]}
    attempts = [("POST", "/v1/clusters", valid_create),
                ("DELETE", "/v1/clusters/x?confirm=x", None),
                ("POST", "/v1/operations/op-abcdef123/retry", None),
                ("POST", "/v1/operations/op-abcdef123/cancel", None),
                ("POST", "/v1/sandbox/faults", {"service": "ec2", "operation": "CreateVpc", "error_code": "X"}),
                ("POST", "/v1/sandbox/states", {"service": "eks", "cluster": "x", "status": "FAILED"})]
    for method, path, body in attempts:
        r = viewer.http.request(method, path, json=body)
        assert r.status_code == 403, (method, path, r.status_code, r.text)
        assert r.json()["status"] == 403
    assert len(api.get("/v1/operations").json()["items"]) == before
    assert api.get("/v1/clusters").json()["items"] == cluster
