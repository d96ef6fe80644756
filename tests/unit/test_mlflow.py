"""A job's MLflow reporting: the ARN is checked by the request model, the job's role names exactly its server,
the env and ServiceAccount are rendered, the frameworks are told to report, and a server that cannot take runs
is refused with its status."""

from __future__ import annotations

import json

import kubernetes_validate
import pytest
from pydantic import ValidationError

from functions.domain.training import jobs as training
from functions.domain.training import mlflow as mlf
from functions.domain.training import recipes

ARN = "arn:aws:sagemaker:us-west-2:123456789012:mlflow-tracking-server/team-a"
IMAGE = "123456789012.dkr.ecr.us-west-2.amazonaws.com/train:2.5.1"


def _job(recipe: str = "llama-factory", **over: object) -> training.JobSubmit:
    return training.JobSubmit(**{"name": "sft", "recipe": recipe, "image": IMAGE, "instance_type": "ml.p5.48xlarge",
                                 "mlflow": {"tracking_server_arn": ARN}, **over})


@pytest.mark.parametrize("arn", ["arn:aws:s3:::bucket", "team-a", ARN + "/x", ARN.replace("123456789012", "12")])
def test_a_bad_arn_is_refused_naming_the_field(arn: str) -> None:
    with pytest.raises(ValidationError) as err:
        _job(mlflow={"tracking_server_arn": arn})
    assert err.value.errors()[0]["loc"] == ("mlflow", "tracking_server_arn")


def test_the_role_policy_names_exactly_the_server_and_no_wildcard_resource() -> None:
    doc = json.loads(mlf.policy(ARN))
    assert [(s["Action"], s["Resource"]) for s in doc["Statement"]] == [("sagemaker-mlflow:*", [ARN])]
    name = mlf.role_name("c" * 40, "us-west-2", "ns", "j" * 52)
    assert len(name) <= 64 and name.startswith("podstart-mlflow-")
    assert mlf.role_name("c", "us-west-2", "a", "sft") != mlf.role_name("c", "us-west-2", "b", "sft")


@pytest.mark.parametrize("recipe", ["pytorch", "llama-factory", "ms-swift", "verl"])
def test_the_job_gets_the_env_its_service_account_and_reports(recipe: str) -> None:
    job = _job(recipe, mlflow={"tracking_server_arn": ARN, "experiment": "exp-1"})
    obj = training.render(job, recipes.parse_parameters(recipe, "1", {}))
    text = json.dumps(obj)
    assert '"MLFLOW_TRACKING_URI", "value": "' + ARN in text and '"value": "exp-1"' in text
    assert '"serviceAccountName": "sft-mlflow"' in text
    assert obj["metadata"]["annotations"][mlf.ANNOTATION_SERVER] == ARN
    if recipe in ("llama-factory", "ms-swift"):
        cmd = obj["spec"]["replicaSpecs"][0]["template"]["spec"]["containers"][0]["command"]
        assert cmd[cmd.index("--report_to") + 1] == "mlflow"
    if recipe == "verl":
        assert "trainer.logger=[console,mlflow]" in obj["spec"]["entrypoint"]
        assert "trainer.project_name=exp-1" in obj["spec"]["entrypoint"]
    plain = training.render(_job(recipe, mlflow=None), recipes.parse_parameters(recipe, "1", {}))
    assert "MLFLOW" not in json.dumps(plain) and "serviceAccountName" not in json.dumps(plain)


def test_the_service_account_validates_and_comes_before_the_job() -> None:
    job = _job()
    objs = training.submit_objects(job, recipes.parse_parameters(job.recipe, "1", {}),
                                   data_volume_exists=True, bucket="b", region="us-west-2")
    assert [o["kind"] for o in objs] == ["ServiceAccount", "HyperPodPyTorchJob"]
    kubernetes_validate.validate(objs[0], "1.33", strict=True)


def test_env_cannot_set_what_mlflow_sets() -> None:
    with pytest.raises(ValidationError) as err:
        _job(env={"MLFLOW_EXPERIMENT_NAME": "x"})
    assert err.value.errors()[0]["loc"] == ("env",)
    assert _job(mlflow=None, env={"MLFLOW_TRACKING_URI": "http://mlflow:5000"}).env  # a self-hosted server: env


@pytest.mark.parametrize(("status", "active", "usable"), [("Created", "Active", True), ("Started", "Active", True),
                                                          ("Stopped", "Inactive", False),
                                                          ("Creating", "Inactive", False)])
def test_only_a_started_active_server_takes_runs(status: str, active: str, usable: bool) -> None:
    desc = {"TrackingServerName": "team-a", "TrackingServerArn": ARN, "TrackingServerStatus": status,
            "IsActive": active}
    assert mlf.server_view(desc).usable is usable
    assert (mlf.refusal(desc) is None) is usable
    if not usable:
        assert status in str(mlf.refusal(desc))


def test_the_mcp_tool_lists_servers_within_its_tools_list_budget() -> None:
    from functions.api.handler import openapi_document
    from mcp_gateway.catalog import build_catalog

    [spec] = [s for s in build_catalog(openapi_document()) if s.name == "list_mlflow_servers"]
    entry = {"name": spec.name, "description": spec.description, "inputSchema": spec.input_schema,
             "annotations": spec.annotations}
    assert spec.read_only and "region" in spec.input_schema["required"]
    assert len(json.dumps(entry)) <= 500
