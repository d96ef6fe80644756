"""The inference requests besides an endpoint's: invoking one (`InvokeRequest`), worker pools (create, assign,
release) and model downloads (`ModelDownload`, and where a downloaded model lives in the bucket)."""

from __future__ import annotations

import re
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from functions.domain.inference.endpoints import (
    MODELS_PREFIX,
    EndpointName,
    Engine,
    HfModelId,
    InstanceTypeName,
    ModelSource,
    PoolName,
    Revision,
    SecretName,
    pinned_image,
)


class InvokeMessage(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    role: Literal["system", "user", "assistant"]
    content: str = Field(max_length=32768)


class InvokeRequest(BaseModel):
    """POST .../endpoints/{endpoint}/invoke: an OpenAI-compatible body, a chat (`messages`, sent to
    /v1/chat/completions) or a completion (`prompt`, sent to /v1/completions); the target is the endpoint's own."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    podstart_free_text: ClassVar[bool] = True  # the chat is the user's text: not scanned for credentials (still
    # redacted in the audit record)

    messages: list[InvokeMessage] | None = Field(default=None, min_length=1, max_length=64,
                                                 description="A chat (/v1/chat/completions); or send prompt")
    prompt: str | None = Field(default=None, min_length=1, max_length=32768,
                               description="A completion's prompt (/v1/completions), instead of messages")
    max_tokens: int = Field(default=256, ge=1, le=4096)
    temperature: float = Field(default=0.7, ge=0, le=2)
    stream: bool = Field(default=False, description="Ask the engine to stream (the answer is relayed whole)")

    @model_validator(mode="after")
    def _one_kind(self) -> InvokeRequest:
        if (self.messages is None) == (self.prompt is None):
            raise ValueError("send messages (a chat) or prompt (a completion), not both")
        return self

    @property
    def path(self) -> str:
        """The engine's OpenAI-compatible path for this body."""
        return "/v1/chat/completions" if self.messages is not None else "/v1/completions"


class PoolCreate(BaseModel):
    """POST /v1/clusters/{cluster}/pools."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: PoolName
    engine: Engine
    image: str = Field(max_length=300, description="Container image with a version tag or digest")
    instance_type: InstanceTypeName
    gpus_per_worker: int = Field(ge=1, le=16)
    workers: int = Field(ge=1, le=64)

    @field_validator("image")
    @classmethod
    def _image(cls, v: str) -> str:
        return pinned_image(v)


class PoolAssign(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    endpoint: EndpointName
    model: ModelSource = Field(description="s3 (a path under /data/models/) or a public huggingface model_id")
    workers: int = Field(ge=1, le=64)

    @field_validator("model")
    @classmethod
    def _what_a_worker_loads(cls, m: ModelSource) -> ModelSource:
        # a pool worker's engine loads a path under /data or a Hub id; it has no per-assignment Secret to read
        if m.source not in ("s3", "huggingface"):
            raise ValueError(f"pool workers load s3 (/data/models/...) or huggingface models, not {m.source}")
        if m.source == "s3" and m.uri and not m.uri.startswith("/data/"):
            raise ValueError("pool workers mount PodStart's data bucket only: an s3 model is a folder under /data "
                             "(e.g. /data/models/Qwen/Qwen3-0.6B/main/)")
        if m.token_secret:
            raise ValueError("pool workers cannot read a token Secret per assignment: download the model into "
                             "the bucket first (download_model), then assign its /data/models/ path")
        return m


class PoolRelease(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    endpoint: EndpointName
    workers: int | None = Field(default=None, ge=1, le=64, description="How many (default: all of them)")


class ModelDownload(BaseModel):
    """POST /v1/clusters/{cluster}/models."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: Literal["huggingface"] = "huggingface"
    model_id: HfModelId
    revision: Revision = "main"
    token_secret: SecretName | None = None


def download_job_name(model_id: str, revision: str) -> str:
    """Deterministic Job name for (model, revision): a retry finds the same Job."""
    import hashlib

    slug = re.sub(r"[^a-z0-9-]+", "-", model_id.lower()).strip("-")[:30].strip("-")
    digest = hashlib.sha256(f"{model_id}@{revision}".encode()).hexdigest()[:8]
    return f"dl-{slug}-{digest}"


# The data contract: the shared bucket is mounted at /data in every pod, so /data/models/... is the key models/...
MODELS_KEY_PREFIX = MODELS_PREFIX.removeprefix("/data/")


def model_prefix(model_id: str, revision: str) -> str:
    """The bucket prefix of a model revision: `models/{model_id}/{revision}/` (pods see /data/models/...)."""
    return f"{MODELS_KEY_PREFIX}{model_id}/{revision}/"


# The download Job's image: the official Python image at an exact version tag (public, no PodStart image to
# build or host). Its constant script (functions/assets/podstart_download.py, shipped in a ConfigMap) installs
# its own pinned huggingface_hub and boto3 at start. Hugging Face ships no official slim downloader image.
DOWNLOAD_IMAGE = "python:3.12.12-slim-bookworm"


def model_of_key(key: str) -> tuple[str, str, str] | None:
    """`models/{org}/{name}/{revision}/{file...}` -> (model_id, revision, file); None for other keys."""
    rest = key.removeprefix(MODELS_KEY_PREFIX)
    parts = rest.split("/", 3)
    if rest == key or len(parts) < 4 or not all(parts):
        return None
    return f"{parts[0]}/{parts[1]}", parts[2], parts[3]
