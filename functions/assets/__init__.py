"""Files PodStart ships unchanged: the lifecycle script, KEDA's schema, the model downloader script, the model-pool
worker's supervisor, the API key gate."""

from __future__ import annotations

from pathlib import Path

DOWNLOAD_SCRIPT = Path(__file__).resolve().parent / "podstart_download.py"
POOL_WORKER_SCRIPT = Path(__file__).resolve().parent / "podstart_pool_worker.py"


def download_script() -> str:
    """The model download Job's constant script, as the ConfigMap carries it (read, never imported here)."""
    return DOWNLOAD_SCRIPT.read_text()


def pool_worker_script() -> str:
    """The model-pool worker's constant supervisor script, as the ConfigMap carries it (read, never imported here)."""
    return POOL_WORKER_SCRIPT.read_text()


GATE_SCRIPT = Path(__file__).resolve().parent / "podstart_gate.py"


def gate_script() -> str:
    """The API key gate's constant script, as the ConfigMap carries it (read, never imported here)."""
    return GATE_SCRIPT.read_text()
