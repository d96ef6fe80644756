"""Plans for cluster.create, cluster.delete and cluster.import, step by step as their workflows run.

cluster.create makes everything new (admission refused a taken name), so its plan is the workflow's list
of ensures; the subnets come from the same functions the steps call (`plan_base_subnets`, the compute
subnet allocator). cluster.delete lists what the cluster's create recorded (PodStart deletes only what
it made); cluster.import adds PodStart's access entry and adoption tags, nothing else.
"""

from __future__ import annotations

from typing import Any

from functions.domain import manifests, rbac
from functions.domain.clusters.network import (
    SubnetInfo,
    allocate_compute_subnet,
    control_plane_zones,
    plan_base_subnets,
)
from functions.domain.plans import Capacity, Change, Draft, create, delete, none, update
from functions.domain.plans.base import PlanInput


def group_capacity(g: dict[str, Any], count: int | None = None) -> Capacity:
    n = g["instance_count"] if count is None else count
    paid = g.get("capacity_type") == "training-plan"
    label = {"spot": " (spot)", "training-plan": " (training plan, already paid)"}.get(str(g.get("capacity_type")), "")
    return Capacity(item=f"HyperPod {g['instance_type']}{label}", price=("hyperpod", g["instance_type"]),
                    count=n, paid=paid)


def plan_cluster_create(p: PlanInput) -> Draft:
    r, name = p.request, p.request["name"]
    groups: list[dict[str, Any]] = r["instance_groups"]
    changes: list[Change] = []
    # eks_control_plane
    s = "eks_control_plane"
    changes.append(create("AWS::EC2::VPC", f"podstart-{name}", s, cidr=r["vpc_cidr"]))
    zones = control_plane_zones(groups, list(p.facts.get("region_zones") or []))
    base = plan_base_subnets(r["vpc_cidr"], zones)
    for b in base:
        changes.append(create("AWS::EC2::Subnet", f"{name}-{b.role}-{b.availability_zone}", s, cidr=b.cidr,
                              availability_zone=b.availability_zone))
    changes += [
        create("AWS::EC2::InternetGateway", name, s),
        create("AWS::EC2::RouteTable", f"{name}-public", s),
        create("AWS::EC2::RouteTable", f"{name}-private", s),
        create("AWS::EC2::EIP", f"{name}-nat", s),
        create("AWS::EC2::NatGateway", name, s, hourly_cost=True),
        create("AWS::EC2::VPCEndpoint", f"{name}-s3", s, service="s3", type="Gateway"),
        create("AWS::EC2::SecurityGroup", f"{name}-efa", s, rule="all traffic within the group (EFA)"),
        create("AWS::IAM::Role", f"{name}-eks", s),
        create("AWS::EKS::Cluster", name, s, version=r["kubernetes_version"]),
        create("AWS::IAM::OIDCProvider", f"{name}-oidc", s),
        create("AWS::EKS::AccessEntry", "PodStart", s, policy="AmazonEKSClusterAdminPolicy"),
        create("AWS::EKS::AccessEntry", "PodStart API", s, kubernetes_groups=[rbac.GROUP]),
    ]
    # activate
    changes.append(update("PodStart preferences", "active cluster", "activate", active_cluster=name))
    # dependencies
    s = "dependencies"
    addons = list(manifests.ADDONS) + ([manifests.FSX_ADDON] if (r.get("storage") or {}).get("fsx_lustre") else [])
    changes += [create("eks-addon", a, s) for a in addons]
    changes += [create(f"Kubernetes {m['kind']}", m["metadata"]["name"], s)
                for m in manifests.dependency_components(r["region"])]
    # hyperpod_cluster
    s = "hyperpod_cluster"
    changes += [create("AWS::IAM::Role", f"{name}-hyperpod", s),
                update("AWS::S3::Object", "lifecycle scripts", s, note="uploaded once per version, shared")]
    planned = [SubnetInfo(subnet_id=f"planned-{i}", cidr=b.cidr, availability_zone=b.availability_zone, role=b.role)
               for i, b in enumerate(base)]
    for g in groups:
        alloc = allocate_compute_subnet([r["vpc_cidr"]], planned, g["availability_zone"], group=g["name"],
                                        needed=int(g.get("addresses_needed") or 0))
        if alloc.subnet_id is None:
            changes.append(create("AWS::EC2::Subnet", f"{name}-compute-{g['availability_zone']}", s, cidr=alloc.cidr,
                                  availability_zone=g["availability_zone"]))
            changes.append(create("AWS::EC2::RouteTable", f"{name}-compute-{g['availability_zone']}", s,
                                  route="0.0.0.0/0 via the NAT gateway"))
            planned.append(SubnetInfo(subnet_id=f"planned-{len(planned)}", cidr=alloc.cidr,
                                      availability_zone=g["availability_zone"], role="compute",
                                      reservations={g["name"]: int(g.get("addresses_needed") or 0)}))
    changes.append(create("AWS::SageMaker::Cluster", name, s, node_recovery=r.get("node_recovery", "automatic"),
                          instance_groups=[f"{g['name']}: {g['instance_count']} x {g['instance_type']} "
                                           f"({g.get('capacity_type', 'on-demand')}, {g['availability_zone']})"
                                           for g in groups]))
    # storage
    s = "storage"
    spec = r.get("storage") or {}
    if spec.get("s3", True):
        changes += [create("AWS::IAM::Role", f"{name}-s3-csi", s),
                    create("AWS::EKS::PodIdentityAssociation", "kube-system/s3-csi-driver-sa", s),
                    create("Kubernetes PersistentVolume", manifests.DATA_VOLUME, s),
                    create("Kubernetes PersistentVolumeClaim", manifests.DATA_VOLUME, s)]
    capacity = [group_capacity(g) for g in groups]
    capacity += [Capacity(item="EKS control plane", price=("eks", "cluster"), count=1),
                 Capacity(item="NAT gateway", price=("nat", "gateway"), count=1)]
    fsx = spec.get("fsx_lustre")
    if fsx:
        gib = int(fsx["storage_capacity_gib"])
        changes += [create("AWS::FSx::FileSystem", name, s, type="LUSTRE PERSISTENT_2", storage_gib=gib,
                           throughput_mb_per_tib=fsx["throughput_mb_per_tib"]),
                    create("Kubernetes PersistentVolume", manifests.FSX_VOLUME, s),
                    create("Kubernetes PersistentVolumeClaim", manifests.FSX_VOLUME, s)]
        capacity.append(Capacity(item=f"FSx for Lustre {gib} GiB",
                                 price=("fsx", f"PERSISTENT_2/{fsx['throughput_mb_per_tib']}"), count=gib))
    quota: dict[str, int] = {}
    for g in groups:
        if g.get("capacity_type") != "training-plan":
            quota[g["instance_type"]] = quota.get(g["instance_type"], 0) + int(g["instance_count"])
    warnings = [f"group {g['name']} is spot capacity: it may be reclaimed, and is billed below the price shown"
                for g in groups if g.get("capacity_type") == "spot"]
    return Draft(changes=_skip(changes, p.skip_steps), capacity=capacity, quota_requests=quota, warnings=warnings)


