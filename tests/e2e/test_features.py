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
from tests.e2e.plan_calls import unplanned, writes

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
    before = api.mark()
    done = ensure_feature(_ctx(cluster), cluster, "training_operator")
    assert isinstance(done, Done)
    since = api.calls(after=before)
    # it looked (EKS, IAM) and changed nothing on the cluster's services
    assert {c["service"] for c in since} & {"eks", "iam"}
    assert _mutations(since) == []


def _mutations(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mutating calls on the cluster's services (PodStart's own tables and bus are not the cluster's)."""
    reads = ("Describe", "List", "Get")
    return [c for c in calls if not c["operation"].startswith(reads)
            and c["service"] in ("eks", "iam", "sagemaker", "ec2", "s3", "fsx")]


# -- the features document and PATCH ---------------------------------------------------------------
def _features(api: Any, cluster: str) -> dict[str, Any]:
    r = api.get(f"/v1/clusters/{cluster}/features")
    assert r.status_code == 200, r.text
    return dict(r.json())


def _patch(api: Any, cluster: str, body: dict[str, Any], key: str | None = None, dry_run: bool = False) -> Any:
    headers = {"Idempotency-Key": key} if key else {}
    params = {"dry_run": "true"} if dry_run else {}
    return api.http.patch(f"/v1/clusters/{cluster}/features", json=body, headers=headers, params=params)


def _kubectl(sandbox: Any, cluster: str, *args: str) -> Any:
    import json
    import subprocess

    url = sandbox.kube.clusters()[cluster]
    out = subprocess.run(["kubectl", "--server", url, "--token", "t", *args, "-o", "json"],
                         capture_output=True, text=True, timeout=30, check=False)
    return json.loads(out.stdout) if out.returncode == 0 else None


def test_the_document_reads_base_add_ons_and_dependencies(api: Any, cluster: str) -> None:
    _run_until_done(cluster, "training_operator")
    doc = _features(api, cluster)
    assert doc["pod_identity_agent"]["status"] == "ACTIVE" and doc["pod_identity_agent"]["version"]
    assert doc["training_operator"] == {**doc["training_operator"], "enabled": True, "status": "ACTIVE",
                                        "depends_on": ["cert_manager", "pod_identity_agent"]}
    assert doc["cert_manager"]["required_by"] == ["training_operator"]
    assert doc["tiered_checkpointing"]["status"] == "DISABLED" and doc["autoscaling"]["status"] == "DISABLED"


def test_a_patch_equal_to_the_live_state_starts_nothing_and_calls_nothing_mutating(api: Any, cluster: str) -> None:
    _run_until_done(cluster, "training_operator")
    mark = api.mark()
    r = _patch(api, cluster, {"training_operator": {"enabled": True}, "observability": {"enabled": False}})
    assert r.status_code == 200 and r.json()["changed"] is False, r.text
    dry = _patch(api, cluster, {"training_operator": {"enabled": True}}, key="same-dry", dry_run=True)
    assert dry.status_code == 200 and dry.json()["changed"] is False, dry.text  # a dry run says the same
    assert _mutations(api.calls(after=mark)) == []


def test_disabling_a_needed_prerequisite_is_409_naming_the_dependant_and_changes_nothing(
        api: Any, cluster: str) -> None:
    _run_until_done(cluster, "training_operator")
    mark = api.mark()
    r = _patch(api, cluster, {"cert_manager": {"enabled": False}})
    assert r.status_code == 409 and "training_operator" in r.json()["detail"], r.text
    assert r.json()["required_by"] == ["training_operator"]
    dry = _patch(api, cluster, {"cert_manager": {"enabled": False}}, dry_run=True)
    assert (dry.status_code, dry.json()["required_by"]) == (409, ["training_operator"]), dry.text
    assert _mutations(api.calls(after=mark)) == []
    assert _features(api, cluster)["cert_manager"]["status"] == "ACTIVE"


def test_enabling_a_feature_enables_its_prerequisites_in_order_and_a_stale_partial_patch_keeps_them(
        api: Any, cluster: str, aws: Any) -> None:
    # the plan first (same key as the real request: a dry run stores nothing under it)
    since = api.mark()
    dry = _patch(api, cluster, {"inference_operator": {"enabled": True}}, key="inf-on", dry_run=True)
    assert dry.status_code == 200, dry.text
    plan = dry.json()
    assert writes(api, since) == []  # the plan changed nothing
    assert plan["kind"] == "features.update" and plan["cost"]["hourly"] == 0
    assert [(c["step"], c["action"]) for c in plan["changes"] if c["kind"] == "eks-addon"] == [
        ("fsx_csi", "create"), ("metrics_server", "create"), ("inference_operator", "create")]
    assert [w.split(" ")[0] for w in plan["warnings"]] == ["fsx_csi", "metrics_server"]  # auto-enabled, in order
    assert all("needed by inference_operator" in w for w in plan["warnings"])
    since = api.mark()
    r = _patch(api, cluster, {"inference_operator": {"enabled": True}}, key="inf-on")
    assert r.status_code == 202, r.text
    op = r.json()
    assert [s["name"] for s in op["steps"]] == ["fsx_csi", "metrics_server", "inference_operator"]
    assert op["request"]["patch"] == {"inference_operator": {"enabled": True}}
    done = api.wait_terminal(op["id"])
    assert done["status"] == "SUCCEEDED", done["error"]
    made = writes(api, since)
    assert made and unplanned(plan, made) == [], unplanned(plan, made)  # every call was in the plan
    created = [c["params"]["addonName"] for c in made if c["operation"] == "CreateAddon"]
    assert created == [c["name"] for c in plan["changes"] if c["kind"] == "eks-addon" and c["action"] == "create"]
    assert "prerequisite" in done["steps"][0]["message"] and "inference_operator" in done["steps"][0]["message"]
    assert _patch(api, cluster, {"inference_operator": {"enabled": True}}, key="inf-on").json()["id"] == op["id"]
    doc = _features(api, cluster)
    assert doc["inference_operator"]["status"] == "ACTIVE" and doc["fsx_csi"]["required_by"] == ["inference_operator"]
    config = aws("eks").describe_addon(clusterName=cluster, addonName="amazon-sagemaker-hyperpod-inference")
    assert '"tlsCertificateS3Prefix": "inference-tls/' in config["addon"]["configurationValues"]
    inference_role = _feature_role(aws, cluster, "hyperpod-inference-system",
                                   "hyperpod-inference-operator-controller-manager", "inference-operator")
    assert inference_role == iamdoc.role_name(cluster, REGION, "inference")
    # a stale form that only knew about observability sends its one change: the prerequisites stay
    stale = _patch(api, cluster, {"observability": {"enabled": False}})
    assert stale.status_code == 200 and stale.json()["changed"] is False
    assert {"aws-fsx-csi-driver", "metrics-server"} <= set(aws("eks").list_addons(clusterName=cluster)["addons"])
    # a stale form that re-sends a prerequisite's old value (off) is refused, naming the dependant: nothing removed
    mark = api.mark()
    resent = _patch(api, cluster, {"fsx_csi": {"enabled": False}, "observability": {"enabled": False}})
    assert resent.status_code == 409 and resent.json()["required_by"] == ["inference_operator"], resent.text
    assert _mutations(api.calls(after=mark)) == [] and _features(api, cluster)["fsx_csi"]["status"] == "ACTIVE"
    # turning the dependant off leaves the prerequisites it pulled in (nobody asked to remove them)
    off = api.wait_terminal(_patch(api, cluster, {"inference_operator": {"enabled": False}}).json()["id"])
    assert off["status"] == "SUCCEEDED" and [s["name"] for s in off["steps"]] == ["disable_inference_operator"]
    doc = _features(api, cluster)
    assert doc["inference_operator"]["status"] == "DISABLED" and doc["fsx_csi"]["status"] == "ACTIVE"
    _role_gone(aws, cluster, inference_role, "hyperpod-inference-system",
               "hyperpod-inference-operator-controller-manager")


def _feature_role(aws: Any, cluster: str, namespace: str, sa: str, policy_name: str) -> str:
    """The role bound to a feature's service account: trusted by EKS Pod Identity only, and its inline policy
    names this cluster's resources (a '*' resource only with a condition that narrows it)."""
    eks, iam = aws("eks"), aws("iam")
    [assoc] = eks.list_pod_identity_associations(clusterName=cluster, namespace=namespace,
                                                 serviceAccount=sa)["associations"]
    role = iam.get_role(RoleName=_assoc_role(eks, cluster, assoc["associationId"]))["Role"]
    principals = [st["Principal"] for st in role["AssumeRolePolicyDocument"]["Statement"]]
    assert principals == [{"Service": "pods.eks.amazonaws.com"}], principals
    policy = iam.get_role_policy(RoleName=role["RoleName"], PolicyName=policy_name)["PolicyDocument"]
    arn = aws("sagemaker").describe_cluster(ClusterName=cluster)["ClusterArn"]  # its id, not its name
    for st in policy["Statement"]:
        resources = st["Resource"] if isinstance(st["Resource"], list) else [st["Resource"]]
        assert all(r != "*" for r in resources) or st.get("Condition"), st
        assert any(cluster in r or r == arn for r in resources) or st.get("Condition") or "s3:::" in resources[0], st
        assert not any(a.endswith(":*") or a == "*" for a in st["Action"]), st
    return str(role["RoleName"])


def _role_gone(aws: Any, cluster: str, role: str, namespace: str, sa: str) -> None:
    iam = aws("iam")
    assert aws("eks").list_pod_identity_associations(clusterName=cluster, namespace=namespace,
                                                     serviceAccount=sa)["associations"] == []
    try:
        iam.get_role(RoleName=role)
    except iam.exceptions.NoSuchEntityException:
        return
    raise AssertionError(f"{role} is still there after the feature was disabled")


def test_observability_enables_with_its_scoped_role_and_disable_leaves_nothing(
        api: Any, cluster: str, aws: Any) -> None:
    op = api.wait_terminal(_patch(api, cluster, {"observability": {"enabled": True}}).json()["id"])
    assert op["status"] == "SUCCEEDED", op["error"]
    addon = "amazon-sagemaker-hyperpod-observability"
    assert aws("eks").describe_addon(clusterName=cluster, addonName=addon)["addon"]["status"] == "ACTIVE"
    assert _features(api, cluster)["observability"]["status"] == "ACTIVE"
    role = _feature_role(aws, cluster, "hyperpod-observability", "hyperpod-observability-operator-otel-collector",
                         "observability")
    off = api.wait_terminal(_patch(api, cluster, {"observability": {"enabled": False}}).json()["id"])
    assert off["status"] == "SUCCEEDED", off["error"]
    assert addon not in aws("eks").list_addons(clusterName=cluster)["addons"]
    _role_gone(aws, cluster, role, "hyperpod-observability", "hyperpod-observability-operator-otel-collector")
    assert _features(api, cluster)["observability"]["status"] == "DISABLED"


def test_tiered_checkpointing_identity_chain_is_made_and_removed_as_one_unit(
        api: Any, sandbox: Any, cluster: str, aws: Any) -> None:
    iam = aws("iam")
    role_name = iamdoc.role_name(cluster, REGION, "checkpoint")
    api.post("/v1/sandbox/faults", json={"service": "sagemaker", "operation": "UpdateCluster",
                                         "error_code": "ValidationException", "count": 1,
                                         "message": "injected mid-enable"})
    failed = api.wait_terminal(_patch(api, cluster, {"tiered_checkpointing": {"enabled": True,
                                                                              "memory_percent": 25}}).json()["id"])
    assert failed["status"] == "FAILED" and failed["phase"] == "tiered_checkpointing"
    assert _features(api, cluster)["tiered_checkpointing"]["status"] == "DEGRADED"  # half a chain shows as broken
    assert api.post(f"/v1/operations/{failed['id']}/retry").status_code == 202
    done = api.wait_terminal(failed["id"])
    assert done["status"] == "SUCCEEDED", done["error"]
    creates = [c for c in api.calls("iam", "CreateRole") if c["params"].get("RoleName") == role_name]
    assert len(creates) == 1  # the retry adopted the role the failed attempt made
    role = iam.get_role(RoleName=role_name)["Role"]
    cond = role["AssumeRolePolicyDocument"]["Statement"][0]["Condition"]["StringEquals"]
    assert sorted(cond.values()) == ["sts.amazonaws.com", "system:serviceaccount:default:podstart-checkpointing"]
    policy = iam.get_role_policy(RoleName=role_name, PolicyName="checkpoints")["PolicyDocument"]
    actions = [a for st in policy["Statement"] for a in st["Action"]]
    resources = [r for st in policy["Statement"] for r in st["Resource"]]
    assert "s3:*" not in actions and "*" not in resources
    assert any(r.endswith(f"/checkpoints/{cluster}/*") for r in resources)
    sa = _kubectl(sandbox, cluster, "get", "serviceaccount", "podstart-checkpointing", "-n", "default")
    assert sa["metadata"]["annotations"]["eks.amazonaws.com/role-arn"] == role["Arn"]
    hp = aws("sagemaker").describe_cluster(ClusterName=cluster)
    assert hp["TieredStorageConfig"] == {"Mode": "Enable", "InstanceMemoryAllocationPercentage": 25}
    view = _features(api, cluster)["tiered_checkpointing"]
    assert view["status"] == "ACTIVE" and view["memory_percent"] == 25
    assert all(link["intact"] for link in view["identity"]["links"])

    off = api.wait_terminal(_patch(api, cluster, {"tiered_checkpointing": {"enabled": False}}).json()["id"])
    assert off["status"] == "SUCCEEDED", off["error"]
    assert not [r for r in iam.list_roles(PathPrefix="/podstart/")["Roles"] if r["RoleName"] == role_name]
    assert _kubectl(sandbox, cluster, "get", "serviceaccount", "podstart-checkpointing", "-n", "default") is None
    assert aws("sagemaker").describe_cluster(ClusterName=cluster)["TieredStorageConfig"]["Mode"] == "Disable"
    view = _features(api, cluster)["tiered_checkpointing"]
    assert view["status"] == "DISABLED" and not any(link["intact"] for link in view["identity"]["links"])


NODEPOOL_V1 = {  # the parts of karpenter.sh/v1 NodePool's CRD schema PodStart's pools use
    "type": "object", "required": ["spec"],
    "properties": {"spec": {"type": "object", "required": ["template"], "properties": {
        "template": {"type": "object", "required": ["spec"], "properties": {"spec": {
            "type": "object", "required": ["nodeClassRef", "requirements"], "properties": {
                "nodeClassRef": {"type": "object", "required": ["group", "kind", "name"]},
                "expireAfter": {"type": "string", "pattern": r"^(([0-9]+(s|m|h))+|Never)$"},
                "requirements": {"type": "array", "items": {"type": "object", "required": ["key", "operator"],
                                 "properties": {"operator": {"enum": ["In", "NotIn", "Exists", "DoesNotExist",
                                                                      "Gt", "Lt"]}}}}}}}},
        "limits": {"type": "object", "additionalProperties": {
            "type": ["string", "integer"], "pattern": r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))"
                                                      r"(([KMGTPE]i)|[numkMGTPE])?$"}},
        "disruption": {"type": "object", "properties": {
            "consolidationPolicy": {"enum": ["WhenEmpty", "WhenEmptyOrUnderutilized"]},
            "consolidateAfter": {"type": "string", "pattern": r"^(([0-9]+(s|m|h))+|Never)$"},
            "budgets": {"type": "array", "items": {"type": "object", "required": ["nodes"], "properties": {
                "nodes": {"type": "string", "pattern": r"^((100|[0-9]{1,2})%|[0-9]+)$"}}}}}}}}},
}


