"""Files PodStart ships unchanged: the lifecycle script, KEDA's schema, the model downloader script."""

from __future__ import annotations

from pathlib import Path

DOWNLOAD_SCRIPT = Path(__file__).resolve().parent / "podstart_download.py"


def download_script() -> str:
    """The model download Job's constant script, as the ConfigMap carries it (read, never imported here)."""
    return DOWNLOAD_SCRIPT.read_text()
