"""Capacity: the facts cache (one AWS read per (region, fact) per period, unavailable facts reported), where pods fit
inside a cluster, the purchase's confirmation, and the advice as an agent sees it (within 4 KB)."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from functions.adapters.capacity_aws import RETRY_UNAVAILABLE_S, AwsCapacityFacts, FactCache
from functions.domain.capacity import placement
from functions.domain.capacity.facts import PlanOffering, PlanSearch, ReservedSegment
from functions.domain.capacity.purchase import TrainingPlanPurchase, confirm_problem
from mcp_gateway.views import BUDGET, compact, result_bytes

# --- the facts cache ----------------------------------------------------------------------------------------------


class FakeEc2:
    def __init__(self, fail: str | None = None) -> None:
        self.calls: list[str] = []
        self.fail = fail
        self.lock = threading.Lock()

    def describe_availability_zones(self, **_: Any) -> dict[str, Any]:
        with self.lock:
            self.calls.append("DescribeAvailabilityZones")
        time.sleep(0.05)  # long enough for concurrent requests to overlap
        if self.fail:
            raise ClientError({"Error": {"Code": self.fail, "Message": "no"}}, "DescribeAvailabilityZones")
        return {"AvailabilityZones": [{"ZoneName": "us-west-2a", "ZoneId": "usw2-az2", "State": "available"}]}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def facts_with(ec2: FakeEc2, clock: Clock) -> AwsCapacityFacts:
    return AwsCapacityFacts(prices=None, cache=FactCache(clock=clock),  # type: ignore[arg-type]
                            client=lambda service, region: ec2)


def test_one_read_per_region_and_fact_per_period_even_when_requests_overlap() -> None:
    ec2, clock = FakeEc2(), Clock()
    facts = facts_with(ec2, clock)
    results: list[Any] = []
    threads = [threading.Thread(target=lambda: results.append(facts.zones("us-west-2"))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert ec2.calls == ["DescribeAvailabilityZones"] and all(r.ok for r in results)
    assert results[0].source == "ec2:DescribeAvailabilityZones" and results[0].fetched_at is not None
    clock.now += 3599
    facts.zones("us-west-2")
    assert len(ec2.calls) == 1
    clock.now += 2  # past the hour zones are kept
    facts.zones("us-west-2")
    facts.zones("us-east-1")  # another region is another fact
    assert len(ec2.calls) == 3


def test_a_refused_fact_is_unavailable_with_why_and_asked_again_soon() -> None:
    for code, why in (("UnauthorizedOperation", "no permission (UnauthorizedOperation)"),
                      ("RequestLimitExceeded", "throttled (RequestLimitExceeded)")):
        ec2, clock = FakeEc2(fail=code), Clock()
        facts = facts_with(ec2, clock)
        first = facts.zones("us-west-2")
        assert not first.ok and first.unavailable == why and first.value is None
        facts.zones("us-west-2")
        assert len(ec2.calls) == 1  # not on every request...
        clock.now += RETRY_UNAVAILABLE_S + 1
        facts.zones("us-west-2")
        assert len(ec2.calls) == 2  # ...but soon


# --- placement ------------------------------------------------------------------------------------------------------

def node(name: str, group: str, gpus: int, ready: bool = True, cordoned: bool = False,
         itype: str = "ml.g5.12xlarge") -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {"sagemaker.amazonaws.com/instance-group-name": group,
                                                  "node.kubernetes.io/instance-type": itype}},
            "spec": {"unschedulable": True} if cordoned else {},
            "status": {"allocatable": {"nvidia.com/gpu": str(gpus)},
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


def pod(on: str, gpus: int, phase: str = "Running") -> dict[str, Any]:
    return {"metadata": {"name": f"p-{on}-{gpus}"}, "spec": {"nodeName": on, "containers": [
        {"resources": {"requests": {"nvidia.com/gpu": str(gpus)}, "limits": {"nvidia.com/gpu": str(gpus)}}}]},
            "status": {"phase": phase}}


NODES = [node("n1", "accel", 4), node("n2", "accel", 4), node("n3", "accel", 4, ready=False),
         node("c1", "cpu", 0, itype="ml.m5.xlarge")]


def test_gpus_per_group_count_what_pods_hold_on_schedulable_nodes() -> None:
    view = placement.cluster_gpus("demo", "us-west-2", NODES, [pod("n1", 3), pod("n2", 1, "Succeeded")])
    accel = next(g for g in view.groups if g.group == "accel")
    assert (accel.nodes, accel.schedulable_nodes, accel.gpus_total, accel.gpus_used, accel.gpus_free,
            accel.largest_free) == (3, 2, 12, 3, 5, 4)
    assert (view.gpus_total, view.gpus_used) == (12, 3)


def test_a_job_fits_on_distinct_nodes_or_says_what_it_waits_for() -> None:
    rows = placement.node_gpus(NODES, [pod("n1", 3)])
    fits = placement.place(rows, "ml.g5.12xlarge", 1, 4, one_per_node=True)
    assert fits.fits_now and fits.nodes == ["n2"] and fits.groups == ["accel"]
    held = placement.place(rows, "ml.g5.12xlarge", 2, 4, one_per_node=True)
    assert not held.fits_now and "not Ready or cordoned" in str(held.waits_for)
    small = placement.place(rows, "ml.g5.12xlarge", 4, 1, one_per_node=True)
    assert not small.fits_now and "the group must grow" in str(small.waits_for)
    busy = placement.place(placement.node_gpus(NODES[:2], [pod("n1", 4), pod("n2", 2)]), "ml.g5.12xlarge", 1, 4,
                           one_per_node=True)
    assert not busy.fits_now and "6 of 8 in use" in str(busy.waits_for)
    # an endpoint's replicas may share a node with room for several
    shared = placement.place(rows, "ml.g5.12xlarge", 3, 1, one_per_node=False)
    assert shared.fits_now and shared.nodes == ["n2"]
    too_big = placement.place(rows, "ml.g5.12xlarge", 1, 8, one_per_node=False)
    assert not too_big.fits_now and "have 4 GPUs" in str(too_big.waits_for)


# --- the purchase's confirmation --------------------------------------------------------------------------------------

OFFER = PlanOffering(offering_id="tpo-1", upfront_fee="22248.00", currency="USD", duration_hours=72, segments=(
    ReservedSegment(instance_type="ml.p6-b200.48xlarge", instance_count=2, availability_zone="us-west-2a",
                    start_time=datetime(2026, 12, 8, tzinfo=UTC), end_time=datetime(2026, 12, 11, tzinfo=UTC),
                    duration_hours=72),))


def test_buying_needs_the_exact_fee_but_a_dry_run_shows_it_first() -> None:
    assert confirm_problem(OFFER, None, dry_run=True) is None
    assert "confirm_upfront_fee \"22248.00\"" in str(confirm_problem(OFFER, None, dry_run=False))
    assert "not 2224.80" in str(confirm_problem(OFFER, "2224.80", dry_run=False))
    assert confirm_problem(OFFER, "22248", dry_run=False) is None
    body = TrainingPlanPurchase.model_validate({"name": "b200-plan", "confirm_upfront_fee": "22248.00", "offering": {
        "region": "us-west-2", "offering_id": "tpo-1", "instance_type": "ml.p6-b200.48xlarge", "instance_count": 2,
        "duration_hours": 72, "start_after": "2026-12-05T15:00:00"}})
    assert body.offering.plan_search() == PlanSearch(region="us-west-2", instance_type="ml.p6-b200.48xlarge",
                                                      instance_count=2, duration_hours=72,
                                                      start_after=datetime(2026, 12, 5, 15, tzinfo=UTC))


# --- the agent's view -----------------------------------------------------------------------------------------------

def _option(i: int) -> dict[str, Any]:
    body = {"name": f"gpu-{i}", "region": "us-west-2", "instance_groups": [
        {"name": "h100", "instance_type": "ml.p5.48xlarge", "instance_count": 2, "availability_zone": "us-west-2a",
         "capacity_type": "training-plan",
         "training_plan_arn": "arn:aws:sagemaker:us-west-2:123456789012:training-plan/" + "x" * 40}]}
    return {"rank": i, "region": "us-west-2", "instance_type": "ml.p5.48xlarge", "instance_count": 2, "gpus": 16,
            "capacity_type": "training-plan", "groups": [{"availability_zone": "us-west-2a", "instance_count": 2}],
            "price": {"hourly_usd": 206.0, "total_usd": 14832.0, "upfront_usd": 14832.0},
            "earliest_start": (datetime(2026, 12, 8, tzinfo=UTC) + timedelta(hours=i)).isoformat(),
            "starts_now": False, "quota": None,
            "requires": [{"action": "buy_training_plan", "body": {"name": "p" * 40, "offering": {
                "region": "us-west-2", "offering_id": "tpo-" + "a" * 20, "instance_type": "ml.p5.48xlarge",
                "instance_count": 2, "duration_hours": 72, "start_after": "2026-12-05T15:00:00Z"}},
                "upfront_fee": "14832.00", "currency": "USD"}],
            "create_cluster": {"method": "POST", "path": "/v1/clusters", "body": body}, "add_instance_groups": []}


def test_the_agent_view_of_a_big_advice_fits_4_kb_and_never_cuts_a_request() -> None:
    advice = {"summary": "20 option(s)", "options": [_option(i) for i in range(1, 21)], "options_more": 0,
              "near_misses": [{"region": "us-west-2", "instance_type": f"ml.g5.{i}xlarge",
                               "capacity_types": ["on-demand", "spot"], "reason": "quota_short",
                               "detail": "needs 4 x ml.g5; the quota is 0, PodStart's clusters use 0: short by 4 " * 2,
                               "would_fit_with": "a quota increase to 4"} for i in range(25)],
              "near_misses_more": 7, "unavailable": [], "facts": [{"fact": "zones"}] * 40}
    view = compact("advise_capacity", advice)
    assert result_bytes(view) <= BUDGET
    assert view["options"] and view["options_more"] == 20 - len(view["options"])
    assert view["near_misses_more"] == 7 + 25 - len(view["near_misses"])
    for option in view["options"]:
        assert option["then"]["args"] == _option(option["rank"])["create_cluster"]["body"]  # whole, as sent
        first = option["first"][0]
        assert first["tool"] == "purchase_training_plan" and first["upfront"] == "14832.00 USD"
