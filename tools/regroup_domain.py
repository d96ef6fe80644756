"""Regroup functions/domain and functions/logic by capability (issue #29, item 5): the moves, and the import rewrite.

    python tools/regroup_domain.py --move      # git mv every file of MOVES (once, on a tree that has the old paths)
    python tools/regroup_domain.py [FILE ...]  # rewrite imports and module paths (all tracked files if none named)

The rewrite is idempotent: run it again on files another branch added or changed since, then
`ruff check --select I --fix` on the Python files it changed (import order only). What it rewrites:

- `from functions.domain import training` -> `from functions.domain.training import jobs as training` (the local
  name stays, so the code below the imports is unchanged); several names in one statement are split by package;
- a dotted path `functions.domain.training[.Name]` in code, strings, comments and docs ->
  `functions.domain.training.jobs` (not when it is already followed by one of the new package's modules);
- a file path `functions/domain/training.py` -> `functions/domain/training/jobs.py`.

It does not route an import through a capability's public module (`<capability>/api.py`): where one capability's
module imports another's, the import-linter contract "Capabilities meet only through their api modules" names it;
import the name from that capability's `api` (add it there when it is missing).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# old module -> new module (dotted, under functions.)
MOVES: dict[str, str] = {
    # domain: one package per capability; the shared kernel (errors, operations, kinds, workflow, asl, ports, service,
    # views, identifiers, arns, events, principal, rbac, manifests, tenancy, preferences, catalog, iam, limits, live,
    # redaction, feature_graph) stays in functions/domain
    "domain.audit": "domain.audit.records",
    "domain.cluster_record": "domain.clusters.record",
    "domain.clusters": "domain.clusters.models",
    "domain.instance_groups": "domain.clusters.groups",
    "domain.network": "domain.clusters.network",
    "domain.software_update": "domain.clusters.software_update",
    "domain.planners.clusters": "domain.clusters.plan",
    "domain.planners.instance_groups": "domain.clusters.plan_groups",
    "domain.planners.software_update": "domain.clusters.plan_software_update",
    "domain.planners.capacity": "domain.capacity.plan",
    "domain.features": "domain.features.document",
    "domain.kuberay": "domain.features.kuberay",
    "domain.planners.features": "domain.features.plan",
    "domain.endpoint_record": "domain.inference.record",
    "domain.engine_args": "domain.inference.engine_args",
    "domain.inference": "domain.inference.endpoints",
    "domain.inference_manifests": "domain.inference.manifests",
    "domain.planners.inference": "domain.inference.plan",
    "domain.namespaces": "domain.namespaces.models",
    "domain.planners.namespaces": "domain.namespaces.plan",
    "domain.health_checks": "domain.nodes.health_checks",
    "domain.nodes": "domain.nodes.models",
    "domain.planners.nodes": "domain.nodes.plan",
    "domain.planners.base": "domain.plans.base",
    "domain.planners": "domain.plans.registry",
    "domain.specs": "domain.specs.document",
    "domain.planners.specs": "domain.specs.plan",
    "domain.data": "domain.storage.data",
    "domain.storage": "domain.storage.volumes",
    "domain.planners.storage": "domain.storage.plan",
    "domain.mlflow": "domain.training.mlflow",
    "domain.recipes": "domain.training.recipes",
    "domain.training": "domain.training.jobs",
    "domain.planners.training": "domain.training.plan",
    # logic mirrors it (a capability of one module stays one module: capacity, features, namespaces)
    "logic.cluster_create": "logic.clusters.create",
    "logic.cluster_delete": "logic.clusters.delete",
    "logic.cluster_import": "logic.clusters.importing",
    "logic.cluster_views": "logic.clusters.views",
    "logic.discovery": "logic.clusters.discovery",
    "logic.group_add": "logic.clusters.group_add",
    "logic.group_delete": "logic.clusters.group_delete",
    "logic.group_scale": "logic.clusters.group_scale",
    "logic.software_update": "logic.clusters.software_update",
    "logic.node_actions": "logic.nodes.actions",
    "logic.node_views": "logic.nodes.views",
    "logic.jobs": "logic.training.jobs",
    "logic.mlflow_servers": "logic.training.mlflow_servers",
    "logic.data": "logic.storage.data",
    "logic.storage": "logic.storage.volumes",
    "logic.endpoints": "logic.inference.endpoints",
    "logic.models": "logic.inference.models",
    "logic.pools": "logic.inference.pools",
    "logic.specs": "logic.specs.apply",
    "logic.spec_diff": "logic.specs.diff",
    "logic.spec_live": "logic.specs.live",
}
# files whose module path does not change but which move (a module becomes its package's face)
PLAIN_MOVES: dict[str, str] = {"functions/domain/plans.py": "functions/domain/plans/__init__.py"}
# modules made after the moves: an already-rewritten path names one of them after its package (kept idempotent)
LATER: dict[str, list[str]] = {
    "domain.training": ["rules", "manifests", "status", "api"],
    "domain.inference": ["manifests_pools", "views", "api"],
    "domain.features": ["changes", "api"],
    "domain.capacity": ["ranking", "api"],
    "domain.clusters": ["api"], "domain.nodes": ["api"], "domain.storage": ["api"], "domain.namespaces": ["api"],
    "logic.inference": ["endpoint_views"],
}

OLD = {f"functions.{k}": f"functions.{v}" for k, v in MOVES.items()}


def _children(pkg: str) -> set[str]:
    """The modules that a package holds after the moves (so a path already rewritten is left alone)."""
    short = pkg.removeprefix("functions.")
    kids = {v.rsplit(".", 1)[1] for v in MOVES.values() if v.rsplit(".", 1)[0] == short}
    on_disk = {f.stem for f in (ROOT / "functions" / short.replace(".", "/")).glob("*.py")}
    return kids | set(LATER.get(short, [])) | (on_disk - {"__init__"})


def _file(dotted: str) -> Path:
    return ROOT / (dotted.replace(".", "/") + ".py")


def _old_file(dotted: str) -> Path:
    p = _file(dotted)
    return p if p.exists() or not (p.with_suffix("") / "__init__.py").exists() else p.with_suffix("") / "__init__.py"


def move() -> None:
    for old, new in sorted(OLD.items()):
        src = ROOT / (old.replace(".", "/") + ".py")
        if not src.exists():
            src = ROOT / old.replace(".", "/") / "__init__.py"
        dst = _file(new)
        if not src.exists():
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "mv", str(src.relative_to(ROOT)), str(dst.relative_to(ROOT))], cwd=ROOT, check=True)
    for src_s, dst_s in PLAIN_MOVES.items():
        if (ROOT / src_s).exists():
            (ROOT / dst_s).parent.mkdir(parents=True, exist_ok=True)
            subprocess.run(["git", "mv", src_s, dst_s], cwd=ROOT, check=True)
    for new in OLD.values():  # every new package gets a face
        pkg = _file(new).parent
        init = pkg / "__init__.py"
        if not init.exists():
            init.write_text(f'"""{pkg.name}: see the README\'s map of the code."""\n')
            subprocess.run(["git", "add", str(init.relative_to(ROOT))], cwd=ROOT, check=True)


