"""Managed features against the sandbox: the step helper other workflows call, and (below) the
features document and its PATCH, each object checked through boto3 and the Kubernetes API."""

from __future__ import annotations

import time
from typing import Any

import pytest

from functions.domain import iam as iamdoc
from functions.domain.operations import Actor, Target, new_operation
from functions.domain.workflow import Done, Wait
from functions.workflows.context import StepContext
from functions.workflows.features import ensure_feature

REGION = "us-west-2"


def _cluster(api: Any, cname: str) -> str:
    body = {"name": cname, "region": REGION, "instance_groups": [
        {"name": "workers", "instance_type": "ml.c5.large", "instance_count": 1, "availability_zone": "us-west-2a"}]}
    op = api.post("/v1/clusters", json=body).json()
    assert api.wait_terminal(op["id"])["status"] == "SUCCEEDED"
    return cname


@pytest.fixture(scope="module")
def cluster(api: Any) -> str:
    return _cluster(api, "feat")


def _ctx(cluster: str) -> StepContext:
    from functions.steps.handler import engine

    e = engine()
    op = new_operation(op_id="op-test-ensure", kind="job.submit", target=Target(cluster=cluster, region=REGION),
                       steps=("training_operator",), request={"cluster": cluster}, principal=Actor(sub="t", name="t"),
                       idempotency_key=None)
    return StepContext(operation=op, step=op.steps[0], settings=e.settings, clients=e.clients, state=e.state)


def _run_until_done(cluster: str, feature: str, timeout: float = 30) -> tuple[Done, list[str]]:
    messages: list[str] = []
    deadline = time.monotonic() + timeout
    while True:
        out = ensure_feature(_ctx(cluster), cluster, feature)
        messages.append(out.message)
        if isinstance(out, Done):
            return out, messages
        assert isinstance(out, Wait) and time.monotonic() < deadline, messages
        time.sleep(0.2)


def test_ensure_feature_enables_missing_prerequisites_first_then_the_feature(api: Any, cluster: str,
                                                                               aws: Any) -> None:
    eks = aws("eks")
    assert "cert-manager" not in eks.list_addons(clusterName=cluster)["addons"]
    done, messages = _run_until_done(cluster, "training_operator")
    assert messages[0].startswith("cert_manager (needed by training_operator)")
    assert "training_operator ACTIVE" in done.message
    addons = eks.list_addons(clusterName=cluster)["addons"]
    assert {"cert-manager", "eks-pod-identity-agent", "amazon-sagemaker-hyperpod-training-operator"} <= set(addons)
    created = [c["params"]["addonName"] for c in api.calls("eks", "CreateAddon")
               if c["params"].get("clusterName") == cluster]
    assert created.index("cert-manager") < created.index("amazon-sagemaker-hyperpod-training-operator")
    assoc = eks.list_pod_identity_associations(clusterName=cluster, namespace="aws-hyperpod",
                                               serviceAccount="hp-training-operator-controller-manager")
    role = aws("iam").get_role(RoleName=_assoc_role(eks, cluster, assoc["associations"][0]["associationId"]))["Role"]
    assert role["RoleName"] == iamdoc.role_name(cluster, REGION, "training")
    policy = aws("iam").get_role_policy(RoleName=role["RoleName"], PolicyName="training-operator")["PolicyDocument"]
    resources = [r for st in policy["Statement"] for r in st["Resource"]]
    assert resources and all(":cluster/" in r for r in resources)  # scoped to this HyperPod cluster


def _assoc_role(eks: Any, cluster: str, association_id: str) -> str:
    arn = eks.describe_pod_identity_association(clusterName=cluster, associationId=association_id)
    return str(arn["association"]["roleArn"]).rsplit("/", 1)[-1]


def test_ensure_feature_on_an_active_feature_changes_nothing(api: Any, cluster: str) -> None:
    _run_until_done(cluster, "training_operator")
    before = len(api.calls("eks")) + len(api.calls("iam"))
    mutating_before = _mutations(api)
    done = ensure_feature(_ctx(cluster), cluster, "training_operator")
    assert isinstance(done, Done)
    assert _mutations(api) == mutating_before and len(api.calls("eks")) + len(api.calls("iam")) > before


def _mutations(api: Any) -> list[dict[str, Any]]:
    reads = ("Describe", "List", "Get")
    return [c for c in api.calls() if not c["operation"].startswith(reads)]
