"""PodStart's own access to an EKS cluster: an access entry for the workflows' role with cluster-admin
(installing CRDs, cluster RBAC and DaemonSets for HyperPod needs cluster-wide admin), and one for the API
function's role carrying only the Kubernetes group `podstart-api`, whose rights are the ClusterRole in
functions.domain.rbac (reads, job Secrets, the invoke proxy)."""

from __future__ import annotations

from typing import Any

from functions.domain import arns, rbac
from functions.workflows import aws_ensure as ens

CLUSTER_ADMIN = "AmazonEKSClusterAdminPolicy"


def cluster_admin_policy(region: str) -> str:
    return arns.eks_access_policy(region, CLUSTER_ADMIN)


def ensure_cluster_admin(eks: Any, region: str, cluster: str, principal: str, tags: dict[str, str]) -> bool:
    """The access entry and its cluster-admin association; True when the entry was created now."""
    created = False
    if principal not in eks.list_access_entries(clusterName=cluster).get("accessEntries", []):
        eks.create_access_entry(clusterName=cluster, principalArn=principal, type="STANDARD", tags=tags)
        created = True
    policy = cluster_admin_policy(region)
    associated = eks.list_associated_access_policies(clusterName=cluster, principalArn=principal)
    if not any(p["policyArn"] == policy for p in associated.get("associatedAccessPolicies", [])):
        eks.associate_access_policy(clusterName=cluster, principalArn=principal, policyArn=policy,
                                    accessScope={"type": "cluster"})
    return created


def managed_tags(cluster: str, value: str = "true") -> dict[str, str]:
    return {ens.CLUSTER_TAG: cluster, ens.MANAGED_TAG: value}


def ensure_reader_access(eks: Any, cluster: str, principals: list[str], tags: dict[str, str]) -> list[str]:
    """The access entries of the API's and the live socket's roles: no access policy, only the `podstart-api`
    group (RBAC decides what it may do). The entries created now; an entry someone else made for such a role is
    left as it is."""
    present = set(eks.list_access_entries(clusterName=cluster).get("accessEntries", []))
    made = [p for p in principals if p and p not in present]
    for p in made:
        eks.create_access_entry(clusterName=cluster, principalArn=p, type="STANDARD",
                                kubernetesGroups=[rbac.GROUP], tags=tags)
    return made


def remove_access(eks: Any, cluster: str, principals: list[str]) -> list[str]:
    """Delete PodStart's access entries (workflows' and API's) on a cluster PodStart does not own."""
    present = set(eks.list_access_entries(clusterName=cluster).get("accessEntries", []))
    gone = [p for p in principals if p and p in present]
    for p in gone:
        eks.delete_access_entry(clusterName=cluster, principalArn=p)
    return gone
