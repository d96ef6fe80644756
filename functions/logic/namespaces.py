"""PodStart namespaces: list them, create one (namespace.create, admin), delete one (namespace.delete, admin), and
the one check every use case that takes a namespace makes before it acts there (`require_managed`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from functions.domain import rbac
from functions.domain.clusters.record import ClusterRecord
from functions.domain.errors import Conflict, InvalidInput, NotFound
from functions.domain.manifests import DATA_VOLUME
from functions.domain.namespaces import models as nsd
from functions.domain.operations import Actor, Operation, Target
from functions.domain.plans import Plan
from functions.domain.ports import ClusterKube
from functions.domain.storage import volumes as st
from functions.domain.tenancy import DEFAULT, MANAGED_LABEL, MANAGED_VALUE, is_managed, unmanaged_reason
from functions.logic import live_reads
from functions.logic.clusters.group_add import require_active
from functions.logic.clusters.views import find_record
from functions.logic.deps import Deps
from functions.logic.plans import Started, start_or_plan

MANAGED_SELECTOR = f"{MANAGED_LABEL}={MANAGED_VALUE}"


def _kube(deps: Deps, rec: ClusterRecord) -> ClusterKube:
    require_active(rec)
    return deps.kube(rec.eks_cluster_name, rec.region)


def require_managed(kube: ClusterKube, namespace: str, loc: list[str | int] | tuple[str | int, ...]) -> None:
    """422 naming `loc` unless `namespace` is `default` or one PodStart created (read from the API server)."""
    if namespace == DEFAULT:
        return
    why = unmanaged_reason(namespace, kube.get(f"/api/v1/namespaces/{namespace}"))
    if why:
        raise InvalidInput.field(loc, why)


def podstart_secrets(kube: ClusterKube, namespace: str) -> list[str]:
    """The Secrets PodStart wrote in `namespace` (names only: a Table without the objects)."""
    return kube.names(f"/api/v1/namespaces/{namespace}/secrets", label_selector=MANAGED_SELECTOR)


def require_podstart_secrets(kube: ClusterKube, namespace: str,
                             named: Sequence[tuple[str, Sequence[str | int]]]) -> None:
    """422 naming the field unless every Secret named ((name, loc) pairs) is one PodStart wrote in `namespace`: a
    job or endpoint never reads a Secret it was not given through PodStart (a system token, another tool's)."""
    if not named:
        return
    mine = set(podstart_secrets(kube, namespace))
    for name, loc in named:
        if name not in mine:
            raise InvalidInput.field(list(loc), f"no Secret {name!r} that PodStart wrote in namespace {namespace}: "
                                                f"write it with POST /v1/clusters/{{cluster}}/secrets (PodStart "
                                                f"references only its own)")


def list_namespaces(deps: Deps, cluster: str, region: str | None) -> nsd.NamespaceList:
    rec = find_record(deps, cluster, region)
    kube = _kube(deps, rec)
    objs = nsd.managed_only(kube.list("/api/v1/namespaces"))
    claims = {c["metadata"].get("namespace") for c in kube.list("/api/v1/persistentvolumeclaims")
              if c["metadata"].get("name") == DATA_VOLUME}
    roles = {r["metadata"].get("namespace") for r in kube.list("/apis/rbac.authorization.k8s.io/v1/roles")
             if r["metadata"].get("name") == rbac.SECRETS_ROLE}
    return nsd.NamespaceList(cluster=rec.name, region=rec.region,
                             items=[nsd.view(o, {c for c in claims if c}, {r for r in roles if r}) for o in objs])


def _target(rec: ClusterRecord, name: str) -> Target:
    return Target(cluster=rec.name, region=rec.region, resource=f"namespaces/{name}")


@dataclass
class _CreateAdmission:
    deps: Deps
    rec: ClusterRecord
    name: str

    def normalize(self) -> dict[str, Any]:
        found = _kube(self.deps, self.rec).get(f"/api/v1/namespaces/{self.name}")
        if found is not None:
            mine = is_managed(found)
            raise Conflict(f"namespace {self.name} already exists" + (" (it is PodStart's)" if mine else
                                                                       " and was not created by PodStart; it is "
                                                                       "never adopted: choose another name"),
                           errors=[{"loc": ["body", "name"], "msg": "already exists in the cluster"}])
        return {"cluster": self.rec.name, "region": self.rec.region, "eks_cluster_name": self.rec.eks_cluster_name,
                "name": self.name, "bucket": live_reads.bucket(self.deps)}

    def claim(self, op: Operation) -> None:
        """The API server takes the name when the step applies it."""

    def unclaim(self, op: Operation) -> None:
        """Nothing was reserved."""


def create_namespace(deps: Deps, cluster: str, region: str | None, body: nsd.NamespaceCreate, actor: Actor,
                     key: str | None, dry_run: bool = False) -> Started | Plan:
    rec = find_record(deps, cluster, region)
    return start_or_plan(deps, dry_run=dry_run, kind="namespace.create", target=_target(rec, body.name),
                         request={"cluster": rec.name, "region": rec.region, "name": body.name}, principal=actor,
                         idempotency_key=key, admission=_CreateAdmission(deps, rec, body.name))


def _occupants(kube: ClusterKube, name: str) -> dict[str, list[str]]:
    """What deleting the namespace takes with it, by name (a plan's facts)."""
    def names(objs: list[dict[str, Any]]) -> list[str]:
        return sorted(str(o["metadata"]["name"]) for o in objs)

    return {"pytorch_jobs": names(kube.list(f"/apis/sagemaker.amazonaws.com/v1/namespaces/{name}/hyperpodpytorchjobs")),
            "ray_jobs": names(kube.list(f"/apis/ray.io/v1/namespaces/{name}/rayjobs")),
            "secrets": sorted(kube.names(f"/api/v1/namespaces/{name}/secrets")),
            "claims": names(kube.list(f"/api/v1/namespaces/{name}/persistentvolumeclaims"))}


def delete_namespace(deps: Deps, cluster: str, region: str | None, name: str, confirm: str | None, actor: Actor,
                     key: str | None, dry_run: bool = False) -> Started | Plan:
    rec = find_record(deps, cluster, region)
    if name == DEFAULT:
        raise Conflict("default is the cluster's own namespace: it is never deleted")
    kube = _kube(deps, rec)
    found = kube.get(f"/api/v1/namespaces/{name}")
    if found is None:
        raise NotFound(f"{rec.name} has no namespace {name!r}")
    if not is_managed(found):
        raise InvalidInput.field(["path", "namespace"], f"namespace {name} was not created by PodStart: PodStart "
                                                        f"never deletes it")
    volumes = [r.name for r in st.StorageRecords(deps.state).of_cluster(rec.region, rec.name) if r.namespace == name]
    if volumes:
        raise Conflict(f"namespace {name} holds volumes PodStart added ({', '.join(sorted(volumes))}): remove them "
                       f"first (DELETE .../storage/{{name}}), so their roles and file systems go with them")
    if confirm != name:
        raise InvalidInput.field(["query", "confirm"], f"deleting namespace {name} deletes every job, Secret and claim "
                                                       f"in it: send confirm={name}")
    return start_or_plan(deps, dry_run=dry_run, kind="namespace.delete", target=_target(rec, name),
                         request={"cluster": rec.name, "region": rec.region, "eks_cluster_name": rec.eks_cluster_name,
                                  "name": name, "bucket": live_reads.bucket(deps)},
                         principal=actor, idempotency_key=key, facts=_occupants(kube, name) if dry_run else None)
