"""The planners of features.update, storage.add, storage.remove and cluster.reconcile, pure: given what
admission read, the plan lists what each step makes, changes or removes, and `none` for what is there."""

from __future__ import annotations

from typing import Any

from functions.domain import iam as iamdoc
from functions.domain import manifests
from functions.domain.features import changes as fchg
from functions.domain.features import document as fdom
from functions.domain.operations import Target
from functions.domain.plans import Change, Draft
from functions.domain.plans.registry import PLANNERS, PlanInput

CLUSTER, REGION, BUCKET = "demo", "us-west-2", "podstart-data-123"
BASE = ("eks-pod-identity-agent", "aws-mountpoint-s3-csi-driver", "vpc-cni", "coredns", "kube-proxy")


def run(kind: str, request: dict[str, Any], facts: dict[str, Any], skip: frozenset[str] = frozenset()) -> Draft:
    return PLANNERS[kind](PlanInput(kind=kind, target=Target(cluster=CLUSTER, region=REGION), request=request,
                                    facts=facts, skip_steps=skip))


def acted(d: Draft) -> list[tuple[str, str, str]]:
    return [(c.action, c.kind, c.name) for c in d.changes if c.action != "none"]


def of(d: Draft, kind: str) -> list[Change]:
    return [c for c in d.changes if c.kind == kind]


# -- features.update --------------------------------------------------------------------------------
def inputs(addons: tuple[str, ...] = BASE, associations: tuple[tuple[str, str], ...] = (("kube-system",
                                                                                        "s3-csi-driver-sa"),),
           **kw: Any) -> fdom.FeatureInputs:
    hp = kw.pop("hyperpod", {"ClusterStatus": "InService", "InstanceGroups": [{"InstanceGroupName": "workers"}]})
    return fdom.FeatureInputs(addons={a: {"status": kw.pop(f"status_{a}", "ACTIVE"), "addonVersion": "v1"}
                                      for a in addons},
                              associations=associations, hyperpod=hp, checkpoint_role=kw.pop("role", None),
                              service_account=kw.pop("sa", None), issuer="https://oidc.example/id/X", **kw)


def features_plan(patch: dict[str, Any], inp: fdom.FeatureInputs, origin: str = "created") -> Draft:
    """What admission does (functions.logic.features), then the planner."""
    doc = fdom.document(inp, checkpoint_role=iamdoc.role_name(CLUSTER, REGION, "checkpoint"), bucket=BUCKET,
                        prefix=fdom.CHECKPOINT_PREFIX.format(cluster=CLUSTER))
    changes = fchg.plan_changes(fchg.FeaturesPatch.model_validate(patch), fdom.live_state(doc))
    request = {"cluster": CLUSTER, "region": REGION, "eks_cluster": CLUSTER, "hyperpod_cluster": CLUSTER,
               "changes": {c.step: {"settings": dict(c.settings), "reason": c.reason} for c in changes}}
    return run("features.update", request, {"inputs": inp, "origin": origin, "bucket": BUCKET})


def test_enabling_the_inference_operator_plans_its_missing_prerequisites_first_and_says_so() -> None:
    plan = features_plan({"inference_operator": {"enabled": True}}, inputs())
    addons = [(c.action, c.name, c.step) for c in of(plan, "eks-addon")]
    assert addons == [("create", "cert-manager", "cert_manager"), ("create", "aws-fsx-csi-driver", "fsx_csi"),
                      ("create", "metrics-server", "metrics_server"),
                      ("create", "amazon-sagemaker-hyperpod-inference", "inference_operator")]
    role = iamdoc.role_name(CLUSTER, REGION, "inference")
    assert ("create", "AWS::IAM::Role", role) in acted(plan)
    assert ("create", "AWS::EKS::PodIdentityAssociation",
            "hyperpod-inference-system/hyperpod-inference-operator-controller-manager") in acted(plan)
    assert [c.action for c in of(plan, "AWS::EC2::Subnet")] == ["update"]  # load-balancer tags
    assert len(plan.warnings) == 3 and all("needed by inference_operator" in w for w in plan.warnings)
    assert not plan.capacity  # add-ons cost nothing by the hour