def plan_cluster_delete(p: PlanInput) -> Draft:
    r, name = p.request, p.request["name"]
    rec: dict[str, Any] = p.facts.get("record") or {}
    out: dict[str, Any] = p.facts.get("created") or {}
    groups: list[dict[str, Any]] = rec.get("instance_groups") or []
    if r.get("origin") != "created":
        kept = [*(delete(f"Kubernetes {m['kind']}", m["metadata"]["name"], "eks_control_plane")
                  for m in reversed(rbac.manifests())),
                delete("AWS::EKS::AccessEntry", "PodStart", "eks_control_plane",
                          eks_cluster=r.get("eks_cluster_name") or name),
                delete("AWS::EKS::AccessEntry", "PodStart API", "eks_control_plane",
                          eks_cluster=r.get("eks_cluster_name") or name),
                   update("AWS::EKS::Cluster", r.get("eks_cluster_name") or name, "eks_control_plane",
                          remove_tags=["podstart:managed", "podstart:cluster"]),
                   delete("PodStart cluster record", name, None)]
        return Draft(changes=kept, warnings=["imported cluster: its EKS and HyperPod clusters, add-ons and "
                                                         "network are left alone"])
    changes: list[Change] = []
    s = "storage"
    changes += [delete("Kubernetes PersistentVolumeClaim", manifests.DATA_VOLUME, s),
                delete("Kubernetes PersistentVolume", manifests.DATA_VOLUME, s),
                delete("AWS::EKS::PodIdentityAssociation", "kube-system/s3-csi-driver-sa", s),
                delete("AWS::IAM::Role", f"{name}-s3-csi", s),
                # the model downloader's (model.download's identity step), when a download made it
                delete("AWS::EKS::PodIdentityAssociation", "default/podstart-model-downloader", s, if_present=True),
                delete("AWS::IAM::Role", f"{name}-models", s, if_present=True)]
    capacity: list[Capacity] = []
    fsx_id = out.get("fsx_file_system_id")
    if fsx_id:
        changes.append(delete("AWS::FSx::FileSystem", str(fsx_id), s, data="everything on it is lost"))
        fsx = (rec.get("storage") or {}).get("fsx_lustre") or {}
        if fsx:
            capacity.append(Capacity(item=f"FSx for Lustre {fsx['storage_capacity_gib']} GiB",
                                     price=("fsx", f"PERSISTENT_2/{fsx['throughput_mb_per_tib']}"),
                                     count=-int(fsx["storage_capacity_gib"])))
    changes += [delete("AWS::SageMaker::Cluster", r.get("hyperpod_cluster_name") or name, "hyperpod_cluster",
                       instances=sum(int(g.get("instance_count") or 0) for g in groups)),
                delete("AWS::IAM::Role", f"{name}-hyperpod", "hyperpod_cluster")]
    changes += [delete("eks-addon", a, "dependencies") for a in (out.get("addons") or list(manifests.ADDONS))]
    changes += [delete("AWS::EKS::Cluster", name, "eks_control_plane"),
                delete("AWS::IAM::OIDCProvider", f"{name}-oidc", "eks_control_plane"),
                delete("AWS::IAM::Role", f"{name}-eks", "eks_control_plane")]
    s = "network"
    changes += [delete("AWS::EC2::NatGateway", str(out.get("nat_gateway_id") or name), s),
                delete("AWS::EC2::EIP", f"{name}-nat", s),
                delete("AWS::EC2::VPCEndpoint", str(out.get("s3_endpoint_id") or f"{name}-s3"), s),
                delete("AWS::EC2::RouteTable", f"{name} (all)", s),
                delete("AWS::EC2::Subnet", f"{name} (all)", s),
                delete("AWS::EC2::InternetGateway", str(out.get("internet_gateway_id") or name), s),
                delete("AWS::EC2::SecurityGroup", str(out.get("security_group_id") or f"{name}-efa"), s),
                delete("AWS::EC2::VPC", str(out.get("vpc_id") or f"podstart-{name}"), s),
                delete("PodStart cluster record", name, None)]
    capacity += [group_capacity(g, -int(g.get("instance_count") or 0)) for g in groups]
    capacity += [Capacity(item="EKS control plane", price=("eks", "cluster"), count=-1),
                 Capacity(item="NAT gateway", price=("nat", "gateway"), count=-1)]
    quota = {g["instance_type"]: -int(g.get("instance_count") or 0) for g in groups
             if g.get("capacity_type") != "training-plan"}
    return Draft(changes=_skip(changes, p.skip_steps), capacity=capacity, quota_requests=quota,
                 warnings=["deleting is permanent: the HyperPod nodes, the EKS cluster and the FSx data go"])


