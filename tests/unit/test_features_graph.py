"""The feature graph and what a features PATCH changes: prerequisites first, dependants protected,
absent fields never touched."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from functions.domain import iam
from functions.domain.features import changes as fchg
from functions.domain.features import document as f
from functions.domain.features.changes import FeaturesPatch, LiveFeature
from functions.domain.features.document import FeatureStatus as S
from functions.domain.kinds import KINDS


def live(*enabled: str, **settings: dict[str, object]) -> dict[str, LiveFeature]:
    return {n: LiveFeature(enabled=n in enabled, status=S.ACTIVE if n in enabled else S.DISABLED,
                           settings=settings.get(n, {})) for n in f.NAMES}


def plan(body: dict[str, object], state: dict[str, LiveFeature]) -> list[tuple[str, str]]:
    return [(c.step, c.reason) for c in fchg.plan_changes(FeaturesPatch.model_validate(body), state)]


def test_every_prerequisite_comes_before_what_needs_it() -> None:
    for name, feat in f.FEATURES.items():
        for dep in feat.depends_on:
            assert f.ORDER.index(dep) < f.ORDER.index(name)
    assert f.prerequisites("training_operator") == ["cert_manager", "pod_identity_agent"]
    assert set(f.prerequisites("inference_operator")) >= {"cert_manager", "s3_csi", "fsx_csi", "metrics_server",
                                                          "pod_identity_agent"}


def test_the_kind_lists_every_disable_then_every_enable() -> None:
    steps = KINDS["features.update"]
    assert steps[:len(f.NAMES)] == tuple(f"disable_{n}" for n in reversed(f.ORDER))
    assert steps[len(f.NAMES):] == f.ORDER


def test_enabling_a_feature_enables_its_disabled_prerequisites_first_and_says_why() -> None:
    got = plan({"training_operator": {"enabled": True}}, live("pod_identity_agent"))
    assert got == [("cert_manager", "needed by training_operator"), ("training_operator", "requested")]


def test_a_patch_equal_to_the_live_state_changes_nothing() -> None:
    state = live("cert_manager", "pod_identity_agent", "training_operator",
                 tiered_checkpointing={"memory_percent": 20})
    assert plan({"training_operator": {"enabled": True}, "inference_operator": {"enabled": False}}, state) == []
    assert plan({}, state) == []


def test_disabling_a_needed_prerequisite_is_a_conflict_naming_the_dependant() -> None:
    state = live("cert_manager", "pod_identity_agent", "training_operator")
    with pytest.raises(fchg.DependencyConflict) as err:
        plan({"cert_manager": {"enabled": False}}, state)
    assert err.value.dependants == ["training_operator"] and "training_operator" in str(err.value)
    # disabling the dependant in the same request is fine: dependants go first
    assert [s for s, _ in plan({"cert_manager": {"enabled": False}, "training_operator": {"enabled": False}},
                               state)] == ["disable_training_operator", "disable_cert_manager"]


def test_enabling_a_feature_while_disabling_its_prerequisite_is_a_conflict() -> None:
    with pytest.raises(fchg.DependencyConflict):
        plan({"training_operator": {"enabled": True}, "cert_manager": {"enabled": False}}, live("cert_manager"))


def test_a_stale_partial_patch_never_removes_an_auto_installed_prerequisite() -> None:
    """The seed's bug: a form re-sent a dependency's old value. Absent means untouched, and a stale
    'off' for a needed prerequisite is refused, never carried out."""
    after_auto_install = live("cert_manager", "pod_identity_agent", "training_operator")
    assert plan({"observability": {"enabled": False}}, after_auto_install) == []
    with pytest.raises(fchg.DependencyConflict):
        plan({"training_operator": {"enabled": True}, "cert_manager": {"enabled": False}}, after_auto_install)


def test_settings_of_an_enabled_feature_change_it_in_place() -> None:
    state = live("tiered_checkpointing", tiered_checkpointing={"memory_percent": 20})
    assert plan({"tiered_checkpointing": {"memory_percent": 30}}, state) == [("tiered_checkpointing", "requested")]
    assert plan({"tiered_checkpointing": {"memory_percent": 20}}, state) == []
    # settings alone for a disabled feature do not turn it on
    assert plan({"autoscaling": {"instance_groups": ["a"]}}, live()) == []


def test_a_setting_sent_as_null_is_unchanged_like_an_absent_one() -> None:
    auto = {"instance_groups": ["a"], "cpu_limit": 1000, "consolidate_after": "30s", "disruption_budget": "10%"}
    state = live("tiered_checkpointing", "autoscaling", tiered_checkpointing={"memory_percent": 20}, autoscaling=auto)
    assert plan({"tiered_checkpointing": {"memory_percent": None}}, state) == []
    assert plan({"autoscaling": {k: None for k in auto}}, state) == []
    mixed = {"autoscaling": {"cpu_limit": None, "consolidate_after": "5m"}}
    assert plan(mixed, state) == [("autoscaling", "requested")]
    [change] = fchg.plan_changes(FeaturesPatch.model_validate(mixed), state)
    assert change.settings == {"consolidate_after": "5m"}


def test_the_patch_refuses_unknown_features_and_out_of_range_settings() -> None:
    for bad in ({"karpenter": {"enabled": True}}, {"tiered_checkpointing": {"memory_percent": 101}},
                {"autoscaling": {"instance_groups": ["A_B"]}}, {"autoscaling": {"instance_groups": ["a", "a"]}},
                {"training_operator": {"enabled": True, "version": "x"}}):
        with pytest.raises(ValidationError):
            FeaturesPatch.model_validate(bad)


def test_the_checkpoint_identity_is_scoped_to_one_service_account_and_one_prefix() -> None:
    trust = json.loads(iam.oidc_trust("arn:aws:iam::1:oidc-provider/oidc.eks.x/id/AB", "https://oidc.eks.x/id/AB",
                                      "default", "podstart-checkpointing"))
    cond = trust["Statement"][0]["Condition"]["StringEquals"]
    assert cond == {"oidc.eks.x/id/AB:sub": "system:serviceaccount:default:podstart-checkpointing",
                    "oidc.eks.x/id/AB:aud": "sts.amazonaws.com"}
    policy = json.loads(iam.checkpoint_policy("us-west-2", "data", "checkpoints/demo/"))
    for st in policy["Statement"]:
        assert st["Resource"] != "*" and "*" not in st["Resource"]
        assert all(not a.endswith(":*") for a in st["Action"])
    assert policy["Statement"][1]["Resource"] == ["arn:aws:s3:::data/checkpoints/demo/*"]
