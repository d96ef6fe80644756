"""The tenancy rules as pure functions: namespaces, buckets, credentials and their redaction, engine flags by
meaning, model ids by grammar, and who may start what."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from functions.domain import identifiers, redaction, tenancy
from functions.domain.errors import Forbidden
from functions.domain.inference import engine_args
from functions.domain.inference.endpoints import EndpointCreate
from functions.domain.inference.requests import ModelDownload
from functions.domain.kinds import check_role, required_role
from functions.domain.principal import Role
from functions.domain.training.jobs import JobSubmit

# -- namespaces -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["kube-system", "kube-public", "aws-hyperpod", "amazon-cloudwatch", "kuberay-system",
                                  "keda", "karpenter", "cert-manager", "hyperpod-inference-system", "observability",
                                  "eks-anything", "istio-system"])
def test_system_namespaces_are_refused_by_name_in_every_request_model(name: str) -> None:
    assert tenancy.system_namespace(name)
    with pytest.raises(ValidationError) as err:
        JobSubmit.model_validate({"name": "j", "namespace": name, "recipe": "pytorch", "image": "x/y:1",
                                  "instance_type": "ml.g5.xlarge"})
    assert [e["loc"] for e in err.value.errors()] == [("namespace",)]


@pytest.mark.parametrize("obj,managed", [
    ({"metadata": {"name": "default"}}, True),
    ({"metadata": {"name": "team-a", "labels": {"app.kubernetes.io/managed-by": "podstart"}}}, True),
    ({"metadata": {"name": "team-b"}}, False),  # exists, but PodStart did not create it
    ({"metadata": {"name": "kuberay-system", "labels": {"app.kubernetes.io/managed-by": "podstart"}}}, False),
    (None, False),
])
def test_a_namespace_is_podstarts_when_it_made_it_and_it_is_not_a_system_one(obj: dict | None, managed: bool) -> None:
    assert tenancy.is_managed(obj) is managed
    name = (obj or {"metadata": {"name": "gone"}})["metadata"]["name"]
    assert (tenancy.unmanaged_reason(name, obj) is None) is managed


# -- buckets ----------------------------------------------------------------------------------------

REGS = tenancy.registrations("podstart-data", tenancy.parse_registrations("team-a-data, shared/curated/"))


def test_operators_mount_the_data_bucket_admins_also_the_registered_ones_nobody_another() -> None:
    assert tenancy.bucket_refusal(REGS, "podstart-data", "anything/", is_admin=False) is None
    assert tenancy.bucket_refusal(REGS, "team-a-data", "", is_admin=False)[0] == 403  # type: ignore[index]
    assert tenancy.bucket_refusal(REGS, "team-a-data", "", is_admin=True) is None
    status, why = tenancy.bucket_refusal(REGS, "other-teams-bucket", "", is_admin=True)  # type: ignore[misc]
    assert status == 422 and "not a bucket PodStart may read" in why and "team-a-data" in why
    # a registration limited to a prefix covers only keys under it
    assert tenancy.bucket_refusal(REGS, "shared", "curated/sets/", is_admin=True) is None
    status, why = tenancy.bucket_refusal(REGS, "shared", "raw/", is_admin=True)  # type: ignore[misc]
    assert status == 422 and "curated/" in why


# -- credentials ------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", ["hf_abcdefghijklmnopqrstuvwxyz0123", "sk-proj-abcdefghijklmnopqrstuvwxyz",
                                   "ghp_0123456789abcdefghijklmnopqrstuvwxyz", "AKIAIOSFODNN7EXAMPLE",
                                   "xoxb-1234567890-abcdefghij", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                                   "Bearer Xk9fP2mQ8vR4tL7wZ3nB6cJ1hG5yD0sA"])
def test_credentials_are_found_by_prefix_or_by_entropy(value: str) -> None:
    assert redaction.credential(value)


@pytest.mark.parametrize("value", ["meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-Coder-32B-Instruct-GPTQ-Int8",
                                   "vllm/vllm-openai:v0.10.1", "/data/models/Qwen/Qwen3-0.6B/main/",
                                   "sha256:" + "ab" * 32, "0123456789abcdef0123456789abcdef01234567",
                                   "arn:aws:sagemaker:us-west-2:123456789012:mlflow-tracking-server/demo",
                                   "sagemaker.amazonaws.com/instance-group-name", "hello world, a sentence"])
def test_names_paths_digests_and_arns_are_not_credentials(value: str) -> None:
    assert redaction.credential(value) is None


def test_the_redaction_masks_secret_fields_by_schema_credentials_by_value_and_secret_keys() -> None:
    body = {"name": "hf", "data": {"token": "plain-short"}, "env": {"X": "hf_abcdefghijklmnopqrstuvwxyz0123"},
            "password": "hunter2", "token_secret": "hf-token"}
    out = redaction.redact(body, frozenset({("data",)}))
    assert out == {"name": "hf", "data": {"token": "***"}, "env": {"X": "***"}, "password": "***",
                   "token_secret": "hf-token"}  # a Secret's *name* stays


def test_write_only_paths_come_from_the_json_schema() -> None:
    from functions.domain.training.jobs import SecretCreate

    assert redaction.write_only_paths(SecretCreate.model_json_schema()) == {("data",)}


# -- engine flags by meaning -------------------------------------------------------------------------

@pytest.mark.parametrize("args,owned", [
    (["--served_model_name=x"], "--served-model-name"), (["--download_dir", "/x"], "--download-dir"),
    (["--served-model", "x"], "--served-model-name"), (["--port=1"], "--port"), (["--api_key", "k"], "--api-key"),
    (["--host", "0.0.0.0"], "--host"), (["--model-path=/x"], "--model-path"),
])
def test_an_owned_flag_is_refused_whatever_its_spelling(args: list[str], owned: str) -> None:
    [(i, why)] = engine_args.refusals(args)
    assert i == 0 and owned in why


def test_flags_podstart_reads_are_read_in_any_spelling_and_once() -> None:
    base = dict(name="e", mode="self-managed", engine="vllm", image="vllm/vllm-openai:v0.10.1",
                instance_type="ml.g5.xlarge", model={"source": "huggingface", "model_id": "Qwen/Qwen3-0.6B"})
    with pytest.raises(ValidationError, match="tensor parallel 2"):  # underscores read as dashes: 2 GPUs asked
        EndpointCreate.model_validate({**base, "gpus": 1, "engine_args": ["--tensor_parallel_size=2"]})
    with pytest.raises(ValidationError, match="give it once"):
        EndpointCreate.model_validate({**base, "gpus": 2, "engine_args": ["-tp", "2", "--tensor-parallel-size", "2"]})
    assert EndpointCreate.model_validate({**base, "gpus": 2, "engine_args": ["--max_model_len", "4096", "-tp", "2"]})


# -- model ids by grammar ------------------------------------------------------------------------------

@pytest.mark.parametrize("model_id,revision,field", [
    ("../..", "main", "model_id"), ("org/..", "main", "model_id"), ("org/a--b", "main", "model_id"),
    ("org/name.git", "main", "model_id"), ("just-a-name", "main", "model_id"), ("a/b/c", "main", "model_id"),
    ("org/name", "..", "revision"), ("org/name", "a..b", "revision"), ("org/name", ".hidden", "revision"),
    ("org/name", "x.lock", "revision"), ("org/name", "refs/pr/1", "revision"),
])
def test_model_ids_and_revisions_are_parsed_by_their_grammar(model_id: str, revision: str, field: str) -> None:
    with pytest.raises(ValidationError) as err:
        ModelDownload.model_validate({"model_id": model_id, "revision": revision})
    assert field in {e["loc"][0] for e in err.value.errors()}


def test_good_ids_pass() -> None:
    for mid, rev in (("Qwen/Qwen3-0.6B", "main"), ("meta-llama/Llama-3.1-8B", "v1.0"), ("a_b/c.d", "0" * 40)):
        assert ModelDownload.model_validate({"model_id": mid, "revision": rev}).model_id == mid


@pytest.mark.parametrize("uri,ok", [("s3://my-bucket/datasets/train.jsonl", True), ("s3://my-bucket/a/../b", False),
                                    ("s3://My_Bucket/x", False), ("s3://b/x", False), ("https://x/y", False),
                                    ("s3://my-bucket//x", False), ("s3://my-bucket/", True)])
def test_s3_uris_by_grammar(uri: str, ok: bool) -> None:
    if ok:
        assert identifiers.s3_uri(uri)[0] == "my-bucket"
    else:
        with pytest.raises(ValueError, match="s3://bucket/key"):
            identifiers.s3_uri(uri)


# -- roles by what the operation does ------------------------------------------------------------------

def test_destroying_data_and_reaching_the_internet_need_an_admin_on_retry_too() -> None:
    assert required_role("storage.remove", {"kind": "s3"}) is Role.operator
    assert required_role("storage.remove", {"kind": "fsx_lustre"}) is Role.admin
    assert required_role("storage.add", {"kind": "s3", "registered": True}) is Role.admin
    assert required_role("endpoint.deploy", {"endpoint": {"public": True}}) is Role.admin
    assert required_role("namespace.create") is required_role("namespace.delete") is Role.admin
    with pytest.raises(Forbidden, match="FSx file system"):
        check_role("operator", "storage.remove", {"kind": "fsx_lustre"})
    check_role("admin", "storage.remove", {"kind": "fsx_lustre"})