def test_a_degraded_operator_missing_only_its_association_plans_just_that() -> None:
    plan = features_plan({"training_operator": {"enabled": True}},
                         inputs(addons=(*BASE, "cert-manager", "amazon-sagemaker-hyperpod-training-operator")))
    # ACTIVE add-on without its Pod Identity association reads DEGRADED: enabling again puts the link back
    assert acted(plan) == [("create", "AWS::IAM::Role", iamdoc.role_name(CLUSTER, REGION, "training")),
                           ("create", "AWS::EKS::PodIdentityAssociation",
                            "aws-hyperpod/hp-training-operator-controller-manager")]
    assert [c.action for c in of(plan, "eks-addon")] == ["none"] and not plan.warnings


def test_disabling_an_operator_removes_add_on_association_and_role_and_warns() -> None:
    on = inputs(addons=(*BASE, "cert-manager", "amazon-sagemaker-hyperpod-training-operator"),
                associations=(("aws-hyperpod", "hp-training-operator-controller-manager"),))
    plan = features_plan({"training_operator": {"enabled": False}}, on)
    assert acted(plan) == [("delete", "eks-addon", "amazon-sagemaker-hyperpod-training-operator"),
                           ("delete", "AWS::EKS::PodIdentityAssociation",
                            "aws-hyperpod/hp-training-operator-controller-manager"),
                           ("delete", "AWS::IAM::Role", iamdoc.role_name(CLUSTER, REGION, "training"))]
    assert {c.step for c in plan.changes} == {"disable_training_operator"}
    assert "training_operator" in plan.warnings[0]


def chain_role() -> dict[str, Any]:
    host = "oidc.example/id/X"
    sa = fdom.CHECKPOINT_SA
    return {"Arn": "arn:aws:iam::1:role/podstart/ck",
            "AssumeRolePolicyDocument": {"Statement": [{"Condition": {"StringEquals": {
                f"{host}:sub": f"system:serviceaccount:{sa.namespace}:{sa.name}",
                f"{host}:aud": "sts.amazonaws.com"}}}]},
            "policy": iamdoc.checkpoint_policy(REGION, BUCKET, fdom.CHECKPOINT_PREFIX.format(cluster=CLUSTER))}


def test_changing_the_checkpoint_memory_share_is_one_update_cluster_and_nothing_else() -> None:
    role = chain_role()
    sa = {"metadata": {"annotations": {fdom.ROLE_ARN_ANNOTATION: role["Arn"]}}}
    hp = {"ClusterStatus": "InService",
          "TieredStorageConfig": {"Mode": "Enable", "InstanceMemoryAllocationPercentage": 20}}
    plan = features_plan({"tiered_checkpointing": {"memory_percent": 30}}, inputs(hyperpod=hp, role=role, sa=sa))
    assert acted(plan) == [("update", "AWS::SageMaker::Cluster", CLUSTER)]
    assert acted(plan) and plan.changes[-1].details["TieredStorageConfig"] == {
        "Mode": "Enable", "InstanceMemoryAllocationPercentage": 30}
    assert {c.kind for c in plan.changes if c.action == "none"} == {
        "AWS::IAM::OIDCProvider", "AWS::IAM::Role", "Kubernetes ServiceAccount"}


def test_turning_checkpointing_on_from_nothing_makes_the_whole_chain_with_the_default_share() -> None:
    plan = features_plan({"tiered_checkpointing": {"enabled": True}}, inputs(), origin="imported")
    assert [(a, k) for a, k, _ in acted(plan)] == [
        ("create", "AWS::IAM::OIDCProvider"), ("create", "AWS::IAM::Role"), ("create", "Kubernetes ServiceAccount"),
        ("update", "AWS::SageMaker::Cluster")]
    assert plan.changes[-1].details["TieredStorageConfig"]["InstanceMemoryAllocationPercentage"] == 20


def pool(group: str, cpu: int = 1000) -> dict[str, Any]:
    return manifests.node_pool(group, cpu_limit=cpu, consolidate_after="30s", budget="10%")


