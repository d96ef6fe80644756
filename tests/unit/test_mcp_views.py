"""The gateway's views: pure functions over recorded REST answers (tests/events/rest/*.json), each result
within the 4 KB budget, with what an agent decides on and the next call to make."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcp_gateway import views
from mcp_gateway.calls import Shape, build_request, shape_response
from mcp_gateway.catalog import build_catalog
from mcp_gateway.views import BUDGET, Page, compact, decode_token, result_bytes

EVENTS = Path(__file__).resolve().parents[1] / "events" / "rest"


def event(name: str) -> dict[str, Any]:
    return json.loads((EVENTS / f"{name}.json").read_text())  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def specs() -> dict[str, Any]:
    from functions.api.handler import openapi_document

    return {s.name: s for s in build_catalog(openapi_document())}


# --- operations ------------------------------------------------------------------------------------

def test_running_operation_is_a_summary_with_the_wait_call() -> None:
    # Given a create in its first step, as GET /v1/operations/{id} answers it
    op = event("operation_create_running")

    view = views.operation(op, polled=True)

    # Then the summary says where it is and how to wait for the next change, with the version to pass back
    assert (view["status"], view["version"]) == ("RUNNING", 4) and view["step"].startswith("eks_control_plane: ")
    assert "attempt" not in view  # the first attempt goes without saying
    assert view["steps_done"] == "0/5"
    assert view["step"] == f"eks_control_plane: {op['steps'][0]['message']}"
    assert "steps" not in view  # every step: detail="full"
    assert result_bytes(view) < 1000  # a watcher reads one at every change
    assert view["next"] == f'wait: get_operation(operation_id="{op["id"]}", version=4, wait_seconds=60)'
    assert "id" not in view and "kind" not in view  # while it runs, the id is said once (in next)
    assert views.operation(op)["id"] == op["id"]  # a write's answer (e.g. a repeated call's) names it
    assert "outputs" not in json.dumps(view) and "request" not in view


def test_failed_operation_names_the_step_error_and_the_retry() -> None:
    op = event("operation_create_failed")

    view = views.operation(op)

    failed = view["failed"]
    assert failed["name"] == "hyperpod_cluster" and failed["error"] == "ValidationException"
    assert view["error"]["code"] == "ValidationException" and "not available" in view["error"]["message"]
    assert view["steps_done"] == "3/5"
    assert f'retry_operation(operation_id="{op["id"]}")' in view["next"]
    assert 'detail="full"' in view["next"]


def test_succeeded_operation_points_at_the_cluster_and_drops_raw_outputs() -> None:
    op = event("operation_create_succeeded")

    view = views.operation(op)

    assert view["steps_done"] == "5/5" and "phase" not in view
    assert view["result"] == views.line(op["steps"][-1]["message"], 200)  # the result in a line
    assert view["next"].startswith('done; get_cluster(cluster="demo1", region="us-west-2")')
    text = json.dumps(view)
    for raw in ("rtb-", "subnet-", "arn:aws:iam", "components_applied"):
        assert raw not in text, raw
    assert result_bytes(view) < BUDGET / 2  # a watcher reads this at every change


def test_step_messages_are_one_line_of_at_most_160_characters() -> None:
    op = event("operation_create_running")
    op["steps"][0]["message"] = "line one\nline two " + "x" * 400

    message = views.operation(op)["step"].removeprefix("eks_control_plane: ")

    assert "\n" not in message and len(message) <= views.LINE and message.endswith("...")


# --- clusters --------------------------------------------------------------------------------------

def test_cluster_summary_has_groups_counts_and_one_line_each_for_dependencies_and_storage() -> None:
    cluster = event("cluster_get")

    view = views.cluster(cluster)

    assert (view["name"], view["status"]) == ("demo1", "ACTIVE")
    assert "eks" not in view and "hyperpod" not in view  # ACTIVE and InService: implied by an ACTIVE cluster
    assert view["instance_groups"] == [{"name": "accel", "instance_type": "ml.g5.8xlarge",
                                        "availability_zone": "us-west-2a", "capacity_type": "on-demand",
                                        "target_count": 2, "current_count": 2, "status": "InService"}]
    assert view["dependencies"] == "12/12 ready"
    assert view["storage"] == "podstart-data (s3-mountpoint) SUCCEEDED"
    assert view["latest_operation"] == "op-3db0e5c3c81348e5a25a cluster.create SUCCEEDED"
    assert result_bytes(view) < BUDGET / 2 < result_bytes(cluster)


def test_a_dependency_not_ready_is_named_on_the_one_line() -> None:
    cluster = event("cluster_get")
    cluster["dependencies"][1]["status"] = "DEGRADED"

    assert views.cluster(cluster)["dependencies"] == "11/12 ready; not ready: coredns DEGRADED"


# --- lists -----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("tool", "name", "key"), [
    ("get_quotas", "quotas_us_west_2", "instance_type"),
    ("list_instance_types", "instance_types_us_west_2a", "name"),
])
def test_big_lists_page_within_the_budget_and_every_row_is_reachable(tool: str, name: str, key: str) -> None:
    # Given a REST list of ~200 rows (25-45 KB)
    data = event(name)
    seen: list[str] = []
    at = Page()

    # When an agent follows next_token page by page
    for _ in range(50):
        view = compact(tool, data, at, filters=("instance_type",))
        assert result_bytes(view) <= BUDGET
        seen += [row[key] for row in view["items"]]
        if "next_token" not in view:
            break
        assert "narrow with instance_type=" in view["more"] and 'detail="full"' in view["more"]
        offset, rest = decode_token(view["next_token"])
        at = Page(offset, None, rest)

    # Then it saw every row once, in order, in compact form
    assert seen == [row[key] for row in data["items"]]


def test_a_list_page_says_how_many_more_rows_there_are() -> None:
    data = event("quotas_us_west_2")

    view = compact("get_quotas", data, Page(), filters=("instance_type",))

    shown = len(view["items"])
    assert view["more"].startswith(f"{len(data['items']) - shown} more items;")
    assert view["items"][0] == {"instance_type": "ml.c5.12xlarge", "available": 8, "limit": 8}


def test_a_filter_already_used_is_not_offered_again() -> None:
    view = compact("get_quotas", event("quotas_us_west_2"), Page(), filters=("instance_type",),
                   used=frozenset({"instance_type"}))

    assert "narrow with" not in view["more"]


def test_rest_paged_list_continues_on_the_rest_page_then_the_next_one() -> None:
    # Given a REST page of 40 operations that does not fit, and a REST next_token after it
    ops = [{**event("operation_create_running"), "id": f"op-{i:020d}"} for i in range(40)]
    data = {"items": ops, "next_token": "rest-token-2"}

    first = compact("list_operations", data, Page(0, None, "rest-token-1"))
    shown = len(first["items"])
    offset, rest = decode_token(first["next_token"])
    second = compact("list_operations", data, Page(offset, None, rest))

    # Then the gateway token resumes on the same REST page, and its last slice hands over the REST token
    assert (offset, rest) == (shown, "rest-token-1")
    assert second["items"][0]["id"] == ops[shown]["id"]
    while "next_token" in second and decode_token(second["next_token"])[1] == "rest-token-1":
        offset, rest = decode_token(second["next_token"])
        second = compact("list_operations", data, Page(offset, None, rest))
    assert decode_token(second["next_token"]) == (0, "rest-token-2")


def test_a_token_that_is_not_the_gateways_is_the_rest_apis() -> None:
    assert decode_token("eyJrIjoxfQ==") == (0, "eyJrIjoxfQ==")
    assert decode_token(views.encode_token(12, None)) == (12, None)


def test_unplanned_answers_are_cut_to_the_budget() -> None:
    # Given an answer no view knows: a big nested document
    data = {"name": "x", "rows": [{"k": i, "text": "y" * 100} for i in range(200)], "blob": "z" * 20_000}

    view = views.fit(data)

    assert result_bytes(view) <= BUDGET
    assert view["name"] == "x" and view["rows_omitted"] > 0


# --- through the call layer ------------------------------------------------------------------------

def test_detail_full_returns_the_rest_document_as_is(specs: dict[str, Any]) -> None:
    op = event("operation_create_succeeded")
    spec = specs["get_operation"]
    _, full = build_request(spec, {"operation_id": op["id"], "detail": "full"})

    outcome = shape_response(spec, 200, "application/json", json.dumps(op), full)

    assert outcome.structured == op and json.loads(outcome.text) == op


def test_compact_text_and_structured_content_agree(specs: dict[str, Any]) -> None:
    spec = specs["list_instance_types"]

    outcome = shape_response(spec, 200, "application/json", json.dumps(event("instance_types_us_west_2a")), Shape())

    assert json.loads(outcome.text) == outcome.structured
    assert views.result_bytes(outcome.structured, outcome.text) <= BUDGET


def test_gateway_paging_arguments_never_reach_the_rest_api(specs: dict[str, Any]) -> None:
    req, shape = build_request(specs["list_instance_types"], {"region": "us-west-2", "limit": 5,
                                                              "next_token": views.encode_token(25, None),
                                                              "detail": "full"})

    assert req.query == {"region": "us-west-2"}
    assert shape == Shape(full=True, page=Page(25, 5, None))


def test_rest_paging_arguments_carry_the_rest_token(specs: dict[str, Any]) -> None:
    req, shape = build_request(specs["list_operations"], {"limit": 10,
                                                           "next_token": views.encode_token(7, "abc")})

    assert req.query == {"limit": "10", "next_token": "abc"}
    assert shape.page == Page(7, None, "abc")


def test_the_clusters_list_says_which_clusters_can_be_imported_and_never_shows_null_counts() -> None:
    row = views.ROWS["list_clusters"]
    external = row({"name": "theirs", "region": "us-west-2", "status": "InService", "origin": "external",
                    "importable": True, "managed": False, "instance_groups": []})
    assert external["origin"] == "external" and external["importable"] is True
    created = row({"name": "ours", "region": "us-west-2", "status": "ACTIVE", "origin": "created",
                   "importable": False, "instance_groups": [{"name": "accel", "instance_type": "ml.p5.48xlarge",
                                                             "target_count": 2, "current_count": None}]})
    assert "origin" not in created and "importable" not in created
    assert created["groups"] == ["accel ml.p5.48xlarge ?/2"]  # current of target: never a null count


# --- inference -------------------------------------------------------------------------------------

def _endpoint(name: str, status: str = "READY", **over: Any) -> dict[str, Any]:
    return {"name": name, "cluster": "llm", "region": "us-west-2", "mode": "self-managed", "engine": "vllm",
            "model": "Qwen/Qwen3-0.6B/main", "model_source": "s3", "instance_type": "ml.g5.8xlarge", "gpus": 1,
            "replicas": 2, "ready_replicas": 2 if status == "READY" else 0, "autoscaling": None, "service": "internal",
            "pool": None, "status": status, "state": None, "message": None, "service_name": name,
            "routing_strategy": None, "tiered_kv_cache": None, "router": None, "live": True,
            "objects": [{"api_version": "apps/v1", "kind": "Deployment", "name": name, "namespace": "default"},
                        {"api_version": "v1", "kind": "Service", "name": name, "namespace": "default"},
                        {"api_version": "policy/v1", "kind": "PodDisruptionBudget", "name": f"{name}-workers",
                         "namespace": "default"}],
            "operation_id": "op-000042", "created_by": "sandbox-admin", "created_at": "2026-01-01T00:00:00Z", **over}


def test_an_endpoint_says_what_serves_and_the_next_call() -> None:
    ready = compact("get_endpoint", _endpoint("chat"))
    assert (ready["status"], ready["ready_replicas"], ready["replicas"]) == ("READY", 2, 2)
    assert "objects" not in ready and "operation_id" not in ready  # serving: where and how to call it
    deploying = compact("get_endpoint", _endpoint("chat", status="DEPLOYING"))
    assert deploying["objects"] == ["Deployment/chat", "Service/chat", "PodDisruptionBudget/chat-workers"]
    assert ready["next"].startswith('test: invoke_endpoint(cluster="llm", endpoint="chat"')
    failed = compact("get_endpoint", _endpoint("bad", "FAILED", message="ErrImagePull: " + "x" * 600))
    assert failed["message"].startswith("ErrImagePull") and len(failed["message"]) <= 300 and "next" not in failed
    deploying = compact("get_endpoint", _endpoint("new", "DEPLOYING"))
    assert deploying["next"] == 'watch: get_operation(operation_id="op-000042")'
    assert "null" not in json.dumps([ready, failed, deploying])


def test_many_endpoints_and_a_big_pool_fit_the_budget_with_what_an_agent_decides_on() -> None:
    items = [_endpoint(f"chat-{i:02d}", "READY" if i % 3 else "FAILED", message="ErrImagePull" if i % 3 == 0 else None)
             for i in range(64)]
    view = compact("list_endpoints", {"cluster": "llm", "region": "us-west-2", "items": items, "next_token": None})
    assert result_bytes(view) <= BUDGET and len(view["items"]) >= 10 and "more" in view
    assert view["items"][1] == {"name": "chat-01", "serves": "vllm", "model": "Qwen/Qwen3-0.6B/main",
                                "instance_type": "ml.g5.8xlarge", "ready": "2/2", "service": "internal",
                                "status": "READY"}
    pods = [{"pod": f"warm-{i:02d}-abcde", "model": "chat" if i < 10 else "unassigned", "ready": i != 5,
             "node": f"hyperpod-i-{i:017d}"} for i in range(64)]
    pool = {"name": "warm", "cluster": "llm", "region": "us-west-2", "engine": "vllm",
            "image": "vllm/vllm-openai:v0.10.1",
            "instance_type": "ml.g5.8xlarge", "gpus_per_worker": 1, "workers": 64,
            "by_model": {"chat": 10, "unassigned": 54}, "pods": pods, "operation_id": "op-1"}
    pools = compact("list_pools", {"cluster": "llm", "region": "us-west-2", "items": [pool]})
    assert result_bytes(pools) <= BUDGET
    assert pools["items"] == [{"name": "warm", "engine": "vllm", "instance_type": "ml.g5.8xlarge", "gpus_per_worker": 1,
                               "workers": 64, "ready": 63, "by_model": {"chat": 10, "unassigned": 54}}]


def test_an_answer_keeps_the_message_and_usage_not_the_engines_raw_json() -> None:
    content = "Hello from Qwen: " + "word " * 100
    raw = {"id": "chatcmpl-1", "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
           "usage": {"prompt_tokens": 3, "completion_tokens": 100, "total_tokens": 103}}
    view = compact("invoke_endpoint", {"endpoint": "chat", "status": 200, "model": "Qwen", "content": content,
                                       "response": raw, "truncated": False})
    assert view == {"endpoint": "chat", "status": 200, "model": "Qwen", "content": content, "usage": raw["usage"]}
# --- features ----------------------------------------------------------------------------------------

def _features_doc() -> dict[str, Any]:
    """A live features document as the REST API builds it: training operator on, tiered checkpointing on with
    a broken chain (the annotation is gone), Karpenter on with two pools."""
    from functions.domain.features import document as f

    role_arn = "arn:aws:iam::123456789012:role/podstart/ps-demo-checkpoint"
    inp = f.FeatureInputs(
        addons={"cert-manager": {"status": "ACTIVE", "addonVersion": "v1.16.1-eksbuild.1"},
                "eks-pod-identity-agent": {"status": "ACTIVE", "addonVersion": "v1.3.4-eksbuild.1"},
                "amazon-sagemaker-hyperpod-training-operator": {"status": "ACTIVE",
                                                                "addonVersion": "v1.2.0-eksbuild.1"},
                "metrics-server": {"status": "CREATE_FAILED", "addonVersion": "v0.7.2-eksbuild.1",
                                   "health": {"issues": [{"message": "insufficient capacity " * 40}]}}},
        associations=(("aws-hyperpod", "hp-training-operator-controller-manager"),),
        hyperpod={"ClusterStatus": "InService",
                  "TieredStorageConfig": {"Mode": "Enable", "InstanceMemoryAllocationPercentage": 20},
                  "AutoScaling": {"Mode": "Enable", "AutoScalerType": "Karpenter", "Status": "InService"}},
        checkpoint_role={"Arn": role_arn, "AssumeRolePolicyDocument": {"Statement": []}, "policy": None},
        service_account={"metadata": {"name": "podstart-checkpointing", "annotations": {}}},
        issuer="https://oidc.eks.us-west-2.amazonaws.com/id/ABC",
        node_pools=tuple({"metadata": {"name": f"podstart-{g}", "labels": {
            "app.kubernetes.io/managed-by": "podstart", "podstart.dev/instance-group": g}},
            "spec": {"template": {"spec": {"nodeClassRef": {"name": f"podstart-{g}"}}}, "limits": {"cpu": "1000"},
                     "disruption": {"consolidateAfter": "30s", "budgets": [{"nodes": "10%"}]}}}
            for g in ("workers", "accel")),
        node_classes=tuple({"metadata": {"name": f"podstart-{g}"}, "spec": {"instanceGroups": [g]}}
                           for g in ("workers", "accel")),
    )
    return f.document(inp, checkpoint_role="ps-demo-checkpoint", bucket="podstart-data",
                      prefix="checkpoints/demo/").model_dump(mode="json")


def test_features_view_keeps_status_reasons_dependencies_and_only_the_broken_links() -> None:
    # Given a document with a broken checkpointing chain, a failed add-on and two Karpenter pools
    doc = _features_doc()

    view = compact("get_features", doc)

    # Then each feature is one line: what an agent decides on, within the budget
    assert result_bytes(view) <= BUDGET < result_bytes(doc)
    assert result_bytes(view) < 2400  # a dozen lines, read before and after every change
    assert view["training_operator"] == "ACTIVE v1.2.0-eksbuild.1"
    assert view["cert_manager"].endswith("(required by training_operator)")
    checkpointing = view["tiered_checkpointing"]
    assert checkpointing.startswith("DEGRADED: ") and "annotation" in checkpointing
    broken = checkpointing.partition("broken links: ")[2]
    assert {"annotation", "policy", "trust"} <= set(broken.rstrip(")").split(", "))
    assert "service_account" not in broken
    assert view["metrics_server"].startswith("DEGRADED v0.7.2-eksbuild.1: ") and len(view["metrics_server"]) <= 160
    assert "pools=podstart-workers (workers); podstart-accel (accel)" in view["autoscaling"]
    assert view["observability"] == "off (needs cert_manager, pod_identity_agent, metrics_server)"


def test_a_features_patch_that_changed_nothing_shows_the_compact_live_state() -> None:
    view = compact("update_features", {"changed": False, "features": _features_doc()})
    assert view["changed"] is False and view["features"]["autoscaling"].startswith("ACTIVE")
    assert result_bytes(view) <= BUDGET


@pytest.mark.parametrize("kind,resource,request_,call", [
    ("job.submit", "jobs/default/train", {}, 'get_job(cluster="c1", region="us-west-2", job="train")'),
    ("job.submit", "jobs/team-a/train", {}, 'get_job(cluster="c1", region="us-west-2", job="train", '
                                            'namespace="team-a")'),
    ("job.delete", "jobs/default/train", {}, 'list_jobs(cluster="c1", region="us-west-2")'),
    ("endpoint.deploy", "chat", {}, 'get_endpoint(cluster="c1", region="us-west-2", endpoint="chat")'),
    ("endpoint.delete", "chat", {}, 'list_endpoints(cluster="c1", region="us-west-2")'),
    ("model.download", "model/Qwen/Qwen3-0.6B/main", {}, 'list_models(cluster="c1", region="us-west-2")'),
    ("features.update", "features", {}, 'get_features(cluster="c1", region="us-west-2")'),
    ("nodes.reboot", "nodes", {"node_ids": ["i-0abc"]},
     'get_node(cluster="c1", region="us-west-2", node_id="i-0abc")'),
    ("nodes.health_check", "nodes", {"node_ids": ["i-1", "i-2"]}, 'list_nodes(cluster="c1", region="us-west-2")'),
    ("namespace.create", "namespaces/team-a", {}, 'list_namespaces(cluster="c1", region="us-west-2")'),
    ("cluster.delete", None, {}, "list_clusters()"),
])
def test_a_finished_operation_names_the_status_tool_of_what_it_acted_on(
        kind: str, resource: str | None, request_: dict[str, object], call: str) -> None:
    op = {"id": "op-1", "kind": kind, "status": "SUCCEEDED", "version": 3, "request": request_,
          "target": {"cluster": "c1", "region": "us-west-2", **({"resource": resource} if resource else {})}}
    assert views.next_action(op) == f"done; {call} shows the result"


def test_a_nodes_view_says_its_fault_once() -> None:
    # Given a node whose GPU fault shows in its fault line, a condition and its own events
    xid = "GPU 0 (PCI 0000:53:00.0) reported Xid 48: double-bit ECC error; reboot required"
    n = {"node_id": "i-0abc", "instance_type": "ml.g5.8xlarge", "health": "UnschedulablePendingReboot",
         "last_fault": f"2026-12-05T18:39:36.953000Z {xid}",
         "conditions": [{"type": "AcceleratedHardwareReady", "status": "False", "reason": "NvidiaXID48Error",
                         "message": xid},
                        {"type": "Ready", "status": "False", "reason": "KubeletNotReady",
                         "message": "PLEG not healthy"}],
         "events": [{"time": "2026-12-05T18:39:36.952000Z", "level": "Error", "description": f"Instance i-0abc: {xid}"},
                    {"time": "2026-12-05T18:39:30Z", "level": "Info", "description": "Instance i-0abcd is Running"}]}

    view = views.node(n)

    # Then the fault line has it (to the second); the condition names its reason only; other messages stay
    assert view["fault"] == f"2026-12-05T18:39:36Z {xid}"
    assert view["conditions"] == ["AcceleratedHardwareReady False NvidiaXID48Error",
                                  "Ready False KubeletNotReady: PLEG not healthy"]
    # its own events leave out "Instance <this node>"; another node's id stays
    assert view["events"] == [f"2026-12-05T18:39:36Z Error: {xid}",
                              "2026-12-05T18:39:30Z Info: Instance i-0abcd is Running"]
