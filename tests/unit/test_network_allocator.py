"""The compute-subnet allocator, property-tested: never overlaps, always inside the VPC,
deterministic, and a clear error when the VPC is full."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from functions.domain.clusters.network import (
    COMPUTE_PREFIX,
    SubnetInfo,
    VpcFull,
    allocate_compute_subnet,
    first_free_block,
    plan_base_subnets,
    plan_fits,
)

vpc_prefixes = st.integers(min_value=16, max_value=20)


@st.composite
def vpc_with_subnets(draw: st.DrawFn) -> tuple[list[str], list[SubnetInfo]]:
    second = draw(st.integers(min_value=0, max_value=255))
    prefix = draw(vpc_prefixes)
    vpc = ipaddress.ip_network(f"10.{second}.0.0/{prefix}")
    blocks = [str(vpc)]
    if draw(st.booleans()):  # a secondary CIDR block
        blocks.append(f"100.64.{draw(st.integers(0, 15)) * 16}.0/20")
    taken: list[SubnetInfo] = []
    for i, block in enumerate(blocks):
        net = ipaddress.ip_network(block)
        size = draw(st.integers(min_value=max(net.prefixlen, 18), max_value=28))
        candidates = list(net.subnets(new_prefix=size))
        picks = draw(st.lists(st.sampled_from(candidates), max_size=6, unique=True))
        for j, p in enumerate(picks):
            if not any(p.overlaps(ipaddress.ip_network(t.cidr)) for t in taken):
                taken.append(SubnetInfo(subnet_id=f"subnet-{i}{j}", cidr=str(p), availability_zone="us-west-2a"))
    return blocks, taken


@settings(max_examples=300, deadline=None)
@given(vpc_with_subnets(), st.sampled_from(["us-west-2a", "us-west-2b"]))
def test_allocation_never_overlaps_and_stays_inside_the_vpc(
        case: tuple[list[str], list[SubnetInfo]], zone: str) -> None:
    blocks, taken = case
    try:
        alloc = allocate_compute_subnet(blocks, taken, zone)
    except VpcFull as full:
        assert "no free /20" in str(full)
        # Really full: no /20 in any block is free.
        for b in blocks:
            net = ipaddress.ip_network(b)
            if net.prefixlen <= COMPUTE_PREFIX:
                for c in net.subnets(new_prefix=COMPUTE_PREFIX):
                    assert any(c.overlaps(ipaddress.ip_network(t.cidr)) for t in taken)
        return
    net = ipaddress.ip_network(alloc.cidr)
    assert net.prefixlen == COMPUTE_PREFIX
    assert any(net.subnet_of(ipaddress.ip_network(b)) for b in blocks)  # type: ignore[arg-type]
    assert not any(net.overlaps(ipaddress.ip_network(t.cidr)) for t in taken)
    assert allocate_compute_subnet(blocks, list(reversed(taken)), zone) == alloc  # deterministic


def test_the_zone_compute_subnet_is_reused() -> None:
    taken = [SubnetInfo(subnet_id="subnet-c", cidr="10.0.0.0/20", availability_zone="us-west-2a", role="compute")]
    alloc = allocate_compute_subnet(["10.0.0.0/16"], taken, "us-west-2a")
    assert alloc.reused and alloc.subnet_id == "subnet-c"
    other = allocate_compute_subnet(["10.0.0.0/16"], taken, "us-west-2b")
    assert not other.reused and other.cidr == "10.0.16.0/20"


def test_overlap_is_real_not_textual() -> None:
    # 10.0.8.0/21 sits inside 10.0.0.0/20 although the strings differ.
    assert first_free_block(["10.0.0.0/16"], ["10.0.8.0/21"]) == "10.0.16.0/20"


def test_full_vpc_says_what_to_do() -> None:
    with pytest.raises(VpcFull, match="secondary CIDR block"):
        first_free_block(["10.0.0.0/20"], ["10.0.0.0/24"])


def test_base_subnets_leave_the_bottom_for_compute() -> None:
    base = plan_base_subnets("10.90.0.0/16", ["us-west-2a", "us-west-2b"])
    assert [b.cidr for b in base] == ["10.90.255.0/24", "10.90.254.0/24", "10.90.253.0/24", "10.90.252.0/24"]
    assert plan_fits("10.90.0.0/16", ["a", "b"], ["a", "b"]) is None
    assert plan_fits("10.90.0.0/20", ["a", "b"], ["a"]) is not None
