"""Offline, Docker-free Lambda bundles.

Each function's asset folder is assembled under ``build/lambda/<name>/`` from

* the spec's source packages (``functions``, ``mcp_gateway``, ...), without ``__pycache__`` or tests;
* the installed distributions named in ``spec.requirements`` plus their transitive dependencies,
  resolved with :mod:`importlib.metadata` from the running interpreter's site-packages. This machine
  is linux x86_64 CPython 3.11, like the Lambda runtime, so the installed wheels are the right ones.
  boto3/botocore are always included: we pin a newer botocore than the runtime's (HyperPod fields).

Bytecode is compiled with ``UNCHECKED_HASH`` invalidation so the ``.pyc`` files stay valid after
the asset is zipped and unzipped with new mtimes (the Lambda file system is read-only, so a stale
``.pyc`` would be recompiled on every cold start).

A bundle is rebuilt only when its content hash (sources, resolved distribution versions, this
module's layout version) changes; the hash doubles as the CDK asset hash, so synth never
fingerprints hundreds of megabytes twice.
"""

from __future__ import annotations

import compileall
import hashlib
import importlib.metadata as md
import os
import py_compile
import re
import shutil
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Protocol

from packaging.requirements import Requirement

REPO_ROOT = Path(__file__).resolve().parent.parent
BUILD_ROOT = REPO_ROOT / "build" / "lambda"
LAYOUT_VERSION = "1"  # bump when the bundle layout changes

# Always shipped: the runtime's botocore is older than the HyperPod fields we use.
BASE_REQUIREMENTS = ("boto3",)

# Sub-trees of distributions no PodStart function imports, dropped to stay far below Lambda's
# 250 MB unzipped limit. kubernetes.aio (~68 MB) is the asyncio client; we use the sync client.
EXCLUDED_PREFIXES: tuple[str, ...] = ("kubernetes/aio/",)

_SKIPPED_DIRS = {"__pycache__", "tests", "test", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
_SKIPPED_SUFFIXES = (".pyc", ".pyo")
_HASH_FILE = ".podstart-bundle-hash"


class BundleSpec(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def packages(self) -> tuple[str, ...]: ...
    @property
    def requirements(self) -> tuple[str, ...]: ...


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def resolve_distributions(requirements: Iterable[str]) -> list[md.Distribution]:
    """The installed distributions for ``requirements`` and their transitive dependencies.

    Extras are not followed (a requirement guarded by ``extra == ...`` is skipped); environment
    markers are evaluated for this interpreter, which matches the Lambda runtime.
    """
    seen: dict[str, md.Distribution] = {}
    todo = [Requirement(r) for r in requirements]
    while todo:
        req = todo.pop()
        key = _canonical(req.name)
        if key in seen:
            continue
        try:
            dist = md.distribution(req.name)
        except md.PackageNotFoundError as exc:
            raise RuntimeError(f"{req.name} is not installed in {sys.prefix}; pip install it") from exc
        seen[key] = dist
        for raw in dist.requires or ():
            dep = Requirement(raw)
            if dep.marker is not None and not dep.marker.evaluate({"extra": ""}):
                continue
            todo.append(dep)
    return sorted(seen.values(), key=lambda d: _canonical(d.metadata["Name"]))


def _distribution_files(dist: md.Distribution) -> Iterator[tuple[Path, str]]:
    """(absolute source, path relative to site-packages) for each shippable file of ``dist``."""
    base = Path(str(dist.locate_file("")))
    for entry in dist.files or ():
        rel = entry.as_posix()
        parts = rel.split("/")
        if rel.startswith("..") or "__pycache__" in parts or rel.endswith(_SKIPPED_SUFFIXES):
            continue
        if rel.startswith(EXCLUDED_PREFIXES):
            continue
        src = base / rel
        if src.is_file():
            yield src, rel


def _source_files(package: str) -> Iterator[tuple[Path, str]]:
    root = REPO_ROOT / package
    if not root.is_dir():
        raise RuntimeError(f"package folder {root} does not exist")
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIPPED_DIRS and not d.startswith("."))
        for filename in sorted(filenames):
            if filename.endswith(_SKIPPED_SUFFIXES):
                continue
            src = Path(dirpath) / filename
            yield src, src.relative_to(REPO_ROOT).as_posix()


def bundle_hash(spec: BundleSpec) -> str:
    """Content hash of everything that goes into ``spec``'s bundle."""
    digest = hashlib.sha256(f"layout={LAYOUT_VERSION};excl={EXCLUDED_PREFIXES}".encode())
    for package in spec.packages:
        for src, rel in _source_files(package):
            digest.update(rel.encode() + b"\0" + src.read_bytes() + b"\0")
    for dist in resolve_distributions((*BASE_REQUIREMENTS, *spec.requirements)):
        # name==version plus the RECORD (file hashes) identifies an installed distribution.
        record = dist.read_text("RECORD") or ""
        digest.update(f"{dist.metadata['Name']}=={dist.version}\0".encode() + record.encode())
    return digest.hexdigest()


def bundle_dir(spec: BundleSpec) -> Path:
    return BUILD_ROOT / spec.name


def build_bundle(spec: BundleSpec, *, force: bool = False) -> Path:
    """Build (or reuse) ``build/lambda/<name>/`` for ``spec`` and return its path."""
    target = bundle_dir(spec)
    wanted = bundle_hash(spec)
    hash_file = target / _HASH_FILE
    if not force and hash_file.is_file() and hash_file.read_text() == wanted:
        return target

    # Per-process staging: two synths at once (parallel test workers, a watcher) never share a folder.
    staging = target.with_name(f".{spec.name}.{os.getpid()}.tmp")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    files: list[tuple[Path, str]] = []
    for dist in resolve_distributions((*BASE_REQUIREMENTS, *spec.requirements)):
        files.extend(_distribution_files(dist))
    for package in spec.packages:
        files.extend(_source_files(package))
    for src, rel in files:
        dest = staging / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
    compileall.compile_dir(
        str(staging),
        quiet=2,
        workers=os.cpu_count() or 1,
        invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
        stripdir=str(staging),  # tracebacks show bundle-relative paths, not this machine's
        prependdir="/var/task",
    )
    (staging / _HASH_FILE).write_text(wanted)
    shutil.rmtree(target, ignore_errors=True)
    try:
        staging.rename(target)
    except OSError:  # another process renamed its identical build into place first
        shutil.rmtree(staging, ignore_errors=True)
        if not (hash_file.is_file() and hash_file.read_text() == wanted):
            raise
    return target


def bundle_size_bytes(path: Path) -> int:
    """Unzipped size of a bundle folder (Lambda's limit is 250 MB for code plus layers)."""
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
