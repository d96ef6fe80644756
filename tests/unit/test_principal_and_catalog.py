"""Roles from claims (the same for every face) and the catalog's view of EC2 instance types."""

from __future__ import annotations

import pytest

from functions.domain.catalog import instance_type_from_ec2, quotas_from_api
from functions.domain.errors import Forbidden
from functions.domain.principal import Principal, Role


def test_highest_group_wins_and_no_group_means_viewer() -> None:
    assert Principal.from_claims({"sub": "a", "cognito:groups": "viewer,admin"}).role is Role.admin
    assert Principal.from_claims({"sub": "a", "cognito:groups": ["operator"]}).role is Role.operator
    assert Principal.from_claims({"sub": "a"}).role is Role.viewer
    machine = {"sub": "c", "client_id": "c", "token_use": "access", "scope": "podstart/read podstart/write"}
    assert Principal.from_claims(machine).role is Role.operator


def test_a_write_scope_makes_no_user_an_operator() -> None:
    """Roles of users come from their groups: a browser user asking for the write scope stays what they are;
    only the machine client's exact podstart/write counts, and only in a token with no user in it."""
    viewer = {"sub": "u1", "username": "vera", "cognito:groups": ["viewer"], "token_use": "access",
              "client_id": "web", "scope": "openid podstart/write"}
    assert Principal.from_claims(viewer).role is Role.viewer
    nobody = {"sub": "u2", "username": "nina", "token_use": "access", "client_id": "web", "scope": "podstart/write"}
    assert Principal.from_claims(nobody).role is Role.viewer
    lookalike = {"sub": "c", "client_id": "c", "token_use": "access", "scope": "evil/write other.podstart/write"}
    assert Principal.from_claims(lookalike).role is Role.viewer
    id_token = {"sub": "c", "client_id": "c", "token_use": "id", "scope": "podstart/write"}
    assert Principal.from_claims(id_token).role is Role.viewer


def test_viewer_cannot_mutate() -> None:
    with pytest.raises(Forbidden):
        Principal(sub="v", name="v", role=Role.viewer).require(Role.operator)


def test_p5_is_an_efa_only_capable_gpu_type() -> None:
    t = instance_type_from_ec2({
        "InstanceType": "p5.48xlarge", "VCpuInfo": {"DefaultVCpus": 192}, "MemoryInfo": {"SizeInMiB": 2097152},
        "GpuInfo": {"Gpus": [{"Name": "H100", "Manufacturer": "NVIDIA", "Count": 8,
                              "MemoryInfo": {"SizeInMiB": 81920}}]},
        "NetworkInfo": {"EfaSupported": True, "EfaInfo": {"MaximumEfaInterfaces": 32}, "MaximumNetworkCards": 32},
    })
    assert t.name == "ml.p5.48xlarge" and t.accelerator and t.accelerator.count == 8
    assert t.accelerator.memory_gib == 80.0 and t.efa_only_supported and t.memory_gib == 2048.0


def test_cpu_type_without_efa_is_not_accelerated() -> None:
    t = instance_type_from_ec2({"InstanceType": "m5.2xlarge", "VCpuInfo": {"DefaultVCpus": 8},
                                "MemoryInfo": {"SizeInMiB": 32768}, "NetworkInfo": {"EfaSupported": False}})
    assert not t.accelerated and not t.efa_only_supported and t.efa_max_interfaces == 0


def test_quotas_subtract_what_is_in_use() -> None:
    q = quotas_from_api([{"QuotaName": "ml.p5.48xlarge for cluster usage", "QuotaCode": "L-1", "Value": 4.0},
                         {"QuotaName": "Maximum number of clusters", "QuotaCode": "L-2", "Value": 5}],
                        {"ml.p5.48xlarge": 3})
    assert [(x.instance_type, x.limit, x.in_use, x.available) for x in q] == [("ml.p5.48xlarge", 4, 3, 1)]


def test_the_region_pattern_takes_every_hyperpod_region_and_nothing_botocore_refuses() -> None:
    import re

    from botocore.utils import validate_region_name

    from functions.domain.catalog import HYPERPOD_REGIONS, REGION_PATTERN
    for ok in (*HYPERPOD_REGIONS, "us-gov-west-1", "il-central-1", "ap-southeast-7"):
        assert re.match(REGION_PATTERN, ok), ok
        validate_region_name(ok)
    for bad in ("la-" + "abc-" * 20 + "9", "us-west-2x", "US-WEST-2", "us--west-2", "us-west-"):
        assert not re.match(REGION_PATTERN, bad), bad
