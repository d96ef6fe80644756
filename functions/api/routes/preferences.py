"""/v1/preferences: the caller's active cluster and defaults (one per user, not one global)."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router

from functions.api.context import DryRun, json_response, model_response, principal, services
from functions.domain.plans import Change, Plan
from functions.domain.preferences import Preferences, PreferencesUpdate, prefs_key
from functions.domain.principal import Role

router = Router()


@router.get("/v1/preferences", summary="Your active cluster and defaults", tags=["preferences"],
            responses={200: {"description": "Preferences", "content": {"application/json": {"model": Preferences}}}})
def get_preferences() -> Response[str]:
    p = principal(router)
    stored = services().state.get(*prefs_key(p.sub))
    return json_response(Preferences.model_validate(stored or {}).model_dump(mode="json"))


@router.put("/v1/preferences", summary="Set your active cluster and defaults (send only what changes)",
            tags=["preferences"],
            responses={200: {"description": "Preferences", "content": {"application/json": {"model": Preferences}}}})
def set_preferences(body: PreferencesUpdate, dry_run: DryRun = False) -> Response[str]:
    p = principal(router)
    state = services().state
    current = Preferences.model_validate(state.get(*prefs_key(p.sub)) or {})
    updated = current.apply(body)
    if dry_run:
        before, after = current.model_dump(mode="json"), updated.model_dump(mode="json")
        diff = {k: {"from": before[k], "to": after[k]} for k in after if before[k] != after[k]}
        return model_response(Plan(kind="preferences.set", target={"resource": "preferences"}, changes=[
            Change(action="update" if diff else "none", kind="PodStart preferences", name=p.name, details=diff)]))
    if updated != current:
        state.put(*prefs_key(p.sub), updated.model_dump(mode="json"))
    return json_response({**updated.model_dump(mode="json"), "changed": updated != current})


@router.get("/v1/me", summary="Who you are, what your role allows (viewer reads; operator and admin change) and your "
                             "preferences (active cluster, default region)", tags=["preferences"])
def get_me() -> Response[str]:
    from functions.settings import api_settings

    p = principal(router)
    prefs = Preferences.model_validate(services().state.get(*prefs_key(p.sub)) or {})
    return json_response({"sub": p.sub, "name": p.name, "role": p.role.name,
                          "preferences": prefs.model_dump(mode="json"),
                          "can_mutate": p.role >= Role.operator, "can_delete_clusters": p.role >= Role.admin,
                          "can_administer": p.role >= Role.admin,
                          "limits": api_settings().limits.model_dump()})
