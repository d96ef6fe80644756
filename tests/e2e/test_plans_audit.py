"""Plans and audit on the sandbox over HTTP: a dry run answers the plan (changes, quota, priced cost lines)
with zero mutating AWS calls; the real run then makes only changes the plan listed; every real mutation is
audited once with its face and principal (a replay of the same Idempotency-Key marked as one), dry runs never.
One small cluster (1 x ml.c5.large) serves the whole file."""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.e2e.plan_calls import CALL_KIND, request_writes
from tests.e2e.test_clusters import body, group, mutation_calls, name


@pytest.fixture(scope="module")
def made(api: Any) -> dict[str, Any]:
    """Dry run, then the real create through the UI face (and a replay of its key); the cluster ends ACTIVE."""
    cluster, key = name("plan"), uuid.uuid4().hex
    req = body(cluster, instance_groups=[group(instance_type="ml.c5.large", instance_count=1)])
    dry = api.post("/v1/clusters", json=req, key=key, params={"dry_run": "true"}, headers={"X-PodStart-Face": "ui"})
    dry_writes = request_writes(api, dry)
    since = api.mark()
    ui = {"X-PodStart-Face": "ui", "User-Agent": "podstart-web-test"}
    first = api.post("/v1/clusters", json=req, key=key, headers=ui)
    replay = api.post("/v1/clusters", json=req, key=key, headers=ui)
    assert first.status_code == 202, first.text
    assert "dynamodb.PutItem" in request_writes(api, first)  # the call log does tie calls to their request
    done = api.wait_terminal(first.json()["id"])
    assert done["status"] == "SUCCEEDED", done["error"]
    return {"api": api, "cluster": cluster, "key": key, "dry": dry, "dry_writes": dry_writes, "op": done,
            "replay": replay, "real": mutation_calls(api, since)}


def test_a_create_dry_run_answers_the_plan_and_changes_nothing(made: dict[str, Any]) -> None:
    assert made["dry"].status_code == 200, made["dry"].text
    assert made["dry_writes"] == []  # no AWS call but reads, not even to PodStart's own tables
    plan = made["dry"].json()
    assert plan["valid"] is True and plan["kind"] == "cluster.create" and plan["dry_run"] is True
    assert {"AWS::EKS::Cluster", "AWS::SageMaker::Cluster", "AWS::EC2::NatGateway"} <= {
        c["kind"] for c in plan["changes"] if c["action"] == "create"}
    [q] = plan["quota"]
    assert (q["instance_type"], q["requested"], q["ok"]) == ("ml.c5.large", 1, True)
    lines = {line["item"]: line for line in plan["cost"]["lines"]}
    assert lines["HyperPod ml.c5.large"]["unit_hourly"] == pytest.approx(0.119)
    assert all(line["source"] == "AWS Price List, 2026-11-30" for line in lines.values())
    assert plan["cost"]["hourly"] == pytest.approx(0.119 + 0.10 + 0.045, abs=0.01)


def test_the_real_run_makes_only_changes_the_plan_listed(made: dict[str, Any]) -> None:
    planned = {c["kind"] for c in made["dry"].json()["changes"] if c["action"] != "none"}
    calls = [m.split(" ", 1)[0] for m in made["real"]]
    assert "sagemaker.CreateCluster" in calls
    own = ("events.", "stepfunctions.", "ec2.CreateTags")  # PodStart's bus and workflow; tags of planned objects
    unplanned = sorted({c for c in calls if CALL_KIND.get(c) not in planned and not c.startswith(own)})
    assert unplanned == [], unplanned


