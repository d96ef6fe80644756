"""Storage after create: S3 buckets mounted through static Mountpoint volumes, FSx for Lustre file
systems with their static volumes. Pure: the request rules (one place for every face), the record
PodStart keeps per volume, the Kubernetes objects and the IAM documents.

An S3 volume gets a role of its own scoped to its bucket and prefix, bound by EKS Pod Identity to a
service account in the volume's namespace; Mountpoint (CSI driver v2, `authenticationSource: pod`)
mounts with the credentials of the pod that uses the claim, so only pods running as that service
account can read the bucket. PodStart never creates or deletes a bucket.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from functions.domain import arns
from functions.domain.identifiers import bucket_problem
from functions.domain.manifests import FSX_VOLUME, MANAGED_LABELS, S3_CSI_DRIVER
from functions.domain.ports import StateStore
from functions.domain.tenancy import Namespace

NAME_PATTERN = r"^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$"
NAMESPACE_PATTERN = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"
RESERVED_PREFIX = "podstart-"
STORAGE_TAG = "podstart:storage"  # on FSx file systems a storage.add made: the volume's name
STORAGE_LABEL = "podstart.dev/storage"
FSX_ADDON = "aws-fsx-csi-driver"
FSX_CSI_DRIVER = "fsx.csi.aws.com"
S3_ADDON = "aws-mountpoint-s3-csi-driver"
POD_IDENTITY_ADDON = "eks-pod-identity-agent"


def backing_addons(kind: str) -> list[str]:
    """The EKS add-ons a volume's `backing` step makes sure of (creates when missing)."""
    return [POD_IDENTITY_ADDON, S3_ADDON] if kind == "s3" else [FSX_ADDON]

# FSx for Lustre PERSISTENT_2 (SSD): 1200 GiB, 2400 GiB, then increments of 2400 GiB; the default
# account quota for Lustre storage is 100,800 GiB. Throughput per TiB: 125, 250, 500 or 1000 MB/s.
FSX_MIN_GIB, FSX_STEP_GIB, FSX_MAX_GIB = 1200, 2400, 100800
FSX_THROUGHPUTS = (125, 250, 500, 1000)


FSX_CAPACITIES = (1200, 2400, *range(4800, FSX_MAX_GIB + 1, FSX_STEP_GIB))


def fsx_capacity_problem(gib: int) -> str | None:
    if gib in FSX_CAPACITIES:
        return None
    below = [c for c in FSX_CAPACITIES if c < gib]
    above = [c for c in FSX_CAPACITIES if c > gib]
    near = " or ".join(str(c) for c in (below[-1:] + above[:1]))
    return (f"FSx for Lustre PERSISTENT_2 takes 1200 GiB, 2400 GiB or a multiple of 2400 GiB up to "
            f"{FSX_MAX_GIB} GiB (the default account quota); nearest: {near}")


def normalize_prefix(prefix: str) -> str:
    """'' (the whole bucket) or a key prefix ending in '/'."""
    return prefix if not prefix or prefix.endswith("/") else prefix + "/"


