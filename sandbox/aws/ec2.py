"""EC2 instance type data: moto 5.2 already ships real describe_instance_types and per-AZ offerings
for the HyperPod types (GpuInfo, NeuronInfo, EfaInfo); this only verifies it is there."""

from __future__ import annotations

HYPERPOD_EC2_TYPES = (
    "p5.48xlarge",
    "p5en.48xlarge",
    "p4d.24xlarge",
    "g5.8xlarge",
    "g6e.48xlarge",
    "trn1.32xlarge",
)


def patch() -> None:
    """Fail fast if a moto upgrade drops the instance type data the catalog relies on."""
    from moto.ec2.models.instance_types import INSTANCE_TYPES

    missing = [t for t in HYPERPOD_EC2_TYPES if t not in INSTANCE_TYPES]
    if missing:
        raise RuntimeError(f"moto lacks EC2 instance type data for {missing}")
