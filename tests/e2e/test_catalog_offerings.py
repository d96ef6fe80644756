"""Inspection that answers the question asked: one call says where a type can run; filters narrow the
big lists to what was asked."""

from __future__ import annotations

from typing import Any


def test_offerings_say_per_zone_where_a_type_runs_with_quota_plans_and_spot(api: Any) -> None:
    r = api.get("/v1/catalog/offerings", params={"region": "us-west-2", "instance_type": "ml.p5.48xlarge"})
    assert r.status_code == 200, r.text
    body = r.json()
    zones = {z["availability_zone"]: z for z in body["zones"]}
    assert body["known"] and body["quota"]["limit"] >= 1 and body["instance"]["accelerator"]["count"] == 8
    assert any(z["offered"] for z in zones.values())
    assert all(z["quota_available"] == body["quota"]["available"] for z in zones.values())
    with_plans = [z for z in zones.values() if z["training_plans"]]
    assert with_plans and all(p["available_instance_count"] > 0 for z in with_plans for p in z["training_plans"])
    assert "offered in" in body["summary"]


def test_offerings_of_an_unknown_type_say_so_and_bad_input_names_the_field(api: Any) -> None:
    r = api.get("/v1/catalog/offerings", params={"region": "us-west-2", "instance_type": "ml.zz9.huge"})
    assert r.status_code == 200 and r.json()["known"] is False and not any(z["offered"] for z in r.json()["zones"])
    bad = api.get("/v1/catalog/offerings", params={"region": "us-west-2", "instance_type": "p5.48xlarge"})
    assert bad.status_code == 422 and bad.json()["errors"][0]["loc"] == ["query", "instance_type"]


def test_filters_narrow_quotas_instance_types_and_training_plans(api: Any) -> None:
    q = api.get("/v1/catalog/quotas", params={"region": "us-west-2", "instance_type": "ml.g5.8xlarge"}).json()
    assert [i["instance_type"] for i in q["items"]] == ["ml.g5.8xlarge"]
    t = api.get("/v1/catalog/instance-types", params={"region": "us-west-2", "availability_zone": "us-west-2a",
                                                      "instance_type": "ml.g5.8xlarge"}).json()
    assert [i["name"] for i in t["items"]] == ["ml.g5.8xlarge"]
    plans = api.get("/v1/catalog/training-plans", params={"region": "us-west-2",
                                                          "instance_type": "ml.p5en.48xlarge"}).json()["items"]
    assert plans and all(p["instance_type"] == "ml.p5en.48xlarge" for p in plans)
    zoned = api.get("/v1/catalog/training-plans", params={"region": "us-west-2", "availability_zone": "usw2-az2"})
    assert all(p["availability_zone"] in ("us-west-2a", "usw2-az2") for p in zoned.json()["items"])
