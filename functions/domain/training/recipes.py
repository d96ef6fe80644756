"""Training recipes: versioned templates with typed, described parameters, all on one data contract.

The data contract (functions/domain/storage/data.py): the cluster's shared S3 bucket is mounted through the Mountpoint
PVC at `/data` in every pod; a bucket an admin registered and mounted in the job's namespace is at `/s3/<bucket>/` and
its objects are named by S3 URI (`s3://bucket/key`). Datasets default to `/data/datasets/...` (a relative path is read
there); a job writes its outputs to `/data/jobs/{job}/` and its checkpoints to `/data/checkpoints/{job}/`, or under the
`output` it names (`<output>` and `<output>checkpoints/`). The same bucket is what a developer syncs with `aws s3 sync`,
so what a user puts there is what pods see. Every path parameter says its accepted forms (`DATA_FIELDS`) and the dry run
checks each input exists (functions/logic/storage/data.py).

A recipe renders a container command (an argument list, never a shell string built from user input:
every value is validated by a strict pattern first and quoted where Ray needs a single string).
"""

from __future__ import annotations

import re
import shlex
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from functions.domain.errors import InvalidInput, NotFound
from functions.domain.storage.api import DataMap, data

DATA_MOUNT = data.DATA_MOUNT
DATASETS_DIR = f"{DATA_MOUNT}/datasets"

# A relative path inside the image (a script): no `..`, no leading slash, no shell metacharacters.
REL_PATH = r"^[A-Za-z0-9_][A-Za-z0-9_./=-]{0,254}$"
# The characters a data path may hold (each form is then parsed by data.parse: /data/..., s3://..., relative).
DATA_PATH = r"^[A-Za-z0-9_/:][A-Za-z0-9_./=:-]{0,1023}$"
ARG = r"^[A-Za-z0-9_@%+=:,./-]{1,256}$"


class DataPaths(BaseModel):
    """Where a job's data lives: the shared bucket's mount, the default datasets folder, and where the job writes
    (a /data path, the same key in the bucket, or the S3 URI the job named as its output)."""

    mount: str = DATA_MOUNT
    datasets: str = DATASETS_DIR + "/"
    outputs: str
    checkpoints: str


def data_paths(job: str, output: str | None = None) -> DataPaths:
    if output:
        base = output if output.endswith("/") else output + "/"
        return DataPaths(outputs=base, checkpoints=f"{base}checkpoints/")
    return DataPaths(outputs=f"{DATA_MOUNT}/jobs/{job}/", checkpoints=f"{DATA_MOUNT}/checkpoints/{job}/")


def _data_path(relative: bool) -> Any:
    def check(v: str | None) -> str | None:
        return None if v is None else data.check(v, relative_to=data.DATASETS if relative else None)
    return check


def _model_ref(v: str) -> str:
    return data.check_model(v)


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # The parameters that name data (data.Kind: a file, a folder, a model folder or Hugging Face id), relative ones
    # read under /data/datasets where the field says so (RELATIVE_FIELDS).
    DATA_FIELDS: ClassVar[dict[str, data.Kind]] = {}

    @field_validator("*")
    @classmethod
    def _no_parent(cls, v: Any) -> Any:
        for s in v if isinstance(v, list) else [v]:
            if isinstance(s, str) and ".." in s:
                raise ValueError("'..' is not allowed: paths stay inside the data contract")
        return v


class PyTorchParams(_Params):
    script: str = Field("train.py", max_length=255,
                        description="Training script: a path inside the image, or under /data (e.g. code/train.py "
                                    "is /data/code/train.py when it does not exist in the image)")
    args: list[str] = Field(default_factory=list, max_length=64,
                            description="Arguments passed to the script, one item each (letters, digits, _@%+=:,./-)")
    dataset: str | None = Field(None, max_length=1024,
                                description="Dataset folder: /data/..., s3://bucket/prefix/, or relative to "
                                            "/data/datasets (passed as --data-dir)")
    epochs: int = Field(1, ge=1, le=1000, description="Passed as --epochs")

    DATA_FIELDS: ClassVar[dict[str, data.Kind]] = {"dataset": "dir"}

    @field_validator("script")
    @classmethod
    def _script(cls, v: str) -> str:
        if not re.match(REL_PATH, v) or any(p in ("", ".", "..") for p in v.split("/")):
            raise ValueError("a script is a relative path: inside the image (e.g. train.py or scripts/train.py), or "
                             "under /data when the image has none (code/train.py is /data/code/train.py)")
        return v
    _dataset = field_validator("dataset")(classmethod(lambda cls, v: _data_path(True)(v)))


