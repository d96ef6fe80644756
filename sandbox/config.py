"""Sandbox knobs, from the environment (PODSTART_*), parsed once."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class SandboxSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PODSTART_", extra="ignore")

    port: int = Field(default=3099, description="The one local port: UI, REST, MCP, live events")
    host: str = "127.0.0.1"
    token: str | None = Field(default=None, description="Admin bearer token; generated when unset")
    operator_token: str | None = Field(default=None, description="Operator bearer token (create, scale, retry; "
                                       "not delete); generated when unset")
    viewer_token: str | None = Field(default=None, description="Read-only bearer token; generated when unset")
    time_scale: float = Field(default=60.0, description="AWS durations are divided by this (60: EKS in ~10 s)")
    state_dir: Path = Field(default=Path(".podstart"), description="Where the token files are written")
    aws_port: int = Field(default=0, description="Port of the embedded AWS endpoint (0: any free port)")
    kube_port: int = Field(default=0, description="Port of the embedded Kubernetes API (0: any free port)")
    registered_buckets: str = Field(default="team-datasets-123456789012", description=(
        "Buckets PodStart may read besides its data bucket (bucket or bucket/prefix/, comma-separated), as the "
        "deploy-time context podstart:registeredBuckets registers them; the sandbox seeds this one"))
    limits: str = Field(default="", description="Fair-share limits as JSON (functions.domain.limits.Limits)")
    mutation_slots: int = Field(default=4, ge=1, description=(
        "Mutating API requests handled at once; more wait their turn. On AWS each invocation has its own "
        "CPU; here all share one interpreter, and a burst of 100 would starve the first past its Lambda "
        "deadline (when an idempotency key's in-progress lock lapses)"))
