"""Spec documents and the podstart CLI's pure parts: the document models are the REST request models, errors are
located in the document, the CLI maps them to file:line, and every route the CLI calls is in the OpenAPI
document with the parameters it sends."""

from __future__ import annotations

import re
from typing import Any

import pytest

from functions.domain.clusters.models import ClusterCreate
from functions.domain.inference.endpoints import EndpointCreate
from functions.domain.kinds import KINDS, STEP_BUDGETS
from functions.domain.principal import Role
from functions.domain.specs.document import PHASES, ChildAction, json_schema, parse_documents
from functions.domain.training.jobs import JobSubmit
from functions.logic.specs.apply import action_role
from podstart_cli import follow, output, specfile
from podstart_cli.client import ROUTES

CLUSTER = {"apiVersion": "podstart/v1", "kind": "Cluster", "metadata": {"name": "demo", "region": "us-west-2"},
           "spec": {"instance_groups": [{"name": "gpu", "instance_type": "ml.g5.8xlarge", "instance_count": 1,
                                         "availability_zone": "us-west-2a"}]}}


def _with(spec: dict[str, Any]) -> dict[str, Any]:
    return {**CLUSTER, "spec": {**CLUSTER["spec"], **spec}}


def test_a_document_is_validated_by_the_route_models_and_its_errors_are_located_in_it() -> None:
    docs, errors = parse_documents([CLUSTER])
    assert errors == [] and docs[0].spec.create_body("demo", "us-west-2") == ClusterCreate.model_validate(
        {**CLUSTER["spec"], "name": "demo", "region": "us-west-2"})
    # a field rule of ClusterCreate's group model, a validator of ClusterCreate, one of StorageAdd
    group = {"name": "gpu", "instance_type": "ml.g5.8xlarge", "instance_count": 0, "availability_zone": "us-west-2a"}
    _, errors = parse_documents([_with({"instance_groups": [group]}),
                                 _with({"vpc_cidr": "8.8.0.0/16",
                                        "instance_groups": [{**group, "instance_count": 1}] * 2}),
                                 _with({"volumes": [{"kind": "s3", "bucket": "Not_A_Bucket"}]}),
                                 _with({"name": "demo"}),
                                 {**CLUSTER, "kind": "Nodes"}, {**CLUSTER, "apiVersion": "v1"}])
    locs = {tuple(e["loc"]): e["msg"] for e in errors}
    assert ("body", "documents", 0, "spec", "instance_groups", 0, "instance_count") in locs
    assert "used twice" in locs[("body", "documents", 1, "spec", "instance_groups")]
    assert "not a private IPv4 range" in locs[("body", "documents", 1, "spec", "vpc_cidr")]
    assert ("body", "documents", 2, "spec", "volumes", 0, "bucket") in locs
    assert locs[("body", "documents", 3, "spec")] == "name goes in metadata, not in spec"
    assert ("body", "documents", 4, "kind") in locs
    assert ("body", "documents", 5, "apiVersion") in locs


def test_the_published_schema_is_the_request_models_with_the_name_moved_to_metadata() -> None:
    defs = json_schema()["$defs"]

    def fields(model: Any) -> set[str]:
        return set(model.model_json_schema()["properties"])

    assert set(defs["ClusterSpec"]["properties"]) == fields(ClusterCreate) - {"name", "region"} | {"features",
                                                                                                   "volumes"}
    assert set(defs["TrainingJobSpec"]["properties"]) == fields(JobSubmit) - {"name", "namespace"}
    assert set(defs["EndpointSpec"]["properties"]) == fields(EndpointCreate) - {"name"}
    assert {"ClusterDocument", "TrainingJobDocument", "EndpointDocument"} <= set(defs)


def test_spec_apply_runs_the_phases_in_dependency_order_each_with_a_budget() -> None:
    assert KINDS["spec.apply"] == PHASES
    assert PHASES.index("cluster") < PHASES.index("instance_groups") < PHASES.index("features") \
        < PHASES.index("jobs") < PHASES.index("endpoints") < PHASES.index("prune")
    assert set(STEP_BUDGETS["spec.apply"]) == set(PHASES)


@pytest.mark.parametrize(("kind", "args", "role"), [
    ("instance_group.scale", {}, Role.operator),
    ("instance_group.delete", {}, Role.admin),
    ("storage.remove", {"kind": "s3"}, Role.operator),
    ("storage.remove", {"kind": "fsx_lustre"}, Role.admin),  # it deletes the file system's data
    ("job.delete", {}, Role.operator),
])
def test_each_child_needs_the_role_its_deletion_needs(kind: str, args: dict[str, Any], role: Role) -> None:
    assert action_role(ChildAction(phase="prune", kind=kind, resource="x", args=args)) is role


TEXT = """\
apiVersion: podstart/v1
kind: Cluster
metadata:
  name: demo
spec:
  instance_groups:
    - name: gpu
      instance_count: 0
---
# the second document
kind: Endpoint
spec: {}
"""