class LlamaFactoryParams(_Params):
    model_name_or_path: str = Field("Qwen/Qwen2.5-0.5B-Instruct", max_length=1024,
                                    description="Hugging Face model id, or a model folder: /data/... or "
                                                "s3://bucket/prefix/")
    dataset: str = Field("alpaca_en_demo", pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.,-]{0,127}$",
                         description="Dataset name(s, comma-separated) defined in dataset_dir's dataset_info.json")
    dataset_dir: str = Field(DATASETS_DIR, max_length=1024,
                             description="Folder holding dataset_info.json and the files it names: /data/... or "
                                         "s3://bucket/prefix/")
    template: str = Field("qwen", pattern=r"^[a-z0-9_]{1,32}$", description="Chat template name")
    stage: Literal["sft", "pt", "dpo"] = Field("sft", description="Training stage")
    finetuning_type: Literal["lora", "full", "freeze"] = Field("lora", description="LoRA, full or freeze tuning")
    lora_rank: int = Field(8, ge=1, le=512, description="LoRA rank (lora only)")
    learning_rate: float = Field(1e-4, gt=0, le=1, description="Peak learning rate")
    num_train_epochs: float = Field(3.0, gt=0, le=100, description="Epochs over the dataset")
    per_device_train_batch_size: int = Field(1, ge=1, le=1024, description="Batch size per GPU")
    cutoff_len: int = Field(2048, ge=16, le=131072, description="Max tokens per sample")

    DATA_FIELDS: ClassVar[dict[str, data.Kind]] = {"model_name_or_path": "model", "dataset_dir": "dir"}
    _model = field_validator("model_name_or_path")(classmethod(lambda cls, v: _model_ref(v)))
    _dir = field_validator("dataset_dir")(classmethod(lambda cls, v: _data_path(False)(v)))


class MsSwiftParams(_Params):
    model: str = Field("Qwen/Qwen2.5-7B-Instruct", max_length=1024,
                       description="Hugging Face/ModelScope model id, or a model folder: /data/... or s3://...")
    dataset: str = Field("sft/train.jsonl", max_length=1024,
                         description="Dataset file: /data/..., s3://bucket/key, or relative to /data/datasets")
    train_type: Literal["lora", "full"] = Field("lora", description="LoRA or full fine-tuning")
    learning_rate: float = Field(1e-4, gt=0, le=1, description="Peak learning rate")
    num_train_epochs: float = Field(1.0, gt=0, le=100, description="Epochs over the dataset")
    per_device_train_batch_size: int = Field(1, ge=1, le=1024, description="Batch size per GPU")
    max_length: int = Field(2048, ge=16, le=131072, description="Max tokens per sample")

    DATA_FIELDS: ClassVar[dict[str, data.Kind]] = {"model": "model", "dataset": "file"}
    _model = field_validator("model")(classmethod(lambda cls, v: _model_ref(v)))
    _dataset = field_validator("dataset")(classmethod(lambda cls, v: _data_path(True)(v)))


class VerlParams(_Params):
    algorithm: Literal["grpo", "ppo"] = Field("grpo", description="Advantage estimator")
    model: str = Field("Qwen/Qwen2.5-0.5B-Instruct", max_length=1024,
                       description="Actor model: Hugging Face id, or a model folder: /data/... or s3://...")
    train_files: str = Field("gsm8k/train.parquet", max_length=1024,
                             description="Parquet file: /data/..., s3://bucket/key, or relative to /data/datasets")
    val_files: str = Field("gsm8k/test.parquet", max_length=1024,
                           description="Parquet file: /data/..., s3://bucket/key, or relative to /data/datasets")
    rollout_n: int = Field(5, ge=1, le=64, description="Responses sampled per prompt")
    total_epochs: int = Field(15, ge=1, le=1000, description="Training epochs")
    learning_rate: float = Field(1e-6, gt=0, le=1, description="Actor learning rate")
    train_batch_size: int = Field(256, ge=1, le=65536, description="Prompts per step")

    DATA_FIELDS: ClassVar[dict[str, data.Kind]] = {"model": "model", "train_files": "file", "val_files": "file"}
    _model = field_validator("model")(classmethod(lambda cls, v: _model_ref(v)))
    _files = field_validator("train_files", "val_files")(classmethod(lambda cls, v: _data_path(True)(v)))


