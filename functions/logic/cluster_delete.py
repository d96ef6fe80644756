"""DELETE /v1/clusters/{cluster}?confirm={cluster}: tear down what PodStart created (admin)."""

from __future__ import annotations

from functions.domain.errors import InvalidInput
from functions.domain.operations import Actor, Operation, Target
from functions.logic.cluster_views import find_record
from functions.logic.deps import Deps


def delete_cluster(deps: Deps, name: str, region: str | None, confirm: str, actor: Actor,
                   key: str | None) -> Operation:
    if confirm != name:
        raise InvalidInput.field(["query", "confirm"], f"type the cluster name ({name}) to confirm the delete")
    rec = find_record(deps, name, region)
    request = {"name": rec.name, "region": rec.region, "origin": rec.origin, "eks_cluster_name": rec.eks_cluster_name,
               "hyperpod_cluster_name": rec.hyperpod_cluster_name}
    op, _ = deps.operations.start(kind="cluster.delete", target=Target(cluster=rec.name, region=rec.region),
                                  request=request, principal=actor, idempotency_key=key)
    return op
