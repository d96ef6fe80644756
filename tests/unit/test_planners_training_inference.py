"""Planners for training and inference, pure: the objects listed are the ones the workflow steps render (same
functions), the operator add-on is a change only when its kind is not served, existing nodes cost nothing more,
and a warning says when the GPUs asked for are not free."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from functions.assets import keda as keda_assets
from functions.domain import iam as iamdoc
from functions.domain.features import document as fdom
from functions.domain.inference import manifests as im
from functions.domain.inference.endpoints import EndpointCreate
from functions.domain.manifests import DATA_VOLUME
from functions.domain.operations import Target
from functions.domain.plans import Change
from functions.domain.plans.registry import PLANNERS, PlanInput
from functions.domain.training import jobs as training
from functions.domain.training import recipes
from functions.logic.plans import finish

IMAGE = "123456789012.dkr.ecr.us-west-2.amazonaws.com/train:2.5.1"
TARGET = Target(cluster="demo", region="us-west-2", resource="x")


def job(**over: Any) -> dict[str, Any]:
    body = {"name": "train", "recipe": "pytorch", "image": IMAGE, "instance_type": "ml.g5.8xlarge", "nodes": 2,
            "gpus_per_node": 1, "parameters": {"script": "train.py", "epochs": 2}, **over}
    return training.JobSubmit.model_validate(body).model_dump(mode="json", exclude_none=True)


def submit(facts: dict[str, Any], kind: str = "pytorch", **over: Any) -> Any:
    request = {"cluster": "demo", "region": "us-west-2", "eks_cluster": "demo", "kind": kind, "job": job(**over)}
    return PLANNERS["job.submit"](PlanInput(kind="job.submit", target=TARGET, request=request, facts=facts))


def rows(changes: list[Change]) -> list[tuple[str, str, str, str | None]]:
    return [(c.action, c.kind, c.name, c.step) for c in changes]


SERVED = {"operator_served": True, "namespace_exists": True, "data_volume_exists": True}


def test_a_job_on_a_cluster_without_the_operator_plans_the_feature_chain_then_the_job() -> None:
    # cert-manager is there, the Pod Identity agent is not: the step enables it, then the operator and its role
    inputs = inputs_with({"cert-manager": "ACTIVE"})
    role = iamdoc.role_name("demo", "us-west-2", fdom.FEATURES["training_operator"].role or "")
    d = submit({**SERVED, "operator_served": False, "feature_inputs": inputs})
    assert rows(d.changes) == [
        ("none", "eks-addon", "cert-manager", "training_operator"),
        ("create", "eks-addon", "eks-pod-identity-agent", "training_operator"),
        ("create", "AWS::IAM::Role", role, "training_operator"),
        ("create", "AWS::EKS::PodIdentityAssociation", "aws-hyperpod/hp-training-operator-controller-manager",
         "training_operator"),
        ("create", "eks-addon", "amazon-sagemaker-hyperpod-training-operator", "training_operator"),
        ("create", "Kubernetes HyperPodPyTorchJob", "train", "submit")]
    assert any("enables the training operator" in w for w in d.warnings)
    on = submit(SERVED)
    assert rows(on.changes)[0] == ("none", "eks-addon", "amazon-sagemaker-hyperpod-training-operator",
                                   "training_operator")
    assert len(on.changes) == 2 and not on.warnings


def inputs_with(addons: dict[str, str]) -> fdom.FeatureInputs:
    return fdom.FeatureInputs(addons={k: {"addonName": k, "status": v} for k, v in addons.items()}, associations=(),
                              hyperpod=None, checkpoint_role=None, service_account=None, issuer=None)


def test_the_job_listed_is_the_manifest_the_submit_step_applies() -> None:
    d = submit(SERVED)
    body = training.JobSubmit.model_validate(job())
    manifest = training.render(body, recipes.parse_parameters("pytorch", "1", body.parameters))
    last = d.changes[-1]
    assert (last.kind, last.name) == (f"Kubernetes {manifest['kind']}", manifest["metadata"]["name"])
    assert last.details["api_version"] == manifest["apiVersion"] and last.details["nodes"] == 2


def test_a_podstart_namespace_without_its_data_volume_gets_it_before_the_job_and_no_namespace_is_made() -> None:
    d = submit({**SERVED, "data_volume_exists": False, "bucket": "b"}, namespace="team")
    assert [(c.kind, c.name) for c in d.changes[1:]] == [
        ("Kubernetes PersistentVolume", f"{DATA_VOLUME}-team"),
        ("Kubernetes PersistentVolumeClaim", DATA_VOLUME), ("Kubernetes HyperPodPyTorchJob", "train")]
    assert d.changes[-1].details["namespace"] == "team"


def test_a_ray_job_plans_the_kuberay_operator_feature_not_the_training_add_on() -> None:
    # Given a cluster that does not serve RayJob, the operator step enables the kuberay_operator feature: each
    # object it server-side applies is a line of the plan (CRDs first, the Deployment last), then the RayJob.
    d = submit({**SERVED, "operator_served": False}, kind="ray", recipe="verl", parameters={})
    mine = [r for r in rows(d.changes) if r[3] == "kuberay_operator"]
    assert mine[0] == ("create", "Kubernetes CustomResourceDefinition", "rayclusters.ray.io", "kuberay_operator")
    assert mine[-1] == ("create", "Kubernetes Deployment", "kuberay-system/kuberay-operator", "kuberay_operator")
    assert not any(r[1] == "eks-addon" for r in rows(d.changes))
    assert d.changes[-1].kind == "Kubernetes RayJob"


class Prices:
    def hourly(self, region: str, key: tuple[str, str]) -> tuple[float, str] | None:
        return (3.5, "AWS Price List, 2026-11-30") if key == ("hyperpod", "ml.g5.8xlarge") else None


def test_training_capacity_is_already_there_and_costs_nothing_more() -> None:
    plan = finish(SimpleNamespace(prices=Prices()), "job.submit", TARGET, submit(SERVED), {})  # type: ignore[arg-type]
    [line] = plan.cost.lines
    assert (line.paid, line.count, line.hourly, line.unit_hourly) == (True, 2, 0.0, 3.5)
    assert line.source.startswith("existing nodes") and plan.cost.hourly == 0


def test_a_warning_when_the_requested_gpus_are_not_free_now() -> None:
    busy = training.GroupCapacity(name="gpu", instance_type="ml.g5.8xlarge", instances=2, gpus_per_instance=1,
                                  free_gpus=1).model_dump()
    d = submit({**SERVED, "live": busy})
    assert any("do not fit now" in w and "NotEnoughGpus" in w and "1 free" in w for w in d.warnings), d.warnings
    free = {**busy, "free_gpus": 2}
    assert not any("do not fit" in w for w in submit({**SERVED, "live": free}).warnings)


def test_live_capacity_counts_gpus_requested_by_running_pods_on_nodes_of_the_type() -> None:
    def node(name: str, itype: str) -> dict[str, Any]:
        return {"metadata": {"name": name, "labels": {training.INSTANCE_TYPE_LABEL: itype}},
                "status": {"allocatable": {training.GPU: "4"}}}

    def pod(node_name: str, gpus: int, phase: str = "Running") -> dict[str, Any]:
        return {"spec": {"nodeName": node_name, "containers": [{"resources": {"requests": {training.GPU: gpus}}}]},
                "status": {"phase": phase}}

    nodes = [node("a", "ml.g5.12xlarge"), node("b", "ml.g5.12xlarge"), node("c", "ml.c5.large")]
    live = training.live_capacity(nodes, [pod("a", 3), pod("b", 1), pod("b", 4, "Succeeded"), pod("c", 2)],
                                  "ml.g5.12xlarge")
    assert live is not None and (live.instances, live.gpus_per_instance, live.free_gpus) == (2, 4, 4)
    assert training.live_capacity(nodes, [], "ml.p5.48xlarge") is None


def test_a_job_delete_lists_the_job_and_each_of_its_pods() -> None:
    request = {"cluster": "demo", "region": "us-west-2", "eks_cluster": "demo", "kind": "pytorch", "name": "train",
               "namespace": "default"}
    d = PLANNERS["job.delete"](PlanInput(kind="job.delete", target=TARGET, request=request, facts={
        "pods": [{"name": "train-0", "node": "n1"}, {"name": "train-1", "node": "n2"}]}))
    assert rows(d.changes) == [("delete", "Kubernetes HyperPodPyTorchJob", "train", "delete"),
                               ("delete", "Kubernetes Pod", "train-0", "delete"),
                               ("delete", "Kubernetes Pod", "train-1", "delete")]
    assert "2 pod(s)" in d.warnings[0]


# --------------------------------------------------------------------------------------------- inference

def endpoint(**over: Any) -> dict[str, Any]:
    body = {"name": "llm", "mode": "self-managed", "engine": "vllm", "image": "vllm/vllm-openai:v0.10.1",
            "model": {"source": "s3", "uri": "/data/models/Qwen/Qwen3-0.6B/main/"},
            "instance_type": "ml.g5.8xlarge", "gpus": 1, "replicas": 2, **over}
    return EndpointCreate.model_validate(body).normalized()


KEDA: dict[str, Any] = {"engine": "sglang", "image": "lmsysorg/sglang:v0.4.9.post2-cu126",
                        "router": {"enabled": True, "policy": "cache_aware"},
                        "autoscaling": {"keda": {"min": 1, "max": 4, "metric": "queue_depth", "target": 4}}}


def deploy(req: dict[str, Any], facts: dict[str, Any]) -> Any:
    request = {"cluster": "demo", "region": "us-west-2", "eks_cluster_name": "demo", "endpoint": req}
    return PLANNERS["endpoint.deploy"](PlanInput(kind="endpoint.deploy", target=TARGET, request=request,
                                                 facts={"bucket": "b", **facts}))


def test_a_self_managed_deploy_lists_every_object_the_objects_step_applies() -> None:
    req = endpoint()
    d = deploy(req, {})
    made = im.endpoint_objects(req, region="us-west-2", bucket="b", tls_bucket="b")
    assert [(c.kind, c.name) for c in d.changes if c.step == "objects"] == \
        [(f"Kubernetes {m['kind']}", m["metadata"]["name"]) for m in made]
    assert {"Kubernetes Deployment", "Kubernetes Service"} <= {c.kind for c in d.changes}
    assert not any(c.step == "inference_operator" for c in d.changes)  # self-managed: that step is skipped
    assert d.changes[-1].kind == "PodStart endpoint record"


def test_a_managed_deploy_shows_the_inference_add_on_only_while_it_is_off() -> None:
    req = endpoint(mode="managed", engine=None, image=None,
                   model={"source": "huggingface", "model_id": "meta-llama/Llama-3.1-8B-Instruct"}, replicas=1)
    every = {a: "ACTIVE" for a in ("cert-manager", "eks-pod-identity-agent", "aws-mountpoint-s3-csi-driver",
                                   "aws-fsx-csi-driver", "metrics-server")}
    off = deploy(req, {"operator_served": False, "feature_inputs": inputs_with(every)})
    on = deploy(req, {"operator_served": True})
    operator = [r for r in rows(off.changes) if r[3] == "inference_operator"]
    assert ("create", "eks-addon", "amazon-sagemaker-hyperpod-inference", "inference_operator") in operator
    assert [r[2] for r in operator if r[1] == "eks-addon" and r[0] == "none"] == [
        a for a in every if a in {r[2] for r in operator}]  # prerequisites in place are listed, unchanged
    assert rows(on.changes)[0] == ("none", "eks-addon", "amazon-sagemaker-hyperpod-inference", "inference_operator")
    assert ("create", "Kubernetes InferenceEndpointConfig", "llm", "objects") in rows(on.changes)
    assert any("enables the inference operator" in w for w in off.warnings)


def test_keda_is_installed_once_kept_when_served() -> None:
    req = endpoint(**KEDA)
    fresh = [c for c in deploy(req, {"keda_served": False}).changes if c.step == "keda"]
    assert [(c.kind, c.name) for c in fresh] == [(f"Kubernetes {m['kind']}", m["metadata"]["name"])
                                                 for m in keda_assets.install_objects()]
    kept = [c for c in deploy(req, {"keda_served": True}).changes if c.step == "keda"]
    assert [c.action for c in kept] == ["none"]


def test_serving_gpus_that_are_not_free_are_a_warning() -> None:
    live = {"name": "gpu", "instance_type": "ml.g5.8xlarge", "instances": 2, "gpus_per_instance": 1, "free_gpus": 1}
    d = deploy(endpoint(), {"live": live})
    assert any("2 x 1 = 2 GPUs" in w and "1 are free" in w for w in d.warnings), d.warnings
    assert [(line.paid, line.count) for line in d.capacity] == [(True, 2)]


def test_an_update_names_what_changes_from_and_to() -> None:
    req = endpoint()
    request = {"cluster": "demo", "region": "us-west-2", "eks_cluster_name": "demo", "endpoint": req,
               "change": {"replicas": 1}}
    d = PLANNERS["endpoint.update"](PlanInput(kind="endpoint.update", target=TARGET, request=request))
    first = d.changes[0]
    assert (first.action, first.kind, first.name) == ("update", "Kubernetes Deployment", im.worker_name("llm"))
    assert first.details["replicas"] == {"from": 2, "to": 1}
    keda = endpoint(**KEDA)
    request = {**request, "endpoint": keda, "change": {"autoscaling_max": 6}}
    d = PLANNERS["endpoint.update"](PlanInput(kind="endpoint.update", target=TARGET, request=request))
    assert (d.changes[0].kind, d.changes[0].details["maxReplicaCount"]) == ("Kubernetes ScaledObject",
                                                                            {"from": 4, "to": 6})


def test_a_delete_removes_the_objects_in_reverse_then_the_record() -> None:
    req = endpoint()
    request = {"cluster": "demo", "region": "us-west-2", "eks_cluster_name": "demo", "endpoint": req}
    d = PLANNERS["endpoint.delete"](PlanInput(kind="endpoint.delete", target=TARGET, request=request,
                                              facts={"bucket": "b"}))
    made = im.endpoint_objects(req, region="us-west-2", bucket="b", tls_bucket="b")
    assert [c.name for c in d.changes[:-1]] == [m["metadata"]["name"] for m in reversed(made)]
    assert {c.action for c in d.changes} == {"delete"} and d.changes[-1].kind == "PodStart endpoint record"


def test_a_pool_lists_its_worker_script_deployment_and_existing_capacity() -> None:
    pool = {"name": "warm", "engine": "vllm", "image": "vllm/vllm-openai:v0.10.1", "instance_type": "ml.g5.8xlarge",
            "gpus_per_worker": 1, "workers": 2}
    d = PLANNERS["pool.create"](PlanInput(kind="pool.create", target=TARGET, request={
        "cluster": "demo", "region": "us-west-2", "eks_cluster_name": "demo", "pool": pool}))
    assert rows(d.changes) == [("create", "Kubernetes ConfigMap", im.POOL_WORKER, "workers"),
                               ("create", "Kubernetes Deployment", im.pool_deployment("warm"), "workers"),
                               ("create", "PodStart pool record", "warm", None)]
    assert d.changes[1].details["replicas"] == 2 and d.capacity[0].paid
    assert "replicas" not in d.changes[0].details  # the supervisor script's ConfigMap


def pods(*names: str) -> list[dict[str, Any]]:
    return [{"metadata": {"name": n}} for n in names]


def test_assign_relabels_the_first_unassigned_workers_by_name_and_warns_when_short() -> None:
    request = {"cluster": "demo", "region": "us-west-2", "eks_cluster_name": "demo", "pool": "warm",
               "endpoint": "llm", "workers": 2}
    d = PLANNERS["pool.assign"](PlanInput(kind="pool.assign", target=TARGET, request=request,
                                          facts={"pods": pods("w-c", "w-a", "w-b")}))
    assert [(c.action, c.name) for c in d.changes] == [("update", "w-a"), ("update", "w-b")]
    assert d.changes[0].details["label"] == {"key": im.MODEL_LABEL, "from": im.UNASSIGNED, "to": "llm"}
    short = PLANNERS["pool.assign"](PlanInput(kind="pool.assign", target=TARGET, request={**request, "workers": 3},
                                              facts={"pods": pods("w-a")}))
    assert any("NotEnoughWorkers" in w for w in short.warnings)
    assert im.pick_workers(pods("w-c", "w-a", "w-b"), 2, []) == (["w-a", "w-b"], 2)  # what the labels step moves


def test_release_without_a_count_returns_all_of_the_endpoints_workers() -> None:
    request = {"cluster": "demo", "region": "us-west-2", "eks_cluster_name": "demo", "pool": "warm",
               "endpoint": "llm", "workers": None}
    d = PLANNERS["pool.release"](PlanInput(kind="pool.release", target=TARGET, request=request,
                                           facts={"pods": pods("w-b", "w-a")}))
    assert [c.name for c in d.changes] == ["w-a", "w-b"]
    assert d.changes[0].details["label"]["to"] == im.UNASSIGNED


MLFLOW = {"tracking_server_arn": "arn:aws:sagemaker:us-west-2:123456789012:mlflow-tracking-server/team-a"}


def test_a_job_with_mlflow_plans_its_role_association_and_service_account_and_the_agent_once() -> None:
    # Given a cluster that does not serve HyperPodPyTorchJob yet (the operator step enables the Pod Identity agent)
    plan = submit({"operator_served": False, "namespace_exists": True, "data_volume_exists": True}, mlflow=MLFLOW)
    access = [r for r in rows(plan.changes) if r[3] == "mlflow_access"]
    # Then mlflow_access lists the job's role and association, and not the agent a second time
    assert [(a, k) for a, k, _, _ in access] == [("create", "AWS::IAM::Role"),
                                                 ("create", "AWS::EKS::PodIdentityAssociation")]
    assert access[1][2] == "default/train-mlflow"
    role = next(c for c in plan.changes if c.kind == "AWS::IAM::Role" and c.step == "mlflow_access")
    scoped = {"Action": "sagemaker-mlflow:*", "Resource": MLFLOW["tracking_server_arn"]}
    assert role.details["policy"] == {"mlflow": scoped}
    assert ("create", "Kubernetes ServiceAccount", "train-mlflow", "submit") in rows(plan.changes)
    # And a job without mlflow plans none of it
    assert not [r for r in rows(submit({"operator_served": True}).changes) if r[3] == "mlflow_access"]
