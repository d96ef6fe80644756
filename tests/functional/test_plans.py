"""Dry runs on fakes: the same admission answers a plan instead of an operation, and nothing is written."""

from __future__ import annotations

import pytest

from functions.domain.clusters.models import InstanceGroupPatch
from functions.domain.errors import Conflict, Forbidden, InvalidInput
from functions.domain.operations import Actor
from functions.domain.plans import Plan
from functions.domain.principal import Principal, Role
from functions.logic import operations as op_logic
from functions.logic.clusters import create as cluster_create
from functions.logic.clusters import delete as cluster_delete
from functions.logic.clusters import group_scale
from tests.fakes import World
from tests.functional.test_admission import active, create_body

ACTOR = Actor(sub="o", name="olga", role="operator")
ADMIN = Principal(sub="a", name="ada", role=Role.admin)
ADMIN_ACTOR = Actor(sub="a", name="ada", role="admin")
PRICES = {("hyperpod", "ml.g5.8xlarge"): 3.5, ("eks", "cluster"): 0.10, ("nat", "gateway"): 0.045}


class Prices:
    def hourly(self, region: str, key: tuple[str, str]) -> tuple[float, str] | None:
        return (PRICES[key], "AWS Price List, 2026-11-30") if key in PRICES else None


def world() -> World:
    w = World()
    w.deps.prices = Prices()
    return w


def kinds(plan: Plan, action: str) -> list[str]:
    return [c.kind for c in plan.changes if c.action == action]


def test_a_create_dry_run_plans_every_step_and_writes_nothing() -> None:
    w = world()
    plan = cluster_create.create_cluster(w.deps, create_body(), ACTOR, "key-1", dry_run=True)
    assert isinstance(plan, Plan) and plan.valid and plan.kind == "cluster.create"
    made = kinds(plan, "create")
    for kind in ("AWS::EC2::VPC", "AWS::EC2::NatGateway", "AWS::EKS::Cluster", "eks-addon",
                 "AWS::SageMaker::Cluster", "Kubernetes PersistentVolumeClaim"):
        assert kind in made
    assert {c.step for c in plan.changes} >= {"eks_control_plane", "dependencies", "hyperpod_cluster", "storage"}
    [q] = plan.quota
    assert (q.instance_type, q.requested, q.ok) == ("ml.g5.8xlarge", 2, True)
    assert plan.cost.hourly == pytest.approx(2 * 3.5 + 0.10 + 0.045, abs=0.01)
    assert plan.cost.monthly_estimate == pytest.approx(plan.cost.hourly * 730, abs=4)  # from the unrounded hourly
    assert all(line.source == "AWS Price List, 2026-11-30" for line in plan.cost.lines)
    assert w.deps.records.load("us-west-2", "demo") is None and not w.runner.started and not w.guard.done
    assert not w.repo.items


def test_a_dry_run_refuses_what_the_request_would_refuse() -> None:
    w = world()
    cluster_create.create_cluster(w.deps, create_body(), ACTOR, None)
    with pytest.raises(Conflict):
        cluster_create.create_cluster(w.deps, create_body(), ACTOR, None, dry_run=True)
    big = create_body(name="other", instance_groups=[{"name": "g", "instance_type": "ml.g5.8xlarge",
                                                      "instance_count": 2000, "availability_zone": "us-west-2a"}])
    with pytest.raises(InvalidInput):
        cluster_create.create_cluster(w.deps, big, ACTOR, None, dry_run=True)


def test_a_scale_dry_run_shows_the_count_change_its_quota_and_its_cost_delta() -> None:
    w = world()
    rec = active(w, count=2)
    plan = group_scale.scale_instance_group(w.deps, rec.name, None, "accel", InstanceGroupPatch(instance_count=5),
                                            ACTOR, None, dry_run=True)
    assert isinstance(plan, Plan)
    [change] = plan.changes
    assert change.action == "update" and change.details["instance_count"] == {"from": 2, "to": 5}
    assert plan.quota[0].requested == 3
    assert plan.cost.hourly == pytest.approx(3 * 3.5)
    assert not w.runner.started
    down = group_scale.scale_instance_group(w.deps, rec.name, None, "accel", InstanceGroupPatch(instance_count=1),
                                            ACTOR, None, dry_run=True)
    assert isinstance(down, Plan) and down.cost.hourly == pytest.approx(-3.5) and down.warnings


