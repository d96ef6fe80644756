"""Idempotent "ensure" helpers over boto3 clients: look (by PodStart tags) before create, adopt
what an earlier attempt made. Every resource PodStart creates carries `podstart:cluster` and
`podstart:managed=true`, so delete removes exactly what PodStart made."""

from __future__ import annotations

import hashlib
import json
import urllib.parse
from pathlib import Path
from typing import Any

from botocore.exceptions import ClientError

from functions.domain.clusters.network import (
    RESERVED_TAG_PREFIX,
    ROLE_TAG,
    Allocation,
    SubnetInfo,
    allocate_compute_subnet,
    subnet_from_ec2,
)
from functions.domain.errors import PermanentStepError

CLUSTER_TAG = "podstart:cluster"
MANAGED_TAG = "podstart:managed"
LIFECYCLE_DIR = Path(__file__).resolve().parent.parent / "assets" / "lifecycle"


def tags(cluster: str, **extra: str) -> list[dict[str, str]]:
    base = {CLUSTER_TAG: cluster, MANAGED_TAG: "true", **extra}
    return [{"Key": k, "Value": v} for k, v in base.items()]


def tag_spec(resource_type: str, cluster: str, **extra: str) -> list[dict[str, Any]]:
    return [{"ResourceType": resource_type, "Tags": tags(cluster, **extra)}]


def cluster_filter(cluster: str, **extra: str) -> list[dict[str, Any]]:
    f = [{"Name": f"tag:{CLUSTER_TAG}", "Values": [cluster]}]
    f += [{"Name": f"tag:{k}", "Values": [v]} for k, v in extra.items()]
    return f


def error_code(err: ClientError) -> str:
    return str(err.response.get("Error", {}).get("Code", ""))


# -- network ---------------------------------------------------------------------------------------
def ensure_vpc(ec2: Any, cluster: str, cidr: str) -> str:
    found = ec2.describe_vpcs(Filters=cluster_filter(cluster))["Vpcs"]
    if found:
        return str(found[0]["VpcId"])
    vpc = ec2.create_vpc(CidrBlock=cidr, TagSpecifications=tag_spec("vpc", cluster, Name=f"podstart-{cluster}"))
    vpc_id = str(vpc["Vpc"]["VpcId"])
    ec2.modify_vpc_attribute(VpcId=vpc_id, EnableDnsSupport={"Value": True})
    ec2.modify_vpc_attribute(VpcId=vpc_id, EnableDnsHostnames={"Value": True})
    return vpc_id


def subnets_of(ec2: Any, vpc_id: str) -> list[SubnetInfo]:
    found = ec2.describe_subnets(Filters=[{"Name": "vpc-id", "Values": [vpc_id]}])["Subnets"]
    return [subnet_from_ec2(s) for s in found]


def ensure_subnet(ec2: Any, cluster: str, vpc_id: str, cidr: str, zone: str, role: str,
                  existing: list[SubnetInfo], extra_tags: dict[str, str] | None = None) -> str:
    for s in existing:
        if s.cidr == cidr:
            return s.subnet_id
    sub = ec2.create_subnet(VpcId=vpc_id, CidrBlock=cidr, AvailabilityZone=zone, TagSpecifications=tag_spec(
        "subnet", cluster, **{ROLE_TAG: role, "Name": f"podstart-{cluster}-{role}-{zone}", **(extra_tags or {})}))
    subnet_id = str(sub["Subnet"]["SubnetId"])
    if role == "public":
        ec2.modify_subnet_attribute(SubnetId=subnet_id, MapPublicIpOnLaunch={"Value": True})
    return subnet_id


def ensure_igw(ec2: Any, cluster: str, vpc_id: str) -> str:
    found = ec2.describe_internet_gateways(Filters=[{"Name": "attachment.vpc-id", "Values": [vpc_id]}])
    if found["InternetGateways"]:
        return str(found["InternetGateways"][0]["InternetGatewayId"])
    igw = ec2.describe_internet_gateways(Filters=cluster_filter(cluster))["InternetGateways"]
    igw_id = igw[0]["InternetGatewayId"] if igw else ec2.create_internet_gateway(
        TagSpecifications=tag_spec("internet-gateway", cluster))["InternetGateway"]["InternetGatewayId"]
    ec2.attach_internet_gateway(InternetGatewayId=igw_id, VpcId=vpc_id)
    return str(igw_id)


def ensure_route_table(ec2: Any, cluster: str, vpc_id: str, role: str, subnet_ids: list[str]) -> str:
    found = ec2.describe_route_tables(Filters=[*cluster_filter(cluster, **{ROLE_TAG: role}),
                                               {"Name": "vpc-id", "Values": [vpc_id]}])["RouteTables"]
    if found:
        rt = found[0]
    else:
        rt = ec2.create_route_table(VpcId=vpc_id, TagSpecifications=tag_spec(
            "route-table", cluster, **{ROLE_TAG: role, "Name": f"podstart-{cluster}-{role}"}))["RouteTable"]
    associated = {a.get("SubnetId") for a in rt.get("Associations", [])}
    for sid in subnet_ids:
        if sid not in associated:
            # A subnet has one route table; move it from the main table to ours.
            current = ec2.describe_route_tables(Filters=[{"Name": "association.subnet-id", "Values": [sid]}])
            for other in current["RouteTables"]:
                for a in other.get("Associations", []):
                    if a.get("SubnetId") == sid:
                        ec2.disassociate_route_table(AssociationId=a["RouteTableAssociationId"])
            ec2.associate_route_table(RouteTableId=rt["RouteTableId"], SubnetId=sid)
    return str(rt["RouteTableId"])


