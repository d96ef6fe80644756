"""HyperPod platform software updates (operation cluster.software_update): the request, and the rolling
batches HyperPod works through.

`UpdateClusterSoftware` patches every instance of the named groups to the latest HyperPod release (or the
`ImageId` given: a HyperPod public AMI, a custom AMI, or `default`) with a rolling deployment: at most
`batch_percent` percent of a group's instances at a time (`RollingUpdatePolicy.MaximumBatchSize`
{Type: CAPACITY_PERCENT, Value}), `wait_seconds` between batches (`WaitIntervalInSeconds`, 0-3600). Each
instance of a batch restarts (status SystemUpdating, its Kubernetes node NotReady and unschedulable): pods on
it are disrupted. The cluster is SystemUpdating until every batch is done, then InService again.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field, field_validator

GROUP_NAME = r"^[a-z]([-a-z0-9]{0,30}[a-z0-9])?$"
IMAGE_ID = r"^(ami-[0-9a-fA-F]{8,17}|default)$"  # botocore sagemaker ImageId (min 7, max 21)
UPDATE_SECONDS_PER_BATCH = 900.0  # one batch: instances restart on the new image, rejoin and pass checks


class RollingUpdate(BaseModel):
    """How many instances restart at a time."""

    model_config = ConfigDict(extra="forbid")

    batch_percent: int = Field(default=20, ge=1, le=100,
                               description="At most this percent of a group's instances update at once (1-100)")


class SoftwareUpdate(BaseModel):
    """Update the HyperPod platform software (AMI) of instance groups, batch by batch."""

    model_config = ConfigDict(extra="forbid")

    groups: list[str] | None = Field(default=None, min_length=1, max_length=100,
                                     description="Instance groups (default: all)")
    rolling: RollingUpdate = Field(default_factory=RollingUpdate)
    image_id: str | None = Field(default=None, min_length=7, max_length=21, pattern=IMAGE_ID,
                                 description="AMI id, or default (the latest HyperPod release)")
    wait_seconds: int | None = Field(default=None, ge=0, le=3600, description="Pause between batches")

    @field_validator("groups")
    @classmethod
    def _groups(cls, groups: list[str] | None) -> list[str] | None:
        if groups is None:
            return None
        import re

        bad = [g for g in groups if not re.match(GROUP_NAME, g)]
        if bad:
            raise ValueError(f"not instance group names: {', '.join(bad[:5])}")
        if len(set(groups)) != len(groups):
            raise ValueError("each group once")
        return groups


def batch_size(instances: int, percent: int) -> int:
    """Instances per batch: `percent` of the group rounded down, at least one (never more than asked)."""
    return max(1, math.floor(instances * percent / 100))


def batch_count(instances: int, percent: int) -> int:
    return math.ceil(instances / batch_size(instances, percent)) if instances else 0
