#!/usr/bin/env python3
"""CDK app entry: `python app.py` synthesizes into $CDK_OUTDIR (default cdk.out), no node CLI needed."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks

from infra.stack import PodStartStack


def build_app(
    outdir: str | None = None, context: dict[str, object] | None = None, **stack_kwargs: Any
) -> tuple[cdk.App, PodStartStack, AwsSolutionsChecks]:
    """The app with the stack and cdk-nag registered (synth raises on any unacknowledged finding)."""
    app = cdk.App(outdir=outdir or os.environ.get("CDK_OUTDIR") or "cdk.out", context=context)
    stack = PodStartStack(
        app,
        app.node.try_get_context("podstart:stackName") or "PodStart",
        description="PodStart: serverless control plane for SageMaker HyperPod on EKS",
        env=cdk.Environment(
            account=os.environ.get("CDK_DEFAULT_ACCOUNT"), region=os.environ.get("CDK_DEFAULT_REGION")
        ),
        **stack_kwargs,
    )
    nag = AwsSolutionsChecks(app, verbose=True)
    cdk.Validations.of(app).add_plugins(nag)
    return app, stack, nag


def prune_stale_assets(outdir: Path) -> None:
    """Drop asset copies no manifest references any more (each functions/ edit stages a new bundle)."""
    referenced: set[str] = set()
    for manifest in outdir.glob("*.assets.json"):
        for kind in ("files", "dockerImages"):
            for asset in json.loads(manifest.read_text()).get(kind, {}).values():
                referenced.add(Path(asset["source"].get("path", "")).name)
    for entry in outdir.glob("asset.*"):
        if entry.name not in referenced:
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()


def main() -> None:
    app, _stack, _nag = build_app()
    assembly = app.synth()
    prune_stale_assets(Path(assembly.directory))


if __name__ == "__main__":
    main()
