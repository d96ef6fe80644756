"""Given the synthesized template, the field's tools find nothing to fix, in any partition."""

from __future__ import annotations

import json
import re
from pathlib import Path

from cfnlint.api import ManualArgs, lint_file

REPO = Path(__file__).resolve().parents[2]


def _template_text(synth) -> str:
    return json.dumps(synth.template.to_json())


def test_no_arn_names_the_aws_partition_literally(synth):
    # Every ARN is built with AWS::Partition (aws-cn, aws-us-gov deploy the same template);
    # CDK renders AWS managed policy ARNs that way too.
    # (state machine definitions are inline, not S3 assets, so their integration ARNs are scanned too)
    for machine in synth.of_type("AWS::StepFunctions::StateMachine").values():
        assert "DefinitionString" in machine["Properties"]
    text = _template_text(synth)
    assert re.findall(r'"?arn:aws:[^"]*', text) == []
    assert "arn:aws-" not in text  # nor another partition hard-coded


def test_infra_builds_arns_with_the_partition():
    offenders = [
        f"{path.relative_to(REPO)}:{n}: {line.strip()}"
        for path in sorted((REPO / "infra").rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if "arn:aws:" in line and "partition-literal" not in line
    ]
    assert offenders == []


def test_cfn_lint_finds_no_errors(synth):
    template = next(synth.outdir.glob("*.template.json"))
    errors = [f"{m.rule.id} {m.message}" for m in lint_file(template, ManualArgs(regions=["us-west-2"]))
              if m.rule.id.startswith("E")]
    assert errors == []


def test_every_checkov_skip_says_why(synth):
    skips = [(name, s) for name, r in synth.resources.items()
             for s in r.get("Metadata", {}).get("checkov", {}).get("skip", [])]
    assert skips
    for name, entry in skips:
        assert re.fullmatch(r"CKV2?_AWS_\d+", entry["id"]), (name, entry)
        assert len(entry["comment"]) > 40, (name, entry)


def test_a_missing_dead_letter_destination_is_never_skipped(synth):
    # A function fed asynchronously (an EventBridge target) may skip checkov's DLQ check only
    # because it has an on-failure destination.
    targets = {t["Arn"]["Fn::GetAtt"][0] for r in synth.of_type("AWS::Events::Rule").values()
               for t in r["Properties"]["Targets"] if "Fn::GetAtt" in t["Arn"]}
    configs = synth.of_type("AWS::Lambda::EventInvokeConfig").values()
    destinations = {c["Properties"]["FunctionName"]["Ref"] for c in configs
                    if c["Properties"].get("DestinationConfig", {}).get("OnFailure", {}).get("Destination")}
    for name, fn in synth.of_type("AWS::Lambda::Function").items():
        skipped = {s["id"] for s in fn.get("Metadata", {}).get("checkov", {}).get("skip", [])}
        if "CKV_AWS_116" in skipped and name in targets:
            assert name in destinations, name
