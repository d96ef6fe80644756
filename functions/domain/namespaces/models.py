"""PodStart namespaces: `default` and the namespaces an admin created through PodStart. The request rules, the
objects a namespace.create applies, and the views. Pure.

A PodStart namespace holds, besides the Namespace (label `app.kubernetes.io/managed-by: podstart`):
- the Role and RoleBinding that let the API function's group read and write Secrets there (and nowhere else);
- the shared data volume: a PersistentVolume on PodStart's data bucket bound to the `podstart-data` claim, so a
  job's pods see the same `/data` as in `default`.
Deleting one deletes everything in it (jobs, Secrets, claims): an admin's action, with a typed confirmation.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from functions.domain import manifests, rbac
from functions.domain.tenancy import DEFAULT, MANAGED_LABEL, MANAGED_VALUE, Namespace, is_managed

LABELS = {MANAGED_LABEL: MANAGED_VALUE}


class NamespaceCreate(BaseModel):
    """POST /v1/clusters/{cluster}/namespaces (admin): a namespace for a team's jobs, Secrets and volumes."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Namespace = Field(description="A DNS label, not a system namespace's name (kube-*, aws-*, ...)")


class NamespaceView(BaseModel):
    name: str
    status: str = Field(description="Active or Terminating (as the API server says)")
    created_at: str | None = None
    data_volume: bool = Field(description="The shared data volume's claim (podstart-data) is there")
    secrets_access: bool = Field(description="PodStart's Role for job Secrets is there")
    default: bool = Field(False, description="The cluster's default namespace (always PodStart's; never deleted)")


class NamespaceList(BaseModel):
    cluster: str
    region: str
    items: list[NamespaceView]


def data_volume(bucket: str, region: str, namespace: str) -> list[dict[str, Any]]:
    """The shared data volume in `namespace`: a PV of its own (PVs are cluster-wide) bound to `podstart-data`."""
    pv, pvc = manifests.s3_volume(bucket, region, namespace)
    if namespace != DEFAULT:
        name = pv_name(namespace)
        pv["metadata"]["name"] = name
        pv["spec"]["csi"]["volumeHandle"] = f"s3-{bucket}-{namespace}"  # one handle per volume
        pvc["spec"]["volumeName"] = name
    return [pv, pvc]


def pv_name(namespace: str) -> str:
    return f"{manifests.DATA_VOLUME}-{namespace}"


def namespace_object(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": dict(LABELS)}}


def access_objects(name: str) -> list[dict[str, Any]]:
    """The Role and RoleBinding of the API function's group in namespace `name` (its job Secrets)."""
    return rbac.namespace_manifests(name, LABELS)


def view(obj: dict[str, Any], claims: set[str], roles: set[str]) -> NamespaceView:
    meta = obj.get("metadata") or {}
    name = str(meta.get("name"))
    return NamespaceView(name=name, status=str((obj.get("status") or {}).get("phase") or "Active"),
                         created_at=meta.get("creationTimestamp"), data_volume=name in claims,
                         secrets_access=name in roles, default=name == DEFAULT)


def managed_only(objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """PodStart's namespaces among the API server's, `default` first, then by name."""
    mine = [o for o in objs if is_managed(o)]
    return sorted(mine, key=lambda o: (o["metadata"]["name"] != DEFAULT, o["metadata"]["name"]))


Occupant = Literal["job", "endpoint", "storage", "secret", "claim"]
