"""Numbers for `make bench`: one full synth (cdk-nag included) and the Lambda bundle sizes."""

from __future__ import annotations

import tempfile
import time

from functions.lambdas import LAMBDAS
from infra.bundling import build_bundle, bundle_size_bytes


def synth_seconds() -> float:
    """Wall time of one full synth into a scratch directory (bundles built or reused as usual)."""
    from app import build_app

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="podstart-synth-") as outdir:
        app, _stack, _nag = build_app(outdir=outdir, context={"aws:cdk:disable-asset-staging": True})
        app.synth()
    return time.perf_counter() - started


def bundle_sizes() -> dict[str, int]:
    """Unzipped bytes per function bundle (Lambda allows 250 MB including layers)."""
    return {name: bundle_size_bytes(build_bundle(spec)) for name, spec in LAMBDAS.items()}


def main() -> None:
    for name, size in bundle_sizes().items():
        print(f"bundle {name:<8} {size / 1e6:8.1f} MB")
    print(f"synth          {synth_seconds():8.1f} s")


if __name__ == "__main__":
    main()
