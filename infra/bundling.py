"""Offline, Docker-free Lambda bundles, each holding what its entry module imports.

Each function's asset folder is assembled under ``build/lambda/<name>/`` from its import graph
(:mod:`infra.import_graph`): the modules reachable from the handler's module, read from

* the spec's source packages (``functions``, ``mcp_gateway``, ...): every file of each package the entry reaches
  (its data too: templates, CRDs, scripts read as text), without ``__pycache__`` or tests;
* the installed distributions named in ``spec.requirements`` plus their transitive dependencies, resolved with
  :mod:`importlib.metadata` from the running interpreter's site-packages (this machine is linux x86_64 CPython
  3.11, like the Lambda runtime, so the installed wheels are the right ones): of those, only the modules the
  entry reaches, the data files of the packages it reaches (``certifi/cacert.pem``), the shared libraries a wheel
  vendors (``*.libs/``) and the ``*.dist-info`` metadata (read by ``importlib.metadata`` at import). A distribution
  the entry never imports is not shipped at all. boto3/botocore are always included: we pin a newer botocore than
  the runtime's (HyperPod fields).

botocore's ``data/`` holds a model per AWS service and API version (~25 MB): a bundle keeps the latest version of
the services its own code makes clients for (``aws.client("eks", region)``, ``ctx.aws("sagemaker", region)``; ``sts``
always, for the EKS token and the credential chain), without the documentation examples, and the files botocore
always loads (``endpoints.json``, ``partitions.json``, ``sdk-default-configuration.json``, ``_retry.json``).

Our own code ships with its source and bytecode (``__pycache__``, compiled with ``UNCHECKED_HASH`` invalidation so
the ``.pyc`` files stay valid after the asset is zipped and unzipped with new mtimes: the Lambda file system is
read-only, so a stale ``.pyc`` would be recompiled on every cold start). The libraries ship as bytecode only
(``x.pyc`` in place of ``x.py``, which Python imports without the source): the same code in half the bytes, for
the Lambda runtime's CPython 3.11; a traceback through a library names its file and line without quoting it.

A bundle is rebuilt only when its content hash (entry, sources, resolved distribution versions, the bundler's own
code) changes; the hash doubles as the CDK asset hash, so synth never fingerprints the bundle twice.
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from packaging.requirements import Requirement

from infra import import_graph

REPO_ROOT = Path(__file__).resolve().parent.parent
BUILD_ROOT = REPO_ROOT / "build" / "lambda"
LAYOUT_VERSION = "2"  # bump when the bundle layout changes (2: each bundle from its entry's import graph)

# Always shipped: the runtime's botocore is older than the HyperPod fields we use.
BASE_REQUIREMENTS = ("boto3",)

# Sub-trees of distributions no PodStart function imports, never shipped even when a string names them.
# kubernetes.aio (~68 MB) is the asyncio client; we use the sync client. The X-Ray SDK's aiohttp patcher is
# imported only by Powertools' aiohttp_trace_config(), which PodStart never calls (it would pull in aiohttp, 7 MB).
# Powertools' Swagger UI (1.7 MB of JavaScript and CSS) is served only by enable_swagger(), which PodStart never
# calls (the web UI documents the API).
EXCLUDED_PREFIXES: tuple[str, ...] = ("kubernetes/aio/", "aws_xray_sdk/ext/aiohttp/",
                                      "aws_lambda_powertools/event_handler/openapi/swagger_ui/")

# Packages whose modules are imported by a computed name: the X-Ray SDK's patch_all() imports
# aws_xray_sdk.ext.<library> for each library it patches ('aws_xray_sdk.ext.%s'), when that library is present.
# httplib is the standard library's http.client (always present).
_PATCHERS = "aws_xray_sdk.ext"
_ALWAYS_PATCHED = frozenset({"httplib"})

# AWS services every bundle can call: STS signs the EKS token and serves the assume-role credential providers.
ALWAYS_SERVICES = frozenset({"sts"})
# Per service and API version, the files botocore and boto3 never read at run time (documentation examples).
_UNUSED_MODEL_FILES = ("examples-1.json",)
_MODEL_DIRS = ("botocore/data/", "boto3/data/")

_SKIPPED_DIRS = {"__pycache__", "tests", "test", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
# Never read at run time: bytecode of another build, type stubs, C sources and headers, and a wheel's RECORD (the
# list of every file it installed, most of which a bundle leaves out).
_SKIPPED_SUFFIXES = (".pyc", ".pyo", ".pyi", ".c", ".h", ".cpp", ".pyx", ".pxd", ".dist-info/RECORD")
_HASH_FILE = ".podstart-bundle-hash"
# The Lambda runtime's interpreter (infra.functions.RUNTIME): the libraries' bytecode-only modules load only there.
RUNTIME_CACHE_TAG = "cpython-311"
_BUNDLER_SOURCES = (Path(__file__), Path(import_graph.__file__))


class BundleSpec(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def packages(self) -> tuple[str, ...]: ...
    @property
    def requirements(self) -> tuple[str, ...]: ...
    @property
    def handler(self) -> str: ...


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
        if rel.startswith("..") or _SKIPPED_DIRS.intersection(parts[:-1]) or rel.endswith(_SKIPPED_SUFFIXES):
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


def entry_module(spec: BundleSpec) -> str:
    return spec.handler.rpartition(".")[0]


def bundle_hash(spec: BundleSpec) -> str:
    """Content hash of everything that goes into ``spec``'s bundle."""
    digest = hashlib.sha256(f"layout={LAYOUT_VERSION};excl={EXCLUDED_PREFIXES};entry={entry_module(spec)}".encode())
    for source in _BUNDLER_SOURCES:
        digest.update(source.read_bytes() + b"\0")
    for package in spec.packages:
        for src, rel in _source_files(package):
            digest.update(rel.encode() + b"\0" + src.read_bytes() + b"\0")
    for dist in resolve_distributions((*BASE_REQUIREMENTS, *spec.requirements)):
        # name==version plus the RECORD (file hashes) identifies an installed distribution.
        record = dist.read_text("RECORD") or ""
        digest.update(f"{dist.metadata['Name']}=={dist.version}\0".encode() + record.encode())
    return digest.hexdigest()


