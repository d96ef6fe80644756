"""Network planning: the cluster's base subnets and the one compute-subnet allocator every capacity
path uses (create and add instance group). Pure: it sees CIDRs, never EC2."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

COMPUTE_PREFIX = 20  # accelerator fleets need thousands of addresses; EKS control-plane subnets do not
BASE_PREFIX = 24
ROLE_TAG = "podstart:role"
RESERVED_TAG_PREFIX = "podstart:addresses/"  # + group name -> addresses the group was placed for
AWS_RESERVED_PER_SUBNET = 5  # AWS keeps the first four addresses and the last one of every subnet
POD_ADDRESSES_PER_INSTANCE = 10  # VPC CNI: pod IPs each node draws from its subnet (one warm ENI's worth)


def usable(prefix: int) -> int:
    return 2 ** (32 - prefix) - AWS_RESERVED_PER_SUBNET


COMPUTE_USABLE = usable(COMPUTE_PREFIX)


def addresses_per_instance(efa_interfaces: int, efa_only: bool) -> int:
    """VPC addresses one HyperPod instance takes: its primary interface, one per EFA interface that
    carries IP (EFA-only interfaces carry none), and the pod addresses the VPC CNI draws."""
    return 1 + (0 if efa_only else max(0, efa_interfaces - 1)) + POD_ADDRESSES_PER_INSTANCE


def group_addresses(instance_count: int, efa_interfaces: int, efa_only: bool) -> int:
    return instance_count * addresses_per_instance(efa_interfaces, efa_only)


def max_instances_per_subnet(efa_interfaces: int, efa_only: bool) -> int:
    return COMPUTE_USABLE // addresses_per_instance(efa_interfaces, efa_only)


class VpcFull(ValueError):
    """No free block of the wanted size is left in any of the VPC's CIDR blocks."""


class SubnetInfo(BaseModel):
    model_config = ConfigDict(frozen=True)

    subnet_id: str
    cidr: str
    availability_zone: str
    role: str | None = None  # podstart:role tag: public | private | compute
    available_ips: int | None = None  # what EC2 reports free now
    reservations: dict[str, int] = Field(default_factory=dict)  # group -> addresses placed (subnet tags)

    def free_for(self, group: str) -> int:
        """Addresses left for `group`: EC2's free count, less what other groups placed here will take."""
        size = usable(_net(self.cidr).prefixlen)
        reserved = sum(n for g, n in self.reservations.items() if g != group)
        free = size - reserved
        if self.available_ips is not None:
            free = min(free, self.available_ips + self.reservations.get(group, 0))
        return max(0, free)


def subnet_from_ec2(s: dict[str, Any]) -> SubnetInfo:
    """An EC2 DescribeSubnets entry as the allocator sees it (role and reservations from its tags)."""
    t = {x["Key"]: x["Value"] for x in s.get("Tags", [])}
    reservations = {k.removeprefix(RESERVED_TAG_PREFIX): int(v) for k, v in t.items()
                    if k.startswith(RESERVED_TAG_PREFIX) and v.isdigit()}
    return SubnetInfo(subnet_id=s["SubnetId"], cidr=s["CidrBlock"], availability_zone=s["AvailabilityZone"],
                      role=t.get(ROLE_TAG), available_ips=s.get("AvailableIpAddressCount"),
                      reservations=reservations)


class VpcView(BaseModel):
    """What admission needs to know of a cluster's VPC."""

    model_config = ConfigDict(frozen=True)

    vpc_id: str
    blocks: list[str]
    subnets: list[SubnetInfo]
    has_nat: bool


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
                            prefix: int = COMPUTE_PREFIX, *, group: str = "", needed: int = 0) -> Allocation:
    """Reuse a PodStart compute subnet of that zone with room for `needed` addresses (the one already
    holding `group` first), or carve the first free /prefix: one allocator for every capacity path."""
    compute = sorted((s for s in subnets if s.role == "compute" and s.availability_zone == zone),
                     key=lambda s: (group not in s.reservations, s.subnet_id))
    for s in compute:
        if group in s.reservations or s.free_for(group) >= needed:
            return Allocation(availability_zone=zone, cidr=s.cidr, subnet_id=s.subnet_id)
    return Allocation(availability_zone=zone, cidr=first_free_block(vpc_blocks, [s.cidr for s in subnets], prefix))


def plan_fits(vpc_cidr: str, base_zones: Sequence[str], compute_zones: Sequence[str],
              groups: Sequence[tuple[str, str, int]] = ()) -> str | None:
    """None if the VPC holds the base subnets and the compute subnets the allocator will carve for the
    groups ((name, zone, addresses needed), placed in order as the create workflow places them; without
    groups: one compute subnet per zone), else why not."""
    planned = [SubnetInfo(subnet_id=f"base-{i}", cidr=p.cidr, availability_zone=p.availability_zone, role=p.role)
               for i, p in enumerate(plan_base_subnets(vpc_cidr, base_zones))]
    wanted = list(groups) or [(f"zone-{z}", z, 0) for z in sorted(set(compute_zones))]
    for name, zone, needed in wanted:
        if needed > COMPUTE_USABLE:
            return (f"group {name} needs about {needed} VPC addresses; a /{COMPUTE_PREFIX} compute subnet holds "
                    f"{COMPUTE_USABLE}: split it into smaller groups")
        try:
            alloc = allocate_compute_subnet([vpc_cidr], planned, zone, group=name, needed=needed)
        except VpcFull:
            carved = len([s for s in planned if s.role == "compute"])
            return (f"{vpc_cidr} cannot hold the control-plane subnets plus {carved + 1} /{COMPUTE_PREFIX} compute "
                    f"subnets for these groups; use a larger block (a /16 fits 12)")
        if alloc.subnet_id is None:
            planned.append(SubnetInfo(subnet_id=f"compute-{len(planned)}", cidr=alloc.cidr, availability_zone=zone,
                                      role="compute", reservations={name: needed}))
        else:
            planned = [s.model_copy(update={"reservations": {**s.reservations, name: needed}})
                       if s.subnet_id == alloc.subnet_id else s for s in planned]
    return None


def placement_problem(view: VpcView, zone: str, group: str, needed: int) -> str | None:
    """None when the allocator can place `needed` addresses for `group` in `zone`, else why not."""
    if not view.has_nat:
        return (f"the cluster's VPC {view.vpc_id} has no NAT gateway: instances in compute subnets need one for "
                f"outbound traffic (ECR, S3, the EKS API); add one, then add the group")
    if needed > COMPUTE_USABLE:
        return (f"the group needs about {needed} VPC addresses; a /{COMPUTE_PREFIX} compute subnet holds "
                f"{COMPUTE_USABLE}: split it into smaller groups")
    try:
        allocate_compute_subnet(view.blocks, view.subnets, zone, group=group, needed=needed)
    except VpcFull as exc:
        return f"{exc} (the zone's compute subnet is full)"
    return None


def control_plane_zones(groups: list[dict[str, Any]], region_zones: list[str]) -> list[str]:
    """Two zones for the EKS control plane: the instance groups' zones first, then the region's in name order
    (the cluster.create step and its plan both pick them here)."""
    zones: list[str] = []
    for g in groups:
        if g["availability_zone"] not in zones:
            zones.append(g["availability_zone"])
    for z in sorted(region_zones):
        if len(zones) >= 2:
            break
        if z not in zones:
            zones.append(z)
    return zones[:2]
