"""Admission on fakes: requests are checked against the account's live state before anything is
created, and updates compare with what HyperPod reports now (the diff contract)."""

from __future__ import annotations

from typing import Any

import pytest

from functions.domain.clusters.models import ClusterCreate, ClusterImport, InstanceGroupAdd, InstanceGroupPatch
from functions.domain.clusters.network import SubnetInfo, VpcView
from functions.domain.clusters.record import ClusterRecord, ClusterStatus, GroupRecord
from functions.domain.errors import Conflict, InvalidInput
from functions.domain.operations import Actor, Operation
from functions.domain.views import NoChange
from functions.logic.clusters import create as cluster_create
from functions.logic.clusters import group_add, group_scale
from functions.logic.clusters import views as cluster_views
from functions.logic.plans import Started
from tests.fakes import World

ACTOR = Actor(sub="o", name="olga", role="operator")


def started(result: object) -> Operation:
    assert isinstance(result, Started), result
    return result.operation


def active(w: World, name: str = "demo", count: int = 2) -> ClusterRecord:
    rec = ClusterRecord(name=name, region="us-west-2", status=ClusterStatus.ACTIVE, eks_cluster_name=name,
                        hyperpod_cluster_name=name, created_by="o", created_at="2026-12-01T00:00:00Z",
                        instance_groups=[GroupRecord(name="accel", instance_type="ml.g5.8xlarge", instance_count=count,
                                                     availability_zone="us-west-2a",
                                                     availability_zone_id="usw2-az1", capacity_type="on-demand")])
    w.deps.records.save(rec)
    w.reader.add_hyperpod(name, {"accel": count})
    w.reader.networks["subnet-p1"] = VpcView(
        vpc_id="vpc-1", blocks=["10.90.0.0/16"], has_nat=True,
        subnets=[SubnetInfo(subnet_id="subnet-c1", cidr="10.90.0.0/20", availability_zone="us-west-2a",
                            role="compute", reservations={"accel": 24})])
    w.reader.networks["subnet-c1"] = w.reader.networks["subnet-p1"]
    return rec


def create_body(**over: Any) -> ClusterCreate:
    body = {"name": "demo", "region": "us-west-2", "instance_groups": [
        {"name": "accel", "instance_type": "ml.g5.8xlarge", "instance_count": 2, "availability_zone": "usw2-az2"}]}
    return ClusterCreate.model_validate({**body, **over})


def test_a_create_names_a_zone_by_id_and_stores_the_normalized_request() -> None:
    w = World()
    op = started(cluster_create.create_cluster(w.deps, create_body(), ACTOR, None))
    group = op.request["instance_groups"][0]
    assert group["availability_zone"] == "us-west-2b" and group["availability_zone_id"] == "usw2-az2"
    assert group["addresses_needed"] == 2 * 11  # 1 primary + 0 extra EFA + 10 pod addresses each
    rec = w.deps.records.load("us-west-2", "demo")
    assert rec is not None and rec.status is ClusterStatus.CREATING and rec.operation_id == op.id


def test_a_group_too_big_for_a_compute_subnet_is_refused_before_anything_is_created() -> None:
    w = World()
    w.reader.quota_limits["ml.p5.48xlarge"] = 500
    big = create_body(instance_groups=[{"name": "p5", "instance_type": "ml.p5.48xlarge", "instance_count": 200,
                                        "availability_zone": "us-west-2a"}])
    with pytest.raises(InvalidInput) as refused:
        cluster_create.create_cluster(w.deps, big, ACTOR, None)
    err = refused.value.errors[0]
    assert err["loc"] == ["body", "instance_groups", 0, "instance_count"] and "split the group" in err["msg"]
    assert w.deps.records.all() == [] and w.runner.started == {}


def test_adding_a_group_to_a_vpc_without_nat_is_refused_naming_why() -> None:
    w = World()
    rec = active(w)
    w.reader.networks["subnet-p1"] = w.reader.networks["subnet-p1"].model_copy(update={"has_nat": False})
    group = InstanceGroupAdd(name="more", instance_type="ml.g5.8xlarge", instance_count=1,
                             availability_zone="us-west-2b")
    with pytest.raises(InvalidInput) as refused:
        group_add.add_instance_group(w.deps, rec.name, None, group, ACTOR, None)
    assert refused.value.errors[0]["loc"] == ["path", "cluster"] and "NAT" in refused.value.errors[0]["msg"]
    assert w.runner.started == {}


