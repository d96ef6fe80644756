"""The API function's Kubernetes rights: what the `podstart-api` group may do, judged as the API server would."""

from __future__ import annotations

import pytest

from functions.domain import rbac

H = "https://eks.example"


@pytest.mark.parametrize("method,path", [
    ("GET", "/api/v1/nodes?labelSelector=sagemaker.amazonaws.com%2Finstance-group-name"),
    ("GET", "/api/v1/namespaces/team-a/pods/llama-0/log?tailLines=200"),
    ("GET", "/apis/sagemaker.amazonaws.com/v1/namespaces/default/hyperpodpytorchjobs/llama"),
    ("GET", "/api/v1/namespaces/default/secrets?includeObject=None&limit=500"),
    ("PATCH", "/api/v1/namespaces/default/secrets/hf-token?fieldManager=podstart"),
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
    role, binding = rbac.manifests()
    assert role["rules"] == rbac.RULES and binding["roleRef"]["name"] == role["metadata"]["name"]
    assert binding["subjects"] == [{"kind": "Group", "name": rbac.GROUP, "apiGroup": "rbac.authorization.k8s.io"}]
    # no wildcard anywhere, and no write but secrets and the invoke proxy
    assert not any("*" in r["apiGroups"] + r["resources"] + r["verbs"] for r in rbac.RULES)
    writes = {res for r in rbac.RULES for res in r["resources"] if set(r["verbs"]) - {"get", "list", "watch"}}
    assert writes == {"secrets", "services/proxy"}