def ensure_default_route(ec2: Any, route_table_id: str, **target: str) -> None:
    rt = ec2.describe_route_tables(RouteTableIds=[route_table_id])["RouteTables"][0]
    for r in rt.get("Routes", []):
        if r.get("DestinationCidrBlock") == "0.0.0.0/0":
            return
    ec2.create_route(RouteTableId=route_table_id, DestinationCidrBlock="0.0.0.0/0", **target)


def ensure_nat(ec2: Any, cluster: str, vpc_id: str, public_subnet_id: str) -> tuple[str, str]:
    """(nat id, state). Adopts a live NAT gateway in the VPC; creates one (with an EIP) otherwise."""
    found = ec2.describe_nat_gateways(Filters=[{"Name": "vpc-id", "Values": [vpc_id]},
                                               {"Name": "state", "Values": ["pending", "available"]}])
    if found["NatGateways"]:
        nat = found["NatGateways"][0]
        return str(nat["NatGatewayId"]), str(nat["State"])
    eips = ec2.describe_addresses(Filters=cluster_filter(cluster))["Addresses"]
    free = [a for a in eips if not a.get("AssociationId")]
    alloc = free[0]["AllocationId"] if free else ec2.allocate_address(
        Domain="vpc", TagSpecifications=tag_spec("elastic-ip", cluster))["AllocationId"]
    nat = ec2.create_nat_gateway(SubnetId=public_subnet_id, AllocationId=alloc,
                                 TagSpecifications=tag_spec("natgateway", cluster))["NatGateway"]
    return str(nat["NatGatewayId"]), str(nat.get("State", "pending"))


def ensure_s3_endpoint(ec2: Any, cluster: str, vpc_id: str, region: str, route_table_ids: list[str]) -> str:
    service = f"com.amazonaws.{region}.s3"
    found = ec2.describe_vpc_endpoints(Filters=[{"Name": "vpc-id", "Values": [vpc_id]},
                                                {"Name": "service-name", "Values": [service]}])["VpcEndpoints"]
    if found:
        return str(found[0]["VpcEndpointId"])
    ep = ec2.create_vpc_endpoint(VpcId=vpc_id, ServiceName=service, VpcEndpointType="Gateway",
                                 RouteTableIds=route_table_ids, TagSpecifications=tag_spec("vpc-endpoint", cluster))
    return str(ep["VpcEndpoint"]["VpcEndpointId"])


def ensure_efa_security_group(ec2: Any, cluster: str, vpc_id: str) -> str:
    """EFA needs all traffic allowed to and from the group itself."""
    name = f"podstart-{cluster}-efa"
    found = ec2.describe_security_groups(Filters=[{"Name": "vpc-id", "Values": [vpc_id]},
                                                  {"Name": "group-name", "Values": [name]}])["SecurityGroups"]
    if found:
        sg = found[0]
        sg_id = str(sg["GroupId"])
    else:
        sg_id = str(ec2.create_security_group(
            GroupName=name, VpcId=vpc_id, Description="PodStart EFA: all traffic within the group",
            TagSpecifications=tag_spec("security-group", cluster))["GroupId"])
        sg = ec2.describe_security_groups(GroupIds=[sg_id])["SecurityGroups"][0]
    self_rule = [{"IpProtocol": "-1", "UserIdGroupPairs": [{"GroupId": sg_id}]}]

    def has_self(perms: list[dict[str, Any]]) -> bool:
        return any(p.get("IpProtocol") == "-1"
                   and any(g.get("GroupId") == sg_id for g in p.get("UserIdGroupPairs", [])) for p in perms)

    if not has_self(sg.get("IpPermissions", [])):
        ec2.authorize_security_group_ingress(GroupId=sg_id, IpPermissions=self_rule)
    if not has_self(sg.get("IpPermissionsEgress", [])):
        ec2.authorize_security_group_egress(GroupId=sg_id, IpPermissions=self_rule)
    return sg_id


def nat_in_vpc(ec2: Any, vpc_id: str) -> str | None:
    found = ec2.describe_nat_gateways(Filters=[{"Name": "vpc-id", "Values": [vpc_id]},
                                               {"Name": "state", "Values": ["available", "pending"]}])["NatGateways"]
    return str(found[0]["NatGatewayId"]) if found else None


