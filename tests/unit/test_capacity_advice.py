"""The capacity advisor's rules, on facts given here (no AWS): which options fit, the one reason each near miss
was left out, the ranking, the requests each option carries; the accelerator table against EC2's shapes."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import botocore.session
import pytest
from pydantic import ValidationError

from functions.domain import catalog as cat
from functions.domain.capacity import accelerators as acc
from functions.domain.capacity.advice import advise
from functions.domain.capacity.facts import Fact, PlanOffering, Price, QuotaLimit, RegionFacts, ReservedSegment
from functions.domain.capacity.inputs import ClusterContext, plan_searches, priced_types, wants
from functions.domain.capacity.models import RESERVABLE, SPOT_MIN_SCORE, AdviceRequest, Reason
from functions.domain.clusters.models import ClusterCreate, InstanceGroupAdd

NOW = datetime(2026, 12, 5, 15, 0, tzinfo=UTC)
EVENTS = Path(__file__).resolve().parents[1] / "events" / "ec2"
ZONES = [cat.AvailabilityZone(name="us-west-2a", id="usw2-az2", state="available"),
         cat.AvailabilityZone(name="us-west-2b", id="usw2-az1", state="available"),
         cat.AvailabilityZone(name="us-west-2c", id="usw2-az3", state="available")]


def fact(name: str, value: Any, unavailable: str | None = None, subject: str | None = None) -> Fact[Any]:
    return Fact(name=name, source=f"test:{name}", value=None if unavailable else value, fetched_at=NOW,
                unavailable=unavailable, subject=subject)


def plan(name: str, itype: str, zone: str, available: int, *, start: datetime | None = None,
         days: int = 30) -> cat.TrainingPlan:
    begin = start or NOW - timedelta(days=1)
    return cat.TrainingPlan(arn=f"arn:aws:sagemaker:us-west-2:123456789012:training-plan/{name}", name=name,
                            status="Active", instance_type=itype, availability_zone=zone,
                            total_instance_count=available, available_instance_count=available, start_time=str(begin),
                            end_time=str(begin + timedelta(days=days)))


def region(offered: dict[str, set[str]], quotas: dict[str, int], *, in_use: dict[str, int] | None = None,
           plans: list[cat.TrainingPlan] | None = None, prices: dict[str, float] | None = None,
           offerings: dict[str, list[PlanOffering]] | None = None, spot: dict[str, dict[str, int]] | None = None,
           quotas_unavailable: str | None = None, name: str = "us-west-2") -> RegionFacts:
    return RegionFacts(
        region=name, zones=fact("zones", ZONES),
        offerings=fact("offerings", {z: frozenset(t) for z, t in offered.items()}),
        quotas=fact("quotas", {t: QuotaLimit(instance_type=t, quota_code=f"L-{t[-6:]}", quota_name=f"{t} for cluster "
                                             f"usage", limit=n) for t, n in quotas.items()},
                    unavailable=quotas_unavailable),
        training_plans=fact("training_plans", plans or []), in_use=dict(in_use or {}),
        prices={t: fact("price", Price(hourly_usd=p, source="AWS Price List, 2026-11-30"), subject=t)
                for t, p in (prices or {}).items()},
        plan_offerings={t: fact("plan_offerings", o, subject=t) for t, o in (offerings or {}).items()},
        spot_scores={t: fact("spot_scores", s, subject=t) for t, s in (spot or {}).items()})


def offering(itype: str, count: int, zone: str, start: datetime, hours: int, fee: str,
             oid: str = "tpo-1") -> PlanOffering:
    return PlanOffering(offering_id=oid, upfront_fee=fee, currency="USD", duration_hours=hours, segments=(
        ReservedSegment(instance_type=itype, instance_count=count, availability_zone=zone, start_time=start,
                        end_time=start + timedelta(hours=hours), duration_hours=hours),))


def ask(**kw: Any) -> AdviceRequest:
    return AdviceRequest.model_validate(kw)


# --- the accelerator table --------------------------------------------------------------------------------------------

def test_the_accelerator_table_matches_ec2_describe_instance_types() -> None:
    # Given real DescribeInstanceTypes entries (a recorded fixture, and moto's copy of EC2's full answer)
    from moto.ec2.models.instance_types import INSTANCE_TYPES

    recorded = {e["InstanceType"]: e for e in json.loads(
        (EVENTS / "describe_instance_types_accelerated.json").read_text())["InstanceTypes"]}
    shape = botocore.session.get_session().get_service_model("ec2").shape_for("InstanceTypeInfo")
    checked = 0
    for row in acc.ACCELERATORS.values():
        entry = recorded.get(cat.ec2_name(row.instance_type)) or INSTANCE_TYPES.get(cat.ec2_name(row.instance_type))
        if entry is None:
            assert row.instance_type == "ml.p6e-gb200.36xlarge"  # the one UltraServer type EC2 does not list
            continue
        # Then every field the table reads is named as botocore's EC2 model names it
        assert {"GpuInfo", "NeuronInfo", "NetworkInfo"} <= set(shape.members)
        devices = (entry.get("GpuInfo") or {}).get("Gpus") or (entry.get("NeuronInfo") or {}).get("NeuronDevices")
        assert devices, row.instance_type
        d = devices[0]
        assert (d["Name"], sum(x["Count"] for x in devices), d["MemoryInfo"]["SizeInMiB"]) == (
            row.name, row.count, row.memory_mib), row.instance_type
        assert row.kind == ("gpu" if entry.get("GpuInfo") else "neuron")
        net = entry["NetworkInfo"]
        efa = net.get("EfaInfo", {}).get("MaximumEfaInterfaces", 0) if net.get("EfaSupported") else 0
        assert row.efa_interfaces == efa, row.instance_type
        # and the catalog's own reading of the entry agrees with the table
        parsed = cat.instance_type_from_ec2(entry)
        assert parsed.accelerator is not None and parsed.accelerator.count == row.count
        assert parsed.efa_supported == row.efa
        checked += 1
    assert checked == len(acc.ACCELERATORS) - 1
    assert set(recorded) <= {cat.ec2_name(t) for t in acc.ACCELERATORS}


def test_the_table_covers_every_accelerated_hyperpod_type_and_only_those() -> None:
    from moto.ec2.models.instance_types import INSTANCE_TYPES

    model = botocore.session.get_session().get_service_model("sagemaker")
    hyperpod = set(model.shape_for("ClusterInstanceType").enum)
    accelerated = {t for t in hyperpod if (INSTANCE_TYPES.get(cat.ec2_name(t)) or {}).get("GpuInfo")
                   or (INSTANCE_TYPES.get(cat.ec2_name(t)) or {}).get("NeuronInfo")}
    assert accelerated <= set(acc.ACCELERATORS)
    assert set(acc.ACCELERATORS) <= hyperpod
    # the types a training plan can reserve are SearchTrainingPlanOfferings' enum
    assert set(model.shape_for("ReservedCapacityInstanceType").enum) == RESERVABLE
    # NVLink on the 8-GPU training types, not on PCIe inference types
    assert acc.of("ml.p5.48xlarge").nvlink and acc.of("ml.p4d.24xlarge").nvlink  # type: ignore[union-attr]
    assert not acc.of("ml.g5.48xlarge").nvlink and not acc.of("ml.p5.4xlarge").nvlink  # type: ignore[union-attr]
    assert acc.of("ml.p5.48xlarge").label == "8 x NVIDIA H100 80 GiB"  # type: ignore[union-attr]


def test_gpus_become_whole_instances_per_type() -> None:
    found = {w.instance_type: w.nodes for w in wants(ask(gpus=16, gpu_model="h100"))}
    assert found == {"ml.p5.48xlarge": 2, "ml.p5.4xlarge": 16}
    assert {w.instance_type: w.nodes for w in wants(ask(gpus=12, gpu_model="a100"))} == {
        "ml.p4d.24xlarge": 2, "ml.p4de.24xlarge": 2}
    assert wants(ask(gpus=8, gpu_model="inferentia2")) == []  # HyperPod offers no Inferentia2 type
    assert [(w.instance_type, w.nodes) for w in wants(ask(instance_type="ml.g5.8xlarge", instance_count=3))] == [
        ("ml.g5.8xlarge", 3)]


# --- the request ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("body", "loc"), [
    ({}, "instance_type"),
    ({"gpus": 8, "instance_type": "ml.p5.48xlarge", "instance_count": 1}, "instance_type"),
    ({"instance_type": "ml.p5.48xlarge"}, "instance_count"),
    ({"gpus": 8, "instance_count": 2}, "instance_count"),
    ({"gpu_model": "h100"}, "gpu_model"),
    ({"gpus": 8, "gpu_model": "h1000"}, "gpu_model"),
    ({"gpus": 8, "regions": ["mars-east-1"]}, "regions"),
    ({"gpus": 8, "regions": ["us-west-2", "us-west-2"]}, "regions"),
    ({"gpus": 8, "capacity_types": ["reserved"]}, "capacity_types"),
    ({"gpus": 0}, "gpus"),
    ({"gpus": 8, "hours": 0}, "hours"),
    ({"gpus": 8, "max_hourly_usd": -1}, "max_hourly_usd"),
    ({"gpus": 8, "surprise": 1}, "surprise"),
])
def test_bad_requests_name_the_field(body: dict[str, Any], loc: str) -> None:
    with pytest.raises(ValidationError) as err:
        AdviceRequest.model_validate(body)
    assert loc in {str(e["loc"][0]) for e in err.value.errors()}, err.value.errors()


# --- options and near misses ------------------------------------------------------------------------------------------

G5 = "ml.g5.8xlarge"
P5 = "ml.p5.48xlarge"
B200 = "ml.p6-b200.48xlarge"
H200 = "ml.p5en.48xlarge"


def test_fits_on_demand_now_with_the_quota_left_and_the_create_request() -> None:
    f = region({"us-west-2a": {G5}, "us-west-2b": {G5}}, {G5: 16}, in_use={G5: 2}, prices={G5: 3.466},
               spot={G5: {"usw2-az2": 9, "usw2-az1": 4}})
    advice = advise(ask(gpus=4, gpu_model="a10g", hours=10), [f], now=NOW, cluster_name="a10g-4x")
    first = advice.options[0]
    assert (first.instance_type, first.instance_count, first.capacity_type.value) == (G5, 4, "on-demand")
    assert first.starts_now and first.availability_zone == "us-west-2a" and first.other_zones == ["us-west-2b"]
    assert first.quota is not None and (first.quota.in_use, first.quota.headroom_after) == (2, 10)
    assert (first.price.hourly_usd, first.price.total_usd) == (13.86, 138.64)
    body = ClusterCreate.model_validate(first.create_cluster.body)  # type: ignore[union-attr]
    assert body.instance_groups[0].availability_zone == "us-west-2a" and body.name == "a10g-4x"
    # spot fits too (score 9 in us-west-2a), ranked after: its price is unknown
    spot = advice.options[1]
    assert spot.capacity_type.value == "spot" and spot.spot_score == 9 and spot.price.hourly_usd is None
    # the other A10G types no zone offers: one near miss each, for every capacity type; training plans do not
    # reserve the one offered
    g5_12 = [m for m in advice.near_misses if m.instance_type == "ml.g5.12xlarge"]
    assert [(m.reason, m.short_by, [c.value for c in m.capacity_types]) for m in g5_12] == [
        (Reason.not_offered, None, [])]
    assert {(m.instance_type, m.reason) for m in advice.near_misses if m.reason is Reason.not_reservable} == {
        (G5, Reason.not_reservable)}


def test_a_quota_used_by_podstart_clusters_is_counted_and_short_says_by_how_much() -> None:
    f = region({"us-west-2a": {P5}}, {P5: 4}, in_use={P5: 3}, prices={P5: 113.068},
               spot={P5: {"usw2-az2": 9}})
    advice = advise(ask(gpus=16, gpu_model="h100", capacity_types=["on-demand", "spot"]), [f], now=NOW)
    assert advice.options == []
    [miss] = [m for m in advice.near_misses if m.instance_type == P5]
    assert miss.reason is Reason.quota_short and miss.short_by == 1
    assert [c.value for c in miss.capacity_types] == ["on-demand", "spot"]
    assert "PodStart's clusters use 3" in miss.detail and "to 5" in str(miss.would_fit_with)


def test_fits_only_with_a_training_plan_that_starts_later() -> None:
    start = NOW + timedelta(days=3)
    offer = offering(B200, 2, "us-west-2a", start, 72, "22248.00")
    f = region({"us-west-2a": {B200}}, {B200: 0}, offerings={B200: [offer]})
    req = ask(gpus=16, gpu_model="b200", hours=72)
    assert [s.instance_type for s in plan_searches(req, f, NOW)] == [B200]
    owned = region({"us-west-2a": {B200}}, {B200: 0}, plans=[plan("mine", B200, "us-west-2a", 2)])
    assert plan_searches(req, owned, NOW) == []  # capacity already bought: no offering to search
    advice = advise(req, [f], now=NOW, account="123456789012")
    [option] = advice.options
    assert option.capacity_type.value == "training-plan" and not option.starts_now
    assert option.earliest_start == start and option.price.upfront_usd == 22248.0
    assert option.price.hourly_usd == round(22248 / 72, 2)
    [need] = option.requires
    assert need.action == "buy_training_plan" and need.upfront_fee == "22248.00"
    assert need.body["offering"]["offering_id"] == "tpo-1" and need.body["offering"]["instance_count"] == 2
    # the create request references the plan the purchase will make
    group = ClusterCreate.model_validate(option.create_cluster.body).instance_groups[0]  # type: ignore[union-attr]
    assert group.training_plan_arn == f"arn:aws:sagemaker:us-west-2:123456789012:training-plan/{need.body['name']}"
    assert [m.reason for m in advice.near_misses] == [Reason.quota_short]


def test_plans_already_bought_come_first_and_only_as_one_zone_unless_same_zone_is_false() -> None:
    plans = [plan("h200-c", H200, "us-west-2c", 2), plan("h200-a", H200, "us-west-2a", 2)]
    f = region({"us-west-2a": {H200}, "us-west-2c": {H200}}, {H200: 2}, plans=plans, offerings={H200: []})
    same = advise(ask(gpus=32, gpu_model="h200", hours=48), [f], now=NOW)
    assert same.options == []
    split = [m for m in same.near_misses if m.reason is Reason.split_needed]
    assert len(split) == 1 and "us-west-2a, us-west-2c" in split[0].detail
    apart = advise(ask(gpus=32, gpu_model="h200", hours=48, same_zone=False), [f], now=NOW)
    [option] = apart.options
    assert option.price.already_paid and option.price.total_usd == 0.0 and option.starts_now
    assert sorted((g.availability_zone, g.instance_count) for g in option.groups) == [
        ("us-west-2a", 2), ("us-west-2c", 2)]
    groups = ClusterCreate.model_validate(option.create_cluster.body).instance_groups  # type: ignore[union-attr]
    assert {g.training_plan_arn for g in groups} == {p.arn for p in plans} and len({g.name for g in groups}) == 2


def test_nothing_fits_and_each_near_miss_states_its_one_reason() -> None:
    f = region({"us-west-2a": {B200}, "us-west-2b": {G5}}, {B200: 0, G5: 16}, prices={G5: 3.466},
               offerings={B200: []}, spot={G5: {"usw2-az1": 2}})
    advice = advise(ask(gpus=64, gpu_model="b200", hours=72), [f], now=NOW)
    assert advice.options == [] and advice.summary.startswith("nothing fits")
    assert {(m.reason, tuple(c.value for c in m.capacity_types)) for m in advice.near_misses} == {
        (Reason.quota_short, ("on-demand", "spot")), (Reason.no_plan_offering, ("training-plan",))}
    # a budget, a missing EFA, an unlikely spot and a type no zone offers each say so
    cheap = advise(ask(instance_type=G5, instance_count=8, max_hourly_usd=10, capacity_types=["on-demand"]), [f],
                   now=NOW)
    assert [m.reason for m in cheap.near_misses] == [Reason.over_budget]
    assert "27.73 USD/h" in cheap.near_misses[0].detail
    efa = advise(ask(gpus=1, gpu_model="a10g", efa_required=True, capacity_types=["on-demand"]), [f], now=NOW)
    assert {m.instance_type for m in efa.near_misses if m.reason is Reason.no_efa} >= {"ml.g5.xlarge"}
    spot = advise(ask(instance_type=G5, instance_count=2, capacity_types=["spot"]), [f], now=NOW)
    assert [m.reason for m in spot.near_misses] == [Reason.spot_unlikely] and SPOT_MIN_SCORE > 2
    none = advise(ask(instance_type=P5, instance_count=1, capacity_types=["on-demand"]), [f], now=NOW)
    assert [m.reason for m in none.near_misses] == [Reason.not_offered]


def test_ranking_earliest_start_then_cheapest_then_fewer_instances() -> None:
    soon, later = NOW + timedelta(days=1), NOW + timedelta(days=4)
    f = region({"us-west-2a": {P5, "ml.p5.4xlarge"}}, {P5: 4, "ml.p5.4xlarge": 16},
               prices={P5: 100.0, "ml.p5.4xlarge": 12.5},
               offerings={P5: [offering(P5, 2, "us-west-2a", later, 24, "100.00", "tpo-late"),
                               offering(P5, 2, "us-west-2a", soon, 24, "9000.00", "tpo-soon")]})
    advice = advise(ask(gpus=16, gpu_model="h100", hours=24, capacity_types=["on-demand", "training-plan"]),
                    [f], now=NOW)
    order = [(o.instance_type, o.capacity_type.value, o.requires[0].body["offering"]["offering_id"] if o.requires
              else None) for o in advice.options]
    # both on-demand options start now and cost the same (16 x 12.5 = 2 x 100 per hour): fewer instances first;
    # then the offering that starts sooner though it costs more
    assert order == [(P5, "on-demand", None), ("ml.p5.4xlarge", "on-demand", None), (P5, "training-plan", "tpo-soon"),
                     (P5, "training-plan", "tpo-late")]


def test_an_unavailable_fact_is_reported_not_fatal() -> None:
    f = region({"us-west-2a": {G5}}, {G5: 16}, quotas_unavailable="throttled (ThrottlingException)",
               prices={G5: 3.466})
    advice = advise(ask(instance_type=G5, instance_count=2, capacity_types=["on-demand"]), [f], now=NOW)
    assert advice.options == [] and [m.reason for m in advice.near_misses] == [Reason.unknown]
    assert advice.unavailable == ["us-west-2 quotas: throttled (ThrottlingException)"]
    line = next(x for x in advice.facts if x.fact == "quotas")
    assert not line.available and line.source == "test:quotas"
    assert all(x.age_seconds == 0 for x in advice.facts)


def test_adding_to_a_cluster_prefers_its_zones_and_names_groups_it_does_not_have() -> None:
    f = region({"us-west-2a": {G5}, "us-west-2b": {G5}}, {G5: 16}, prices={G5: 3.466})
    ctx = ClusterContext(name="demo", region="us-west-2", group_names=frozenset({"a10g"}), zones=("us-west-2b",))
    advice = advise(ask(instance_type=G5, instance_count=2, capacity_types=["on-demand"]), [f], now=NOW, cluster=ctx)
    [option] = advice.options
    assert option.availability_zone == "us-west-2b" and option.create_cluster is None
    [add] = option.add_instance_groups
    assert add.path == "/v1/clusters/demo/instance-groups?region=us-west-2"
    body = InstanceGroupAdd.model_validate(add.body)
    assert body.name == "a10g-2" and body.availability_zone == "us-west-2b"


def test_only_types_within_quota_are_priced() -> None:
    f = region({"us-west-2a": {G5, "ml.g5.12xlarge"}}, {G5: 16, "ml.g5.12xlarge": 0})
    assert [w.instance_type for w in priced_types(ask(gpus=4, gpu_model="a10g"), f)] == [G5]
