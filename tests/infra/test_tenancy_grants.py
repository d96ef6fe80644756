"""What PodStart may read in S3 follows the buckets an admin registered (context podstart:registeredBuckets), never
every bucket of the account; the fair-share limits reach the functions that enforce them (podstart:limits)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_cdk import assertions

from tests.infra.conftest import Synth

REGISTERED = ["team-a-datasets", "shared-corpora/curated/"]


def _list_bucket_resources(statements: list[dict[str, Any]]) -> list[Any]:
    out: list[Any] = []
    for s in statements:
        actions = s["Action"] if isinstance(s["Action"], list) else [s["Action"]]
        if "s3:ListBucket" in actions:
            res = s["Resource"]
            out += res if isinstance(res, list) else [res]
    return out


def _env(synth_or_template: Any, name: str) -> dict[str, Any]:
    _, fn = synth_or_template.function(name)
    return fn["Properties"]["Environment"]["Variables"]  # type: ignore[no-any-return]


def test_without_registrations_the_api_lists_only_the_data_bucket(synth: Synth) -> None:
    resources = _list_bucket_resources(synth.role_statements("api"))
    assert resources and all("*" not in json.dumps(r) for r in resources), resources
    assert _env(synth, "api")["REGISTERED_BUCKETS"] == ""
    limits = json.loads(_env(synth, "api")["LIMITS"])
    assert limits["long_polls_per_user"] == 2 and limits["long_polls_total"] == 10


@pytest.fixture(scope="module")
def registered(tmp_path_factory: pytest.TempPathFactory) -> Synth:
    from app import build_app
    from infra.workflows import STATEMACHINES_DIR

    outdir = tmp_path_factory.mktemp("cdk.out.registered")
    app, stack, nag = build_app(outdir=str(outdir), statemachines_dir=STATEMACHINES_DIR,
                                context={"aws:cdk:disable-asset-staging": True,
                                         "podstart:registeredBuckets": json.dumps(REGISTERED),
                                         "podstart:limits": {"long_polls_total": 8}})
    assert list(nag.validate_scope(app).violations) == []
    template = assertions.Template.from_stack(stack)
    return Synth(template=template, resources=template.to_json()["Resources"], nag_violations=[],
                 statemachines_dir=STATEMACHINES_DIR, stack=stack, outdir=outdir)


def test_registered_buckets_are_named_in_the_api_grant_and_the_boundary(registered: Synth) -> None:
    resources = json.dumps(_list_bucket_resources(registered.role_statements("api")))
    assert "team-a-datasets" in resources and "shared-corpora" in resources and ":::*" not in resources
    assert _env(registered, "api")["REGISTERED_BUCKETS"] == "team-a-datasets,shared-corpora/curated/"
    [boundary] = [p for p in registered.of_type("AWS::IAM::ManagedPolicy").values()
                  if "boundary" in p["Properties"].get("Description", "")]
    statements = {s.get("Sid"): s for s in boundary["Properties"]["PolicyDocument"]["Statement"]}
    objects = json.dumps(statements["RegisteredBucketObjects"]["Resource"])
    assert "team-a-datasets/*" in objects and "shared-corpora/curated/*" in objects
    assert json.loads(_env(registered, "live")["LIMITS"])["long_polls_total"] == 8


@pytest.mark.parametrize("raw", [["Not_A_Bucket"], ["ok-bucket/../escape/"], 42])
def test_a_bad_registration_fails_the_synth_naming_it(raw: object) -> None:
    from infra.stack import registered_buckets

    with pytest.raises(ValueError, match="podstart:registeredBuckets"):
        registered_buckets(raw)