def test_a_scale_and_a_delete_dry_run_plan_from_the_live_cluster(api: Any, made: dict[str, Any]) -> None:
    cluster = made["cluster"]
    scale = api.http.patch(f"/v1/clusters/{cluster}/instance-groups/accel", json={"instance_count": 3},
                           params={"dry_run": "true"})
    gone = api.http.delete(f"/v1/clusters/{cluster}", params={"confirm": cluster, "dry_run": "true"})
    assert request_writes(api, scale) == [] and request_writes(api, gone) == []
    assert scale.status_code == 200, scale.text
    s = scale.json()
    [change] = s["changes"]
    assert change["details"]["instance_count"] == {"from": 1, "to": 3}
    assert s["quota"][0]["requested"] == 2 and s["cost"]["hourly"] == pytest.approx(2 * 0.119, abs=0.01)
    assert gone.status_code == 200, gone.text
    d = gone.json()
    assert {"AWS::SageMaker::Cluster", "AWS::EKS::Cluster", "AWS::EC2::VPC"} <= {
        c["kind"] for c in d["changes"] if c["action"] == "delete"}
    assert d["cost"]["hourly"] < 0 and d["warnings"]
    detail = api.get(f"/v1/clusters/{cluster}").json()
    assert detail["status"] == "ACTIVE" and detail["instance_groups"][0]["instance_count"] == 1


def test_a_dry_run_refuses_what_the_real_request_refuses(api: Any, made: dict[str, Any]) -> None:
    bad = api.post("/v1/clusters", json=body(made["cluster"]), params={"dry_run": "true"})
    assert bad.status_code == 409  # the name is taken: the same problem the real request answers
    over = api.http.patch(f"/v1/clusters/{made['cluster']}/instance-groups/accel", json={"instance_count": 5000},
                          params={"dry_run": "true"})
    assert over.status_code == 422 and over.json()["errors"][0]["loc"] == ["body", "instance_count"]
    # the one POST without a plan (invoke: a chat changes nothing) refuses a dry run rather than running for real
    r = api.post(f"/v1/clusters/{made['cluster']}/endpoints/some-endpoint/invoke", params={"dry_run": "true"},
                 json={"messages": [{"role": "user", "content": "hello"}]})
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["query", "dry_run"]
    assert request_writes(api, r) == []


def test_each_mutation_is_audited_once_with_face_and_principal(api: Any, viewer: Any,
                                                               made: dict[str, Any]) -> None:
    page = api.get("/v1/audit", params={"cluster": made["cluster"], "limit": 100})
    assert page.status_code == 200, page.text
    creates = [r for r in page.json()["items"] if r["action"] == "create_cluster"]
    assert [r["replay"] for r in creates] == [True, False]  # newest first; dry runs are never recorded
    real = creates[1]
    assert real["face"] == "ui" and real["principal"]["role"] == "admin" and real["user_agent"] == "podstart-web-test"
    assert real["result"] == {"status": 202, "operation_id": made["op"]["id"]}
    assert real["idempotency_key"] == made["key"] and real["request"]["body"]["name"] == made["cluster"]
    assert made["replay"].json()["id"] == made["op"]["id"]
    one = api.get("/v1/audit", params={"cluster": made["cluster"], "limit": 1}).json()
    assert len(one["items"]) == 1 and one["next_token"]
    rest = api.get("/v1/audit", params={"cluster": made["cluster"], "limit": 1, "next_token": one["next_token"]})
    assert rest.json()["items"][0]["id"] != one["items"][0]["id"]

    assert viewer.get("/v1/audit").status_code == 403
    mine = viewer.get("/v1/audit", params={"actor": "me"})
    assert mine.status_code == 200 and all(r["principal"]["role"] == "viewer" for r in mine.json()["items"])
    face = api.get("/v1/audit", params={"face": "mcp", "cluster": made["cluster"]}).json()
    assert face["items"] == []


def test_a_refused_request_with_odd_json_where_names_go_is_audited_all_the_same(api: Any) -> None:
    # a name, a region and a query region that are not strings: refused (422), and the refusal is on the trail
    key = uuid.uuid4().hex
    r = api.post("/v1/clusters", json={"name": 42, "region": {"a": 1}, "instance_groups": []}, key=key,
                 params={"region": ["us-west-2", "eu-west-1"]})
    assert r.status_code == 422, r.text
    mine = [a for a in api.get("/v1/audit", params={"limit": 50}).json()["items"] if a["idempotency_key"] == key]
    assert len(mine) == 1, mine
    assert mine[0]["action"] == "create_cluster" and mine[0]["result"]["status"] == 422
    assert mine[0]["request"]["body"]["name"] == 42 and mine[0]["target"]["cluster"] is None