def test_autoscaling_makes_a_node_class_and_pool_per_group_and_refuses_anything_else(
        api: Any, sandbox: Any, cluster: str, aws: Any) -> None:
    import jsonschema

    # zero instances only for a group autoscaling manages: refused while it is off, as a plan and for real
    workers = f"/v1/clusters/{cluster}/instance-groups/workers"
    for params in ({"dry_run": "true"}, {}):
        zero = api.http.patch(workers, json={"instance_count": 0}, params=params)
        assert zero.status_code == 422 and zero.json()["errors"][0]["loc"] == ["body", "instance_count"], zero.text
        assert "autoscaling is off" in zero.text
    bad = _patch(api, cluster, {"autoscaling": {"enabled": True, "instance_groups": ["general-ec2"]}})
    assert bad.status_code == 422 and bad.json()["errors"][0]["loc"] == ["body", "autoscaling", "instance_groups", 0]
    assert "HyperPod instance groups only" in bad.json()["detail"]
    on = {"autoscaling": {"enabled": True, "instance_groups": ["workers"], "disruption_budget": "1"}}
    since = api.mark()
    plan = _patch(api, cluster, on, dry_run=True).json()
    assert writes(api, since) == [] and _kubectl(sandbox, cluster, "get", "nodepools.karpenter.sh",
                                                 "podstart-workers") is None
    assert [(c["action"], c["kind"], c["name"]) for c in plan["changes"] if c["kind"].startswith("Kubernetes")] == [
        ("create", "Kubernetes HyperpodNodeClass", "podstart-workers"),
        ("create", "Kubernetes NodePool", "podstart-workers")]
    since = api.mark()
    op = api.wait_terminal(_patch(api, cluster, on).json()["id"])
    assert op["status"] == "SUCCEEDED", op["error"]
    assert unplanned(plan, writes(api, since)) == []  # the role and UpdateCluster, as planned
    hp = aws("sagemaker").describe_cluster(ClusterName=cluster)
    assert hp["AutoScaling"]["Mode"] == "Enable" and hp["AutoScaling"]["AutoScalerType"] == "Karpenter"
    assert hp["ClusterRole"].endswith(iamdoc.role_name(cluster, REGION, "autoscale"))
    pool = _kubectl(sandbox, cluster, "get", "nodepools.karpenter.sh", "podstart-workers")
    node_class = _kubectl(sandbox, cluster, "get", "hyperpodnodeclasses", "podstart-workers")
    jsonschema.validate(pool, NODEPOOL_V1)
    assert node_class["spec"] == {"instanceGroups": ["workers"]}
    assert pool["spec"]["template"]["spec"]["nodeClassRef"]["name"] == "podstart-workers"
    view = _features(api, cluster)["autoscaling"]
    assert view["status"] == "ACTIVE" and view["instance_groups"] == ["workers"]
    assert view["node_pools"][0]["instance_groups"] == ["workers"] and view["disruption_budget"] == "1"
    same = _patch(api, cluster, {"autoscaling": {"instance_groups": ["workers"]}})
    assert same.status_code == 200 and same.json()["changed"] is False
    # managed now: the group may go to zero (Karpenter brings it back when pods need it), and come back
    plan = api.http.patch(workers, json={"instance_count": 0}, params={"dry_run": "true"})
    assert plan.status_code == 200 and plan.json()["changes"][0]["details"]["instance_count"] == {"from": 1, "to": 0}
    for count in (0, 1):
        op = api.http.patch(workers, json={"instance_count": count})
        assert op.status_code == 202, op.text
        assert api.wait_terminal(op.json()["id"])["status"] == "SUCCEEDED"
        live = aws("sagemaker").describe_cluster(ClusterName=cluster)["InstanceGroups"]
        assert [g["TargetCount"] for g in live if g["InstanceGroupName"] == "workers"] == [count]

    off = api.wait_terminal(_patch(api, cluster, {"autoscaling": {"enabled": False}}).json()["id"])
    assert off["status"] == "SUCCEEDED", off["error"]
    assert _kubectl(sandbox, cluster, "get", "nodepools.karpenter.sh", "podstart-workers") is None
    assert _kubectl(sandbox, cluster, "get", "hyperpodnodeclasses", "podstart-workers") is None
    assert aws("sagemaker").describe_cluster(ClusterName=cluster)["AutoScaling"]["Mode"] == "Disable"
    assert _features(api, cluster)["autoscaling"]["status"] == "DISABLED"


