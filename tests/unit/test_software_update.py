"""The software update request (validated once, in the model behind REST), its batches, and its plan."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from functions.domain.clusters.software_update import SoftwareUpdate, batch_count, batch_size
from functions.domain.operations import Target
from functions.domain.plans.registry import PLANNERS, PlanInput


@pytest.mark.parametrize(("instances", "percent", "size", "count"), [
    (4, 50, 2, 2), (2, 50, 1, 2), (3, 50, 1, 3), (10, 20, 2, 5), (1, 20, 1, 1), (5, 100, 5, 1), (0, 20, 1, 0)])
def test_batches_never_exceed_the_percent(instances: int, percent: int, size: int, count: int) -> None:
    assert (batch_size(instances, percent), batch_count(instances, percent)) == (size, count)


@pytest.mark.parametrize(("body", "loc"), [
    ({"rolling": {"batch_percent": 0}}, ("rolling", "batch_percent")),
    ({"rolling": {"batch_percent": 101}}, ("rolling", "batch_percent")),
    ({"groups": []}, ("groups",)),
    ({"groups": ["a", "a"]}, ("groups",)),
    ({"groups": ["Bad_Name"]}, ("groups",)),
    ({"image_id": "ami-xyz"}, ("image_id",)),
    ({"wait_seconds": 3601}, ("wait_seconds",)),
    ({"batch_percent": 20}, ("batch_percent",)),
])
def test_bad_requests_name_the_field(body: dict[str, object], loc: tuple[str, ...]) -> None:
    with pytest.raises(ValidationError) as err:
        SoftwareUpdate.model_validate(body)
    assert err.value.errors()[0]["loc"] == loc


def test_defaults_all_groups_at_20_percent() -> None:
    u = SoftwareUpdate.model_validate({})
    assert u.groups is None and u.rolling.batch_percent == 20 and u.image_id is None
    assert SoftwareUpdate.model_validate({"image_id": "default"}).image_id == "default"


def test_the_plan_lists_the_call_and_each_groups_batches_with_the_restart_warning() -> None:
    request = {"cluster": "demo", "region": "us-west-2", "hyperpod_cluster": "demo", "eks_cluster": "demo",
               "groups": ["workers", "system"], "batch_percent": 50, "image_id": None, "wait_seconds": 60,
               "instances": {"workers": 4, "system": 1}}
    facts = {"groups": [{"name": "workers", "instances": 4, "instance_type": "ml.c5.large",
                         "current_image": "ami-0a1b2c3d4e5f60718", "current_release": "2025.9.15"},
                        {"name": "system", "instances": 1}]}
    draft = PLANNERS["cluster.software_update"](PlanInput(kind="cluster.software_update", target=Target(
        cluster="demo", region="us-west-2"), request=request, facts=facts))
    call, workers, system = draft.changes
    assert call.kind == "AWS::SageMaker::Cluster" and call.details["call"] == "UpdateClusterSoftware"
    assert call.details["DeploymentConfig"] == {"RollingUpdatePolicy": {"MaximumBatchSize": {
        "Type": "CAPACITY_PERCENT", "Value": 50}}, "WaitIntervalInSeconds": 60}
    assert (workers.name, workers.details["batches"], workers.details["batch_size"]) == ("workers", 2, 2)
    assert workers.details["from_image"] == "ami-0a1b2c3d4e5f60718 (release 2025.9.15)"
    assert (system.details["batches"], system.details["from_image"]) == (1, "unknown")
    assert any("restart in 2 batch(es)" in w and "disrupted" in w for w in draft.warnings)
    assert any("60 s between batches" in w for w in draft.warnings)