def _package_of(rel: str, packages: set[str]) -> str | None:
    """The dotted name of the innermost package folder holding the file ``rel`` (None: at no package's level)."""
    parts = rel.split("/")[:-1]
    while parts:
        if "/".join(parts) in packages:
            return ".".join(parts)
        parts.pop()
    return None


def _model_file_wanted(rel: str, services: frozenset[str], latest: dict[str, str]) -> bool:
    """Keep a botocore/boto3 ``data/`` file: the root files, and the latest model of each wanted service."""
    parts = rel.split("/")  # botocore/data/<service>/<version>/<file> or botocore/data/<file>
    if len(parts) == 3:
        return True
    service = parts[2]
    if service not in services:
        return False
    if len(parts) >= 5 and parts[3] != latest.get(f"{parts[0]}/{service}"):
        return False
    return parts[-1] not in _UNUSED_MODEL_FILES


@dataclass(frozen=True)
class BundlePlan:
    """What a bundle holds: its files (path in the bundle -> source), the modules and the AWS services it keeps."""

    files: dict[str, Path]
    modules: frozenset[str]
    services: frozenset[str]
    distributions: tuple[str, ...]  # shipped (the entry imports a module of each)


def plan_bundle(spec: BundleSpec) -> BundlePlan:
    """The files of ``spec``'s bundle: what its entry module's import graph reaches, with that code's data."""
    index = import_graph.ModuleIndex()
    package_dirs: set[str] = set()
    sources: list[tuple[Path, str]] = []
    for package in spec.packages:
        for src, rel in _source_files(package):
            sources.append((src, rel))
    dist_files: list[tuple[md.Distribution, Path, str]] = []
    for dist in resolve_distributions((*BASE_REQUIREMENTS, *spec.requirements)):
        dist_files.extend((dist, src, rel) for src, rel in _distribution_files(dist))
    for src, rel in [*sources, *((src, rel) for _d, src, rel in dist_files)]:
        index.add(rel, src)
        if rel.endswith("/__init__.py"):
            package_dirs.add(rel.rpartition("/")[0])

    entries = {entry_module(spec)}
    while True:
        reached = import_graph.reachable(index, sorted(entries), own=spec.packages)
        tops = {name.partition(".")[0] for name in reached}
        patchers = {f"{_PATCHERS}.{lib}" for lib in index.children.get(_PATCHERS, ())
                    if _PATCHERS in reached and (lib in tops or lib in _ALWAYS_PATCHED)}
        if patchers <= reached:
            break
        entries |= patchers
    if entry_module(spec) not in reached:
        raise RuntimeError(f"{spec.name}: entry module {entry_module(spec)} is not in packages {spec.packages}")
    reached_packages = {name for name in reached if index.modules[name].is_package}

    # AWS services our own code the entry reaches makes clients for (aws.client("eks", region), ctx.aws("eks", r)).
    service_dirs = {rel.split("/")[2] for _d, _s, rel in dist_files
                    if rel.startswith("botocore/data/") and rel.count("/") >= 4}
    scanned = [m for m in reached if m.partition(".")[0] in spec.packages]
    named = import_graph.client_services(index, scanned)
    unknown = named - service_dirs
    if unknown:
        raise RuntimeError(f"{spec.name}: botocore {md.version('botocore')} has no service {sorted(unknown)}")
    services = frozenset(ALWAYS_SERVICES | named)
    latest: dict[str, str] = {}  # as botocore picks it: the newest API version that has the service's model
    for _d, _s, rel in dist_files:
        parts = rel.split("/")
        if rel.startswith(_MODEL_DIRS) and len(parts) == 5 and parts[4].startswith(("service-2.", "resources-1.")):
            key = f"{parts[0]}/{parts[2]}"
            latest[key] = max(latest.get(key, ""), parts[3])

    files: dict[str, Path] = {}
    # Our own code: the modules the entry reaches, the data files of their packages, and the scripts they read as
    # text (a .py file no import reaches whose name a reached module spells, e.g. functions/assets' "podstart_gate.py").
    spelled = import_graph.strings(index, [m for m in reached if m.partition(".")[0] in spec.packages])
    for src, rel in sources:
        name = import_graph.module_name(rel)
        if name is not None and name in index.modules:
            keep = name in reached or (src.name in spelled and _package_of(rel, package_dirs) in reached_packages)
        else:
            keep = _package_of(rel, package_dirs) in reached_packages
        if keep:
            files[rel] = src
    # Installed distributions: the reached modules, their packages' data, and at no package's level (*.dist-info,
    # *.libs: metadata and vendored shared libraries) the files of each distribution the entry imports a module of.
    shipped = {dist.metadata["Name"] for dist, _src, rel in dist_files if import_graph.module_name(rel) in reached}
    for dist, src, rel in dist_files:
        name = import_graph.module_name(rel)
        owner = _package_of(rel, package_dirs)
        if name is not None and name in index.modules:
            keep = name in reached
        elif rel.startswith(_MODEL_DIRS):
            keep = owner in reached_packages and _model_file_wanted(rel, services, latest)
        elif owner is not None:
            keep = owner in reached_packages
        else:
            keep = dist.metadata["Name"] in shipped
        if keep:
            files.setdefault(rel, src)
    return BundlePlan(files=files, modules=frozenset(reached), services=services,
                      distributions=tuple(sorted(shipped, key=_canonical)))


