"""DELETE /v1/clusters/{cluster}?confirm={cluster}: tear down what PodStart created (admin)."""

from __future__ import annotations

from typing import Any

from functions.domain.errors import InvalidInput
from functions.domain.operations import Actor, Target
from functions.domain.plans import Plan
from functions.logic.clusters.views import find_record
from functions.logic.deps import Deps
from functions.logic.plans import Started, start_or_plan


def delete_cluster(deps: Deps, name: str, region: str | None, confirm: str, actor: Actor,
                   key: str | None, dry_run: bool = False) -> Started | Plan:
    if confirm != name:
        raise InvalidInput.field(["query", "confirm"], f"type the cluster name ({name}) to confirm the delete")
    rec = find_record(deps, name, region)
    request = {"name": rec.name, "region": rec.region, "origin": rec.origin, "eks_cluster_name": rec.eks_cluster_name,
               "hyperpod_cluster_name": rec.hyperpod_cluster_name}
    facts = {}
    if dry_run:  # what the cluster's create recorded: the ids the delete finds by tag
        created = _created_outputs(deps, rec.name, rec.region)
        facts = {"record": rec.model_dump(mode="json"), "created": created}
    return start_or_plan(deps, dry_run=dry_run, kind="cluster.delete",
                         target=Target(cluster=rec.name, region=rec.region), request=request, principal=actor,
                         idempotency_key=key, facts=facts)


def _created_outputs(deps: Deps, name: str, region: str) -> dict[str, Any]:
    """The outputs of the cluster's create (the ids its steps recorded), from one page of its operations."""
    items, _ = deps.operations.list(cluster=name, status=None, limit=100, token=None)
    made = next((o for o in items if o.kind == "cluster.create" and o.target.region == region), None)
    return made.outputs() if made else {}
