"""Inference requests: endpoints (managed and self-managed), model pools, model downloads.

The one place their format rules live (REST, UI and MCP all send these): an image must be pinned,
the GPUs a replica asks for must equal what the engine's parallelism flags need, engine arguments
are a validated list (never a shell string), a token is a Secret's name (never its value).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from functions.domain import identifiers
from functions.domain.inference import engine_args
from functions.domain.storage.api import data

EndpointName = Annotated[str, Field(
    pattern=r"^[a-z]([-a-z0-9]{0,30}[a-z0-9])?$", max_length=32,
    description="Endpoint name (a DNS label, at most 32 characters)")]
PoolName = Annotated[str, Field(
    pattern=r"^[a-z]([-a-z0-9]{0,22}[a-z0-9])?$", max_length=24,
    description="Model pool name: a DNS-1123 label, at most 24 characters")]
SecretName = Annotated[str, Field(
    pattern=r"^[a-z0-9]([-a-z0-9.]{0,61}[a-z0-9])?$", max_length=63,
    description="Name of a Kubernetes Secret holding the token under key `token` (create it with POST .../secrets)")]
InstanceTypeName = Annotated[str, Field(pattern=r"^ml\.[a-z0-9-]+\.[a-z0-9]+$", max_length=40,
                                        description="HyperPod instance type, e.g. ml.g5.12xlarge")]
HfModelId = Annotated[str, Field(max_length=193, description="Hugging Face model id, owner/name"),
                      AfterValidator(identifiers.hf_model_id)]
Revision = Annotated[str, Field(max_length=64, description="Branch, tag or commit (default main)"),
                     AfterValidator(identifiers.revision)]

IMAGE_RE = re.compile(r"^[a-z0-9]([a-z0-9._/-]{0,254}[a-z0-9])?(:[0-9]{1,5})?(/[a-z0-9._-]+)*"
                      r"(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}|@sha256:[0-9a-f]{64})$")
MODELS_PREFIX = "/data/models/"
NAMESPACE = "default"
# The shape of one argv element: no whitespace or NUL (a list element is one argument; nothing reaches a shell).
ARG_RE = re.compile(r"^[^\s\x00]{1,256}$")
ENGINE_PORT = 8000


def pinned_image(v: str) -> str:
    """An image reference with a tag (not `latest`) or a digest."""
    if v.endswith(":latest"):
        raise ValueError("the image tag `latest` is not pinned: name a version tag or an @sha256 digest")
    if not IMAGE_RE.match(v):
        raise ValueError("an image reference with a version tag or @sha256 digest, e.g. vllm/vllm-openai:v0.10.1")
    return v


S3_MODEL_FORMS = ("a model folder under /data (e.g. /data/models/Qwen/Qwen3-0.6B/main/) or an S3 URI on a bucket "
                  "PodStart may read (e.g. s3://team-models/qwen3-sft/; list_data lists them)")


def model_label(model: dict[str, Any]) -> str:
    """What a model is called in answers and served as (--served-model-name): its Hub id, or its folder's key
    (/data/models/org/name/main/ -> org/name/main; s3://team-models/qwen3-sft/ -> qwen3-sft)."""
    if model.get("model_id"):
        return str(model["model_id"])
    uri = str(model.get("uri") or "").rstrip("/")
    if uri.startswith("s3://"):
        return uri.removeprefix("s3://").partition("/")[2]
    return uri.removeprefix(MODELS_PREFIX).removeprefix("/data/")


class ModelSource(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    source: Literal["s3", "fsx", "huggingface", "jumpstart"] = Field(
        description="s3|fsx: uri; huggingface|jumpstart: model_id")
    uri: str | None = Field(default=None, max_length=1024,
                            description="s3: a model folder under /data (e.g. /data/models/org/name/main/) or an S3 "
                                        "URI on a bucket PodStart may read (e.g. s3://team-models/qwen3-sft/); fsx: a "
                                        "path on the file system")
    model_id: str | None = Field(default=None, max_length=193, pattern=r"^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)?$",
                                 description="owner/name (Hugging Face), or a JumpStart model id")
    revision: Revision | None = None
    token_secret: SecretName | None = None
    accept_eula: bool = Field(default=False, description="jumpstart: accept the model's end-user license")

    @field_validator("uri")
    @classmethod
    def _uri(cls, v: str | None, info: ValidationInfo) -> str | None:
        if v is None:
            return v
        if info.data.get("source") == "s3":
            data.parse(v, forms=S3_MODEL_FORMS)
            return v
        if not v.startswith("/") or any(seg in (".", "..") for seg in v.split("/")) or "//" in v \
                or not re.match(r"^/[A-Za-z0-9_.=/-]*$", v):
            raise ValueError("an fsx model is a path on the file system with no '.', '..' or empty segments, e.g. "
                             "/models/Qwen3-0.6B/")
        return v

    @field_validator("model_id")
    @classmethod
    def _model_id(cls, v: str | None, info: ValidationInfo) -> str | None:
        if v is None:
            return v
        if info.data.get("source") == "huggingface":
            return identifiers.hf_model_id(v)
        if info.data.get("source") == "jumpstart":
            return identifiers.jumpstart_model_id(v)
        return v

    @model_validator(mode="after")
    def _fields(self) -> ModelSource:
        if self.source in ("s3", "fsx"):
            if not self.uri:
                raise ValueError(f"uri is required for source {self.source} (e.g. {MODELS_PREFIX}org/name/main/)")
            if self.model_id or self.token_secret:
                raise ValueError(f"source {self.source} takes uri, not model_id/token_secret")
        else:
            if not self.model_id:
                raise ValueError(f"model_id is required for source {self.source}")
            if self.uri:
                raise ValueError(f"source {self.source} takes model_id, not uri")
        return self

    @property
    def label(self) -> str:
        """What the model is called in answers (the responder and served-model-name)."""
        return model_label(self.model_dump())


class TieredKvCache(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    l1: bool = Field(default=True, description="L1: offload KV cache to CPU memory")
    l2_backend: Literal["tieredstorage", "redis"] | None = Field(
        default=None, description="L2 backend; omit: off")


class ManagedAutoscaling(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    min: int = Field(default=1, ge=0, le=64)
    max: int = Field(ge=1, le=64)
    trigger: Literal["cloudwatch", "prometheus"] = Field(
        default="prometheus", description="Scale on the endpoint's CloudWatch invocations or Prometheus queue")
    target: float = Field(default=10, gt=0, le=100000, description="Target value per replica")

    @model_validator(mode="after")
    def _bounds(self) -> ManagedAutoscaling:
        if self.min > self.max:
            raise ValueError(f"min ({self.min}) is above max ({self.max})")
        return self


class KedaSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    min: int = Field(default=1, ge=0, le=64)
    max: int = Field(ge=1, le=64)
    metric: Literal["queue_depth", "qps"] = Field(default="queue_depth",
                                                  description="The router's Prometheus metric to scale on")
    target: int = Field(default=8, ge=1, le=100000, description="Target value per replica")

    @model_validator(mode="after")
    def _bounds(self) -> KedaSpec:
        if self.min > self.max:
            raise ValueError(f"min ({self.min}) is above max ({self.max})")
        return self


class Autoscaling(BaseModel):
    """Managed: min/max/trigger (autoScalingSpec). Self-managed SGLang with a router: keda."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    min: int | None = Field(default=None, ge=0, le=64)
    max: int | None = Field(default=None, ge=1, le=64)
    trigger: Literal["cloudwatch", "prometheus"] | None = None
    target: float | None = Field(default=None, gt=0, le=100000)
    keda: KedaSpec | None = None

    @model_validator(mode="after")
    def _one(self) -> Autoscaling:
        managed = self.max is not None or self.min is not None or self.trigger is not None
        if managed and self.keda is not None:
            raise ValueError("give min/max/trigger (managed) or keda (self-managed), not both")
        if not managed and self.keda is None:
            raise ValueError("give max (managed) or keda")
        if managed:
            if self.max is None:
                raise ValueError("max is required")
            ManagedAutoscaling(min=self.min if self.min is not None else 1, max=self.max,
                               trigger=self.trigger or "prometheus", target=self.target or 10)
        return self

    def managed(self) -> ManagedAutoscaling | None:
        if self.max is None:
            return None
        return ManagedAutoscaling(min=self.min if self.min is not None else 1, max=self.max,
                                  trigger=self.trigger or "prometheus", target=self.target or 10)


class RouterSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True
    policy: Literal["cache_aware", "round_robin", "random", "power_of_two"] = "cache_aware"


Engine = Literal["vllm", "sglang"]
ServiceShape = Literal["external", "internal", "model_pool"]
RoutingStrategy = Literal["prefixaware", "kvaware", "session", "roundrobin"]

TP_FLAGS = {"vllm": ("--tensor-parallel-size", "-tp"), "sglang": ("--tp-size", "--tp", "--tensor-parallel-size")}
PP_FLAGS = {"vllm": ("--pipeline-parallel-size", "-pp"), "sglang": ("--pp-size", "--pipeline-parallel-size")}
DP_FLAGS = {"vllm": ("--data-parallel-size", "-dp"), "sglang": ("--dp-size", "--dp", "--data-parallel-size")}


def flag_value(args: list[str], names: tuple[str, ...]) -> tuple[int | None, int | None]:
    """(value, index) of the first integer flag among names, in any spelling the engines accept (`--x N`, `--x=N`,
    underscores for dashes); ValueError if not an integer."""
    raw, i, spelled = engine_args.value_of(args, names)
    if i is None:
        return None, None
    if raw is None or not raw.isdigit():
        raise ValueError(f"engine_args[{i}]: {spelled} needs a positive integer")
    return int(raw), i


def parallelism(engine: str, args: list[str]) -> tuple[int, int, int]:
    """(tensor, pipeline, data) parallel sizes the engine arguments ask for (1 when absent)."""
    tp, _ = flag_value(args, TP_FLAGS[engine])
    pp, _ = flag_value(args, PP_FLAGS[engine])
    dp, _ = flag_value(args, DP_FLAGS[engine])
    return tp or 1, pp or 1, dp or 1


class EndpointCreate(BaseModel):
    """POST /v1/clusters/{cluster}/endpoints."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: EndpointName
    mode: Literal["managed", "self-managed"] = Field(
        description="managed: the HyperPod inference operator owns it; self-managed: a vLLM/SGLang Deployment")
    model: ModelSource
    instance_type: InstanceTypeName
    replicas: int = Field(default=1, ge=1, le=64, description="Serving replicas (workers)")
    gpus: int | None = Field(default=None, ge=1, le=16,
                             description="GPUs per replica (self-managed: required; checked against engine_args)")
    # managed
    tiered_kv_cache: TieredKvCache | None = Field(default=None, description="managed: KV cache offloading")
    routing_strategy: RoutingStrategy | None = Field(default=None, description="managed: intelligent routing")
    # both: managed min/max/trigger; self-managed keda
    autoscaling: Autoscaling | None = None
    # self-managed
    engine: Engine | None = Field(default=None, description="self-managed: vllm or sglang")
    image: str | None = Field(default=None, max_length=300,
                              description="Container image with a version tag or digest (`latest` refused)")
    engine_args: list[str] = Field(default_factory=list, max_length=64,
                                   description="Extra engine arguments, one list element per argument")
    service: ServiceShape = Field(default="internal", description="self-managed: external (NLB), internal "
                                                                  "(ClusterIP) or model_pool (warm pool workers)")
    pool: PoolName | None = Field(default=None, description="service model_pool: the pool whose workers serve")
    public: bool = Field(default=False, description="internet_facing with no source range limit (admin only)")
    internet_facing: bool = Field(default=False, validate_default=True,
                                  description="service external: an internet-facing NLB; needs source_ranges (or "
                                              "public, admin)")
    source_ranges: list[str] = Field(default_factory=list, max_length=20, validate_default=True,
                                     description="service external: CIDRs allowed to reach the NLB")
    api_key_secret: SecretName | None = Field(
        default=None, description="self-managed: a PodStart Secret (key `api_key`) callers must send (Authorization: "
                                  "Bearer, or X-Api-Key); invoke sends it")
    router: RouterSpec | None = Field(default=None, description="sglang, replicas > 1: the SGLang router in front")

    @field_validator("image")
    @classmethod
    def _image(cls, v: str | None) -> str | None:
        return pinned_image(v) if v is not None else None

    @field_validator("engine_args")
    @classmethod
    def _args(cls, v: list[str]) -> list[str]:
        for i, a in enumerate(v):
            if not ARG_RE.match(a):
                raise ValueError(f"engine_args[{i}]: one argument per element, no whitespace, at most 256 characters")
        groups = tuple(tuple(sorted({n for names in fs.values() for n in names}))
                       for fs in (TP_FLAGS, PP_FLAGS, DP_FLAGS))
        for i, why in engine_args.refusals(v, read_once=groups):
            raise ValueError(f"engine_args[{i}]: {why}")
        return v

    @field_validator("source_ranges")
    @classmethod
    def _cidrs(cls, v: list[str], info: ValidationInfo) -> list[str]:
        """CIDR blocks; and no accidental exposure: an internet-facing NLB names who may reach it (not everyone),
        unless an admin says public."""
        import ipaddress

        if info.data.get("internet_facing") and not info.data.get("public"):
            if not v:
                raise ValueError("an internet-facing endpoint names the CIDRs allowed to reach it (e.g. your "
                                 "office's 203.0.113.0/24); an admin may set public: true to open it to everyone")
            everyone = [c for c in v if c.strip() in OPEN_RANGES]
            if everyone:
                raise ValueError(f"{everyone[0]} is everyone on the internet: name narrower ranges, or an admin sets "
                                 f"public: true")
        out = []
        for c in v:
            try:
                out.append(str(ipaddress.ip_network(c, strict=True)))
            except ValueError:
                raise ValueError(f"{c!r} is not a CIDR block") from None
        return out

    @field_validator("internet_facing")
    @classmethod
    def _exposure(cls, v: bool, info: ValidationInfo) -> bool:
        if info.data.get("public") and not v:
            raise ValueError("public opens an internet-facing endpoint to everyone: it goes with internet_facing: true")
        return v

    @model_validator(mode="after")
    def _paths(self) -> EndpointCreate:
        if self.mode == "managed":
            wrong = [f for f in ("engine", "router", "pool", "api_key_secret") if getattr(self, f) is not None]
            wrong += [f for f in ("engine_args", "source_ranges", "public", "internet_facing") if getattr(self, f)]
            wrong += ["service"] if self.service != "internal" else []
            if wrong:
                raise ValueError(f"{', '.join(wrong)}: self-managed fields; managed endpoints are served "
                                 f"by the inference operator")
            if self.autoscaling and self.autoscaling.keda:
                raise ValueError("autoscaling.keda is for self-managed SGLang; managed takes min/max/trigger")
            return self
        wrong = [f for f in ("tiered_kv_cache", "routing_strategy") if getattr(self, f) is not None]
        if wrong:
            raise ValueError(f"{', '.join(wrong)}: managed-only fields (the inference operator provides them)")
        missing = [f for f in ("engine", "image", "gpus") if getattr(self, f) is None]
        if missing:
            raise ValueError(f"self-managed endpoints need {', '.join(missing)}")
        if self.model.source not in ("s3", "huggingface"):
            raise ValueError(f"self-managed serves a model from the shared bucket (s3) or Hugging Face, "
                             f"not {self.model.source}")
        assert self.engine is not None and self.gpus is not None
        tp, pp, dp = parallelism(self.engine, self.engine_args)
        if flag_value(self.engine_args, TP_FLAGS[self.engine])[0] is None:
            tp = max(1, self.gpus // (pp * dp))  # absent: PodStart sets it to the GPUs left per stage
        if tp * pp * dp != self.gpus:
            dp_part = f" x data parallel {dp}" if dp != 1 else ""
            raise ValueError(f"engine_args ask for tensor parallel {tp} x pipeline parallel {pp}{dp_part} = "
                             f"{tp * pp * dp} GPUs per replica, but gpus is {self.gpus}")
        if self.service == "model_pool" and not self.pool:
            raise ValueError("service model_pool needs pool")
        if self.service != "model_pool" and self.pool:
            raise ValueError("pool goes with service model_pool")
        if self.service != "external" and (self.internet_facing or self.source_ranges or self.public):
            raise ValueError("internet_facing, public and source_ranges go with service external")
        if self.api_key_secret and self.service == "model_pool":
            raise ValueError("api_key_secret: a pool's workers serve every endpoint of the pool; put the key on a "
                             "self-managed endpoint with service external or internal")
        if self.router and self.router.enabled:
            if self.engine != "sglang":
                raise ValueError("the router is the SGLang router: engine must be sglang")
            if self.replicas < 2 and not (self.autoscaling and self.autoscaling.keda):
                raise ValueError("the router fronts several replicas: replicas must be at least 2")
            if self.service == "model_pool":
                raise ValueError("a model_pool endpoint routes through its pool's Service, not a router")
        if self.autoscaling:
            if self.autoscaling.keda is None:
                raise ValueError("self-managed autoscaling is autoscaling.keda (on the SGLang router's metrics)")
            if not (self.router and self.router.enabled):
                raise ValueError("autoscaling.keda scales on the SGLang router's metrics: enable router")
        return self

    def normalized(self) -> dict[str, Any]:
        """The request the workflow runs: defaults filled, the engine's tensor-parallel flag explicit."""
        body = self.model_dump(mode="json", exclude_none=True)
        if self.mode == "self-managed":
            assert self.engine is not None and self.gpus is not None
            tp, _ = flag_value(self.engine_args, TP_FLAGS[self.engine])
            if tp is None:
                _, pp, dp = parallelism(self.engine, self.engine_args)
                body["engine_args"] = [*self.engine_args, TP_FLAGS[self.engine][0], str(self.gpus // (pp * dp))]
        return body


OPEN_RANGES = ("0.0.0.0/0", "::/0")


class EndpointPatch(BaseModel):
    """PATCH .../endpoints/{endpoint}: send only what changes."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    replicas: int | None = Field(default=None, ge=0, le=64, description="Serving replicas")
    autoscaling_min: int | None = Field(default=None, ge=0, le=64, description="Autoscaling lower bound")
    autoscaling_max: int | None = Field(default=None, ge=1, le=64, description="Autoscaling upper bound")

    @model_validator(mode="after")
    def _some(self) -> EndpointPatch:
        sent = self.model_dump(exclude_unset=True)
        if not sent or all(v is None for v in sent.values()):
            raise ValueError("send at least one of replicas, autoscaling_min, autoscaling_max")
        if (self.autoscaling_min is not None and self.autoscaling_max is not None
                and self.autoscaling_min > self.autoscaling_max):
            raise ValueError(f"autoscaling_min ({self.autoscaling_min}) is above autoscaling_max "
                             f"({self.autoscaling_max})")
        return self
