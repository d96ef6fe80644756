"""Each Lambda bundle holds what its entry imports, and nothing it cannot run without.

Contents: a bundle carries no distribution its entry never imports (the API no Kubernetes client, the steps function
no MCP SDK, no bundle a test or type-stub package), botocore's models only for the services its code makes clients
for, and stays within half of the size it had when each bundle shipped whole distributions.

Smoke: each built bundle's entry is imported in a fresh interpreter that sees only that bundle and the standard
library (`python -S`, PYTHONPATH=<bundle>), as Lambda would run it, and serves a request: a handler call that signs
and sends an AWS request (to a local stand-in for DynamoDB), the X-Ray patching the Tracer does on a first
invocation, a client for every AWS service the bundle keeps a model of. A module or data file the import graph
missed fails here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from functions.lambdas import LAMBDAS
from infra.bench import BASELINE_MB, largest_packages
from infra.bundling import build_bundle, bundle_size_bytes, plan_bundle
from tests.fake_aws_http import FakeAws, serving

NEVER_SHIPPED = ("moto", "pytest", "_pytest", "boto3-stubs", "botocore-stubs", "mypy_boto3_dynamodb", "mypy",
                 "sandbox", "tests", "aws_cdk", "jsii", "cfnlint", "ruff", "importlinter", "playwright")


def _top_levels(bundle: Path) -> set[str]:
    """The bundle's top-level packages and modules, and the distributions whose metadata it carries."""
    names = set()
    for p in bundle.iterdir():
        if p.name.endswith(".dist-info"):
            names.add(p.name.split("-")[0])
        else:
            names.add(p.name.split(".")[0] if p.is_file() else p.name)
    return names


@pytest.fixture(scope="module")
def bundles() -> dict[str, Path]:
    return {name: build_bundle(spec) for name, spec in LAMBDAS.items()}


# -- contents ----------------------------------------------------------------------------------------------------


def test_no_bundle_carries_tests_stubs_or_the_sandbox(bundles):
    for name, bundle in bundles.items():
        tops = _top_levels(bundle)
        assert not tops & set(NEVER_SHIPPED), (name, sorted(tops & set(NEVER_SHIPPED)))
        assert not any(t.endswith("-stubs") or t.startswith("mypy_boto3") for t in tops), name
        assert not list(bundle.glob("**/tests/")), name


def test_the_api_bundle_has_no_kubernetes_client_and_no_workflows(bundles):
    # functions.api's import contract (pyproject.toml): it never imports functions.workflows nor kubernetes
    api = bundles["api"]
    assert not (api / "kubernetes").exists()
    assert not (api / "functions" / "workflows").exists()
    assert not (api / "mcp").exists() and not (api / "mcp_gateway").exists()
    # every route module is there: the lazy route table names them as strings (import_module(f"...{name}"))
    routes = {p.stem for p in (api / "functions" / "api" / "routes").glob("*.py")} - {"__init__"}
    from functions.api.handler import ROUTE_MODULES

    assert set(ROUTE_MODULES) <= routes


def test_the_steps_bundle_has_kubernetes_but_no_mcp_and_no_aiohttp(bundles):
    steps = bundles["steps"]
    assert (steps / "kubernetes" / "client").is_dir() and (steps / "kubernetes" / "dynamic").is_dir()
    for absent in ("mcp", "mcp_gateway", "aiohttp", "starlette", "cryptography"):
        assert not (steps / absent).exists(), absent
    assert not (steps / "kubernetes" / "aio").exists()
    # every workflow module is there: the registry imports them by name on first use
    from functions.workflows.registry import WHERE

    for module, _attr in WHERE.values():
        assert (steps / "functions" / "workflows" / f"{module}.py").is_file(), module


def test_the_mcp_bundle_has_the_sdk_and_neither_kubernetes_powertools_nor_boto3(bundles):
    mcp = bundles["mcp"]
    assert (mcp / "mcp").is_dir() and (mcp / "mcp_gateway" / "lambda_handler.py").is_file()
    # it calls the REST API over HTTPS, never AWS: no boto3 either
    for absent in ("kubernetes", "aws_lambda_powertools", "aws_xray_sdk", "yaml", "boto3", "botocore"):
        assert not (mcp / absent).exists(), absent