def bundle_dir(spec: BundleSpec) -> Path:
    return BUILD_ROOT / spec.name


def build_bundle(spec: BundleSpec, *, force: bool = False) -> Path:
    """Build (or reuse) ``build/lambda/<name>/`` for ``spec`` and return its path."""
    target = bundle_dir(spec)
    wanted = bundle_hash(spec)
    hash_file = target / _HASH_FILE
    if not force and hash_file.is_file() and hash_file.read_text() == wanted:
        return target
    if sys.implementation.cache_tag != RUNTIME_CACHE_TAG:  # its bytecode (and wheels) would not load on Lambda
        raise RuntimeError(f"Lambda bundles are built by CPython 3.11 (the functions' runtime), not {sys.version}")

    # Per-process staging: two synths at once (parallel test workers, a watcher) never share a folder.
    staging = target.with_name(f".{spec.name}.{os.getpid()}.tmp")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for rel, src in sorted(plan_bundle(spec).files.items()):
        dest = staging / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
    # Our code keeps its source next to its bytecode (__pycache__): tracebacks quote our lines.
    # The libraries' modules ship as bytecode only (x.pyc where x.py was, which Python imports without the
    # source): half the bytes, the same code; their tracebacks still name the file and line.
    own = re.compile("^" + re.escape(str(staging)) + "/(" + "|".join(map(re.escape, spec.packages)) + ")/")
    options: dict[str, Any] = {
        "quiet": 2,
        "workers": os.cpu_count() or 1,
        "invalidation_mode": py_compile.PycInvalidationMode.UNCHECKED_HASH,
        "stripdir": str(staging),  # tracebacks show bundle-relative paths, not this machine's
        "prependdir": "/var/task",
    }
    for package in spec.packages:
        if (staging / package).is_dir():
            compileall.compile_dir(str(staging / package), **options)
    compileall.compile_dir(str(staging), rx=own, legacy=True, **options)
    for path in staging.rglob("*.py"):
        if not own.match(str(path)):
            path.unlink()
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