def test_the_cli_reads_documents_with_the_line_of_every_field() -> None:
    docs = specfile.load_text(TEXT, "c.yaml")
    assert [d.index for d in docs] == [0, 1]
    assert docs[0].line_of(("spec", "instance_groups", 0, "instance_count")) == 8
    assert docs[0].line_of(("spec", "instance_groups", 0, "missing")) == 7  # the nearest field it has
    assert docs[1].line_of(("kind",)) == 11
    where, inner = output.place(["body", "documents", 0, "spec", "instance_groups", 0, "instance_count"], docs)
    assert where == "c.yaml:8" and output.loc_path(inner) == "spec.instance_groups[0].instance_count"
    with pytest.raises(specfile.SpecFileError, match=r"c\.yaml:3: kind is given twice \(first at line 2\)"):
        specfile.load_text("apiVersion: podstart/v1\nkind: Cluster\nkind: Endpoint\n", "c.yaml")
    with pytest.raises(specfile.SpecFileError, match=r"c\.yaml:1: a spec document is a mapping"):
        specfile.load_text("- a\n- b\n", "c.yaml")


def test_polling_prints_only_the_lines_it_has_not_shown() -> None:
    assert follow.new_lines(["a", "b", "c"], ["b", "c", "d", "e"]) == ["d", "e"]
    assert follow.new_lines([], ["a"]) == ["a"]
    assert follow.new_lines(["a", "b"], ["a", "b"]) == []
    assert follow.new_lines(["x"], ["y", "z"]) == ["y", "z"]  # more was written than a tail holds


def test_every_route_the_cli_calls_is_in_the_openapi_document_with_the_parameters_it_sends() -> None:
    from functions.api.handler import openapi_document

    paths = openapi_document()["paths"]
    for name, route in ROUTES.items():
        template = re.sub(r"\{(\w+)\}", r"{\1}", route.path)
        op = (paths.get(template) or {}).get(route.method.lower())
        assert op is not None, f"{name}: {route.method} {route.path} is not in the OpenAPI document"
        query = {p["name"] for p in op.get("parameters", []) if p.get("in") == "query"}
        assert set(route.query) <= query, f"{name}: sends {set(route.query) - query} the route does not take"
        assert route.body == ("requestBody" in op), f"{name}: body or not as the route says"


def test_the_mcp_tools_for_specs_say_what_they_do() -> None:
    from functions.api.handler import openapi_document
    from mcp_gateway.catalog import IDEMPOTENCY_ARG, build_catalog, reference

    tools = {t.name: t for t in build_catalog(openapi_document())}
    assert tools["plan_spec"].annotations == {"readOnlyHint": True}  # a POST that only reads
    assert tools["export_spec"].annotations == {"readOnlyHint": True}
    apply = tools["apply_spec"]
    assert apply.annotations["destructiveHint"] is True and IDEMPOTENCY_ARG in reference(apply)["taken_but_not_listed"]
    assert "get_operation" in apply.description
    assert set(apply.input_schema["properties"]) >= {"documents", "prune", "dry_run"}


def test_the_sample_spec_in_examples_is_valid() -> None:
    from pathlib import Path

    sources = specfile.load([str(Path(__file__).resolve().parents[2] / "examples" / "cluster.yaml")])
    docs, errors = parse_documents([s.data for s in sources])
    assert errors == [] and [d.kind for d in docs] == ["Cluster", "TrainingJob", "Endpoint"]
    assert {s.data["metadata"].get("cluster") or s.data["metadata"]["name"] for s in sources} == {"demo"}


def test_the_mcp_view_of_a_spec_plan_keeps_each_diff_and_child_within_the_budget() -> None:
    from mcp_gateway.views import BUDGET, compact, result_bytes

    child = {"phase": "instance_groups", "kind": "instance_group.scale", "resource": "cpu",
             "plan": {"dry_run": True, "kind": "instance_group.scale", "changes": [{"action": "update"}] * 200,
                      "cost": {"hourly": 0.12, "monthly_estimate": 87.6}}}
    plan = {"changed": True, "cluster": "demo", "region": "us-west-2", "prune": False,
            "summary": {"create": 0, "update": 1, "unchanged": 0, "replace-needed": 0, "delete": 0},
            "cost": {"hourly": 0.12, "monthly_estimate": 87.6}, "warnings": [],
            "documents": [{"index": 0, "kind": "Cluster", "name": "demo", "action": "update", "warnings": [],
                           "diffs": [{"path": "spec.instance_groups[cpu].instance_count", "old": 1, "new": 2,
                                      "change": "update"}], "operations": [child]}]}
    view = compact("plan_spec", plan)
    assert result_bytes(view) <= BUDGET
    doc = view["documents"][0]
    assert doc["diffs"] == ["update spec.instance_groups[cpu].instance_count: 1 -> 2"]
    assert doc["operations"] == [{"op": "instance_group.scale cpu", "phase": "instance_groups", "hourly_usd": 0.12}]
    assert compact("apply_spec", {"changed": False, "plan": {**plan, "changed": False}})["plan"]["next"].startswith(
        "nothing differs")
