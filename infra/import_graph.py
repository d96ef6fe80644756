"""The modules a Lambda entry can import, found by reading source (no import is executed).

:func:`reachable` walks every ``import`` statement of every module it reaches, the ones inside functions too (the
lazy imports that keep cold starts short), and follows what names modules as strings:

* ``importlib.import_module("a.b")`` / ``__import__``, and ``import_module(f"pkg.{name}")`` (every direct submodule of
  ``pkg``: the API's lazy route table and the workflows registry name their modules that way; anyio's
  ``f"anyio._backends._{name}"``: those whose name starts so);
* any string constant that spells a module the bundle may ship: ``"a.b.c"`` (Powertools' lazy X-Ray import), a
  function in one (``"boto3.s3.inject.inject_s3_transfer_methods"``, boto3's lazy handlers; not in our own code,
  which names its Lambda handlers that way without importing them), ``".main"`` relative to the module's package
  (pydantic's lazy attribute table), or the name of a submodule of the module's own package (``__all__`` lists,
  lazy-loader tables).

An extension module's imports cannot be read: the dotted module names and the other extension modules its binary
spells stand for them (cryptography's Rust core imports the ``_cffi_backend`` extension). Statements under
``if TYPE_CHECKING:`` never run and are skipped. A name outside the index (the standard library, an optional
dependency that is not shipped) is not followed: the bundle smoke tests (tests/infra/test_bundle_contents.py)
import each entry with only its bundle on the path and serve a request, so a module this misses fails a test rather
than a cold start.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

_SOURCE_SUFFIXES = (".py",)
# The calls whose first argument names an AWS service: boto3's session.client / boto3.client / .resource and
# PodStart's factories over them (functions.adapters.aws.client, a workflow context's ctx.aws, an adapter's
# self.client). A factory that passes a service through a variable is one of these, called with a literal upstream.
AWS_CLIENT_CALLS = frozenset({"client", "_client", "aws", "resource"})
EXTENSION_SUFFIX = ".cpython-311-x86_64-linux-gnu.so"  # the Lambda runtime's (python3.11, x86_64)
_EXTENSION_SUFFIXES = (EXTENSION_SUFFIX, ".abi3.so", ".so")


@dataclass(frozen=True)
class Module:
    name: str
    path: Path  # the file (.py or extension); a package's __init__.py
    is_package: bool


@dataclass
class ModuleIndex:
    """Every module the bundle may ship, by dotted name (the sources and the allowed distributions)."""

    modules: dict[str, Module] = field(default_factory=dict)
    children: dict[str, set[str]] = field(default_factory=dict)  # package -> direct submodule names

    def add(self, rel: str, path: Path) -> str | None:
        """Index the file at ``rel`` (path relative to the import root); returns its module name or None."""
        name = module_name(rel)
        if name is None:
            return None
        is_package = rel.endswith("/__init__.py")
        if name not in self.modules or path.suffix == ".py":
            self.modules[name] = Module(name, path, is_package)
        parent, _, leaf = name.rpartition(".")
        while parent:
            self.children.setdefault(parent, set()).add(leaf)
            parent, _, leaf = parent.rpartition(".")
        return name


def module_name(rel: str) -> str | None:
    """``a/b/c.py`` -> ``a.b.c``; ``a/b/__init__.py`` -> ``a.b``; an extension module likewise; else None."""
    parts = rel.split("/")
    leaf = parts[-1]
    if leaf.endswith(_SOURCE_SUFFIXES):
        stem = leaf[: -len(".py")]
    else:
        for suffix in _EXTENSION_SUFFIXES:
            if leaf.endswith(suffix):
                stem = leaf[: -len(suffix)]
                break
        else:
            return None
    parts = parts[:-1] if stem == "__init__" else [*parts[:-1], stem]
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


@dataclass(frozen=True)
class _Refs:
    """What one module's source names: imports (absolute, after resolving relative ones) and candidate strings."""

    imports: tuple[tuple[str, tuple[str, ...]], ...]  # (module, names imported from it; () for `import m`)
    import_prefixes: tuple[str, ...]  # import_module(f"pkg.{x}") -> "pkg.", f"anyio._backends._{x}" -> its head
    strings: tuple[str, ...]
    client_services: tuple[str, ...]  # "eks" in aws.client("eks", region), ctx.aws("eks", r), session.client(...)


def _nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node of ``tree`` except what sits under ``if TYPE_CHECKING:``."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def _base_package(name: str, is_package: bool, level: int) -> str:
    base = name if is_package else name.rpartition(".")[0]
    for _ in range(level - 1):
        base = base.rpartition(".")[0]
    return base