def test_a_busy_cluster_is_the_same_409_in_a_dry_run() -> None:
    w = world()
    rec = active(w, count=2)
    group_scale.scale_instance_group(w.deps, rec.name, None, "accel", InstanceGroupPatch(instance_count=3), ACTOR, None)
    with pytest.raises(Conflict):
        group_scale.scale_instance_group(w.deps, rec.name, None, "accel", InstanceGroupPatch(instance_count=4),
                                         ACTOR, None, dry_run=True)


def test_a_delete_dry_run_lists_what_goes_and_the_hourly_saving() -> None:
    w = world()
    rec = active(w, count=2)
    with pytest.raises(Forbidden):  # an operator's plan of an admin's action is refused as the action is
        cluster_delete.delete_cluster(w.deps, rec.name, None, rec.name, ACTOR, None, dry_run=True)
    plan = cluster_delete.delete_cluster(w.deps, rec.name, None, rec.name, ADMIN_ACTOR, None, dry_run=True)
    assert isinstance(plan, Plan)
    gone = kinds(plan, "delete")
    assert "AWS::SageMaker::Cluster" in gone and "AWS::EKS::Cluster" in gone and "AWS::EC2::VPC" in gone
    assert plan.cost.hourly < 0 and not w.runner.started


def test_a_retry_dry_run_skips_the_steps_that_succeeded() -> None:
    w = world()
    op = cluster_create.create_cluster(w.deps, create_body(), ACTOR, None).operation  # type: ignore[union-attr]
    from functions.domain import operations as ops

    cur = w.repo.get(op.id)
    assert cur is not None
    done = w.service.record(cur, ops.step_succeeded(ops.step_started(cur, "eks_control_plane"),
                                                    "eks_control_plane", "ok"))
    done = w.service.record(done, ops.step_started(done, "activate"))
    w.repo.release(w.service.record(done, ops.fail(done, ops.ErrorInfo(code="X", message="boom", retryable=True))))
    plan = op_logic.retry(w.deps, op.id, ADMIN, dry_run=True)
    assert isinstance(plan, Plan) and plan.kind == "operation.retry"
    assert plan.changes[0].details["resume_at"] == "activate"
    assert all(c.action == "none" for c in plan.changes if c.step == "eks_control_plane")
    assert w.repo.get(op.id).status.value == "FAILED"  # type: ignore[union-attr]


def test_the_mcp_view_of_a_create_plan_fits_the_budget_and_keeps_every_kind_and_the_cost() -> None:
    import json

    from mcp_gateway import views

    w = world()
    plan = cluster_create.create_cluster(w.deps, create_body(storage={"fsx_lustre": {"storage_capacity_gib": 1200}}),
                                         ACTOR, None, dry_run=True)
    assert isinstance(plan, Plan)
    view = views.compact("create_cluster", json.loads(plan.model_dump_json()))
    assert views.result_bytes(view) <= views.BUDGET
    created = view["changes"]["create"]
    # by service, with counts: the HyperPod cluster, the FSx file system and the six EKS add-ons
    assert "SageMaker: Cluster" in created and "FSx: FileSystem" in created and "add-on x6" in created, created
    assert view["cost"]["hourly_usd"] == plan.cost.hourly
    assert "HyperPod ml.g5.8xlarge x2: 7.0 USD/h" in view["cost"]["lines"]


@pytest.mark.parametrize(("key", "price"), [(("hyperpod", "ml.c5.large"), 0.119), (("eks", "cluster"), 0.10),
                                            (("nat", "gateway"), 0.045), (("fsx", "PERSISTENT_2/125"), 0.145 / 730)])
def test_the_price_list_adapter_reads_the_on_demand_price_of_the_right_product(
        key: tuple[str, str], price: float, monkeypatch: pytest.MonkeyPatch) -> None:
    from functions.adapters import prices
    from sandbox.aws.pricing import get_products

    asked: list[dict[str, object]] = []

    class Client:
        def get_products(self, **params: object) -> dict[str, object]:
            asked.append(params)
            return get_products(params)

    monkeypatch.setattr(prices.aws, "client", lambda service, region=None: Client())
    book = prices.AwsPriceList()
    assert book.hourly("us-west-2", key) == (pytest.approx(price), "AWS Price List, 2026-11-30")
    assert book.hourly("us-west-2", key) is not None and len(asked) == 1  # cached
    assert book.hourly("us-west-2", ("hyperpod", "ml.nothing.large")) is None
