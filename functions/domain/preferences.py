"""Per-user preferences: the active cluster and defaults."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from functions.domain.catalog import REGION_PATTERN

ClusterName = Annotated[str, Field(
    pattern=r"^[a-z]([-a-z0-9]{0,30}[a-z0-9])?$", max_length=32,
    description="Cluster name: a DNS-1123 label, lowercase, at most 32 characters",
)]
RegionName = Annotated[str, Field(pattern=REGION_PATTERN, description="AWS region, e.g. us-west-2")]


class ClusterRef(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: ClusterName
    region: RegionName


class Preferences(BaseModel):
    model_config = ConfigDict(frozen=True)

    active_cluster: ClusterRef | None = None
    default_region: str | None = None

    def apply(self, update: PreferencesUpdate) -> Preferences:
        return Preferences.model_validate({**self.model_dump(), **update.model_dump(exclude_unset=True)})


class PreferencesUpdate(BaseModel):
    """Send only the fields that change; `null` clears a field."""

    model_config = ConfigDict(extra="forbid")

    active_cluster: ClusterRef | None = Field(default=None, description="The cluster other calls default to")
    default_region: RegionName | None = Field(default=None, description="Region the UI and agents start from")


def prefs_key(sub: str) -> tuple[str, str]:
    return f"USER#{sub}", "preferences"
