"""Where a job's or an endpoint's data lives: the one contract every path field follows. Pure.

A path field (a dataset, a model, a job's output) takes one of:
- a path under `/data` (e.g. `/data/datasets/sft/train.jsonl`): PodStart's data bucket, mounted at `/data` in every
  pod; `/data/<key>` is `s3://<data bucket>/<key>`;
- an S3 URI `s3://bucket/key` on a bucket PodStart may read (its data bucket, or one an admin registered; GET
  /v1/data lists them). The data bucket's keys are `/data/<key>` in pods. A registered bucket is read through a
  volume an admin mounted in the workload's namespace (POST .../storage, kind s3: a Mountpoint volume with its own
  Pod Identity role scoped to the bucket and prefix, authenticated as the pod): `s3://bucket/key` is then
  `/s3/bucket/key` in the pods, which run as that volume's ServiceAccount;
- for recipe datasets, also a path relative to `/data/datasets` (e.g. `sft/train.jsonl`), as before.

Everything is parsed by its grammar (identifiers.s3_uri; no '.', '..' or empty segments), never matched loosely, and
every refusal says the accepted forms with an example.
"""

from __future__ import annotations

import posixpath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from functions.domain import identifiers

DATA_MOUNT = "/data"
S3_MOUNT = "/s3"
DATASETS = "datasets"
EXAMPLE_DATA = "/data/datasets/sft/train.jsonl"
EXAMPLE_S3 = "s3://team-datasets/sft/train.jsonl"
FORMS = (f"a path under /data (e.g. {EXAMPLE_DATA}) or an S3 URI on a bucket PodStart may read (e.g. {EXAMPLE_S3}; "
         f"list_data / GET /v1/data lists them)")
RELATIVE_FORM = "or a path relative to /data/datasets (e.g. sft/train.jsonl)"
MODEL_FORMS = ("a Hugging Face model id (e.g. Qwen/Qwen3-0.6B), a folder under /data (e.g. /data/models/Qwen/Qwen3-0.6B"
               "/main/) or an S3 URI on a bucket PodStart may read (e.g. s3://team-models/qwen3-sft/)")

Kind = Literal["file", "dir", "model"]


class Ref(BaseModel):
    """A parsed path: the data bucket (`bucket` None: whichever PodStart's is) or a named bucket, and the key."""

    model_config = ConfigDict(frozen=True)

    text: str = Field(description="As the user wrote it")
    bucket: str | None = Field(default=None, description="None: PodStart's data bucket (a /data path)")
    key: str = Field(description="The object key (a file) or key prefix (a folder, ending in '/')")

    def uri(self, data_bucket: str) -> str:
        return f"s3://{self.bucket or data_bucket}/{self.key}"

    def on_data_bucket(self, data_bucket: str) -> bool:
        return self.bucket is None or self.bucket == data_bucket


def _key_problem(key: str) -> str | None:
    if not key.strip("/"):
        return "name a key, not the bucket's root"
    return identifiers.key_problem(key)


def parse(value: str, *, relative_to: str | None = None, forms: str = FORMS) -> Ref:
    """`value` as a Ref, or ValueError naming the accepted forms with an example."""
    accepted = f"{forms}{', ' + RELATIVE_FORM if relative_to else ''}"
    if value.startswith("s3://"):
        try:
            bucket, key = identifiers.s3_uri(value)
        except ValueError as exc:
            raise ValueError(f"{exc}; accepted: {accepted}") from None
        if (why := _key_problem(key)) is not None:
            raise ValueError(f"{value}: {why}; accepted: {accepted}")
        return Ref(text=value, bucket=bucket, key=key)
    if value == DATA_MOUNT or value.startswith(DATA_MOUNT + "/"):
        key = value.removeprefix(DATA_MOUNT + "/") if value != DATA_MOUNT else ""
        if (why := _key_problem(key)) is not None:
            raise ValueError(f"{value}: {why}; accepted: {accepted}")
        return Ref(text=value, bucket=None, key=key)
    if relative_to and value and not value.startswith("/") and "://" not in value:
        key = f"{relative_to}/{value}"
        if (why := identifiers.key_problem(key)) is not None:
            raise ValueError(f"{value}: {why}; accepted: {accepted}")
        return Ref(text=value, bucket=None, key=key)
    raise ValueError(f"{value!r} is not a data path: accepted: {accepted}")