def ensure_compute_subnet(ec2: Any, cluster: str, vpc_id: str, zone: str, *, group: str = "",
                          needed_addresses: int = 0) -> Allocation:
    """The one allocator every capacity path uses: reuse the zone's compute subnet when it has room for
    the group (or carve another /20), route it through the VPC's NAT gateway, tag it for Karpenter and
    internal load balancers, and reserve the group's addresses on it (a tag per group: idempotent)."""
    vpc = ec2.describe_vpcs(VpcIds=[vpc_id])["Vpcs"][0]
    blocks = [a["CidrBlock"] for a in vpc.get("CidrBlockAssociationSet", [])
              if a.get("CidrBlockState", {}).get("State", "associated") == "associated"] or [vpc["CidrBlock"]]
    existing = subnets_of(ec2, vpc_id)
    try:
        alloc = allocate_compute_subnet(blocks, existing, zone, group=group, needed=needed_addresses)
    except ValueError as exc:
        raise PermanentStepError("VpcFull", str(exc)) from None
    nat = nat_in_vpc(ec2, vpc_id)
    if nat is None:
        raise PermanentStepError(
            "NoNatGateway", f"VPC {vpc_id} has no NAT gateway: compute subnets need one for outbound traffic "
                            f"(ECR, S3, the EKS API); create one in a public subnet")
    subnet_id = alloc.subnet_id or ensure_subnet(
        ec2, cluster, vpc_id, alloc.cidr, zone, "compute", existing,
        {"kubernetes.io/role/internal-elb": "1", "karpenter.sh/discovery": cluster})
    rt = ensure_route_table(ec2, cluster, vpc_id, f"compute-{zone}", [subnet_id])
    ensure_default_route(ec2, rt, NatGatewayId=nat)
    if group and needed_addresses:
        ec2.create_tags(Resources=[subnet_id], Tags=[{"Key": RESERVED_TAG_PREFIX + group,
                                                      "Value": str(needed_addresses)}])
    return alloc.model_copy(update={"subnet_id": subnet_id})


# -- IAM -------------------------------------------------------------------------------------------
def ensure_role(iam: Any, name: str, trust_doc: str, managed: list[str], inline: dict[str, str],
                cluster: str, *, boundary: str | None) -> str:
    """Create (under PodStart's permissions boundary) or adopt the role, then converge its policies."""
    try:
        arn = iam.get_role(RoleName=name)["Role"]["Arn"]
    except ClientError as err:
        if error_code(err) != "NoSuchEntity":
            raise
        args: dict[str, Any] = {"RoleName": name, "Path": "/podstart/", "AssumeRolePolicyDocument": trust_doc,
                                "Description": f"PodStart cluster {cluster}", "Tags": tags(cluster)}
        if boundary:
            args["PermissionsBoundary"] = boundary
        arn = iam.create_role(**args)["Role"]["Arn"]
    attached = {p["PolicyArn"] for p in iam.list_attached_role_policies(RoleName=name)["AttachedPolicies"]}
    for policy in managed:
        if policy not in attached:
            iam.attach_role_policy(RoleName=name, PolicyArn=policy)
    for pname, doc in inline.items():
        try:
            current = iam.get_role_policy(RoleName=name, PolicyName=pname)["PolicyDocument"]
        except ClientError as err:
            if error_code(err) != "NoSuchEntity":
                raise
            current = None
        if current is None or _policy_json(current) != _policy_json(doc):
            iam.put_role_policy(RoleName=name, PolicyName=pname, PolicyDocument=doc)
    return str(arn)


def _policy_json(doc: Any) -> Any:
    if isinstance(doc, str):
        doc = json.loads(urllib.parse.unquote(doc))
    return doc


def delete_role(iam: Any, name: str) -> bool:
    try:
        for p in iam.list_attached_role_policies(RoleName=name)["AttachedPolicies"]:
            iam.detach_role_policy(RoleName=name, PolicyArn=p["PolicyArn"])
        for pname in iam.list_role_policies(RoleName=name)["PolicyNames"]:
            iam.delete_role_policy(RoleName=name, PolicyName=pname)
        iam.delete_role(RoleName=name)
    except ClientError as err:
        if error_code(err) == "NoSuchEntity":
            return False
        raise
    return True


# -- lifecycle scripts -----------------------------------------------------------------------------
def lifecycle_version() -> str:
    h = hashlib.sha256()
    for f in sorted(LIFECYCLE_DIR.glob("*")):
        h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:12]


def ensure_lifecycle_scripts(s3: Any, bucket: str) -> str:
    """Upload the scripts versioned with PodStart under lifecycle/<content hash>/ (once); return the URI."""
    prefix = f"lifecycle/{lifecycle_version()}/"
    for f in sorted(LIFECYCLE_DIR.glob("*.sh")):
        key = prefix + f.name
        try:
            s3.head_object(Bucket=bucket, Key=key)
        except ClientError as err:
            if error_code(err) not in ("404", "NoSuchKey", "NotFound"):
                raise
            s3.put_object(Bucket=bucket, Key=key, Body=f.read_bytes(), ServerSideEncryption="AES256")
    return f"s3://{bucket}/{prefix}"
