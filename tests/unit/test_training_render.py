"""Every recipe renders an object the upstream schema accepts; the submit request refuses what AWS
or safety refuses, with the reason (and the numbers for GPUs)."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from pydantic import ValidationError

from functions.domain.errors import InvalidInput
from functions.domain.training import jobs as training
from functions.domain.training import recipes
from tests.reference import crd_schema, json_schema

IMAGE = "123456789012.dkr.ecr.us-west-2.amazonaws.com/train:2.5.1"


def _hp_schema() -> dict[str, Any]:
    return json_schema("hyperpodpytorchjob_spec.schema.json")


def _rayjob_schema() -> dict[str, Any]:
    return crd_schema("kuberay_v1.7.0_rayjobs.yaml")


def job(**over: Any) -> training.JobSubmit:
    base: dict[str, Any] = {"name": "llama3-sft", "recipe": "llama-factory", "image": IMAGE,
                            "instance_type": "ml.p5.48xlarge", "nodes": 2, "gpus_per_node": 8,
                            "secrets": ["hf-token"], "env": {"NCCL_DEBUG": "INFO"},
                            "log_monitoring": [{"name": "hang", "log_pattern": r".*step (\d+).*",
                                                "expected_recurring_frequency_s": 600}]}
    return training.JobSubmit(**{**base, **over})


def rendered(j: training.JobSubmit) -> dict[str, Any]:
    return training.render(j, recipes.parse_parameters(j.recipe, j.recipe_version, j.parameters))


@pytest.mark.parametrize("recipe", ["pytorch", "llama-factory", "ms-swift"])
def test_pytorch_kind_recipes_validate_against_the_derived_hyperpodpytorchjob_schema(recipe: str) -> None:
    obj = rendered(job(recipe=recipe))
    assert (obj["apiVersion"], obj["kind"]) == ("sagemaker.amazonaws.com/v1", "HyperPodPyTorchJob")
    jsonschema.Draft202012Validator(_hp_schema()).validate(obj["spec"])
    assert obj["spec"]["runPolicy"]["jobMaxRetryCount"] == 3
    assert obj["spec"]["runPolicy"]["logMonitoringConfiguration"][0]["expectedRecurringFrequencyInSeconds"] == 600


def test_elastic_pytorch_job_validates_and_carries_its_bounds() -> None:
    obj = rendered(job(recipe="pytorch", elastic={"min_nodes": 1, "max_nodes": 4}))
    jsonschema.Draft202012Validator(_hp_schema()).validate(obj["spec"])
    assert obj["spec"]["elasticPolicy"] == {"minReplicas": 1, "maxReplicas": 4}


def test_verl_renders_a_rayjob_the_kuberay_v1_7_crd_accepts() -> None:
    obj = rendered(job(recipe="verl", name="grpo"))
    assert (obj["apiVersion"], obj["kind"]) == ("ray.io/v1", "RayJob")
    jsonschema.Draft7Validator(_rayjob_schema()).validate(obj)
    workers = obj["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]
    assert workers["replicas"] == 2
    assert workers["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == 8
    assert "trainer.default_local_dir=/data/checkpoints/grpo/" in obj["spec"]["entrypoint"]


@pytest.mark.parametrize("recipe", sorted({n for n, _ in recipes.RECIPES}))  # stable order for xdist
def test_every_recipe_mounts_the_data_pvc_at_data_and_writes_where_the_contract_says(recipe: str) -> None:
    obj = rendered(job(recipe=recipe, name="j1"))
    text = json.dumps(obj)
    assert '"claimName": "podstart-data"' in text and '"mountPath": "/data"' in text
    assert "/data/checkpoints/j1/" in text


def test_a_secret_is_referenced_by_name_never_as_a_literal() -> None:
    obj = rendered(job(recipe="pytorch"))
    c = obj["spec"]["replicaSpecs"][0]["template"]["spec"]["containers"][0]
    assert c["envFrom"] == [{"secretRef": {"name": "hf-token"}}]
    with pytest.raises(ValidationError, match="looks like a credential"):
        job(env={"HF_TOKEN": "hf_abc"})


@pytest.mark.parametrize("image,ok", [
    (IMAGE, True), ("repo/app@sha256:" + "a" * 64, True), ("nginx:1.27", True),
    ("repo/app:latest", False), ("repo/app", False), ("Repo/App:1", False), ("repo/app:1 ; rm", False),
])
def test_image_must_be_pinned_by_tag_or_digest(image: str, ok: bool) -> None:
    if ok:
        assert job(image=image).image == image
    else:
        with pytest.raises(ValidationError, match="image"):
            job(image=image)


def test_recipe_parameters_out_of_range_name_the_parameter() -> None:
    with pytest.raises(InvalidInput) as err:
        recipes.parse_parameters("llama-factory", "1", {"learning_rate": 5, "lora_rank": "x"})
    locs = {tuple(e["loc"]) for e in err.value.errors}
    assert ("body", "parameters", "learning_rate") in locs and ("body", "parameters", "lora_rank") in locs
    with pytest.raises(InvalidInput, match=r"'\.\.' is not allowed"):
        recipes.parse_parameters("pytorch", "1", {"script": "code/../../etc/passwd"})
    with pytest.raises(InvalidInput, match="no recipe"):
        recipes.parse_parameters("nope", "1", {})


def test_recipes_list_typed_parameters_with_defaults_and_bounds() -> None:
    items = {r.name: r for r in recipes.list_recipes().items}
    assert set(items) == {"pytorch", "llama-factory", "ms-swift", "verl"}
    lr = items["llama-factory"].parameters["properties"]["learning_rate"]
    assert lr["default"] == 1e-4 and lr["exclusiveMinimum"] == 0 and lr["description"]
    assert items["verl"].kind == "ray" and items["verl"].data.checkpoints == "/data/checkpoints/{job}/"


def test_elastic_is_refused_on_spot_with_tiered_checkpointing_and_for_ray() -> None:
    j = job(recipe="pytorch", elastic={"min_nodes": 1, "max_nodes": 2})
    assert "Spot" in (training.elastic_refusal(j, {"spot"}, False) or "")
    assert "tiered checkpointing" in (training.elastic_refusal(j, {"on-demand"}, True) or "")
    assert "checkpointless" in (training.elastic_refusal(j, {"on-demand"}, False, checkpointless=True) or "")
    assert training.elastic_refusal(j, {"on-demand"}, False) is None
    assert "RayJob" in (training.elastic_refusal(job(recipe="verl", elastic={"min_nodes": 1, "max_nodes": 2}),
                                                 set(), False) or "")


def _g(instances: int, free: int | None = None, autoscaling_max: int | None = None) -> training.GroupCapacity:
    return training.GroupCapacity(name="gpu", instance_type="ml.p5.48xlarge", instances=instances,
                                  gpus_per_instance=8, free_gpus=free, autoscaling_max=autoscaling_max)


def test_gpu_arithmetic_refuses_with_the_numbers() -> None:
    j = job(recipe="pytorch", nodes=2, gpus_per_node=8)
    assert training.gpu_refusal(j, [_g(2)]) is None
    msg = training.gpu_refusal(j, [_g(1)])
    assert msg == ("needs 2 x 8 = 16 GPUs on ml.p5.48xlarge; the cluster has 1 instance x 8 = 8 GPUs in gpu, 8 free")
    assert (training.gpu_refusal(j, [_g(2, free=8)]) or "").endswith("2 instances x 8 = 16 GPUs in gpu, 8 free")
    assert training.gpu_refusal(j, [_g(1, autoscaling_max=2)]) is None
    assert "has 8 GPUs per instance" in (training.gpu_refusal(job(gpus_per_node=16), [_g(4)]) or "")
    assert "no ml.p5.48xlarge" in (training.gpu_refusal(j, []) or "")


def test_cpu_jobs_count_nodes() -> None:
    j = job(recipe="pytorch", instance_type="ml.c5.large", nodes=3, gpus_per_node=0)
    g = training.GroupCapacity(name="cpu", instance_type="ml.c5.large", instances=2, gpus_per_instance=0)
    assert training.gpu_refusal(j, [g]) == "needs 3 ml.c5.large nodes; the cluster has 2 in cpu"


def test_budget_and_status_come_from_the_operator_status() -> None:
    obj = rendered(job(recipe="pytorch"))
    obj["status"] = {"restartCount": 2, "conditions": [{"type": "Running", "status": "True"}]}
    s = training.summary("pytorch", obj)
    assert (s.status, s.budget.used, s.budget.max, s.budget.exhausted) == ("Running", 2, 3, False)
    obj["status"] = {"restartCount": 3, "conditions": [{"type": "Failed", "status": "True"}]}
    assert training.summary("pytorch", obj).budget.exhausted


def test_log_bounds_keep_the_newest_whole_lines() -> None:
    text = "".join(f"line {i}\n" for i in range(1000))
    out = training.bound_lines(text, 200, 64 * 1024, False)
    assert out.lines[0] == "line 800" and out.lines[-1] == "line 999" and out.truncated
    out = training.bound_lines(text, 1000, 100, False)
    assert out.lines[-1] == "line 999" and sum(len(x) + 1 for x in out.lines) <= 100 and out.truncated


def test_list_recipes_tool_shows_every_recipe_with_bounds_within_the_mcp_budget() -> None:
    from mcp_gateway import views

    data = recipes.list_recipes().model_dump(mode="json")
    out = views.compact("list_recipes", data)
    assert views.result_bytes(out) <= views.BUDGET
    rows = {r["name"]: r for r in out["items"]}
    assert set(rows) == {"pytorch", "llama-factory", "ms-swift", "verl"} and "more" not in out
    assert rows["llama-factory"]["parameters"]["lora_rank"] == "integer=8 [1..512]"
    assert rows["verl"]["parameters"]["algorithm"] == 'grpo|ppo="grpo"'


def test_get_job_logs_tool_keeps_the_newest_lines_within_the_mcp_budget() -> None:
    from mcp_gateway import views

    data = {"pod": "p-0", "container": None, "truncated": False,
            "lines": [f"2026-12-04T05:00:00Z [rank 0] step {i} loss 1.0 throughput 40.0 samples/s" for i in range(900)]}
    out = views.compact("get_job_logs", data)
    assert views.result_bytes(out) <= views.BUDGET and out["truncated"]
    assert out["lines"][-1].endswith("step 899 loss 1.0 throughput 40.0 samples/s") and len(out["lines"]) > 10
