"""Spec files: YAML (or JSON) with one or many documents (`---`), read with the line of every key and list item, so
an error the API names by field (documents[i].spec.instance_groups[0].instance_count) is shown at its file:line.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

Path_ = tuple[str | int, ...]


class SpecFileError(Exception):
    def __init__(self, where: str, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.where = where
        self.message = message


@dataclass
class Source:
    """One document of a spec file, with where each of its fields is."""

    file: str
    index: int  # its position in the file
    data: dict[str, Any]
    lines: dict[Path_, int] = field(default_factory=dict)

    def line_of(self, path: Path_) -> int | None:
        """The line of the longest part of `path` the document has (a missing field: its parent's line)."""
        for n in range(len(path), -1, -1):
            line = self.lines.get(tuple(path[:n]))
            if line is not None:
                return line
        return None


def _walk(node: yaml.Node, path: Path_, lines: dict[Path_, int], where: str) -> None:
    if isinstance(node, yaml.MappingNode):
        seen: dict[Any, int] = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node.value)
            line = key_node.start_mark.line + 1
            if key in seen:
                raise SpecFileError(f"{where}:{line}", f"{'.'.join(map(str, (*path, key)))} is given twice "
                                                       f"(first at line {seen[key]})")
            seen[key] = line
            lines[(*path, key)] = line
            _walk(value_node, (*path, key), lines, where)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            lines[(*path, i)] = item.start_mark.line + 1
            _walk(item, (*path, i), lines, where)


def load_text(text: str, name: str) -> list[Source]:
    loader = yaml.SafeLoader(text)
    out: list[Source] = []
    try:
        index = 0
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            lines: dict[Path_, int] = {(): node.start_mark.line + 1}
            _walk(node, (), lines, name)
            data = loader.construct_document(node)
            if data is None:
                continue
            if not isinstance(data, dict):
                raise SpecFileError(f"{name}:{node.start_mark.line + 1}",
                                    "a spec document is a mapping: apiVersion, kind, metadata, spec")
            out.append(Source(file=name, index=index, data=_plain(data), lines=lines))
            index += 1
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{name}:{mark.line + 1}" if mark else name
        raise SpecFileError(where, f"not valid YAML: {exc.problem or exc}") from None
    except yaml.YAMLError as exc:
        raise SpecFileError(name, f"not valid YAML: {exc}") from None
    finally:
        loader.dispose()
    return out


def _plain(value: Any) -> Any:
    """YAML's dates and the like as the JSON the API reads (a date becomes its ISO text)."""
    return json.loads(json.dumps(value, default=str))


def load(paths: list[str]) -> list[Source]:
    docs: list[Source] = []
    for p in paths:
        if p == "-":
            text, name = sys.stdin.read(), "<stdin>"
        else:
            try:
                text, name = Path(p).read_text(), p
            except OSError as exc:
                raise SpecFileError(p, f"cannot read it: {exc.strerror or exc}") from None
        found = load_text(text, name)
        if not found:
            raise SpecFileError(name, "no spec documents in it")
        docs += found
    return docs


def cluster_of(doc: dict[str, Any]) -> tuple[str, str | None]:
    raw = doc.get("metadata")
    meta: dict[str, Any] = raw if isinstance(raw, dict) else {}
    name = meta.get("name") if doc.get("kind") == "Cluster" else meta.get("cluster")
    return str(name or ""), meta.get("region")


def group_by_cluster(docs: list[Source]) -> list[list[Source]]:
    """Documents per cluster, in the order the clusters first appear (the API plans one cluster at a time)."""
    groups: dict[str, list[Source]] = {}
    for d in docs:
        groups.setdefault(cluster_of(d.data)[0], []).append(d)
    return list(groups.values())


def dump_yaml(documents: list[dict[str, Any]]) -> str:
    return yaml.safe_dump_all(documents, sort_keys=False, default_flow_style=False, allow_unicode=True,
                              explicit_start=len(documents) > 1)