def test_botocore_keeps_the_latest_model_of_the_services_the_code_names(bundles):
    plan = plan_bundle(LAMBDAS["api"])
    data = bundles["api"] / "botocore" / "data"
    # the files botocore always loads
    for always in ("endpoints.json", "partitions.json", "sdk-default-configuration.json", "_retry.json"):
        assert (data / always).is_file(), always
    # the services the API calls, one API version each, no documentation examples
    for service in ("dynamodb", "sagemaker", "eks", "ec2", "stepfunctions", "s3", "sts", "pricing"):
        assert service in plan.services
        [version] = list((data / service).iterdir())
        assert (version / "service-2.json.gz").is_file() or (version / "service-2.json").is_file()
        assert not (version / "examples-1.json").exists()
    # and not the services it never calls
    for unused in ("rds", "glue", "redshift", "apigatewaymanagementapi"):
        assert not (data / unused).exists(), unused
    assert (bundles["live"] / "botocore" / "data" / "apigatewaymanagementapi").is_dir()


def test_distributions_ship_their_metadata_and_data_files(bundles):
    steps = bundles["steps"]
    assert (steps / "certifi" / "cacert.pem").is_file()
    assert list(steps.glob("aws_lambda_powertools-*.dist-info/METADATA"))
    assert list(steps.glob("pydantic-*.dist-info/METADATA"))
    assert list(steps.glob("pydantic_core/_pydantic_core.cpython-311-*.so"))
    assert (steps / "functions" / "assets" / "keda_v2.17.1_scaledobjects.json").is_file()
    assert (steps / "functions" / "assets" / "podstart_download.py").is_file()  # read as text, never imported


def test_each_bundle_is_at_most_half_of_what_it_was(bundles):
    for name, bundle in bundles.items():
        size_mb = bundle_size_bytes(bundle) / 1e6
        assert size_mb <= BASELINE_MB[name] / 2, (name, round(size_mb, 1), largest_packages(bundle))


# -- smoke: the bundle alone imports and serves -------------------------------------------------------------------


@pytest.fixture(scope="module")
def fake_aws() -> Iterator[str]:
    from functions.api.handler import openapi_document

    with serving({"/v1/openapi.json": json.dumps(openapi_document()).encode(),
                  "/v1/me": json.dumps({"sub": "u", "roles": ["admin"], "role": "admin"}).encode()}) as url:
        yield url


_PRELUDE = """
import json, sys
assert not any("site-packages" in p for p in sys.path), sys.path  # only the bundle and the standard library
class Context:
    function_name = "podstart-smoke"; memory_limit_in_mb = 512; aws_request_id = "r"
    invoked_function_arn = "arn:aws:lambda:us-west-2:123456789012:function:podstart-smoke"
    def get_remaining_time_in_millis(self): return 29000
def clients(services):
    if not services:
        return
    import boto3
    session = boto3.session.Session()
    for service in services:
        session.client(service, region_name="us-west-2")
def out(**kw): print("SMOKE " + json.dumps(kw))
"""

