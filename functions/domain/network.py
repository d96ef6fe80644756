"""Network planning: the cluster's base subnets and the one compute-subnet allocator every capacity
path uses (create and add instance group). Pure: it sees CIDRs, never EC2."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

COMPUTE_PREFIX = 20  # accelerator fleets need thousands of addresses; EKS control-plane subnets do not
BASE_PREFIX = 24
ROLE_TAG = "podstart:role"


class VpcFull(ValueError):
    """No free block of the wanted size is left in any of the VPC's CIDR blocks."""


class SubnetInfo(BaseModel):
    model_config = ConfigDict(frozen=True)

    subnet_id: str
    cidr: str
    availability_zone: str
    role: str | None = None  # podstart:role tag: public | private | compute


class PlannedSubnet(BaseModel):
    model_config = ConfigDict(frozen=True)

    role: str  # public | private
    cidr: str
    availability_zone: str


class Allocation(BaseModel):
    model_config = ConfigDict(frozen=True)

    availability_zone: str
    cidr: str
    subnet_id: str | None = None  # set when an existing PodStart compute subnet is reused

    @property
    def reused(self) -> bool:
        return self.subnet_id is not None


def _net(cidr: str) -> ipaddress.IPv4Network:
    net = ipaddress.ip_network(cidr, strict=False)
    assert isinstance(net, ipaddress.IPv4Network)
    return net


def plan_base_subnets(vpc_cidr: str, zones: Sequence[str]) -> list[PlannedSubnet]:
    """One public and one private /24 per zone, from the top of the VPC block down, so the bottom
    of the block stays free for /20 compute subnets."""
    vpc = _net(vpc_cidr)
    blocks = list(vpc.subnets(new_prefix=BASE_PREFIX))[::-1]
    planned: list[PlannedSubnet] = []
    for i, zone in enumerate(zones):
        planned.append(PlannedSubnet(role="public", cidr=str(blocks[2 * i]), availability_zone=zone))
        planned.append(PlannedSubnet(role="private", cidr=str(blocks[2 * i + 1]), availability_zone=zone))
    return planned


def first_free_block(vpc_blocks: Iterable[str], taken: Iterable[str], prefix: int = COMPUTE_PREFIX) -> str:
    """The lowest block of /prefix inside any VPC CIDR block that overlaps no taken subnet."""
    used = [_net(c) for c in taken]
    for block in sorted((_net(b) for b in vpc_blocks), key=lambda n: int(n.network_address)):
        if block.prefixlen > prefix:
            continue
        for candidate in block.subnets(new_prefix=prefix):
            if not any(candidate.overlaps(u) for u in used):
                return str(candidate)
    raise VpcFull(f"no free /{prefix} is left in the VPC ({', '.join(vpc_blocks)}); "
                  f"add a secondary CIDR block or use a larger VPC")


def allocate_compute_subnet(vpc_blocks: Sequence[str], subnets: Sequence[SubnetInfo], zone: str,
                            prefix: int = COMPUTE_PREFIX) -> Allocation:
    """Reuse the PodStart compute subnet of that zone, or carve the first free /prefix."""
    for s in sorted(subnets, key=lambda s: s.subnet_id):
        if s.role == "compute" and s.availability_zone == zone:
            return Allocation(availability_zone=zone, cidr=s.cidr, subnet_id=s.subnet_id)
    return Allocation(availability_zone=zone, cidr=first_free_block(vpc_blocks, [s.cidr for s in subnets], prefix))


def plan_fits(vpc_cidr: str, base_zones: Sequence[str], compute_zones: Sequence[str]) -> str | None:
    """None if the VPC holds the base subnets and a compute subnet per zone, else why not."""
    taken = [p.cidr for p in plan_base_subnets(vpc_cidr, base_zones)]
    try:
        for _ in sorted(set(compute_zones)):
            taken.append(first_free_block([vpc_cidr], taken))
    except VpcFull:
        return (f"{vpc_cidr} cannot hold the control-plane subnets plus a /{COMPUTE_PREFIX} compute subnet "
                f"for each of {len(set(compute_zones))} zone(s); use a larger block (a /16 fits 12)")
    return None
