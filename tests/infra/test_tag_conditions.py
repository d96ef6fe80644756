"""Given the synthesized stack, destroying and access-granting actions need PodStart's tag on the resource."""

from __future__ import annotations

import json
from fnmatch import fnmatchcase

TAG = "aws:ResourceTag/podstart:managed"
# value "true": PodStart created it; access entries also on clusters tagged "imported"
DESTRUCTIVE = ("sagemaker:DeleteCluster", "sagemaker:BatchDeleteClusterNodes",
               "sagemaker:UpdateClusterSoftware", "eks:DeleteCluster", "eks:UpdateClusterConfig",
               "eks:UpdateClusterVersion", "eks:DeleteAddon", "fsx:DeleteFileSystem")
# Changes PodStart may make to clusters it created or adopted (scaling an imported cluster's groups), never to others
CHANGES = ("sagemaker:UpdateCluster",)
ACCESS_GRANTING = ("eks:CreateAccessEntry", "eks:AssociateAccessPolicy", "eks:DeleteAccessEntry")
CREATES = ("sagemaker:CreateCluster", "eks:CreateCluster", "fsx:CreateFileSystem", "sagemaker:CreateTrainingPlan")


def _as_list(value):
    return value if isinstance(value, list) else [value]


def _allows(synth, action):
    return [s for name in ("api", "steps", "events", "mcp") for s in synth.role_statements(name)
            if s["Effect"] == "Allow" and any(fnmatchcase(action, p) for p in _as_list(s["Action"]))]


def _companion_only(statement):
    """A statement only about a resource the action also touches (a training plan), never the cluster itself."""
    return all(":training-plan/" in json.dumps(r) for r in _as_list(statement["Resource"]))


def _required_values(statement, key):
    return set(_as_list(statement.get("Condition", {}).get("StringEquals", {}).get(key, [])))


def test_destructive_actions_need_the_managed_tag_true(synth):
    granted = [a for a in DESTRUCTIVE if _allows(synth, a)]
    # The delete workflows' actions are granted (the rest only if the code starts calling them)
    assert {"sagemaker:DeleteCluster", "eks:DeleteCluster"} <= set(granted)
    for action in granted:
        for statement in _allows(synth, action):
            if not _companion_only(statement):
                assert _required_values(statement, TAG) == {"true"}, (action, statement.get("Sid"))


def test_changes_need_the_tag_of_a_cluster_podstart_created_or_adopted(synth):
    for action in CHANGES:
        statements = [s for s in _allows(synth, action) if not _companion_only(s)]
        assert statements, action
        for statement in statements:
            assert _required_values(statement, TAG) == {"true", "imported"}, (action, statement.get("Sid"))


def test_access_entries_need_the_managed_tag_and_are_only_podstarts_own(synth):
    steps_role = synth.function("steps")[1]["Properties"]["Role"]
    readers = [synth.function(n)[1]["Properties"]["Role"] for n in ("api", "live", "follow")]
    for action in ACCESS_GRANTING:
        statements = _allows(synth, action)
        assert statements, action
        for statement in statements:
            assert _required_values(statement, TAG) == {"true", "imported"}, action
            principals = statement["Condition"]["StringEquals"]["eks:principalArn"]
            if action == "eks:AssociateAccessPolicy":  # cluster admin: the workflows' role only
                assert principals == steps_role, action
            else:  # the workflows' entry and the readers' (the podstart-api group, no access policy)
                assert principals == [steps_role, *readers], action
    [associate] = _allows(synth, "eks:AssociateAccessPolicy")
    assert "AmazonEKSClusterAdminPolicy" in json.dumps(associate["Condition"]["StringEquals"]["eks:policyArn"])


def test_creates_must_tag_what_they_create(synth):
    for action in CREATES:
        for statement in _allows(synth, action):
            if not _companion_only(statement):
                assert _required_values(statement, "aws:RequestTag/podstart:managed") == {"true"}, action


def test_tagging_is_limited_to_podstarts_keys_and_values(synth):
    for action in ("eks:TagResource", "sagemaker:AddTags"):
        statements = _allows(synth, action)
        assert statements, action
        for statement in statements:
            condition = statement["Condition"]
            # Only PodStart's keys may be written: podstart:managed and podstart:cluster on clusters, podstart:managed
            # and podstart:operation (the purchase that bought it) on training plans
            on_plans = all(":training-plan/" in json.dumps(r) for r in _as_list(statement["Resource"]))
            assert set(condition["ForAllValues:StringEquals"]["aws:TagKeys"]) == (
                {"podstart:managed", "podstart:operation"} if on_plans else {"podstart:managed", "podstart:cluster"}), \
                action
            if on_plans:
                assert _required_values(statement, "aws:RequestTag/podstart:managed") == {"true"}, action
            on_clusters = any(":cluster/" in json.dumps(r) for r in _as_list(statement["Resource"]))
            if on_clusters:
                # A cluster is marked created (true, at CreateCluster) or imported, nothing else
                assert _required_values(statement, "aws:RequestTag/podstart:managed") <= {"true", "imported"}
                assert _required_values(statement, "aws:RequestTag/podstart:managed"), action
    # No tag may be removed (that would turn a PodStart resource into a foreign one, or back), except an
    # adoption mark: deleting an imported cluster from PodStart takes podstart:managed=imported off it
    for action in ("ec2:DeleteTags", "fsx:UntagResource"):
        assert not _allows(synth, action), action
    for action in ("eks:UntagResource", "sagemaker:DeleteTags"):
        for statement in _allows(synth, action):
            assert _required_values(statement, TAG) == {"imported"}, action