def check(value: str, *, relative_to: str | None = None) -> str:
    parse(value, relative_to=relative_to)
    return value


def is_hf_id(value: str) -> bool:
    if value.startswith(("/", "s3://")):
        return False
    try:
        identifiers.hf_model_id(value)
    except ValueError:
        return False
    return True


def check_model(value: str) -> str:
    """A model reference: a Hugging Face id, or a folder under /data or on a readable bucket."""
    if is_hf_id(value):
        return value
    if value.startswith(("/", "s3://")):
        parse(value, forms=MODEL_FORMS)
        return value
    raise ValueError(f"{value!r}: accepted: {MODEL_FORMS}")


# -- where a path is in the pods -----------------------------------------------------------------------------------

class Mount(BaseModel):
    """A registered bucket's volume in a namespace (a storage.add of kind s3): its claim, what it mounts, how."""

    model_config = ConfigDict(frozen=True)

    storage: str = Field(description="The volume's (and claim's) name")
    namespace: str
    bucket: str
    prefix: str = ""
    read_only: bool = False
    service_account: str = Field(description="Pods run as it to mount the bucket (the volume's Pod Identity role)")
    status: str = "AVAILABLE"

    @property
    def path(self) -> str:
        """Where the volume is mounted in pods: /s3/<bucket>/<prefix>."""
        return posixpath.join(S3_MOUNT, self.bucket, self.prefix).rstrip("/")

    def covers(self, key: str) -> bool:
        return key.startswith(self.prefix)

    @property
    def volume(self) -> str:
        """The pod's volume name for it (a DNS label)."""
        return f"s3-{self.storage}"[:63].rstrip("-")


class DataMap(BaseModel):
    """What a workload can see: the data bucket at /data, and the registered volumes of its namespace."""

    model_config = ConfigDict(frozen=True)

    data_bucket: str
    mounts: list[Mount] = Field(default_factory=list)

    def mount_for(self, ref: Ref) -> Mount | None:
        if ref.on_data_bucket(self.data_bucket):
            return None
        found = [m for m in self.mounts if m.bucket == ref.bucket and m.covers(ref.key)]
        return max(found, key=lambda m: len(m.prefix)) if found else None

    def pod_path(self, ref: Ref) -> str:
        """The path in the pod: /data/<key> on the data bucket, /s3/<bucket>/<key> on a mounted one."""
        if ref.on_data_bucket(self.data_bucket):
            return f"{DATA_MOUNT}/{ref.key}"
        if self.mount_for(ref) is None:
            raise ValueError(f"{ref.text} is not mounted in the workload's namespace")
        return f"{S3_MOUNT}/{ref.bucket}/{ref.key}"

    def resolve(self, value: str, *, relative_to: str | None = None) -> str:
        return self.pod_path(parse(value, relative_to=relative_to))


DEFAULT_MAP = DataMap(data_bucket="")  # /data paths only: what a render without the namespace's mounts sees


def pod_volumes(mounts: list[Mount]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(pod volumes, container volumeMounts) for the registered volumes a workload reads or writes."""
    volumes: list[dict[str, Any]] = [
        {"name": m.volume, "persistentVolumeClaim": {"claimName": m.storage, "readOnly": m.read_only}} for m in mounts]
    mounted: list[dict[str, Any]] = [
        {"name": m.volume, "mountPath": m.path, **({"readOnly": True} if m.read_only else {})} for m in mounts]
    return volumes, mounted


def service_account(mounts: list[Mount]) -> str | None:
    """The ServiceAccount the pods run as to mount the registered volumes (one: all share it), or None."""
    names = sorted({m.service_account for m in mounts})
    return names[0] if names else None
