"""Bring your own data: every path field takes /data/... or s3://bucket/key (a relative dataset under /data/datasets),
refuses anything else saying the accepted forms with an example, and maps to one place in the pods (/data for the
data bucket, /s3/<bucket>/ for a registered bucket mounted in the workload's namespace)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from functions.domain.errors import InvalidInput
from functions.domain.inference.endpoints import EndpointCreate
from functions.domain.inference.manifests import worker_deployment
from functions.domain.inference.requests import PoolAssign
from functions.domain.storage import data
from functions.domain.storage.data import DataMap, Mount
from functions.domain.training import jobs as training
from functions.domain.training import recipes

TEAM = Mount(storage="team", namespace="default", bucket="team-datasets", prefix="", read_only=False,
             service_account="team-s3")
WHERE = DataMap(data_bucket="podstart-data", mounts=[TEAM])


@pytest.mark.parametrize("value,bucket,key", [
    ("/data/datasets/sft/train.jsonl", None, "datasets/sft/train.jsonl"),
    ("s3://team-datasets/sft/chats/", "team-datasets", "sft/chats/"),
    ("s3://podstart-data/models/x/", "podstart-data", "models/x/"),
])
def test_a_path_is_a_data_path_or_an_s3_uri(value: str, bucket: str | None, key: str) -> None:
    ref = data.parse(value)
    assert (ref.bucket, ref.key) == (bucket, key)


def test_a_relative_dataset_is_read_under_data_datasets_where_the_field_says_so() -> None:
    assert data.parse("sft/train.jsonl", relative_to=data.DATASETS).key == "datasets/sft/train.jsonl"
    with pytest.raises(ValueError, match="not a data path"):
        data.parse("sft/train.jsonl")  # an output or a model folder is never relative


@pytest.mark.parametrize("value", ["/etc/passwd", "/data/../etc", "s3://team-datasets/a/../b", "s3://Team_Data/x",
                                   "s3://team-datasets/", "/data", "s3://team-datasets//x", "http://x/y", "../x"])
def test_anything_else_is_refused_saying_the_accepted_forms_with_an_example(value: str) -> None:
    with pytest.raises(ValueError) as info:
        data.parse(value, relative_to=data.DATASETS if not value.startswith(("/", "s3://")) else None)
    text = str(info.value)
    assert "/data/datasets/sft/train.jsonl" in text or "s3://bucket/key" in text, text


def test_a_recipe_parameter_refusal_names_the_field_and_the_forms() -> None:
    with pytest.raises(InvalidInput) as info:
        recipes.parse_parameters("ms-swift", "1", {"dataset": "/etc/passwd"})
    [err] = info.value.errors
    assert err["loc"] == ["body", "parameters", "dataset"]
    assert "s3://team-datasets/sft/train.jsonl" in err["msg"] and "relative to /data/datasets" in err["msg"]
    with pytest.raises(InvalidInput) as info:
        recipes.parse_parameters("llama-factory", "1", {"model_name_or_path": "not a model"})
    assert "Hugging Face model id" in info.value.errors[0]["msg"]


def test_paths_map_to_one_place_in_the_pods() -> None:
    assert WHERE.resolve("/data/datasets/a.jsonl") == "/data/datasets/a.jsonl"
    assert WHERE.resolve("s3://podstart-data/models/q/") == "/data/models/q/"  # the data bucket is /data
    assert WHERE.resolve("s3://team-datasets/sft/chats/") == "/s3/team-datasets/sft/chats/"
    assert WHERE.resolve("a.jsonl", relative_to=data.DATASETS) == "/data/datasets/a.jsonl"
    with pytest.raises(ValueError, match="not mounted"):
        WHERE.resolve("s3://other-team/x")
    prefixed = Mount(storage="curated", namespace="default", bucket="shared", prefix="curated/",
                     service_account="curated-s3")
    assert prefixed.path == "/s3/shared/curated" and prefixed.covers("curated/x") and not prefixed.covers("raw/x")


def _job(**over: Any) -> training.JobSubmit:
    body = {"name": "sft", "recipe": "llama-factory", "image": "hiyouga/llamafactory:0.9.3",
            "instance_type": "ml.g5.8xlarge", "gpus_per_node": 1,
            "parameters": {"model_name_or_path": "s3://team-datasets/models/base/",
                           "dataset_dir": "s3://team-datasets/sft/chats/", "dataset": "support_chats"},
            "output": "s3://team-datasets/runs/sft"}
    return training.JobSubmit.model_validate({**body, **over})


def test_a_job_on_the_users_bucket_reads_and_writes_there_through_the_mounted_volume() -> None:
    job = _job()
    obj = training.render(job, recipes.parse_parameters(job.recipe, "1", job.parameters), WHERE)
    pod = obj["spec"]["replicaSpecs"][0]["template"]["spec"]
    cmd = pod["containers"][0]["command"]

    assert cmd[cmd.index("--model_name_or_path") + 1] == "/s3/team-datasets/models/base/"
    assert cmd[cmd.index("--dataset_dir") + 1] == "/s3/team-datasets/sft/chats"
    assert cmd[cmd.index("--output_dir") + 1] == "/s3/team-datasets/runs/sft/checkpoints/"
    assert cmd[cmd.index("--logging_dir") + 1] == "/s3/team-datasets/runs/sft/"
    assert {"name": "s3-team", "persistentVolumeClaim": {"claimName": "team", "readOnly": False}} in pod["volumes"]
    assert {"name": "s3-team", "mountPath": "/s3/team-datasets"} in pod["containers"][0]["volumeMounts"]
    # Mountpoint mounts a registered volume with the pod's credentials: the pods run as the volume's ServiceAccount
    assert pod["serviceAccountName"] == "team-s3"
    assert job.output == "s3://team-datasets/runs/sft/"  # a folder
    assert recipes.data_paths("sft", job.output).checkpoints == "s3://team-datasets/runs/sft/checkpoints/"


def test_a_job_that_reports_to_mlflow_runs_as_its_own_account_whatever_it_mounts() -> None:
    arn = "arn:aws:sagemaker:us-west-2:123456789012:mlflow-tracking-server/team"
    job = _job(mlflow={"tracking_server_arn": arn})
    obj = training.render(job, recipes.parse_parameters(job.recipe, "1", job.parameters), WHERE)
    assert obj["spec"]["replicaSpecs"][0]["template"]["spec"]["serviceAccountName"] == "sft-mlflow"


def test_a_job_naming_an_s3_uri_does_not_render_without_the_volume_that_mounts_it() -> None:
    job = _job()
    with pytest.raises(ValueError, match="not mounted"):
        training.render(job, recipes.parse_parameters(job.recipe, "1", job.parameters),
                        DataMap(data_bucket="podstart-data"))


def test_the_default_job_stays_on_the_data_contract() -> None:
    job = training.JobSubmit.model_validate({"name": "demo", "recipe": "ms-swift", "image": "x/y:1",
                                             "instance_type": "ml.g5.8xlarge"})
    obj = training.render(job, recipes.parse_parameters("ms-swift", "1", {}))
    cmd = obj["spec"]["replicaSpecs"][0]["template"]["spec"]["containers"][0]["command"]
    assert cmd[cmd.index("--dataset") + 1] == "/data/datasets/sft/train.jsonl"
    assert cmd[cmd.index("--output_dir") + 1] == "/data/checkpoints/demo/"
    assert "serviceAccountName" not in obj["spec"]["replicaSpecs"][0]["template"]["spec"]


def test_an_endpoint_serves_a_model_folder_from_the_users_bucket() -> None:
    body = EndpointCreate.model_validate({
        "name": "support", "mode": "self-managed", "engine": "vllm", "image": "vllm/vllm-openai:v0.10.1",
        "model": {"source": "s3", "uri": "s3://team-datasets/models/support-qwen/"},
        "instance_type": "ml.g5.8xlarge", "gpus": 1})
    dep = worker_deployment(body.normalized(), WHERE)
    pod = dep["spec"]["template"]["spec"]
    cmd = pod["containers"][0]["command"]

    assert "/s3/team-datasets/models/support-qwen/" in cmd and pod["serviceAccountName"] == "team-s3"
    assert body.model.label == "models/support-qwen"
    with pytest.raises(ValidationError, match="a model folder under /data"):
        EndpointCreate.model_validate({**body.model_dump(), "model": {"source": "s3", "uri": "/etc/models/"}})


def test_pool_workers_load_only_the_data_bucket() -> None:
    with pytest.raises(ValidationError, match="mount PodStart's data bucket only"):
        PoolAssign.model_validate({"endpoint": "e", "workers": 1,
                                   "model": {"source": "s3", "uri": "s3://team-datasets/models/x/"}})
