"""The accelerator catalog: per HyperPod instance type, its GPU (or Neuron) model, count, memory, EFA and NVLink.

One table, in the domain, so the advisor, the job/endpoint placement and the UI agree on what "16 H100s" means
without an AWS call. Counts, names, memory and EFA interfaces are what EC2 `DescribeInstanceTypes` answers for
the EC2 twin of each `ml.` type (`GpuInfo.Gpus[]`, `NeuronInfo.NeuronDevices[]`, `NetworkInfo.EfaInfo`); a test
checks every row against those shapes. NVLink (and NeuronLink) is not in EC2's answer: it comes from the AWS
instance type pages (NVSwitch on p4d/p4de/p5/p5e/p5en/p6, NeuronLink on trn1/trn2; PCIe elsewhere).

`GPU_MODELS` are the names a request may use (`gpu_model`); "any" matches every row.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

Interconnect = Literal["nvlink", "neuronlink", "pcie"]


class GpuModel(StrEnum):
    """Accelerator models of the table (`any`: whichever fits best); a request asks by `AskedModel`."""

    h100 = "h100"
    h200 = "h200"
    b200 = "b200"
    b300 = "b300"
    gb200 = "gb200"
    a100 = "a100"
    l40s = "l40s"
    l4 = "l4"
    a10g = "a10g"
    t4 = "t4"
    rtx_pro_6000 = "rtx-pro-6000"
    rtx_pro_4500 = "rtx-pro-4500"
    trainium = "trainium"
    trainium2 = "trainium2"
    inferentia2 = "inferentia2"
    any = "any"


# What a request may name (the models people ask for by name; `any` covers the others: B300, GB200, T4, RTX PRO)
AskedModel = Literal["h100", "h200", "b200", "a100", "l40s", "l4", "a10g", "trainium", "trainium2", "inferentia2",
                     "any"]


@dataclass(frozen=True)
class Accelerators:
    """One HyperPod instance type's accelerators, as EC2 describes its twin."""

    instance_type: str  # ml.p5.48xlarge
    model: GpuModel
    name: str  # EC2's name: H100, A10G, Trainium2
    manufacturer: str  # NVIDIA, AWS
    kind: Literal["gpu", "neuron"]
    count: int
    memory_mib: int  # per accelerator (EC2's MemoryInfo.SizeInMiB)
    efa_interfaces: int  # EC2's EfaInfo.MaximumEfaInterfaces (0: no EFA)
    interconnect: Interconnect

    @property
    def nvlink(self) -> bool:
        return self.interconnect == "nvlink"

    @property
    def efa(self) -> bool:
        return self.efa_interfaces > 0

    @property
    def memory_gib(self) -> float:
        return round(self.memory_mib / 1024, 1)

    @property
    def label(self) -> str:
        """"8 x NVIDIA H100 80 GiB" (the line the UI and the advice show)."""
        return f"{self.count} x {self.manufacturer} {self.name} {self.memory_gib:g} GiB"


def _rows(model: GpuModel, name: str, maker: str, kind: Literal["gpu", "neuron"], memory_mib: int,
          link: Interconnect, *types: tuple[str, int, int]) -> dict[str, Accelerators]:
    return {t: Accelerators(t, model, name, maker, kind, count, memory_mib, efa, link) for t, count, efa in types}