def test_moving_autoscaling_to_another_group_creates_its_pool_and_deletes_the_old_one() -> None:
    hp = {"ClusterStatus": "InService", "ClusterRole": "arn:aws:iam::1:role/podstart/"
          + iamdoc.role_name(CLUSTER, REGION, "autoscale"), "AutoScaling": {"Mode": "Enable",
                                                                           "AutoScalerType": "Karpenter",
                                                                           "Status": "InService"},
          "InstanceGroups": [{"InstanceGroupName": "a"}, {"InstanceGroupName": "b"}]}
    plan = features_plan({"autoscaling": {"instance_groups": ["b"]}}, inputs(hyperpod=hp, node_pools=(pool("a"),)))
    assert acted(plan) == [("create", "Kubernetes HyperpodNodeClass", "podstart-b"),
                           ("create", "Kubernetes NodePool", "podstart-b"),
                           ("delete", "Kubernetes NodePool", "podstart-a"),
                           ("delete", "Kubernetes HyperpodNodeClass", "podstart-a")]
    assert [c.action for c in of(plan, "AWS::SageMaker::Cluster")] == ["none"]  # Karpenter is on already


def test_a_retry_plans_nothing_for_the_steps_already_done() -> None:
    inp = inputs()
    doc = fdom.document(inp, checkpoint_role="r", bucket=BUCKET, prefix="p/")
    changes = fchg.plan_changes(fchg.FeaturesPatch.model_validate({"training_operator": {"enabled": True}}),
                                fdom.live_state(doc))
    request = {"cluster": CLUSTER, "region": REGION, "hyperpod_cluster": CLUSTER,
               "changes": {c.step: {"settings": {}, "reason": c.reason} for c in changes}}
    plan = run("features.update", request, {"inputs": inp}, skip=frozenset({"cert_manager"}))
    assert [c.action for c in plan.changes if c.step == "cert_manager"] == ["none"]
    assert ("create", "eks-addon", "amazon-sagemaker-hyperpod-training-operator") in acted(plan)


# -- storage.add / storage.remove -------------------------------------------------------------------
def add_request(**kw: Any) -> dict[str, Any]:
    return {"cluster": CLUSTER, "region": REGION, "eks_cluster_name": CLUSTER, "namespace": "ml", **kw}


def test_mounting_a_bucket_makes_role_identity_and_claim_and_costs_nothing_by_the_hour() -> None:
    plan = run("storage.add", add_request(kind="s3", name="train", bucket="datasets", prefix="train/",
                                          read_only=True), {"addons": list(BASE)})
    assert [c.action for c in of(plan, "eks-addon")] == ["none", "none"]
    assert [c.action for c in of(plan, "Kubernetes Namespace")] == ["none"]  # a PodStart namespace: never made
    assert [(a, k) for a, k, _ in acted(plan)] == [
        ("create", "AWS::IAM::Role"), ("create", "Kubernetes ServiceAccount"),
        ("create", "AWS::EKS::PodIdentityAssociation"), ("create", "Kubernetes PersistentVolume"),
        ("create", "Kubernetes PersistentVolumeClaim")]
    assert of(plan, "AWS::IAM::Role")[0].details["policy"] == "read-only on s3://datasets/train/"
    assert [c.action for c in of(plan, "AWS::S3::Bucket")] == ["none"]  # never created or deleted
    assert plan.capacity == []


def test_a_new_fsx_volume_plans_the_missing_csi_add_on_and_prices_its_storage_per_gib() -> None:
    plan = run("storage.add", add_request(kind="fsx_lustre", name="scratch", storage_capacity_gib=2400,
                                          throughput_mb_per_tib=250), {"addons": list(BASE)})
    assert acted(plan)[:2] == [("create", "eks-addon", "aws-fsx-csi-driver"),
                               ("create", "AWS::FSx::FileSystem", "scratch")]
    [cap] = plan.capacity
    assert (cap.price, cap.count) == (("fsx", "PERSISTENT_2/250"), 2400)
    assert [c.step for c in plan.changes if c.kind.startswith("Kubernetes Persistent")] == ["volume", "volume"]


