"""Synthesize PodStart once per test session; every infra test reads the same template."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")
REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from aws_cdk import assertions  # noqa: E402

from infra.workflows import STATEMACHINES_DIR, workflow_files  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures"


@dataclass
class Synth:
    template: assertions.Template
    resources: dict[str, dict[str, Any]]
    nag_violations: list[Any]
    statemachines_dir: Path
    stack: Any
    outdir: Path

    def of_type(self, cfn_type: str) -> dict[str, dict[str, Any]]:
        return {k: v for k, v in self.resources.items() if v["Type"] == cfn_type}

    def function(self, name: str) -> tuple[str, dict[str, Any]]:
        """(logical id, resource) of the PodStart function ``podstart-<name>``."""
        [(fn_id, fn)] = [
            (k, v)
            for k, v in self.of_type("AWS::Lambda::Function").items()
            if v["Properties"].get("FunctionName") == f"podstart-{name}"
        ]
        return fn_id, fn

    def role_statements(self, name: str) -> list[dict[str, Any]]:
        """Every statement of the policies attached to function ``name``'s role."""
        role_id = self.function(name)[1]["Properties"]["Role"]["Fn::GetAtt"][0]
        return [
            statement
            for cfn_type in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy")
            for policy in self.of_type(cfn_type).values()
            if any(r.get("Ref") == role_id for r in policy["Properties"].get("Roles", []))
            for statement in policy["Properties"]["PolicyDocument"]["Statement"]
        ]


@pytest.fixture(scope="session")
def synth(tmp_path_factory: pytest.TempPathFactory) -> Synth:
    from app import build_app

    # The real workflows when another engineer has written them, else a fixture definition.
    directory = STATEMACHINES_DIR if workflow_files(STATEMACHINES_DIR) else FIXTURES
    outdir = tmp_path_factory.mktemp("cdk.out")
    app, stack, nag = build_app(
        outdir=str(outdir),
        # Point assets at build/lambda instead of copying ~200 MB per session.
        context={"aws:cdk:disable-asset-staging": True},
        statemachines_dir=directory,
    )
    report = nag.validate_scope(app)  # the same findings synth would fail on, readable
    violations = list(report.violations)
    template = assertions.Template.from_stack(stack) if not violations else None
    return Synth(
        template=template,  # type: ignore[arg-type]
        resources=template.to_json()["Resources"] if template else {},
        nag_violations=violations,
        statemachines_dir=directory,
        stack=stack,
        outdir=outdir,
    )


@pytest.fixture(scope="session")
def template(synth: Synth) -> assertions.Template:
    if synth.template is None:
        pytest.fail("synth refused: cdk-nag has unacknowledged findings (see test_nag)")
    return synth.template