@cache
def _refs(path: Path, name: str, is_package: bool) -> _Refs:
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (SyntaxError, ValueError):  # a file for another Python version: shipped, not followed
        return _Refs((), (), (), ())
    imports: list[tuple[str, tuple[str, ...]]] = []
    prefixes: list[str] = []
    strings: list[str] = []
    services: list[str] = []
    for node in _nodes(tree):
        if isinstance(node, ast.Import):
            imports.extend((alias.name, ()) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _base_package(name, is_package, node.level)
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            imports.append((target, tuple(alias.name for alias in node.names)))
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            first = node.args[0]
            if called in {"import_module", "__import__"} and isinstance(first, ast.JoinedStr) and first.values:
                head = first.values[0]
                if isinstance(head, ast.Constant) and isinstance(head.value, str) and "." in head.value:
                    prefixes.append(head.value)
            elif called in AWS_CLIENT_CALLS and isinstance(first, ast.Constant) and isinstance(first.value, str):
                services.append(first.value)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and 0 < len(node.value) < 200:
            strings.append(node.value)
    return _Refs(tuple(imports), tuple(prefixes), tuple(strings), tuple(services))


_NAME_IN_BINARY = re.compile(rb"[A-Za-z_][A-Za-z0-9_]{2,}(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


@cache
def _binary_strings(path: Path) -> frozenset[str]:
    """The dotted names an extension module's binary holds (cryptography's Rust core imports `_cffi_backend`)."""
    return frozenset(m.decode() for m in _NAME_IN_BINARY.findall(path.read_bytes()))


def _string_targets(value: str, module: Module, holders: bool = True) -> Iterator[str]:
    """Module names a string constant in ``module`` may name (checked against the index by the caller); with
    ``holders``, also the modules holding a named function ("pkg.mod.function")."""
    text = value.split(":", 1)[0]  # "pkg.mod:attr" entry-point style
    if text.startswith("."):
        level = len(text) - len(text.lstrip("."))
        rest = text[level:]
        if rest and all(p.isidentifier() for p in rest.split(".")):
            yield f"{_base_package(module.name, module.is_package, level)}.{rest}"
        return
    parts = text.split(".")
    if not all(p.isidentifier() for p in parts):
        return
    yield text
    for end in range(len(parts) - 1, 1, -1) if holders else ():  # "pkg.mod.function" (boto3's lazy_call)
        yield ".".join(parts[:end])
    if len(parts) == 1:  # a submodule of the module's own package (__all__, lazy tables)
        yield f"{_base_package(module.name, module.is_package, 1)}.{text}"


def reachable(index: ModuleIndex, entries: Iterable[str], own: Iterable[str] = ()) -> set[str]:
    """The names of the indexed modules ``entries`` can import (their parent packages included).

    In the ``own`` top-level packages (ours), a string names a module only when it spells one exactly: our code
    imports by name through import_module and f-strings, and names functions in strings it never imports
    (functions.lambdas' "functions.live.handler.handler" for the sandbox).
    """
    exact = frozenset(own)
    seen: set[str] = set()
    todo = list(entries)

    def want(name: str) -> None:
        if name in index.modules and name not in seen:
            todo.append(name)

    while todo:
        name = todo.pop()
        if name in seen or name not in index.modules:
            continue
        seen.add(name)
        module = index.modules[name]
        parent = name.rpartition(".")[0]
        while parent:  # importing a.b.c runs a/__init__ and a/b/__init__
            want(parent)
            parent = parent.rpartition(".")[0]
        if module.path.suffix != ".py":  # an extension module: the extensions and dotted modules its binary spells
            for value in _binary_strings(module.path):
                for target in _string_targets(value, module):
                    found = index.modules.get(target)
                    if found is not None and ("." in value or found.path.suffix != ".py"):
                        want(target)
            continue
        refs = _refs(module.path, name, module.is_package)
        for target, names in refs.imports:
            want(target)
            for imported in names:
                if imported == "*":
                    for child in index.children.get(target, ()):
                        want(f"{target}.{child}")
                else:
                    want(f"{target}.{imported}")
        for prefix in refs.import_prefixes:  # "pkg." or "pkg.start": the submodules of pkg so named
            package, _, start = prefix.rpartition(".")
            for child in index.children.get(package, ()):
                if child.startswith(start):
                    want(f"{package}.{child}")
        holders = name.partition(".")[0] not in exact
        for value in refs.strings:
            for target in _string_targets(value, module, holders):
                want(target)
    return seen


def _sources(index: ModuleIndex, names: Iterable[str]) -> Iterator[_Refs]:
    """What the Python sources among the modules ``names`` refer to (compiled extensions have no source)."""
    for name in names:
        module = index.modules[name]
        if module.path.suffix == ".py":
            yield _refs(module.path, name, module.is_package)


def client_services(index: ModuleIndex, names: Iterable[str]) -> set[str]:
    """The AWS services the modules ``names`` make clients for (the literal first argument of AWS_CLIENT_CALLS)."""
    return {service for refs in _sources(index, names) for service in refs.client_services}


def strings(index: ModuleIndex, names: Iterable[str]) -> set[str]:
    """Every string constant in the source of the modules ``names`` (file names of the scripts they read)."""
    return {value for refs in _sources(index, names) for value in refs.strings}
