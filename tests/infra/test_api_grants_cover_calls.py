"""Given the synthesized stack, each function's role allows every AWS call its code makes.

The other direction of test_iam_actions_used: a call the API makes without a grant is an AccessDenied (a
500) only in a real account, never in the sandbox. The modules scanned are the ones the API loads (the
handler, its routes, the use cases and the adapters its services build), found by importing them; a call
name counts as covered when the api role allows that operation in at least one of the AWS services the
API uses that have it (`describe_cluster` is EKS's and SageMaker's alike).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from fnmatch import fnmatchcase
from functools import cache
from pathlib import Path

import boto3
import pytest

from functions.workflows.registry import WHERE

REPO = Path(__file__).resolve().parents[2]
SERVICES = {"ec2": "ec2", "eks": "eks", "sagemaker": "sagemaker", "fsx": "fsx", "servicequotas": "service-quotas",
            "dynamodb": "dynamodb", "events": "events", "states": "stepfunctions", "pricing": "pricing", "iam": "iam",
            "s3": "s3"}
# What each function loads (its handler, and for the API the services its first request builds).
_WORKFLOW_MODULES = tuple(sorted({f"functions.workflows.{m}" for m, _ in WHERE.values()}))
ENTRIES = {"api": ("functions.api.handler", "functions.api.deps"),
           # every workflow's module (each loads with its kind's first step), and spec.apply's step bodies (the use
           # cases starting child operations, loaded on its first step)
           "steps": ("functions.steps.handler", *_WORKFLOW_MODULES, "functions.workflows.spec_children"),
           # the reads its events and the scheduled discovery load when they first need them
           "events": ("functions.events.handler", *_WORKFLOW_MODULES, "functions.adapters.cluster_state",
                      "functions.logic.clusters.discovery"),
           "live": ("functions.live.handler",),
           "follow": ("functions.live.follower",)}
_CALL = re.compile(r"\.([a-z][a-z0-9_]*)\s*\(")
_PAGINATOR = re.compile(r"""get_paginator\(\s*["']([a-z][a-z0-9_]*)["']""")
# Names the scan sees that are not the API's AWS calls, each with its reason.
IGNORED = {
    "get", "list",
    "search",  # re.Pattern.search (the job metrics parsed from a log), not SageMaker's Search
    "create_cluster", "delete_cluster",  # PodStart's own use-case functions (functions/logic) of those names
    "describe_execution",  # StepFunctionsRunner.find: only the events function's sweep calls it
    "transact_write_items",  # authorized per item as dynamodb:PutItem (granted), not as an action of its own
}
IGNORED_FOR: dict[str, set[str]] = {
    "api": {"list_groups",  # PodStart's cluster_views.list_groups
            "list_objects",  # PodStart's logic.storage.list_objects (the reader's call is list_objects_v2)
            # S3 HeadBucket and ListObjectsV2 are authorized as s3:ListBucket (granted), not actions of their own
            "head_bucket", "list_objects_v2",
            # the inference use cases (functions/logic/inference/endpoints.py) of those names
            "list_endpoints", "update_endpoint", "delete_endpoint",
            "list_models",  # PodStart's logic.models.list_models (the bucket lister's call is list_objects_v2)
            "get_caller_identity"},  # sts:GetCallerIdentity needs no permission (the advice's account id)
    "follow": {"scan",  # DynamoLiveConnections.connections(): the live function's bus fan-out, not a follower's
               "list_objects"},  # logic.data (a job's inputs, checked when the API submits it), loaded with logic.jobs
    "live": {"list_objects"},  # logic.data, loaded with logic.jobs (a log follow's pod lookup): the API's call
    "steps": {"head_object",  # S3 HeadObject is authorized as s3:GetObject (granted on the assets bucket)
              "list_objects_v2",  # authorized as s3:ListBucket (granted on the data bucket, models/*)
              # spec.apply's children load the use cases: these are PodStart's own functions of those names
              # (logic.endpoints, logic.storage.list_objects), HeadBucket (authorized as s3:ListBucket, granted), and
              # adapter calls no child operation makes (a job page's MLflow link, the tracking-server catalog,
              # cancelling an execution: the API's)
              "update_endpoint", "delete_endpoint", "list_objects", "head_bucket",
              "create_presigned_mlflow_tracking_server_url", "list_mlflow_tracking_servers", "stop_execution"},
    # The events function uses the reader's describe_hyperpod, the discovery's list_clusters and describe_regions,
    # and the runner's find (describe_execution, granted): the other catalog reads and execution starts are the API's.
    "events": {"describe_addon", "describe_availability_zones", "describe_file_systems", "head_bucket",
               "list_objects", "list_objects_v2",
               "describe_instance_type_offerings", "describe_instance_types", "describe_nat_gateways",
               "describe_spot_price_history", "describe_subnets", "describe_vpcs",
               "list_access_entries", "list_addons", "list_service_quotas", "list_training_plans", "start_execution",
               "stop_execution"},
}
# The events function loads the workflow table for the records' status hooks (no AWS call); it runs no step.
SKIP_MODULES = {"events": ("functions/workflows/",)}


def _files(modules: tuple[str, ...]) -> list[Path]:
    code = (f"import json, sys, {', '.join(modules)}\n"
            "print(json.dumps([m.__file__ for n, m in sys.modules.items() if n.startswith('functions.') and "
            "getattr(m, '__file__', None)]))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "AWS_DEFAULT_REGION": "us-west-2"})
    return sorted(Path(p) for p in json.loads(out.stdout.strip().splitlines()[-1]))


@cache
def _operations(service: str) -> dict[str, str]:
    client = boto3.session.Session().client(service, region_name="us-east-1")
    return {snake: api for snake, api in client.meta.method_to_api_mapping.items()}


def _granted(synth, function: str) -> list[str]:
    out: list[str] = []
    for s in synth.role_statements(function):
        if s["Effect"] == "Allow":
            out += s["Action"] if isinstance(s["Action"], list) else [s["Action"]]
    return out


@pytest.mark.parametrize("function", sorted(ENTRIES))
def test_every_aws_call_a_function_makes_is_granted_to_its_role(synth, function):
    calls: set[str] = set()
    for path in _files(ENTRIES[function]):
        if any(part in str(path) for part in SKIP_MODULES.get(function, ())):
            continue
        text = path.read_text()
        calls |= set(_CALL.findall(text)) | set(_PAGINATOR.findall(text))
    granted = _granted(synth, function)
    missing = []
    for call in sorted(calls - IGNORED - IGNORED_FOR.get(function, set())):
        actions = [f"{prefix}:{_operations(svc)[call]}" for prefix, svc in SERVICES.items()
                   if call in _operations(svc)]
        if actions and not any(fnmatchcase(a, g) for a in actions for g in granted):
            missing.append(f"{call} -> {' or '.join(actions)}")
    assert missing == [], "\n".join(missing)