NV, AWS = "NVIDIA", "AWS"
# (instance type, accelerators per instance, max EFA interfaces)
ACCELERATORS: dict[str, Accelerators] = {
    **_rows(GpuModel.h100, "H100", NV, "gpu", 81920, "nvlink", ("ml.p5.48xlarge", 8, 32)),
    **_rows(GpuModel.h100, "H100", NV, "gpu", 81920, "pcie", ("ml.p5.4xlarge", 1, 1)),
    **_rows(GpuModel.h200, "H200", NV, "gpu", 144384, "nvlink",
            ("ml.p5e.48xlarge", 8, 32), ("ml.p5en.48xlarge", 8, 16)),
    **_rows(GpuModel.b200, "B200", NV, "gpu", 183359, "nvlink", ("ml.p6-b200.48xlarge", 8, 8)),
    **_rows(GpuModel.b300, "B300", NV, "gpu", 275040, "nvlink", ("ml.p6-b300.48xlarge", 8, 16)),
    # Grace Blackwell UltraServer nodes (not in EC2's public DescribeInstanceTypes yet): 4 B200 per node, NVL72
    **_rows(GpuModel.gb200, "GB200", NV, "gpu", 189440, "nvlink", ("ml.p6e-gb200.36xlarge", 4, 8)),
    **_rows(GpuModel.a100, "A100", NV, "gpu", 40960, "nvlink", ("ml.p4d.24xlarge", 8, 4)),
    **_rows(GpuModel.a100, "A100", NV, "gpu", 81920, "nvlink", ("ml.p4de.24xlarge", 8, 4)),
    **_rows(GpuModel.a10g, "A10G", NV, "gpu", 22888, "pcie",
            ("ml.g5.xlarge", 1, 0), ("ml.g5.2xlarge", 1, 0), ("ml.g5.4xlarge", 1, 0), ("ml.g5.8xlarge", 1, 1),
            ("ml.g5.12xlarge", 4, 1), ("ml.g5.16xlarge", 1, 1), ("ml.g5.24xlarge", 4, 1), ("ml.g5.48xlarge", 8, 1)),
    **_rows(GpuModel.l4, "L4", NV, "gpu", 22888, "pcie",
            ("ml.g6.xlarge", 1, 0), ("ml.g6.2xlarge", 1, 0), ("ml.g6.4xlarge", 1, 0), ("ml.g6.8xlarge", 1, 1),
            ("ml.g6.12xlarge", 4, 1), ("ml.g6.16xlarge", 1, 1), ("ml.g6.24xlarge", 4, 1), ("ml.g6.48xlarge", 8, 1),
            ("ml.gr6.4xlarge", 1, 0), ("ml.gr6.8xlarge", 1, 1)),
    **_rows(GpuModel.l40s, "L40S", NV, "gpu", 45776, "pcie",
            ("ml.g6e.xlarge", 1, 0), ("ml.g6e.2xlarge", 1, 0), ("ml.g6e.4xlarge", 1, 0), ("ml.g6e.8xlarge", 1, 1),
            ("ml.g6e.12xlarge", 4, 1), ("ml.g6e.16xlarge", 1, 1), ("ml.g6e.24xlarge", 4, 2),
            ("ml.g6e.48xlarge", 8, 4)),
    **_rows(GpuModel.t4, "T4", NV, "gpu", 16384, "pcie",
            ("ml.g4dn.xlarge", 1, 0), ("ml.g4dn.2xlarge", 1, 0), ("ml.g4dn.4xlarge", 1, 0), ("ml.g4dn.8xlarge", 1, 1),
            ("ml.g4dn.12xlarge", 4, 1), ("ml.g4dn.16xlarge", 1, 1)),
    **_rows(GpuModel.rtx_pro_6000, "RTX PRO Server 6000", NV, "gpu", 98304, "pcie",
            ("ml.g7e.2xlarge", 1, 0), ("ml.g7e.4xlarge", 1, 0), ("ml.g7e.8xlarge", 1, 1), ("ml.g7e.12xlarge", 2, 1),
            ("ml.g7e.24xlarge", 4, 2), ("ml.g7e.48xlarge", 8, 4)),
    **_rows(GpuModel.rtx_pro_4500, "RTX PRO 4500", NV, "gpu", 32768, "pcie",
            ("ml.g7.2xlarge", 1, 0), ("ml.g7.4xlarge", 1, 0), ("ml.g7.8xlarge", 1, 1), ("ml.g7.12xlarge", 2, 1),
            ("ml.g7.24xlarge", 4, 1), ("ml.g7.48xlarge", 8, 2)),
    **_rows(GpuModel.trainium, "Trainium", AWS, "neuron", 32768, "neuronlink",
            ("ml.trn1.32xlarge", 16, 8), ("ml.trn1n.32xlarge", 16, 16)),
    # EC2 reports 524288 MiB per Trainium2 device (its NeuronInfo as published); kept as EC2 says it
    **_rows(GpuModel.trainium2, "Trainium2", AWS, "neuron", 524288, "neuronlink",
            ("ml.trn2.3xlarge", 1, 1), ("ml.trn2.48xlarge", 16, 16)),
}


def of(instance_type: str) -> Accelerators | None:
    return ACCELERATORS.get(instance_type)


def candidates(model: GpuModel) -> list[Accelerators]:
    """The rows of a model (every row for `any`), most accelerators per instance first, then by name."""
    rows = [a for a in ACCELERATORS.values() if model is GpuModel.any or a.model is model]
    return sorted(rows, key=lambda a: (-a.count, a.instance_type))


def nodes_for(accelerators: int, per_instance: int) -> int:
    """Instances needed for `accelerators` (whole instances)."""
    return -(-accelerators // per_instance)