def test_removing_volumes_goes_back_claim_first_and_never_deletes_a_bucket() -> None:
    s3 = run("storage.remove", {"cluster": CLUSTER, "region": REGION, "name": "train", "namespace": "ml",
                                "kind": "s3", "pv": "podstart-ml-train", "bucket": "datasets",
                                "service_account": "train-s3", "role_name": "podstart-demo-vol-1"}, {})
    assert acted(s3) == [("delete", "Kubernetes PersistentVolumeClaim", "ml/train"),
                         ("delete", "Kubernetes PersistentVolume", "podstart-ml-train"),
                         ("delete", "AWS::EKS::PodIdentityAssociation", "ml/train-s3"),
                         ("delete", "Kubernetes ServiceAccount", "ml/train-s3"),
                         ("delete", "AWS::IAM::Role", "podstart-demo-vol-1")]
    assert "datasets" in s3.warnings[0] and s3.capacity == []
    fsx = run("storage.remove", {"cluster": CLUSTER, "region": REGION, "name": "scratch", "namespace": "default",
                                 "kind": "fsx_lustre", "pv": "podstart-default-scratch", "file_system_id": "fs-1"},
              {"fsx": {"storage_capacity_gib": 1200, "throughput_mb_per_tib": 125}})
    assert acted(fsx)[-1] == ("delete", "AWS::FSx::FileSystem", "fs-1")
    assert [(c.price, c.count) for c in fsx.capacity] == [(("fsx", "PERSISTENT_2/125"), -1200)]  # it saves


# -- cluster.reconcile ------------------------------------------------------------------------------
def reconcile_request(**storage: Any) -> dict[str, Any]:
    return {"name": CLUSTER, "cluster": CLUSTER, "region": REGION, "eks_cluster_name": CLUSTER, "origin": "created",
            "storage": {"s3": True, "fsx_lustre": None, **storage}, "fsx_csi": False}


def everything_there(request: dict[str, Any], added: list[dict[str, Any]]) -> dict[str, Any]:
    from functions.domain.storage.plan import reconcile_objects

    return {"addons": list(BASE), "associations": [["kube-system", "s3-csi-driver-sa"], ["ml", "train-s3"]],
            "objects": [manifests.api_path(m) for _, m in reconcile_objects(request, added, BUCKET)],
            "added": added, "bucket": BUCKET}


TRAIN = {"name": "train", "namespace": "ml", "kind": "s3", "bucket": "datasets", "prefix": "train/",
         "read_only": False, "lifecycle": None}


def test_a_reconcile_of_a_cluster_with_everything_in_place_plans_only_none() -> None:
    request = reconcile_request()
    plan = run("cluster.reconcile", request, everything_there(request, [TRAIN]))
    assert plan.changes and acted(plan) == []
    names = {c.name for c in plan.changes}
    assert {"coredns", "kube-system/neuron-device-plugin-daemonset", "default/podstart-data", "ml/train",
            "ml/train-s3"} <= names


def test_a_reconcile_plans_exactly_what_went_missing() -> None:
    request = reconcile_request()
    facts = everything_there(request, [TRAIN])
    facts["addons"] = [a for a in BASE if a != "coredns"]
    facts["objects"] = [p for p in facts["objects"] if not p.endswith("/persistentvolumeclaims/train")]
    facts["associations"] = [["kube-system", "s3-csi-driver-sa"]]
    plan = run("cluster.reconcile", request, facts)
    assert acted(plan) == [("create", "eks-addon", "coredns"),
                           ("create", "AWS::IAM::Role", manifests_role("train")),
                           ("create", "AWS::EKS::PodIdentityAssociation", "ml/train-s3"),
                           ("create", "Kubernetes PersistentVolumeClaim", "ml/train")]


def manifests_role(name: str) -> str:
    from functions.domain.storage import volumes as st

    return st.role_name(CLUSTER, REGION, name)


def test_a_reconcile_whose_fsx_is_gone_plans_a_new_one_with_its_cost_and_warns() -> None:
    request = reconcile_request(fsx_lustre={"storage_capacity_gib": 1200, "throughput_mb_per_tib": 125})
    facts = everything_there(request, [])
    facts["addons"] = [*BASE, "aws-fsx-csi-driver"]
    facts["fsx"] = {"id": "fs-1", "lifecycle": "DELETED"}
    plan = run("cluster.reconcile", request, facts)
    assert acted(plan) == [("create", "AWS::FSx::FileSystem", CLUSTER)]
    assert [(c.price, c.count) for c in plan.capacity] == [(("fsx", "PERSISTENT_2/125"), 1200)]
    assert "empty" in plan.warnings[0]
    facts["fsx"] = {"id": "fs-1", "lifecycle": "AVAILABLE"}
    assert acted(run("cluster.reconcile", request, facts)) == []