def test_a_hundred_concurrent_identical_requests_make_one_operation_one_call_one_record(
        sandbox: Any, made: dict[str, Any]) -> None:
    # Given 100 clients sending the same scale with one Idempotency-Key at the same moment
    import httpx

    cluster, key = made["cluster"], uuid.uuid4().hex
    path = f"/v1/clusters/{cluster}/instance-groups/accel"
    auth = {"Authorization": f"Bearer {sandbox.tokens.admin}", "Idempotency-Key": key}
    api = made["api"]
    before = api.mark()
    gate = threading.Barrier(100)

    def send(_: int) -> httpx.Response:
        with httpx.Client(base_url=sandbox.base_url, headers=auth, timeout=120) as client:
            gate.wait()
            return client.patch(path, json={"instance_count": 2})

    with ThreadPoolExecutor(max_workers=100) as pool:
        answers = list(pool.map(send, range(100)))

    # Then every answer names one operation (or asks to retry while the first is still being recorded)
    ops = {r.json()["id"] for r in answers if r.status_code == 202}
    assert len(ops) == 1, {r.status_code for r in answers}
    assert {r.status_code for r in answers} <= {202, 409}, [r.text for r in answers if r.status_code not in (202, 409)]
    [op_id] = ops
    assert api.wait_terminal(op_id)["status"] == "SUCCEEDED"
    # a retry after the change is live (nothing differs any more) still gets the operation that made it
    late = api.http.patch(path, json={"instance_count": 2}, headers={"Idempotency-Key": key})
    assert (late.status_code, late.json().get("id")) == (202, op_id), late.text
    # and AWS saw one UpdateCluster, and the audit trail holds one record of it, the rest marked as replays
    assert len(api.calls("sagemaker", "UpdateCluster", after=before)) == 1
    records = []
    page = api.get("/v1/audit", params={"cluster": cluster, "limit": 100}).json()
    while True:
        records += [r for r in page["items"] if r["idempotency_key"] == key]
        if not page.get("next_token"):
            break
        page = api.get("/v1/audit", params={"cluster": cluster, "limit": 100,
                                            "next_token": page["next_token"]}).json()
    assert len(records) == 101
    originals = [r for r in records if not r["replay"] and r["result"]["status"] == 202]
    assert len(originals) == 1 and originals[0]["result"]["operation_id"] == op_id
    assert all(r["replay"] or r["result"]["status"] == 409 for r in records if r is not originals[0])


def test_the_audit_trail_names_the_face_mcp_and_plain_rest(sandbox: Any, made: dict[str, Any]) -> None:
    from tests.e2e.test_mcp_sandbox import over_http

    api, cluster = made["api"], made["cluster"]
    rest = api.http.put("/v1/preferences", json={"default_region": "us-west-2"})
    assert rest.status_code in (200, 202), rest.text

    # a count that differs from the live one whatever ran before in this module, so the call starts an operation
    live = api.get(f"/v1/clusters/{cluster}").json()["instance_groups"][0]["instance_count"]
    wanted = live - 1 if live > 1 else live + 1

    async def mcp(client: Any) -> Any:
        return await client.call_tool("scale_instance_group",
                                      {"cluster": cluster, "region": "us-west-2", "group": "accel",
                                       "instance_count": wanted})

    result = over_http(sandbox, mcp)
    assert not result.is_error, result
    assert "id" in result.structured_content, (live, wanted, result.structured_content)
    op_id = result.structured_content["id"]
    assert api.wait_terminal(op_id)["status"] == "SUCCEEDED"
    by_mcp = api.get("/v1/audit", params={"cluster": cluster, "face": "mcp"}).json()["items"]
    assert [(r["action"], r["result"]["operation_id"]) for r in by_mcp] == [("scale_instance_group", op_id)]
    assert by_mcp[0]["principal"]["role"] == "admin" and by_mcp[0]["idempotency_key"]  # the gateway derives one
    by_rest = api.get("/v1/audit", params={"face": "rest", "actor": "me", "limit": 20}).json()["items"]
    assert any(r["path"] == "/v1/preferences" and r["method"] == "PUT" for r in by_rest), by_rest
