"""Where an operator may act: PodStart's namespaces and the buckets PodStart may read. Pure rules.

Roles decide *which actions*; this module decides *where*:

- **Namespaces.** Jobs, endpoints, pools, Secrets and data volumes live only in `default` and in the namespaces
  PodStart created (label `app.kubernetes.io/managed-by: podstart`). A system namespace (`kube-*`, `aws-*`,
  `amazon-*`, `eks-*`, HyperPod's, KubeRay's, KEDA's, Karpenter's, cert-manager's, the observability ones) is
  refused by its name, whatever its labels; any other namespace PodStart did not create is refused once read.
  The API function may touch Secrets only through a Role PodStart binds in each of its namespaces (functions.domain
  .rbac.namespace_manifests): never cluster-wide.
- **Buckets.** PodStart's own data bucket, and the buckets an admin registered at deploy time (CDK context
  `podstart:registeredBuckets`, each optionally limited to a key prefix). The API function's S3 grants name
  exactly these. An operator mounts only the data bucket; mounting a registered bucket is an admin's action.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

DEFAULT = "default"
MANAGED_LABEL, MANAGED_VALUE = "app.kubernetes.io/managed-by", "podstart"
DNS_LABEL = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"

# Namespaces of Kubernetes, EKS, HyperPod and the add-ons PodStart installs or that platforms commonly run.
SYSTEM_PREFIXES = ("kube-", "aws-", "amazon-", "eks-", "sagemaker-", "hyperpod", "kuberay", "karpenter", "keda",
                   "cert-manager", "istio-", "gpu-operator", "nvidia-", "neuron-", "calico-", "tigera-",
                   "cattle-", "flux-", "argocd", "gatekeeper-", "kyverno", "opentelemetry-", "prometheus",
                   "grafana", "observability", "monitoring", "logging")
SYSTEM_NAMES = frozenset({"kube-system", "kube-public", "kube-node-lease", "aws-hyperpod", "amazon-cloudwatch",
                          "hyperpod-inference-system", "kuberay-system", "keda", "karpenter", "cert-manager",
                          "observability", "monitoring"})


def system_namespace(name: str) -> str | None:
    """Why `name` is a system namespace PodStart never acts in, or None."""
    if name in SYSTEM_NAMES or name.startswith(SYSTEM_PREFIXES):
        return (f"{name} is a system namespace (Kubernetes, EKS, HyperPod or an add-on's): PodStart acts only in "
                f"default and the namespaces it created (GET .../namespaces)")
    return None


def _not_system(name: str) -> str:
    why = system_namespace(name)
    if why:
        raise ValueError(why)
    return name


# The one field type every request that names a namespace uses (REST bodies and queries, the live socket).
Namespace = Annotated[str, Field(pattern=DNS_LABEL, max_length=63,
                                 description="A PodStart namespace: default or one PodStart created"),
                      AfterValidator(_not_system)]


def is_managed(obj: dict[str, Any] | None) -> bool:
    """A Namespace object PodStart created for workloads (and not a system namespace that carries the label)."""
    if obj is None:
        return False
    meta = obj.get("metadata") or {}
    name = str(meta.get("name") or "")
    if system_namespace(name):
        return False
    return name == DEFAULT or (meta.get("labels") or {}).get(MANAGED_LABEL) == MANAGED_VALUE


def unmanaged_reason(name: str, obj: dict[str, Any] | None) -> str | None:
    """Why a request may not act in namespace `name` (its object as the API server returned it), or None."""
    if name == DEFAULT:
        return None
    if (why := system_namespace(name)) is not None:
        return why
    if obj is None:
        return (f"namespace {name} does not exist: an admin creates PodStart namespaces "
                f"(POST /v1/clusters/{{cluster}}/namespaces)")
    if not is_managed(obj):
        return (f"namespace {name} was not created by PodStart: PodStart acts only in default and its own "
                f"namespaces (GET .../namespaces)")
    return None


# -- buckets ---------------------------------------------------------------------------------------

class Registration(BaseModel):
    """A bucket PodStart may read: its own data bucket or one an admin registered (optionally one prefix)."""

    model_config = ConfigDict(frozen=True)

    bucket: str
    prefix: str = Field("", description="Only keys under this prefix ('' = the whole bucket)")
    owned: bool = Field(False, description="PodStart's own data bucket (operators may mount it)")


class BucketList(BaseModel):
    """GET /v1/buckets: where PodStart may read (and mount) data."""

    items: list[Registration]


def parse_registrations(raw: list[str] | str) -> list[Registration]:
    """`["team-a-data", "shared-datasets/curated/"]` (bucket or bucket/prefix) -> registrations."""
    items = [s.strip() for s in (raw.split(",") if isinstance(raw, str) else raw) if s and s.strip()]
    out = []
    for item in items:
        bucket, _, prefix = item.removeprefix("s3://").partition("/")
        out.append(Registration(bucket=bucket, prefix=prefix if not prefix or prefix.endswith("/") else prefix + "/",
                                owned=False))
    return out


def registrations(data_bucket: str, registered: list[Registration]) -> list[Registration]:
    """Every bucket PodStart may read, its own first (a registration of the data bucket itself adds nothing)."""
    own = [Registration(bucket=data_bucket, prefix="", owned=True)] if data_bucket else []
    return own + [r for r in registered if r.bucket != data_bucket]


def find_registration(regs: list[Registration], bucket: str, prefix: str = "") -> Registration | None:
    """The registration that covers `bucket` at `prefix`, or None."""
    return next((r for r in regs if r.bucket == bucket and prefix.startswith(r.prefix)), None)


def bucket_refusal(regs: list[Registration], bucket: str, prefix: str, is_admin: bool) -> tuple[int, str] | None:
    """(HTTP status, why) when a caller may not mount `bucket` at `prefix`; None when it may.

    422 for a bucket (or prefix) PodStart may not read; 403 for a registered bucket PodStart does not own when
    the caller is not an admin."""
    reg = find_registration(regs, bucket, prefix)
    if reg is None:
        known = [r for r in regs if r.bucket == bucket]
        if known:
            return 422, (f"{bucket} is registered for keys under {', '.join(r.prefix or '(all)' for r in known)} "
                         f"only; choose a prefix there")
        names = ", ".join(r.bucket + (f"/{r.prefix}" if r.prefix else "") for r in regs) or "none"
        return 422, (f"{bucket} is not a bucket PodStart may read: PodStart's data bucket and the buckets an admin "
                     f"registered ({names}); an admin registers more at deploy time (README: Security)")
    if not reg.owned and not is_admin:
        return 403, (f"{bucket} is a registered bucket PodStart does not own: mounting it is an admin's action "
                     f"(operators mount PodStart's data bucket)")
    return None


SAFE_KEY = re.compile(r"^[^\x00-\x1f\\]*$")


def prefix_problem(prefix: str) -> str | None:
    """A key prefix under a volume's own: no leading '/', no '.' or '..' segment, no control characters."""
    if prefix.startswith("/"):
        return "a key prefix does not start with '/'"
    if any(part in (".", "..") for part in prefix.split("/")):
        return "no '.' or '..' path segments"
    if not SAFE_KEY.match(prefix):
        return "no control characters or backslashes"
    return None