class StorageAdd(BaseModel):
    """POST /v1/clusters/{cluster}/storage: mount an existing S3 bucket (`kind: s3`) or create an FSx for
    Lustre file system (`kind: fsx_lustre`) with its PersistentVolumeClaim."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["s3", "fsx_lustre"] = Field(description="s3: mount an existing bucket; fsx_lustre: new file system")
    name: str | None = Field(default=None, pattern=NAME_PATTERN,
                             description="Volume and claim name (default: s3-<bucket> or fsx-<capacity>)")
    namespace: Namespace = Field(default="default",
                                 description="A PodStart namespace for the PersistentVolumeClaim (default or one an "
                                             "admin created)")
    bucket: str | None = Field(default=None, max_length=63, description="s3: an existing bucket of this account")
    prefix: str = Field(default="", max_length=512, description="s3: mount only this key prefix ('' = bucket)")
    read_only: bool = Field(default=False, description="s3: mount read-only (the role can only read)")
    storage_capacity_gib: int | None = Field(default=None, ge=1, description="fsx_lustre: 1200, 2400 or n x 2400")
    throughput_mb_per_tib: int | None = Field(default=None, description="fsx_lustre: 125, 250, 500 or 1000")

    @field_validator("bucket")
    @classmethod
    def _bucket(cls, v: str | None) -> str | None:
        if v is not None and (why := bucket_problem(v)):
            raise ValueError(why)
        return v

    @field_validator("prefix")
    @classmethod
    def _prefix(cls, v: str) -> str:
        if v.startswith("/"):
            raise ValueError("a key prefix does not start with '/'")
        if "//" in v or any(part in (".", "..") for part in v.split("/")):
            raise ValueError("no empty, '.' or '..' path segments")
        if any(ord(c) < 32 or c in "\\*?" for c in v):
            raise ValueError("no control characters, backslashes or wildcards")
        return normalize_prefix(v)

    @field_validator("storage_capacity_gib")
    @classmethod
    def _capacity(cls, v: int | None) -> int | None:
        if v is not None and (why := fsx_capacity_problem(v)):
            raise ValueError(why)
        return v

    @field_validator("throughput_mb_per_tib")
    @classmethod
    def _throughput(cls, v: int | None) -> int | None:
        if v is not None and v not in FSX_THROUGHPUTS:
            raise ValueError(f"PERSISTENT_2 throughput is one of {', '.join(map(str, FSX_THROUGHPUTS))} MB/s per TiB")
        return v


def default_name(req: StorageAdd) -> str:
    """s3-<bucket> (plus a hash of the prefix when there is one), or fsx-<capacity>."""
    if req.kind == "s3":
        base = "s3-" + re.sub(r"[^a-z0-9-]", "-", req.bucket or "")
        if req.prefix:
            return base[:33].rstrip("-") + "-" + hashlib.sha256(req.prefix.encode()).hexdigest()[:6]
        return base[:40].rstrip("-")
    return f"fsx-{req.storage_capacity_gib or FSX_MIN_GIB}"


def check_add(req: StorageAdd) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Cross-field rules, each naming its field; the normalized request when there are none."""
    errors: list[dict[str, Any]] = []
    sent = req.model_dump(exclude_unset=True)
    if req.kind == "s3":
        if not req.bucket:
            errors.append({"loc": ["body", "bucket"], "msg": "an S3 volume names an existing bucket"})
        for f in ("storage_capacity_gib", "throughput_mb_per_tib"):
            if f in sent:
                errors.append({"loc": ["body", f], "msg": "only for kind fsx_lustre"})
    else:
        for f in ("bucket", "prefix", "read_only"):
            if f in sent:
                errors.append({"loc": ["body", f], "msg": "only for kind s3"})
    name = req.name or default_name(req)
    if name.startswith(RESERVED_PREFIX):
        errors.append({"loc": ["body", "name"], "msg": f"names starting with {RESERVED_PREFIX!r} are PodStart's own"})
    if errors:
        return errors, {}
    normalized: dict[str, Any] = {"kind": req.kind, "name": name, "namespace": req.namespace}
    if req.kind == "s3":
        normalized |= {"bucket": req.bucket, "prefix": req.prefix, "read_only": req.read_only}
    else:
        normalized |= {"storage_capacity_gib": req.storage_capacity_gib or FSX_MIN_GIB,
                       "throughput_mb_per_tib": req.throughput_mb_per_tib or 250}
    return [], normalized


# -- the record PodStart keeps per added volume ------------------------------------------------------
STORAGE_PK = "STORAGE"
Status = Literal["CREATING", "AVAILABLE", "FAILED", "DELETING", "DELETE_FAILED"]


class StorageRecord(BaseModel):
    model_config = ConfigDict(frozen=True)

    cluster: str
    region: str
    name: str
    kind: Literal["s3", "fsx_lustre"]
    namespace: str = "default"
    bucket: str | None = None
    prefix: str = ""
    read_only: bool = False
    storage_capacity_gib: int | None = None
    throughput_mb_per_tib: int | None = None
    status: Status = "CREATING"
    operation_id: str | None = None
    created_by: str = ""
    created_at: str = ""
    role_arn: str | None = None
    service_account: str | None = None
    file_system_id: str | None = None
    pvc_phase: str | None = None
    checked_at: str | None = None
    message: str | None = None


