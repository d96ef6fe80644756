"""The upstream schemas the tests validate against (../shared/reference/crds: CRDs and JSON schemas), in one place.

CRDs are MBs of YAML: read with libyaml (pure-Python PyYAML took ~70 s of CPU over the unit suite)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

CRDS = Path(__file__).resolve().parents[2] / "shared" / "reference" / "crds"
if not CRDS.is_dir():  # a clone elsewhere (/tmp/fresh): the machine's copy
    CRDS = Path("/work/shared/reference/crds")


def load_crd(file: str) -> dict[str, Any]:
    """A CRD as upstream ships it (a fresh copy on each call: callers may change it)."""
    return dict(yaml.load((CRDS / file).read_text(), Loader=yaml.CSafeLoader))


def crd_schema(file: str, version: str = "v1") -> dict[str, Any]:
    crd = load_crd(file)
    return dict(next(v for v in crd["spec"]["versions"] if v["name"] == version)["schema"]["openAPIV3Schema"])


def json_schema(file: str) -> dict[str, Any]:
    return dict(json.loads((CRDS / file).read_text()))