_SMOKE = {
    "api": """
from functions.api import handler as api
api.load_routes()  # every route module, its models and planners
assert len(api.openapi_document()["paths"]) > 50
event = {"httpMethod": "GET", "path": "/v1/operations", "resource": "/{proxy+}", "headers": {}, "body": None,
         "queryStringParameters": None, "multiValueQueryStringParameters": None, "isBase64Encoded": False,
         "requestContext": {"requestId": "r", "stage": "v1", "path": "/v1/operations", "httpMethod": "GET",
                            "authorizer": {"claims": {"sub": "u", "cognito:username": "u", "cognito:groups": "admin"}},
                            "identity": {"sourceIp": "127.0.0.1"}}}
answer = api.handler(event, Context())
out(status=answer["statusCode"], body=json.loads(answer["body"]))
""",
    "steps": """
from functions.steps import handler as steps
from functions.workflows.registry import WORKFLOWS
kinds = [WORKFLOWS[kind].kind for kind in WORKFLOWS]  # every workflow module imports
from kubernetes import client as k8s, dynamic
api = k8s.ApiClient(k8s.Configuration(host="http://127.0.0.1:9"))
pod = api._ApiClient__deserialize({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}, "V1Pod")
assert pod.spec.containers[0].name == "c"
try:
    steps.handler({"action": "begin", "operation_id": "op-smoke"}, Context())
    outcome = "answered"
except Exception as exc:
    outcome = type(exc).__name__
out(kinds=len(kinds), outcome=outcome)
""",
    "events": """
from functions.events import handler as events
from functions.workflows.registry import WORKFLOWS
kinds = [WORKFLOWS[kind].kind for kind in WORKFLOWS]
answer = events.handler({"detail-type": "Smoke", "source": "smoke", "detail": {}}, Context())
out(kinds=len(kinds), outcome=answer)
""",
    "mcp": """
import os
from mcp_gateway import lambda_handler
event = {"httpMethod": "POST", "path": "/mcp", "body": json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
         "headers": {"Authorization": "Bearer t", "Content-Type": "application/json",
                     "Accept": "application/json, text/event-stream"},
         "requestContext": {"domainName": "abc.execute-api.us-west-2.amazonaws.com", "stage": "prod"}}
answer = lambda_handler.handler(event, Context())
reply = json.loads(answer["body"])
assert "result" in reply, answer
tools = reply["result"]["tools"]
out(status=answer["statusCode"], tools=len(tools))
""",
    "live": """
from functions.live import handler as live
answer = live.handler({"requestContext": {"routeKey": "$disconnect", "connectionId": "c1"}}, Context())
out(status=answer["statusCode"])
""",
    "follow": """
from functions.live import follower
out(loaded=follower.__name__)
""",
    "liveauth": """
import jwt
from jwt.algorithms import has_crypto
assert has_crypto  # RS256 verification needs cryptography
from functions.live import authorizer
try:
    authorizer.handler({"headers": {"Sec-WebSocket-Protocol": "not-a-token"}, "methodArn": "arn"}, Context())
    outcome = "allowed"
except Exception as exc:
    outcome = str(exc)
out(outcome=outcome)
""",
}