def storage_key(region: str, cluster: str, name: str) -> tuple[str, str]:
    return STORAGE_PK, f"{region}#{cluster}#{name}"


class StorageRecords:
    def __init__(self, state: StateStore) -> None:
        self.state = state

    def load(self, region: str, cluster: str, name: str) -> StorageRecord | None:
        body = self.state.get(*storage_key(region, cluster, name))
        return StorageRecord.model_validate(body) if body else None

    def create(self, rec: StorageRecord) -> bool:
        return self.state.put_new(*storage_key(rec.region, rec.cluster, rec.name), rec.model_dump(mode="json"))

    def save(self, rec: StorageRecord) -> None:
        self.state.put(*storage_key(rec.region, rec.cluster, rec.name), rec.model_dump(mode="json"))

    def delete(self, region: str, cluster: str, name: str) -> None:
        self.state.delete(*storage_key(region, cluster, name))

    def of_cluster(self, region: str, cluster: str) -> list[StorageRecord]:
        out = [StorageRecord.model_validate(b) for b in self.state.query(STORAGE_PK)]
        return sorted((r for r in out if r.region == region and r.cluster == cluster), key=lambda r: r.name)

    def update(self, region: str, cluster: str, name: str, **changes: Any) -> StorageRecord | None:
        rec = self.load(region, cluster, name)
        if rec is None:
            return None
        new = rec.model_copy(update=changes)
        self.save(new)
        return new


# -- names, IAM, Kubernetes objects -----------------------------------------------------------------
def scope_hash(region: str, cluster: str, name: str) -> str:
    return hashlib.sha256(f"{region}/{cluster}/{name}".encode()).hexdigest()[:8]


def role_name(cluster: str, region: str, name: str) -> str:
    """`podstart-<cluster>-vol-<hash8>`: one role per volume, at most 9 + 32 + 5 + 8 = 54 characters."""
    return f"podstart-{cluster}-vol-{scope_hash(region, cluster, name)}"


def service_account(name: str) -> str:
    return f"{name}-s3"


def bucket_policy(region: str, bucket: str, prefix: str, read_only: bool) -> str:
    """Mountpoint's permissions on one bucket, only under the prefix: list (prefix-conditioned) and
    object actions; never s3:*, never a `*` resource."""
    b = arns.s3_bucket(region, bucket)
    actions = ["s3:GetObject"] if read_only else \
        ["s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"]
    listing: dict[str, Any] = {"Sid": "ListMountedPrefix", "Effect": "Allow", "Action": ["s3:ListBucket"],
                               "Resource": [b]}
    if prefix:
        listing["Condition"] = {"StringLike": {"s3:prefix": [f"{prefix}*", prefix.rstrip("/")]}}
    return json.dumps({"Version": "2012-10-17", "Statement": [
        listing,
        {"Sid": "ReadOnlyObjects" if read_only else "ReadWriteObjects", "Effect": "Allow", "Action": actions,
         "Resource": [f"{b}/{prefix}*"]},
    ]})


def _meta(name: str, namespace: str | None = None, storage: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": {**MANAGED_LABELS, STORAGE_LABEL: storage or name}}
    if namespace:
        meta["namespace"] = namespace
    return meta


def pv_name(cluster: str, name: str, namespace: str) -> str:
    """PersistentVolumes are cluster-wide: the namespace is part of the volume's name."""
    return f"podstart-{namespace}-{name}"[:253]


def namespace_object(namespace: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace, "labels": dict(MANAGED_LABELS)}}


def s3_service_account(name: str, namespace: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(service_account(name), namespace, name)}


