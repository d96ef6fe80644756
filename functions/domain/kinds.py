"""Operation kinds and their steps, in order. Step names are part of the public contract."""

from __future__ import annotations

KINDS: dict[str, tuple[str, ...]] = {
    "cluster.create": ("eks_control_plane", "activate", "dependencies", "hyperpod_cluster", "storage"),
}


def state_machine_file(kind: str) -> str:
    """`cluster.create` -> `cluster_create.asl.json` (the file CDK and the sandbox both load)."""
    return kind.replace(".", "_") + ".asl.json"


def kind_of_file(filename: str) -> str:
    stem = filename.removesuffix(".asl.json")
    return stem.replace("_", ".", 1)