def _smoke(name: str, bundle: Path, endpoint: str, tmp_path: Path) -> dict[str, Any]:
    models = bundle / "botocore" / "data"
    services = sorted(p.name for p in models.iterdir() if p.is_dir()) if models.is_dir() else []  # all it keeps
    code = _PRELUDE + _SMOKE[name] + f"\nclients({services!r})\n"
    env = {
        "PATH": "/usr/bin:/bin", "PYTHONPATH": str(bundle), "HOME": str(tmp_path),
        "AWS_DEFAULT_REGION": "us-west-2", "AWS_REGION": "us-west-2",
        "AWS_ACCESS_KEY_ID": "smoke", "AWS_SECRET_ACCESS_KEY": "smoke", "AWS_ENDPOINT_URL": endpoint,
        "AWS_MAX_ATTEMPTS": "1",
        # as Lambda runs it: the Tracer is on, so the first invocation imports the X-Ray SDK and patches botocore
        "LAMBDA_TASK_ROOT": str(bundle), "AWS_LAMBDA_FUNCTION_NAME": f"podstart-{name}",
        "_X_AMZN_TRACE_ID": "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1",
        "AWS_XRAY_DAEMON_ADDRESS": "127.0.0.1:2000", "AWS_XRAY_CONTEXT_MISSING": "IGNORE_ERROR",
        "POWERTOOLS_SERVICE_NAME": f"podstart-{name}", "POWERTOOLS_METRICS_NAMESPACE": "PodStart",
        "PYDANTIC_DISABLE_PLUGINS": "__all__", "POWERTOOLS_LOG_LEVEL": "ERROR",
        "OPERATIONS_TABLE": "ops", "STATE_TABLE": "state", "IDEMPOTENCY_TABLE": "idem", "AUDIT_TABLE": "audit",
        "EVENT_BUS_NAME": "podstart", "DATA_BUCKET": "data", "ASSETS_BUCKET": "assets", "WORKFLOW_ARNS": "{}",
        "LIVE_TABLE": "live", "LIVE_ENDPOINT": "https://live.example.com/v1", "LIVE_FOLLOWER_FUNCTION": "f",
        "USER_POOL_ID": "us-west-2_smoke", "USER_POOL_CLIENT_IDS": "client", "PODSTART_API_URL": endpoint,
    }
    code += "\nout(xray_botocore='aws_xray_sdk.ext.botocore' in sys.modules)\n"
    done = subprocess.run([sys.executable, "-S", "-c", code], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, f"{name} bundle failed:\n{done.stderr[-4000:]}"
    answers: dict[str, Any] = {}
    for line in done.stdout.splitlines():
        if line.startswith("SMOKE "):
            answers.update(json.loads(line[len("SMOKE "):]))
    return answers


def test_the_api_bundle_alone_serves_a_route_that_reads_dynamodb(bundles, fake_aws, tmp_path):
    FakeAws.calls.clear()
    answers = _smoke("api", bundles["api"], fake_aws, tmp_path)
    assert answers["status"] == 200, answers
    assert answers["body"]["items"] == []
    # the request was built from the DynamoDB model, its endpoint resolved and signed (SigV4) by the bundle's botocore
    queries = [c for c in FakeAws.calls if c["target"] == "DynamoDB_20120810.Query"]
    assert queries and queries[0]["authorization"].startswith("AWS4-HMAC-SHA256 ")
    assert answers["xray_botocore"] is True  # the Tracer patched botocore (aws_xray_sdk.ext.botocore is shipped)


def test_the_steps_bundle_alone_loads_every_workflow_and_reads_its_operation(bundles, fake_aws, tmp_path):
    FakeAws.calls.clear()
    answers = _smoke("steps", bundles["steps"], fake_aws, tmp_path)
    from functions.workflows.registry import WHERE

    assert answers["kinds"] == len(WHERE)
    assert any(c["target"] == "DynamoDB_20120810.GetItem" for c in FakeAws.calls), FakeAws.calls
    assert answers["outcome"] == "PermanentStepError"  # the operation is not in the (empty) table: read, not crashed
    assert answers["xray_botocore"] is True


def test_the_mcp_bundle_alone_lists_the_tools_it_reads_from_the_rest_api(bundles, fake_aws, tmp_path):
    FakeAws.calls.clear()
    answers = _smoke("mcp", bundles["mcp"], fake_aws, tmp_path)
    # the catalog came over HTTP (httpx2) from the REST API's OpenAPI document, with the caller's token
    assert {"target": "GET /v1/openapi.json", "authorization": "Bearer t"} in FakeAws.calls
    assert answers["status"] == 200 and answers["tools"] > 30, answers


def test_the_live_bundle_alone_closes_a_socket_record(bundles, fake_aws, tmp_path):
    FakeAws.calls.clear()
    answers = _smoke("live", bundles["live"], fake_aws, tmp_path)
    assert answers["status"] == 200
    assert any(c["target"].startswith("DynamoDB_20120810.") for c in FakeAws.calls), FakeAws.calls


@pytest.mark.parametrize("name", ["events", "follow", "liveauth"])
def test_the_other_bundles_alone_import_and_answer(name, bundles, fake_aws, tmp_path):
    answers = _smoke(name, bundles[name], fake_aws, tmp_path)
    if name == "events":
        from functions.workflows.registry import WHERE

        assert answers["kinds"] == len(WHERE) and answers["outcome"] == {"outcome": "ignored"}
        assert answers["xray_botocore"] is True
    if name == "follow":
        assert answers["loaded"] == "functions.live.follower"
    if name == "liveauth":
        assert answers["outcome"] == "Unauthorized"  # a token that is not a JWT: refused, by the bundled PyJWT