def s3_volume(cluster: str, name: str, namespace: str, bucket: str, prefix: str, region: str,
              read_only: bool) -> list[dict[str, Any]]:
    """A static Mountpoint volume on the bucket (under the prefix) with pod-level credentials, and its claim."""
    volume = pv_name(cluster, name, namespace)
    options = ["allow-other", f"region {region}"] + ([f"prefix {prefix}"] if prefix else []) \
        + (["read-only"] if read_only else ["allow-delete"])
    access = ["ReadOnlyMany"] if read_only else ["ReadWriteMany"]
    pv = {
        "apiVersion": "v1", "kind": "PersistentVolume", "metadata": _meta(volume, storage=name),
        "spec": {
            "capacity": {"storage": "1200Gi"}, "accessModes": access,
            "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "",
            "claimRef": {"namespace": namespace, "name": name},
            "mountOptions": options,
            "csi": {"driver": S3_CSI_DRIVER, "volumeHandle": f"s3-{bucket}-{scope_hash(region, cluster, name)}",
                    "volumeAttributes": {"bucketName": bucket, "authenticationSource": "pod"}},
        },
    }
    pvc = {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": _meta(name, namespace),
        "spec": {"accessModes": access, "storageClassName": "", "volumeName": volume,
                 "resources": {"requests": {"storage": "1200Gi"}}},
    }
    return [pv, pvc]


def fsx_volume(cluster: str, name: str, namespace: str, fs_id: str, dns_name: str, mount_name: str,
               capacity_gib: int) -> list[dict[str, Any]]:
    volume = pv_name(cluster, name, namespace)
    pv = {
        "apiVersion": "v1", "kind": "PersistentVolume", "metadata": _meta(volume, storage=name),
        "spec": {
            "capacity": {"storage": f"{capacity_gib}Gi"}, "accessModes": ["ReadWriteMany"],
            "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "",
            "claimRef": {"namespace": namespace, "name": name}, "mountOptions": ["flock"],
            "csi": {"driver": FSX_CSI_DRIVER, "volumeHandle": fs_id,
                    "volumeAttributes": {"dnsname": dns_name, "mountname": mount_name}},
        },
    }
    pvc = {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": _meta(name, namespace),
        "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "", "volumeName": volume,
                 "resources": {"requests": {"storage": f"{capacity_gib}Gi"}}},
    }
    return [pv, pvc]


def is_podstarts(obj: dict[str, Any] | None) -> bool:
    labels = ((obj or {}).get("metadata") or {}).get("labels") or {}
    return all(labels.get(k) == v for k, v in MANAGED_LABELS.items())


# -- views --------------------------------------------------------------------------------------------
class PvcState(BaseModel):
    name: str
    namespace: str
    volume: str | None = None
    phase: str | None = Field(default=None, description="Bound once pods can mount it; as of `as_of`")
    as_of: str | None = None


class StorageItem(BaseModel):
    name: str
    kind: Literal["s3", "fsx_lustre"]
    origin: Literal["cluster", "added"] = Field(description="cluster: made by cluster create/reconcile")
    status: str = Field(description="CREATING, AVAILABLE, FAILED, DELETING, ...: from the FSx lifecycle and "
                                    "the claim's phase")
    bucket: str | None = None
    prefix: str | None = None
    read_only: bool | None = None
    service_account: str | None = Field(default=None, description="s3: pods run as it to mount the bucket")
    role_arn: str | None = None
    file_system_id: str | None = None
    lifecycle: str | None = Field(default=None, description="FSx lifecycle, read live")
    storage_capacity_gib: int | None = None
    throughput_mb_per_tib: int | None = None
    pvc: PvcState | None = None
    operation_id: str | None = None
    message: str | None = None
    removable: bool = True
    confirm_required: bool = Field(default=False, description="DELETE needs ?confirm=<name> (it deletes data)")


class StorageList(BaseModel):
    cluster: str
    region: str
    items: list[StorageItem]


class ObjectEntry(BaseModel):
    key: str
    size: int
    last_modified: str | None = None


class ObjectList(BaseModel):
    storage: str
    bucket: str
    prefix: str = Field(description="The listed prefix (the volume's prefix plus the one asked for)")
    objects: list[ObjectEntry]
    prefixes: list[str] = Field(default_factory=list, description="Sub-prefixes ('folders') at this level")
    truncated: bool = False
    next_token: str | None = None


FSX_DEFAULT_VOLUME = FSX_VOLUME
