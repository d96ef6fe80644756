"""Given cdk-nag's AWS Solutions pack on the app, every finding is fixed or acknowledged."""

from __future__ import annotations


def test_cdk_nag_reports_no_unacknowledged_findings(synth):
    findings = [
        f"{v.severity}: {v.rule_name} at {[r.construct_path for r in v.violating_constructs]}"
        for v in synth.nag_violations
    ]
    assert findings == [], "\n".join(findings)


def test_the_nag_check_does_catch_an_unacknowledged_finding():
    # Given a throwaway app with a bucket that breaks AWS Solutions rules
    import aws_cdk as cdk
    from aws_cdk import aws_s3 as s3
    from cdk_nag import AwsSolutionsChecks

    app = cdk.App()
    stack = cdk.Stack(app, "Probe")
    s3.Bucket(stack, "Loose")
    nag = AwsSolutionsChecks(app)
    # When cdk-nag validates it
    rules = {v.rule_name for v in nag.validate_scope(app).violations}
    # Then the findings are reported (so an empty report for PodStart means something)
    assert {"AwsSolutions-S1", "AwsSolutions-S10"} <= rules