def plan_cluster_import(p: PlanInput) -> Draft:
    r = p.request
    eks_name = r["eks_cluster_name"]
    changes = [
        none("AWS::EKS::Cluster", eks_name, "discover", note="read, not changed"),
        update("AWS::EKS::Cluster", eks_name, "access", add_tags={"podstart:managed": "imported"}),
        create("AWS::EKS::AccessEntry", "PodStart", "access", policy="AmazonEKSClusterAdminPolicy"),
        create("AWS::EKS::AccessEntry", "PodStart API", "access", kubernetes_groups=[rbac.GROUP]),
        *(create(f"Kubernetes {m['kind']}", m["metadata"]["name"], "access") for m in rbac.manifests()),
        update("AWS::SageMaker::Cluster", "(the HyperPod cluster on it, if any)", "access",
               add_tags={"podstart:managed": "imported"}),
        update("PodStart preferences", "active cluster", "activate", active_cluster=r["name"]),
        create("PodStart cluster record", r["name"], "inventory"),
    ]
    return Draft(changes=_skip(changes, p.skip_steps),
                 warnings=["importing grants PodStart's role cluster-admin on the EKS cluster"])


def _skip(changes: list[Change], done: frozenset[str]) -> list[Change]:
    """A retry resumes after the steps that succeeded: their changes are already made."""
    return [c.model_copy(update={"action": "none"}) if c.step in done else c for c in changes]
