"""Plan for spec.apply (what a retry's dry run shows): the child operations each remaining phase starts.

POST /v1/specs/apply?dry_run=true answers the full spec plan instead (functions.logic.specs.apply.plan: a diff per
document and each child's own plan); this lists the stored apply's children, phase by phase."""

from __future__ import annotations

from functions.domain.plans import Draft, create, delete, update
from functions.domain.plans.base import PlanInput

_VERB = {"cluster.create": create, "instance_group.add": create, "storage.add": create, "job.submit": create,
         "endpoint.deploy": create, "instance_group.delete": delete, "storage.remove": delete,
         "job.delete": delete, "endpoint.delete": delete}


def plan_spec_apply(p: PlanInput) -> Draft:
    changes = []
    for a in p.request.get("actions") or []:
        if a["phase"] in p.skip_steps:
            continue
        verb = _VERB.get(a["kind"], update)
        changes.append(verb("PodStart operation", f"{a['kind']} {a['resource']}", a["phase"], operation=a["kind"]))
    warnings = [f"{n} of the documents' resources are deleted (prune)" for n in
                [sum(1 for a in p.request.get("actions") or [] if a["phase"] == "prune")] if n]
    return Draft(changes=changes, warnings=warnings)