def _rewrite_from_imports(text: str) -> str:
    """`from functions.domain import a, b as c` where a or b moved: one statement per target package."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    lines = text.splitlines(keepends=True)
    edits: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ImportFrom) and node.module and node.level == 0):
            continue
        if node.module in OLD and all(a.name in _children(node.module) for a in node.names):
            continue  # already the new package's modules
        if node.module in OLD:  # from an old module: the same names from its new place
            first = lines[node.lineno - 1]
            lines[node.lineno - 1] = first.replace(f"from {node.module} import", f"from {OLD[node.module]} import", 1)
            continue
        if not any(f"{node.module}.{a.name}" in OLD for a in node.names):
            continue
        indent = " " * node.col_offset
        keep = [a for a in node.names if f"{node.module}.{a.name}" not in OLD]
        out: list[str] = []
        if keep:
            names = ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in keep)
            out.append(f"{indent}from {node.module} import {names}\n")
        for a in node.names:
            new = OLD.get(f"{node.module}.{a.name}")
            if new is None:
                continue
            pkg, mod = new.rsplit(".", 1)
            local = a.asname or a.name
            out.append(f"{indent}from {pkg} import {mod}" + (f" as {local}" if local != mod else "") + "\n")
        first = lines[node.lineno - 1]
        tail = lines[node.end_lineno - 1][node.end_col_offset:] if node.end_lineno else "\n"
        comment = tail.strip()
        if comment.startswith("#"):
            out[0] = out[0].rstrip("\n") + "  " + comment + "\n"
        assert first[: node.col_offset].strip() == "", (node.lineno, first)
        edits.append((node.lineno - 1, node.end_lineno or node.lineno, "".join(out)))
    for start, end, new_text in sorted(edits, reverse=True):
        lines[start:end] = [new_text]
    return "".join(lines)


# Splits of a big module: the names that left it, by the module they went to. An import of such a name from the old
# module is rewritten to the new one (a module that callers name as one, like training/jobs.py, stays as a face).
SPLITS: dict[str, dict[str, list[str]]] = {
    "functions.domain.inference.endpoints": {
        "functions.domain.inference.requests": [
            "InvokeMessage", "InvokeRequest", "PoolCreate", "PoolAssign", "PoolRelease", "ModelDownload",
            "download_job_name", "MODELS_KEY_PREFIX", "model_prefix", "DOWNLOAD_IMAGE", "model_of_key"],
    },
    "functions.logic.inference.endpoints": {
        "functions.logic.inference.endpoint_views": [
            "IN_FLIGHT", "Live", "read_live", "_pull_error", "_ready", "view", "_state", "_address", "_live",
            "list_endpoints", "load_endpoint", "get_endpoint"],
    },
    "functions.domain.capacity.advice": {
        "functions.domain.capacity.inputs": [
            "ClusterContext", "Want", "wants", "plan_searches", "_owned_cover", "_hour", "_start", "offered_types",
            "priced_types", "_headroom", "_at"],
        "functions.domain.capacity.options": [
            "_Candidate", "_Ctx", "_line", "_miss", "_consider", "_zone_names", "_zone_id", "_zone_name",
            "_quota_check", "_budget_ok", "_on_demand", "_spot", "_covers", "_owned", "_combine", "_training_plans",
            "_owned_option", "plan_arn", "suggest_plan_name", "_offer_hourly", "_offering_option", "_iso", "_total",
            "_group_name", "_bodies", "_add"],
    },
    "functions.logic.specs.diff": {
        "functions.logic.specs.diff_workloads": [
            "_jobs_of", "diff_job", "_default_json", "_same_json", "ENDPOINT_SCALABLE", "diff_endpoint",
            "prune_workloads"],
    },
}


def _split_imports(text: str) -> str:
    """`from old import a, b` where b left old for new: `from old import a` and `from new import b`."""
    if not any(old in text for old in SPLITS):
        return text
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    lines = text.splitlines(keepends=True)
    edits: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ImportFrom) and node.module in SPLITS and node.level == 0):
            continue
        moved = {n: new for new, names in SPLITS[node.module].items() for n in names}
        if not any(a.name in moved for a in node.names):
            continue
        indent = " " * node.col_offset
        groups: dict[str, list[ast.alias]] = {}
        for a in node.names:
            groups.setdefault(moved.get(a.name, node.module), []).append(a)
        out = [f"{indent}from {mod} import " + ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in got)
               + "\n" for mod, got in groups.items()]
        edits.append((node.lineno - 1, node.end_lineno or node.lineno, "".join(out)))
    for start, end, new_text in sorted(edits, reverse=True):
        lines[start:end] = [new_text]
    return "".join(lines)


def _dotted_patterns() -> list[tuple[re.Pattern[str], str]]:
    pats = []
    for old, new in sorted(OLD.items(), key=lambda kv: -len(kv[0])):
        kids = _children(old)
        guard = f"(?!\\.(?:{'|'.join(sorted(kids))})\\b)" if kids else ""
        # `from functions.domain.training import jobs`: already the package (the statement was rewritten above)
        pats.append((re.compile(rf"(?<![\w.]){re.escape(old)}(?![\w]){guard}(?!\s+import\s)"), new))
    for old, new in sorted(OLD.items(), key=lambda kv: -len(kv[0])):
        o, n = old.replace(".", "/"), new.replace(".", "/")
        if old == "functions.domain.planners":
            pats.append((re.compile(r"(?<![\w/])functions/domain/planners/__init__\.py"), n + ".py"))
            continue
        pats.append((re.compile(rf"(?<![\w/]){re.escape(o)}\.py\b"), n + ".py"))
    return pats


PATTERNS = _dotted_patterns()


def rewrite(text: str, python: bool) -> str:
    if python:
        text = _split_imports(_rewrite_from_imports(text))
    for pat, new in PATTERNS:
        text = pat.sub(new, text)
    return text


SUFFIXES = {".py", ".md", ".toml", ".mjs", ".ts", ".tsx", ".cfg", ".ini", ".txt", ".yaml", ".yml"}


CAPABILITIES = ["audit", "capacity", "clusters", "features", "inference", "namespaces", "nodes", "specs", "storage",
                "training"]
DOMAIN = ROOT / "functions" / "domain"


def _capability_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 3 and parts[:2] == ["functions", "domain"] and parts[2] in CAPABILITIES else None


def _isort(name: str) -> tuple[int, str]:
    """ruff's order (isort's order-by-type, RUF022): CONSTANTS, then Classes, then functions and modules."""
    return (0 if name.isupper() else 1 if name[:1].isupper() else 2, name)


def _defined_in(cap: str, name: str) -> str:
    """The module of capability `cap` that defines `name` ("" when `name` is one of its modules)."""
    if (DOMAIN / cap / f"{name}.py").exists():
        return ""
    for f in sorted((DOMAIN / cap).glob("*.py")):
        if f.name in ("api.py", "__init__.py"):
            continue
        for node in ast.parse(f.read_text()).body:
            found = ({node.name} if isinstance(node, ast.FunctionDef | ast.ClassDef) else
                     {t.id for t in node.targets if isinstance(t, ast.Name)} if isinstance(node, ast.Assign) else
                     {node.target.id} if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) else
                     set())
            if name in found:
                return f.stem
    raise SystemExit(f"{name}: defined in no module of functions/domain/{cap}")


def route_through_api() -> list[str]:
    """Every import in functions/domain of another capability's module goes through that capability's `api.py`
    (written here: it re-exports what the others use, and keeps what it already held)."""
    exports: dict[str, dict[str, set[str]]] = {c: {} for c in CAPABILITIES}  # cap -> submodule -> names
    for c in CAPABILITIES:
        api = DOMAIN / c / "api.py"
        if api.exists():
            for node in ast.parse(api.read_text()).body:
                if isinstance(node, ast.ImportFrom) and node.module:
                    for a in node.names:
                        if node.module == f"functions.domain.{c}":
                            exports[c].setdefault("", set()).add(a.name)
                        else:
                            exports[c].setdefault(node.module.rsplit(".", 1)[1], set()).add(a.name)
    changed = []
    for f in sorted(DOMAIN.rglob("*.py")):
        rel = f.relative_to(ROOT).with_suffix("")
        me = _capability_of(".".join(rel.parts) + ".x")
        if f.name == "api.py" or rel.parts[-2:] == ("plans", "registry"):  # the registry composes every planner
            continue
        text = f.read_text()
        lines = text.splitlines(keepends=True)
        edits = []
        for found in ast.walk(ast.parse(text)):
            if not (isinstance(found, ast.ImportFrom) and found.module and found.level == 0):
                continue
            node = found
            mod = node.module or ""
            cap = _capability_of(mod + ".x") if mod.count(".") == 2 else _capability_of(mod)
            if cap is None or cap == me:
                continue
            if mod.endswith(".api"):  # already routed: the api must still hand each name on
                for a in node.names:
                    if not any(a.name in got for got in exports[cap].values()):
                        where = _defined_in(cap, a.name)
                        exports[cap].setdefault(where, set()).add(a.name)
                continue
            if mod == f"functions.domain.{cap}":  # from functions.domain.training import jobs as training
                exports[cap].setdefault("", set()).update(a.name for a in node.names)
            else:
                exports[cap].setdefault(mod.rsplit(".", 1)[1], set()).update(a.name for a in node.names)
            first = lines[node.lineno - 1]
            lines[node.lineno - 1] = first.replace(f"from {mod} import", f"from functions.domain.{cap}.api import", 1)
            edits.append(node.lineno)
        if edits:
            f.write_text("".join(lines))
            changed.append(str(f))
    for c, subs in exports.items():
        if not subs:
            continue
        out = ['"""The public face of this capability: what other capabilities and the kernel import from it (a '
               'contract in\npyproject.toml keeps them to this module; tools/regroup_domain.py writes it)."""\n\n']
        names: list[str] = []
        if subs.get(""):
            mods = sorted(subs[""], key=_isort)
            out.append(f"from functions.domain.{c} import {', '.join(mods)}\n")
            names += mods
        for sub in sorted(k for k in subs if k):
            got = sorted(subs[sub], key=_isort)
            out.append(f"from functions.domain.{c}.{sub} import {', '.join(got)}\n")
            names += got
        out.append("\n__all__ = [" + ", ".join(f'"{n}"' for n in sorted(names, key=_isort)) + "]\n")
        api = DOMAIN / c / "api.py"
        new = "".join(out)
        if not api.exists() or api.read_text() != new:
            api.write_text(new)
            changed.append(str(api))
    return changed


def main(argv: list[str]) -> None:
    if argv[:1] == ["--move"]:
        move()
        argv = []
    if argv:
        files = [Path(a) for a in argv]
    else:
        listed = subprocess.run(["git", "ls-files"], cwd=ROOT, check=True, capture_output=True, text=True).stdout
        files = [ROOT / f for f in listed.split() if Path(f).suffix in SUFFIXES or f.endswith("Makefile")]
    changed = []
    for f in files:
        skip = ("regroup_domain.py", "pyproject.toml", "api.py")  # contracts and api modules: kept by hand and below
        if not f.is_file() or "node_modules" in f.parts or f.name in skip:
            continue
        text = f.read_text()
        new = rewrite(text, f.suffix == ".py")
        if new != text:
            f.write_text(new)
            changed.append(str(f))
    if not argv:
        changed += route_through_api()
    print("\n".join(changed))


if __name__ == "__main__":
    main(sys.argv[1:])