def test_a_full_compute_subnet_means_another_one_not_a_refusal() -> None:
    w = World()
    rec = active(w)
    full = w.reader.networks["subnet-p1"].subnets[0].model_copy(update={"available_ips": 3})
    w.reader.networks["subnet-p1"] = w.reader.networks["subnet-p1"].model_copy(update={"subnets": [full]})
    group = InstanceGroupAdd(name="more", instance_type="ml.g5.8xlarge", instance_count=4,
                             availability_zone="us-west-2a")
    op = started(group_add.add_instance_group(w.deps, rec.name, None, group, ACTOR, None))
    assert op.request["group"]["addresses_needed"] == 44


def test_scaling_compares_with_the_live_group_not_the_record() -> None:
    """Scaled to 4 outside PodStart; PATCH 2 scales to 2; PATCH equal to live answers changed: false."""
    w = World()
    rec = active(w, count=2)
    w.reader.hyperpod[rec.name]["InstanceGroups"][0].update(TargetCount=4, CurrentCount=4)
    same = group_scale.scale_instance_group(w.deps, rec.name, None, "accel", InstanceGroupPatch(instance_count=4),
                                            ACTOR, None)
    assert isinstance(same, NoChange) and same.instance_group is not None
    assert same.instance_group.target_count == 4
    followed = w.deps.records.load("us-west-2", rec.name)
    assert followed is not None and followed.instance_groups[0].instance_count == 4  # the record follows
    op = started(group_scale.scale_instance_group(w.deps, rec.name, None, "accel",
                                                  InstanceGroupPatch(instance_count=2), ACTOR, None))
    assert op.request["instance_count"] == 2
    assert w.runner.started  # an operation started


def test_a_zone_named_by_its_id_is_not_a_change() -> None:
    w = World()
    rec = active(w)
    patch = InstanceGroupPatch.model_validate({"availability_zone": "usw2-az1", "instance_count": 2})
    assert isinstance(group_scale.scale_instance_group(w.deps, rec.name, None, "accel", patch, ACTOR, None), NoChange)
    other = InstanceGroupPatch.model_validate({"availability_zone": "usw2-az2"})
    with pytest.raises(Conflict) as moved:
        group_scale.scale_instance_group(w.deps, rec.name, None, "accel", other, ACTOR, None)
    assert moved.value.errors[0]["loc"] == ["body", "availability_zone"]


def test_import_names_a_bad_default_name_with_a_suggestion() -> None:
    with pytest.raises(ValueError) as bad:
        ClusterImport.model_validate({"region": "us-west-2", "eks_cluster_name": "Prod_Cluster_2024"})
    err = bad.value.errors()[0]  # type: ignore[attr-defined]
    assert err["loc"] == ("name",) and "'prod-cluster-2024'" in err["msg"]


def test_the_list_shows_clusters_podstart_does_not_track_as_importable() -> None:
    w = World()
    active(w)
    w.reader.add_hyperpod("theirs", {"workers": 3})
    slurm = w.reader.add_hyperpod("slurm-one", {"w": 1})
    slurm["Orchestrator"] = {}
    listed = cluster_views.list_clusters(w.deps, "o", 50, None)
    rows = {c.name: c for c in listed.items}
    assert set(rows) == {"demo", "theirs"}  # Slurm clusters are not PodStart's kind
    assert rows["theirs"].origin == "external" and rows["theirs"].importable and not rows["theirs"].managed
    assert rows["demo"].origin == "created" and rows["demo"].managed and not rows["demo"].importable


def test_the_list_narrowed_to_a_name_says_whether_it_is_taken() -> None:
    # Given PodStart's cluster "demo" and an external one, "theirs"
    w = World()
    active(w)
    w.reader.add_hyperpod("theirs", {"workers": 3})

    # When an agent asks for one name (is it taken?), it gets that cluster only, whoever made it; a free name: none
    assert [c.name for c in cluster_views.list_clusters(w.deps, "o", 50, None, name="theirs").items] == ["theirs"]
    assert [c.name for c in cluster_views.list_clusters(w.deps, "o", 50, None, name="demo").items] == ["demo"]
    assert cluster_views.list_clusters(w.deps, "o", 50, None, name="free-name").items == []
