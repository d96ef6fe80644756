"""Numbers for `make bench`: one full synth (cdk-nag included) and the Lambda bundle sizes."""

from __future__ import annotations

import tempfile
import time
from collections import Counter
from pathlib import Path

from functions.lambdas import LAMBDAS
from infra.bundling import build_bundle, bundle_size_bytes

# Unzipped MB of each bundle when it shipped whole distributions: issue 29's figures for api, steps and mcp; events,
# live and follow shipped the api's set; liveauth as measured at 345b63b. Each bundle built from its entry's import
# graph must stay within half of it (tests/infra/test_bundle_contents.py).
BASELINE_MB = {"api": 48.6, "steps": 126.0, "events": 48.6, "mcp": 71.0, "live": 48.6, "follow": 48.6,
               "liveauth": 67.2}


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


def largest_packages(bundle: Path, count: int = 5) -> list[tuple[str, int]]:
    """The ``count`` largest top-level packages (or modules, or *.dist-info) of a bundle folder, with their bytes."""
    sizes: Counter[str] = Counter()
    for path in bundle.rglob("*"):
        if path.is_file():
            top = path.relative_to(bundle).parts[0]
            sizes[top.split(".")[0] if len(path.relative_to(bundle).parts) == 1 else top] += path.stat().st_size
    return sizes.most_common(count)


def bundle_report() -> list[str]:
    """A line per function: its bundle's size against the whole-distribution baseline, and its 5 largest packages."""
    lines = []
    for name, spec in LAMBDAS.items():
        folder = build_bundle(spec)
        size = bundle_size_bytes(folder) / 1e6
        was = BASELINE_MB[name]
        verdict = "OK" if size <= was / 2 else "OVER"
        top = ", ".join(f"{pkg} {n / 1e6:.1f}" for pkg, n in largest_packages(folder))
        lines.append(f"{name:<9} {size:6.1f} MB (was {was:.1f}, {size / was:4.0%}; goal <= 50%: {verdict})  "
                     f"largest: {top}")
    return lines


def main() -> None:
    for line in bundle_report():
        print(f"bundle {line}")
    print(f"synth          {synth_seconds():8.1f} s")


if __name__ == "__main__":
    main()