JobKind = Literal["pytorch", "ray"]


class RecipeOut(BaseModel):
    """One recipe as GET /v1/recipes lists it: its parameters as a JSON Schema (defaults, bounds, descriptions)."""

    name: str
    version: str
    title: str
    description: str
    kind: JobKind
    example_image: str
    parameters: dict[str, Any]
    data: DataPaths = Field(description="The data contract, for a job named {job}")


class RecipeList(BaseModel):
    items: list[RecipeOut]


class _Recipe(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    name: str
    version: str
    title: str
    description: str
    kind: JobKind
    example_image: str
    params: type[_Params]


RECIPES: dict[tuple[str, str], _Recipe] = {(r.name, r.version): r for r in (
    _Recipe(name="pytorch", version="1", title="PyTorch (torchrun script)", kind="pytorch",
            description="Your script under the HyperPod launcher (hyperpodrun, torchrun-compatible): one process "
                        "per GPU on every node; --data-dir, --output-dir and --checkpoint-dir follow the data contract",
            example_image="public.ecr.aws/pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime", params=PyTorchParams),
    _Recipe(name="llama-factory", version="1", title="LLaMA-Factory (SFT / LoRA)", kind="pytorch",
            description="llamafactory-cli train with a typed config: datasets from /data/datasets, adapters and "
                        "checkpoints to /data/checkpoints/{job}/",
            example_image="hiyouga/llamafactory:0.9.3", params=LlamaFactoryParams),
    _Recipe(name="ms-swift", version="1", title="MS-Swift (SFT)", kind="pytorch",
            description="swift sft with LoRA or full tuning: dataset from /data/datasets, output to "
                        "/data/checkpoints/{job}/",
            example_image="modelscope-registry.us-west-1.cr.aliyuncs.com/modelscope-repo/modelscope:ubuntu22.04-"
                          "cuda12.4.0-py311-torch2.6.0-1.26.0", params=MsSwiftParams),
    _Recipe(name="verl", version="1", title="VERL (RL on a RayJob)", kind="ray",
            description="VERL's PPO/GRPO trainer as a KubeRay RayJob: a head and GPU workers, data from "
                        "/data/datasets, checkpoints to /data/checkpoints/{job}/",
            example_image="verlai/verl:app-verl0.5-vllm0.9.1-mcore0.12.2-te2.2", params=VerlParams),
)}


def recipe(name: str, version: str) -> _Recipe:
    r = RECIPES.get((name, version))
    if r is None:
        known = ", ".join(f"{n}@{v}" for n, v in RECIPES)
        raise NotFound(f"no recipe {name}@{version} (known: {known})")
    return r


def list_recipes() -> RecipeList:
    return RecipeList(items=[
        RecipeOut(name=r.name, version=r.version, title=r.title, description=r.description, kind=r.kind,
                  example_image=r.example_image, parameters=r.params.model_json_schema(),
                  data=data_paths("{job}"))
        for r in RECIPES.values()])


def parse_parameters(name: str, version: str, raw: dict[str, Any]) -> _Params:
    """The recipe's typed parameters; a wrong type or an out-of-range value is a 422 naming the parameter."""
    r = RECIPES.get((name, version))
    if r is None:
        known = ", ".join(sorted({n for n, _ in RECIPES}))
        raise InvalidInput.field(["body", "recipe"], f"no recipe {name}@{version}; known recipes: {known}")
    try:
        return r.params.model_validate(raw)
    except ValidationError as exc:
        raise InvalidInput.of([{"loc": ["body", "parameters", *e["loc"]], "msg": e["msg"]}
                               for e in exc.errors()]) from None


def command(name: str, params: _Params, job: str, nodes: int, gpus_per_node: int, *, mlflow: bool = False,
            where: DataMap = data.DEFAULT_MAP, output: str | None = None) -> list[str]:
    """The container command for a pytorch-kind recipe (an argument list: no shell). Every data path is the pod's
    (`where`: /data/... for the shared bucket, /s3/<bucket>/... for a mounted registered one). With `mlflow` the
    frameworks report loss and throughput (train_samples_per_second) to the tracking server in MLFLOW_TRACKING_URI
    (`--report_to mlflow`: Hugging Face's MLflowCallback, which LLaMA-Factory and MS-Swift use); a plain PyTorch
    script reads MLFLOW_TRACKING_URI and MLFLOW_EXPERIMENT_NAME itself (`mlflow.log_metric`)."""
    report = "mlflow" if mlflow else "none"
    paths = pod_paths(job, output, where)
    nproc = str(max(gpus_per_node, 1))
    launcher = ["hyperpodrun", f"--nnodes={nodes}", f"--nproc-per-node={nproc}"]

    def dataset(v: str) -> str:
        return where.resolve(v, relative_to=data.DATASETS)

    def model(v: str) -> str:
        return v if data.is_hf_id(v) else where.resolve(v)

    if isinstance(params, PyTorchParams):
        return [*launcher, params.script, f"--epochs={params.epochs}", f"--output-dir={paths.outputs}",
                f"--checkpoint-dir={paths.checkpoints}",
                *([f"--data-dir={dataset(params.dataset)}"] if params.dataset else []), *params.args]
    if isinstance(params, LlamaFactoryParams):
        p = params
        return ["llamafactory-cli", "train", "--stage", p.stage, "--do_train", "true",
                "--model_name_or_path", model(p.model_name_or_path), "--dataset", p.dataset,
                "--dataset_dir", where.resolve(p.dataset_dir).rstrip("/"), "--template", p.template,
                "--finetuning_type", p.finetuning_type,
                *(["--lora_rank", str(p.lora_rank)] if p.finetuning_type == "lora" else []),
                "--learning_rate", repr(p.learning_rate), "--num_train_epochs", repr(p.num_train_epochs),
                "--per_device_train_batch_size", str(p.per_device_train_batch_size), "--cutoff_len", str(p.cutoff_len),
                "--output_dir", paths.checkpoints, "--logging_dir", paths.outputs, "--report_to", report]
    if isinstance(params, MsSwiftParams):
        p2 = params
        return ["swift", "sft", "--model", model(p2.model), "--dataset", dataset(p2.dataset),
                "--train_type", p2.train_type, "--learning_rate", repr(p2.learning_rate),
                "--num_train_epochs", repr(p2.num_train_epochs),
                "--per_device_train_batch_size", str(p2.per_device_train_batch_size),
                "--max_length", str(p2.max_length), "--output_dir", paths.checkpoints,
                "--logging_dir", paths.outputs, "--report_to", report]
    raise ValueError(f"recipe {name} does not render a container command")


def pod_paths(job: str, output: str | None, where: DataMap = data.DEFAULT_MAP) -> DataPaths:
    """The job's output and checkpoint folders as its pods see them."""
    named = data_paths(job, output)
    if not output:
        return named
    base = where.resolve(output).rstrip("/") + "/"
    return DataPaths(outputs=base, checkpoints=f"{base}checkpoints/")


def ray_entrypoint(params: _Params, job: str, nodes: int, gpus_per_node: int, *, mlflow: str | None = None,
                   where: DataMap = data.DEFAULT_MAP, output: str | None = None) -> str:
    """The RayJob entrypoint (Ray takes one string; every value was validated, and each is quoted). With `mlflow`
    VERL's tracker logs to MLflow too (`trainer.logger=[console,mlflow]`, reading MLFLOW_TRACKING_URI; VERL names
    the MLflow experiment after `trainer.project_name`, so `mlflow` is the experiment name)."""
    if not isinstance(params, VerlParams):
        raise ValueError("only VERL runs on a RayJob")
    p, paths = params, pod_paths(job, output, where)
    model = p.model if data.is_hf_id(p.model) else where.resolve(p.model)
    args = ["python3", "-m", "verl.trainer.main_ppo", f"algorithm.adv_estimator={p.algorithm}",
            f"data.train_files={where.resolve(p.train_files, relative_to=data.DATASETS)}",
            f"data.val_files={where.resolve(p.val_files, relative_to=data.DATASETS)}",
            f"data.train_batch_size={p.train_batch_size}", f"actor_rollout_ref.model.path={model}",
            f"actor_rollout_ref.actor.optim.lr={p.learning_rate!r}", f"actor_rollout_ref.rollout.n={p.rollout_n}",
            f"trainer.total_epochs={p.total_epochs}", f"trainer.nnodes={nodes}",
            f"trainer.n_gpus_per_node={gpus_per_node}", f"trainer.default_local_dir={paths.checkpoints}",
            f"trainer.experiment_name={job}"]
    if mlflow:
        args += [f"trainer.project_name={mlflow}", "trainer.logger=[console,mlflow]"]
    else:
        args.append("trainer.logger=[console]")
    return shlex.join(args)
