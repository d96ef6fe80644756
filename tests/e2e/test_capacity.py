"""The capacity advisor end to end on the sandbox, over REST and MCP: a request that fits on demand now, one that fits
only with a training plan starting later (then bought: admin, the fee confirmed, planned then run), one that fits only
split across zones, one that fits nowhere (every reason stated), a quota used by an existing cluster counted, facts
read once per (region, fact) per cache period with an unavailable one reported; and placement inside a cluster
(GPUs per group, a job's dry run saying where it would run or what it would wait for).

The sandbox's seeds (sandbox/aws/quotas.py, sagemaker/training_plans.py, sagemaker/plan_offerings.py, ec2.py):
us-west-2 has 16 x ml.g5.8xlarge of quota, no B200 quota but 4 B200 for sale from 3 days out, two H200 plans of
2 in us-west-2c and us-west-2d and no H200 quota beyond 2. Only this file's tests use us-east-1, us-east-2 and
ap-northeast-1 (the call-count test needs their caches cold)."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from datetime import UTC, datetime
from typing import Any

import pytest

from mcp_gateway.views import BUDGET, result_bytes
from tests.e2e.conftest import eventually
from tests.e2e.plan_calls import request_writes, unplanned, writes
from tests.e2e.test_jobs import IMAGE
from tests.e2e.test_mcp_sandbox import http_client, text

ADVICE = "/v1/capacity/advice"
PLANS = "/v1/capacity/training-plans"
A10G = {"gpus": 4, "gpu_model": "a10g", "hours": 24, "regions": ["us-west-2"]}
B200 = {"gpus": 16, "gpu_model": "b200", "hours": 72, "regions": ["us-west-2"]}
H200 = {"gpus": 32, "gpu_model": "h200", "hours": 48, "regions": ["us-west-2"]}


def advise(api: Any, body: dict[str, Any]) -> dict[str, Any]:
    r = api.post(ADVICE, json=body)
    assert r.status_code == 200, r.text
    return dict(r.json())


def mcp_advise(sandbox: Any, args: dict[str, Any], token: str | None = None) -> tuple[dict[str, Any], int]:
    """advise_capacity over MCP (streamable HTTP): the structured result and its size on the wire."""
    async def go() -> tuple[dict[str, Any], int]:
        async with http_client(f"{sandbox.base_url}/mcp", token or sandbox.tokens.viewer) as client:
            result = await client.call_tool("advise_capacity", args)
            assert not result.is_error, text(result)
            return dict(result.structured_content or {}), len(result.model_dump_json(by_alias=True,
                                                                                    exclude_none=True).encode())
    return asyncio.run(go())


def reasons(advice: dict[str, Any]) -> set[tuple[str | None, str, tuple[str, ...]]]:
    return {(m["instance_type"], m["reason"], tuple(m["capacity_types"])) for m in advice["near_misses"]}


def test_fits_on_demand_now_over_rest_and_mcp_in_one_small_answer(api: Any, viewer: Any, sandbox: Any) -> None:
    # When a viewer asks for 4 A10G GPUs for a day (a read: any role, no audit record)
    audited = len(api.get("/v1/audit", params={"limit": 100}).json()["items"])
    advice = advise(viewer, A10G)

    # Then the best option is 4 x ml.g5.8xlarge on demand, now, with the quota left and the price of the day
    best = advice["options"][0]
    assert (best["instance_type"], best["instance_count"], best["capacity_type"]) == ("ml.g5.8xlarge", 4, "on-demand")
    assert best["starts_now"] and best["availability_zone"] in ("us-west-2a", "us-west-2b", "us-west-2c")
    assert best["availability_zone_id"].startswith("usw2-az")
    assert best["price"]["hourly_usd"] == 13.86 and best["price"]["total_usd"] == 332.74
    assert best["price"]["source"].startswith("AWS Price List")
    assert best["quota"]["limit"] == 16 and best["quota"]["headroom_after"] == 16 - best["quota"]["in_use"] - 4
    assert best["create_cluster"]["path"] == "/v1/clusters" and best["create_cluster"]["body"]["region"] == "us-west-2"
    # the types that do not fit say why, once each (no zone offers them, or their quota is short)
    assert ("ml.g5.12xlarge", "quota_short", ("on-demand", "spot")) in reasons(advice)
    assert all(f["source"] and f["available"] for f in advice["facts"]) and advice["unavailable"] == []
    assert len(api.get("/v1/audit", params={"limit": 100}).json()["items"]) == audited

    # And an agent gets the same first option in one advise_capacity call within 4 KB, with the create call
    view, size = mcp_advise(sandbox, {k: v for k, v in A10G.items()})
    assert size <= BUDGET and result_bytes(view) <= BUDGET
    first = view["options"][0]
    assert (first["instance_type"], first["count"], first["capacity"], first["start"]) == (
        "ml.g5.8xlarge", 4, "on-demand", "now")
    assert first["then"] == {"tool": "create_cluster", "args": best["create_cluster"]["body"]}


def test_a_quota_used_by_an_existing_cluster_is_counted(api: Any) -> None:
    ask = {"instance_type": "ml.g5.8xlarge", "instance_count": 2, "regions": ["us-west-2"],
           "capacity_types": ["on-demand"], "name": f"cap-{uuid.uuid4().hex[:6]}"}
    before = advise(api, ask)["options"][0]

    # When the option's own request creates the cluster (2 x ml.g5.8xlarge on demand)
    create = before["create_cluster"]
    op = api.post(create["path"], json=create["body"], key=uuid.uuid4().hex)
    assert op.status_code == 202, op.text

    # Then the same question at once finds 2 fewer instances under the quota: PodStart's cluster holds them
    after = advise(api, ask)["options"][0]
    assert after["quota"]["in_use"] == before["quota"]["in_use"] + 2
    assert after["quota"]["headroom_after"] == before["quota"]["headroom_after"] - 2
    assert api.wait_terminal(op.json()["id"], 180)["status"] == "SUCCEEDED"
    assert advise(api, ask)["options"][0]["quota"]["in_use"] == after["quota"]["in_use"]


def test_fits_only_with_a_training_plan_that_starts_later_which_an_admin_buys(api: Any, operator: Any,
                                                                                 viewer: Any, sandbox: Any) -> None:
    # Given B200s: no quota, none bought, 4 for sale from 3 days out
    advice = advise(api, B200)
    [option] = advice["options"]
    assert option["capacity_type"] == "training-plan" and not option["starts_now"]
    assert datetime.fromisoformat(option["earliest_start"]) > datetime.now(UTC)
    assert option["price"]["upfront_usd"] > 0 and option["price"]["total_usd"] == option["price"]["upfront_usd"]
    assert ("ml.p6-b200.48xlarge", "quota_short", ("on-demand", "spot")) in reasons(advice)
    [need] = option["requires"]
    assert need["action"] == "buy_training_plan" and need["path"] == PLANS
    arn = option["create_cluster"]["body"]["instance_groups"][0]["training_plan_arn"]
    assert arn.endswith(f":training-plan/{need['body']['name']}")
    # the agent's view says the same: first buy, then create
    view, size = mcp_advise(sandbox, {k: v for k, v in B200.items()})
    assert size <= BUDGET and view["options"][0]["first"][0]["tool"] == "purchase_training_plan"

    # When an operator or a viewer tries to buy it: refused, nothing bought
    purchase = dict(need["body"])
    for who in (operator, viewer):
        assert who.post(PLANS, json={**purchase, "confirm_upfront_fee": need["upfront_fee"]}).status_code == 403
    # an admin's dry run shows the upfront fee and makes no write
    dry = api.post(PLANS, json=purchase, params={"dry_run": "true"})
    assert dry.status_code == 200, dry.text
    plan = dry.json()
    assert request_writes(api, dry) == []
    assert plan["kind"] == "training_plan.purchase" and plan["cost"]["upfront"] == float(need["upfront_fee"])
    [change] = plan["changes"]
    assert (change["kind"], change["action"], change["name"]) == ("AWS::SageMaker::TrainingPlan", "create",
                                                                  purchase["name"])
    assert any(f'confirm_upfront_fee "{need["upfront_fee"]}"' in w for w in plan["warnings"])
    # without the confirmation, or with another fee: 422 naming the field, nothing bought
    since = api.mark()
    for wrong in ({}, {"confirm_upfront_fee": "1.00"}):
        r = api.post(PLANS, json={**purchase, **wrong}, key=uuid.uuid4().hex)
        assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "confirm_upfront_fee"], r.text
    assert [c for c in api.calls(after=since) if c["operation"] == "CreateTrainingPlan"] == []

    # When the admin buys it, the fee repeated, with a key (and retries with the same key)
    key = uuid.uuid4().hex
    bought = api.post(PLANS, json={**purchase, "confirm_upfront_fee": need["upfront_fee"]}, key=key)
    assert bought.status_code == 202, bought.text
    again = api.post(PLANS, json={**purchase, "confirm_upfront_fee": need["upfront_fee"]}, key=key)
    assert again.json()["id"] == bought.json()["id"] and again.headers.get("Idempotent-Replayed") == "true"
    done = api.wait_terminal(bought.json()["id"], 120)

    # Then it is bought once, made only what the plan listed, and the option's create request names it
    assert done["status"] == "SUCCEEDED", done.get("error")
    assert done["result"]["training_plan_arn"] == arn and done["result"]["status"] == "Scheduled"
    made = writes(api, since)
    assert [c["operation"] for c in made if c["service"] == "sagemaker"] == ["CreateTrainingPlan"]
    assert unplanned(plan, made) == []
    listed = api.get("/v1/catalog/training-plans", params={"region": "us-west-2"}).json()["items"]
    assert any(p["arn"] == arn and p["status"] == "Scheduled" for p in listed)
    record = next(a for a in api.get("/v1/audit", params={"limit": 50}).json()["items"]
                  if a.get("action") == "purchase_training_plan" and a.get("result", {}).get("status") == 202)
    assert record["principal"]["role"] == "admin"
    # and asking again finds the capacity already bought, at the plan's start
    owned = advise(api, {**B200, "hours": 48})["options"][0]
    assert owned["price"]["already_paid"] and owned["groups"][0]["training_plan"] == arn


def test_fits_only_split_across_zones_offered_when_same_zone_is_false(api: Any, sandbox: Any) -> None:
    # Given 32 H200 GPUs: the quota holds 2 x p5en, and two plans of 2 are already bought, in two zones
    together = advise(api, H200)
    assert together["options"] == [] and together["summary"].startswith("nothing fits")
    [split] = [m for m in together["near_misses"] if m["reason"] == "split_needed"]
    assert split["instance_type"] == "ml.p5en.48xlarge" and "same_zone: false" in split["would_fit_with"]

    apart = advise(api, {**H200, "same_zone": False})
    [option] = apart["options"]
    assert sorted((g["availability_zone"], g["instance_count"]) for g in option["groups"]) == [
        ("us-west-2c", 2), ("us-west-2d", 2)]
    assert option["price"]["already_paid"] and option["starts_now"]
    groups = option["create_cluster"]["body"]["instance_groups"]
    assert len({g["training_plan_arn"] for g in groups}) == 2 and len({g["availability_zone"] for g in groups}) == 2
    # the same over MCP
    view, size = mcp_advise(sandbox, {**H200, "same_zone": False})
    assert size <= BUDGET and sorted(view["options"][0]["zones"]) == ["us-west-2c x2", "us-west-2d x2"]
    dry = api.post("/v1/clusters", json=option["create_cluster"]["body"], params={"dry_run": "true"})
    assert dry.status_code == 200, dry.text  # the split request passes the create's own checks


def test_fits_nowhere_and_every_reason_is_stated(api: Any, sandbox: Any) -> None:
    advice = advise(api, {"gpus": 64, "gpu_model": "b200", "hours": 72, "regions": ["us-west-2"],
                          "max_hourly_usd": 50})
    assert advice["options"] == [] and advice["summary"].startswith("nothing fits")
    assert reasons(advice) == {("ml.p6-b200.48xlarge", "quota_short", ("on-demand", "spot")),
                               ("ml.p6-b200.48xlarge", "no_plan_offering", ("training-plan",))}
    quota = next(m for m in advice["near_misses"] if m["reason"] == "quota_short")
    assert quota["short_by"] == 8 and "quota increase" in quota["would_fit_with"]
    # a model HyperPod does not offer, a budget, EFA, an unlikely spot: each says so
    assert {m["reason"] for m in advise(api, {"gpus": 8, "gpu_model": "inferentia2",
                                               "regions": ["us-west-2"]})["near_misses"]} == {"no_instance_type"}
    cheap = advise(api, {"instance_type": "ml.g5.8xlarge", "instance_count": 4, "max_hourly_usd": 5,
                         "capacity_types": ["on-demand"], "regions": ["us-west-2"]})
    assert [m["reason"] for m in cheap["near_misses"]] == ["over_budget"]
    spot = advise(api, {"instance_type": "ml.p5.48xlarge", "instance_count": 2, "capacity_types": ["spot"],
                        "regions": ["us-west-2"]})
    assert [m["reason"] for m in spot["near_misses"]] == ["spot_unlikely"]
    view, size = mcp_advise(sandbox, {"gpus": 64, "gpu_model": "b200", "hours": 72, "regions": ["us-west-2"]})
    assert size <= BUDGET and view["options"] == [] and len(view["near_misses"]) == 2
    assert view["next"].startswith("nothing fits")


def test_bad_questions_name_the_field_and_a_cluster_must_exist(api: Any) -> None:
    for body, loc in (({"gpus": 8, "instance_type": "ml.p5.48xlarge", "instance_count": 1}, "instance_type"),
                      ({"gpus": 8, "regions": ["mars-east-1"]}, "regions"), ({"gpus": 8, "hours": 0}, "hours")):
        r = api.post(ADVICE, json=body)
        assert r.status_code == 422 and r.json()["errors"][0]["loc"][:2] == ["body", loc], r.text
    assert api.post(ADVICE, json={"gpus": 8, "cluster": "nope"}).status_code == 404


def test_facts_are_read_once_per_region_and_fact_and_an_unavailable_one_is_reported(api: Any) -> None:
    body = {"gpus": 8, "gpu_model": "any", "hours": 48, "regions": ["us-east-1", "us-east-2", "ap-northeast-1"]}
    first = api.post(ADVICE, json=body)
    assert first.status_code == 200 and first.json()["options"]
    calls = [c for c in api.calls(request_id=first.headers["x-amzn-RequestId"]) if c["service"] != "dynamodb"]
    per_op = Counter((c["operation"], c["region"]) for c in calls)
    # at most one read per region of each regional fact (ListServiceQuotas: one listing of 3 pages of 100); a fact
    # another test of this sandbox read within the cache period is not read again
    for region in body["regions"]:
        for op in ("DescribeAvailabilityZones", "DescribeInstanceTypeOfferings", "ListTrainingPlans"):
            assert per_op[(op, region)] <= 1, (op, region, per_op)
        assert per_op[("ListServiceQuotas", region)] in (0, 3)
    # and at most one per (region, subject) of the others: never the same question twice (prices may come from the
    # price book's own cache, which other tests' plans of this sandbox warm)
    for op in ("GetProducts", "GetSpotPlacementScores", "SearchTrainingPlanOfferings"):
        asked = [(c["region"], str(c["params"])) for c in calls if c["operation"] == op]
        assert len(asked) == len(set(asked)), op
    assert {c["region"] for c in calls if c["operation"] == "GetProducts"} <= {"us-east-1"}  # the Price List's
    assert sum(n for (op, _), n in per_op.items() if op == "GetCallerIdentity") <= 1

    # When the same question comes again within the cache period: no AWS call at all, facts carry their age
    again = api.post(ADVICE, json=body)
    def same(advice: dict[str, Any]) -> list[tuple[Any, ...]]:
        return [(o["region"], o["instance_type"], o["instance_count"], o["capacity_type"], o["availability_zone"],
                 o["price"]) for o in advice["options"]]

    assert same(again.json()) == same(first.json())
    assert [c for c in api.calls(request_id=again.headers["x-amzn-RequestId"]) if c["service"] != "dynamodb"] == []
    assert all(f["fetched_at"] and f["source"] for f in again.json()["facts"])

    # And a fact AWS refuses is reported, the rest still answers
    api.post("/v1/sandbox/faults", json={"service": "ec2", "operation": "GetSpotPlacementScores",
                                         "error_code": "UnauthorizedOperation", "count": 1})
    refused = advise(api, {"instance_type": "ml.g5.8xlarge", "instance_count": 5, "regions": ["us-east-1"],
                           "capacity_types": ["on-demand", "spot"]})
    assert refused["options"][0]["capacity_type"] == "on-demand"
    assert refused["unavailable"] == ["us-east-1 spot_scores ml.g5.8xlarge: no permission (UnauthorizedOperation)"]
    assert [m["reason"] for m in refused["near_misses"]] == ["unknown"]


@pytest.fixture(scope="module")
def gpu_cluster(api: Any) -> str:
    return str(api.make_cluster("gpus", [{"name": "a10g", "instance_type": "ml.g5.8xlarge", "instance_count": 2,
                                          "availability_zone": "us-west-2b"}]))


ENDPOINT = {"name": "chat", "mode": "self-managed", "engine": "vllm", "image": "vllm/vllm-openai:v0.6.3", "gpus": 1,
            "replicas": 2, "model": {"source": "huggingface", "model_id": "org/model"},
            "instance_type": "ml.g5.8xlarge"}


def _job(name: str, nodes: int) -> dict[str, Any]:
    return {"name": name, "recipe": "pytorch", "image": IMAGE, "instance_type": "ml.g5.8xlarge", "nodes": nodes,
            "gpus_per_node": 1, "max_retries": 0, "parameters": {"script": "train.py", "epochs": 1}}


def test_gpus_per_group_and_where_a_job_would_run(api: Any, viewer: Any, gpu_cluster: str) -> None:
    base = f"/v1/clusters/{gpu_cluster}"
    gpus = viewer.get(f"{base}/gpus").json()
    [group] = gpus["groups"]
    assert (group["group"], group["gpus_total"], group["gpus_free"]) == ("a10g", 2, 2)

    # A dry run says where a 2-node job would run now, and where an endpoint's 2 replicas would
    plan = api.post(f"{base}/jobs", json=_job("first", 2), params={"dry_run": "true"}).json()
    assert plan["placement"]["fits_now"] and len(plan["placement"]["nodes"]) == 2
    assert plan["placement"]["groups"] == ["a10g"]
    served = api.post(f"{base}/endpoints", json=ENDPOINT, params={"dry_run": "true"})
    assert served.status_code == 200, served.text
    assert served.json()["placement"]["fits_now"] and served.json()["placement"]["pods"] == 2

    # When a job holds both GPUs
    op = api.post(f"{base}/jobs", json=_job("first", 2), key=uuid.uuid4().hex).json()
    assert api.wait_terminal(op["id"], 180)["status"] == "SUCCEEDED"
    eventually(lambda: api.get(f"{base}/gpus").json()["groups"][0]["gpus_used"] == 2, 60)

    # Then another job's dry run says it would wait, and for what; so does the endpoint's
    later = api.post(f"{base}/jobs", json=_job("second", 1), params={"dry_run": "true"}).json()
    assert not later["placement"]["fits_now"]
    assert "2 of 2 in use" in later["placement"]["waits_for"]
    waits = api.post(f"{base}/endpoints", json=ENDPOINT, params={"dry_run": "true"}).json()["placement"]
    assert not waits["fits_now"] and "2 of 2 in use" in waits["waits_for"]
