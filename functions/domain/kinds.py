"""Operation kinds and their steps, in order. Step names are part of the public contract."""

from __future__ import annotations

KINDS: dict[str, tuple[str, ...]] = {
    "cluster.create": ("eks_control_plane", "activate", "dependencies", "hyperpod_cluster", "storage"),
    "cluster.delete": ("storage", "hyperpod_cluster", "dependencies", "eks_control_plane", "network"),
    "cluster.import": ("discover", "access", "activate", "inventory"),
    "instance_group.add": ("subnet", "instance_group"),
    "instance_group.scale": ("instance_group",),
}


def state_machine_file(kind: str) -> str:
    """`cluster.create` -> `cluster.create.asl.json` (the file CDK and the sandbox both load)."""
    return kind + ".asl.json"


def kind_of_file(filename: str) -> str:
    return filename.removesuffix(".asl.json")