def test_features_need_an_operator_and_a_viewer_may_read(viewer: Any, cluster: str) -> None:
    assert viewer.get(f"/v1/clusters/{cluster}/features").status_code == 200
    r = viewer.http.patch(f"/v1/clusters/{cluster}/features", json={"observability": {"enabled": True}})
    assert r.status_code == 403


def test_a_read_takes_at_most_four_backend_calls_and_still_sees_an_add_on_made_outside_podstart(
        api: Any, cluster: str, aws: Any) -> None:
    def read(**params: str) -> tuple[dict[str, Any], list[str]]:
        r = api.get(f"/v1/clusters/{cluster}/features", params=params)
        assert r.status_code == 200, r.text
        calls = api.calls(request_id=r.headers["x-amzn-RequestId"])  # this request's calls only
        return r.json(), [f"{c['service']}.{c['operation']}" for c in calls if c["service"] != "dynamodb"]

    def views(doc: dict[str, Any]) -> dict[str, Any]:
        return {n: {k: v for k, v in f.items() if k != "read_at"} for n, f in doc.items()}

    # Given a full read (?refresh=true reads every part now, and PodStart keeps what it read with the cluster)
    full, full_calls = read(refresh="true")
    assert len(full_calls) > 4 and "eks.DescribeAddon" in full_calls, full_calls
    # When the document is read again, nothing having changed
    doc, calls = read()
    # Then it takes at most four AWS and Kubernetes calls (PodStart's own tables aside), says the same, and when
    assert len(calls) <= 4 and "eks.ListAddons" in calls and "sagemaker.DescribeCluster" in calls, calls
    assert views(doc) == views(full)
    assert {f["read_at"] for f in doc.values()} == {full["training_operator"]["read_at"]}
    # And an add-on made outside PodStart shows at the next read (ListAddons is read live), as its removal does
    eks, addon = aws("eks"), "amazon-sagemaker-hyperpod-observability"
    assert doc["observability"]["enabled"] is False
    eks.create_addon(clusterName=cluster, addonName=addon)
    made, _ = read()
    assert made["observability"]["enabled"] is True and made["observability"]["read_at"] > doc["observability"][
        "read_at"], made["observability"]
    eks.delete_addon(clusterName=cluster, addonName=addon)
    deadline = time.monotonic() + 30
    while addon in eks.list_addons(clusterName=cluster)["addons"]:
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert read()[0]["observability"]["status"] == "DISABLED"
