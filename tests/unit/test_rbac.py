"""The API function's Kubernetes rights: what the `podstart-api` group may do, judged as the API server would."""

from __future__ import annotations

import pytest

from functions.domain import rbac

H = "https://eks.example"


@pytest.mark.parametrize("method,path", [
    ("GET", "/api/v1/nodes?labelSelector=sagemaker.amazonaws.com%2Finstance-group-name"),
    ("GET", "/api/v1/namespaces/team-a/pods/llama-0/log?tailLines=200"),
    ("GET", "/apis/sagemaker.amazonaws.com/v1/namespaces/default/hyperpodpytorchjobs/llama"),
    ("POST", "/api/v1/namespaces/default/services/chat:8000/proxy/v1/chat/completions"),
    ("GET", "/apis/karpenter.sagemaker.amazonaws.com/v1/hyperpodnodeclasses"),
    ("GET", "/api/v1/namespaces/default"),
    ("GET", "/apis"),
    ("GET", "/clusters/c1/api/v1/namespaces/default/pods/p/log"),  # an API server behind a path prefix
])
def test_what_the_api_reads_and_writes_is_allowed(method: str, path: str) -> None:
    assert rbac.refused(method, H + path) is None


@pytest.mark.parametrize("method,path,why", [
    ("DELETE", "/api/v1/namespaces/default/secrets/hf-token", "delete secrets"),
    ("DELETE", "/api/v1/namespaces/default/pods/llama-0", "delete pods"),
    ("PATCH", "/api/v1/nodes/hyperpod-i-0abc", "patch nodes"),
    ("POST", "/api/v1/namespaces/default/pods/llama-0/exec", "create pods/exec"),
    ("POST", "/apis/sagemaker.amazonaws.com/v1/namespaces/default/hyperpodpytorchjobs", "create hyperpodpytorchjobs"),
    ("GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles", "list clusterroles"),
])
def test_anything_else_is_refused_naming_the_verb_and_resource(method: str, path: str, why: str) -> None:
    assert why in (rbac.refused(method, H + path) or "")


def test_the_role_is_bound_to_the_group_of_the_access_entry() -> None:
    role, binding, ns_role, ns_binding = rbac.manifests()
    assert role["rules"] == rbac.RULES and binding["roleRef"]["name"] == role["metadata"]["name"]
    assert binding["subjects"] == [{"kind": "Group", "name": rbac.GROUP, "apiGroup": "rbac.authorization.k8s.io"}]
    # no wildcard anywhere, and no cluster-wide write but the invoke proxy: Secrets only through namespaced Roles
    assert not any("*" in r["apiGroups"] + r["resources"] + r["verbs"] for r in rbac.RULES + rbac.NAMESPACE_RULES)
    writes = {res for r in rbac.RULES for res in r["resources"] if set(r["verbs"]) - {"get", "list", "watch"}}
    assert writes == {"services/proxy"}
    assert not any("secrets" in r["resources"] for r in rbac.RULES)
    # default gets its Role with the dependencies
    assert (ns_role["kind"], ns_role["metadata"]["namespace"], ns_binding["roleRef"]["name"]) == (
        "Role", "default", ns_role["metadata"]["name"])
    assert ns_binding["subjects"] == binding["subjects"]


SECRET_PATHS = [("GET", "/api/v1/namespaces/{ns}/secrets?includeObject=None&limit=500"),
                ("PATCH", "/api/v1/namespaces/{ns}/secrets/hf-token?fieldManager=podstart"),
                ("GET", "/api/v1/namespaces/{ns}/secrets/hf-token")]


@pytest.mark.parametrize("method,path", SECRET_PATHS)
def test_secrets_only_where_a_role_of_podstarts_is_bound(method: str, path: str) -> None:
    # Given the API server's Roles and RoleBindings: PodStart's in default and team-a, none in kube-system
    objs = {ns: rbac.namespace_manifests(ns) for ns in ("default", "team-a")}

    def namespaced(ns: str) -> list[dict[str, object]]:
        role, binding = objs.get(ns, ([], []))  # type: ignore[arg-type]
        return rbac.bound_rules([role] if role else [], [binding] if binding else [])

    # Then Secrets are reachable in PodStart's namespaces and nowhere else, cluster-wide neither
    assert rbac.refused(method, H + path.format(ns="team-a"), namespaced) is None
    assert rbac.refused(method, H + path.format(ns="default"), namespaced) is None
    assert "secrets" in (rbac.refused(method, H + path.format(ns="kube-system"), namespaced) or "")
    assert "secrets" in (rbac.refused(method, H + path.format(ns="team-a")) or "")
    assert "secrets" in (rbac.refused("GET", H + "/api/v1/secrets", namespaced) or "")


def test_a_binding_to_another_group_or_kind_grants_nothing() -> None:
    role, binding = rbac.namespace_manifests("team-a")
    other = {**binding,
             "subjects": [{"kind": "Group", "name": "someone-else", "apiGroup": "rbac.authorization.k8s.io"}]}
    cluster_ref = {**binding, "roleRef": {**binding["roleRef"], "kind": "ClusterRole"}}
    assert rbac.bound_rules([role], [other]) == [] and rbac.bound_rules([role], [cluster_ref]) == []
    assert rbac.bound_rules([role], [binding]) == rbac.NAMESPACE_RULES
