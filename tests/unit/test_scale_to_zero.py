"""A group may be scaled to zero only when HyperPod's autoscaling (Karpenter) manages it: it brings the group
back when pods need it. Anywhere else zero would be an empty group that never grows again."""

from __future__ import annotations

from functions.domain.clusters.groups import zero_refusal


def test_zero_is_allowed_for_a_group_autoscaling_manages() -> None:
    assert zero_refusal("workers", "Enable", {"workers", "gpu"}) is None


def test_zero_is_refused_when_autoscaling_is_off_saying_what_to_do() -> None:
    why = zero_refusal("workers", "Disable", {"workers"})
    assert why is not None and "autoscaling is off" in why and "enable autoscaling for workers" in why
    assert zero_refusal("workers", None, set()) is not None


def test_zero_is_refused_for_a_group_autoscaling_does_not_manage() -> None:
    why = zero_refusal("controller", "Enable", {"workers"})
    assert why is not None and "autoscaling does not manage controller" in why
