"""The AWS resources PodStart needs, created in the embedded AWS the way the CDK stack creates them
in an account. Key schemas match infra/data.py (a test compares them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from functions.domain.kinds import kind_of_file
from functions.events.projector import DISCOVER
from functions.logic.clusters.discovery import DISCOVER_EVERY_MINUTES

REPO = Path(__file__).resolve().parent.parent
STATEMACHINES = REPO / "statemachines"

TABLES: dict[str, dict[str, Any]] = {
    "operations": {
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [
            {"AttributeName": n, "AttributeType": "S"}
            for n in ("pk", "list_pk", "created_key", "target_key", "status")
        ],
        "GlobalSecondaryIndexes": [
            {"IndexName": "by_created", "KeySchema": [{"AttributeName": "list_pk", "KeyType": "HASH"},
                                                      {"AttributeName": "created_key", "KeyType": "RANGE"}],
             "Projection": {"ProjectionType": "ALL"}},
            {"IndexName": "by_target", "KeySchema": [{"AttributeName": "target_key", "KeyType": "HASH"},
                                                     {"AttributeName": "created_key", "KeyType": "RANGE"}],
             "Projection": {"ProjectionType": "ALL"}},
            {"IndexName": "by_status", "KeySchema": [{"AttributeName": "status", "KeyType": "HASH"},
                                                     {"AttributeName": "created_key", "KeyType": "RANGE"}],
             "Projection": {"ProjectionType": "ALL"}},
        ],
    },
    "idempotency": {
        "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
        "ttl": "expiration",
    },
    "audit": {
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        "AttributeDefinitions": [{"AttributeName": n, "AttributeType": "S"}
                                 for n in ("pk", "sk", "actor", "cluster_key")],
        "GlobalSecondaryIndexes": [
            {"IndexName": "by_actor", "KeySchema": [{"AttributeName": "actor", "KeyType": "HASH"},
                                                    {"AttributeName": "sk", "KeyType": "RANGE"}],
             "Projection": {"ProjectionType": "ALL"}},
            {"IndexName": "by_cluster", "KeySchema": [{"AttributeName": "cluster_key", "KeyType": "HASH"},
                                                      {"AttributeName": "sk", "KeyType": "RANGE"}],
             "Projection": {"ProjectionType": "ALL"}},
        ],
        "ttl": "expires_at",
    },
    "state": {
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                 {"AttributeName": "sk", "AttributeType": "S"}],
        "ttl": "ttl",
    },
}

BUS_NAME = "podstart"
SWEEP_MINUTES = 5
REGION = "us-west-2"
ACCOUNT = "123456789012"


def table_name(logical: str) -> str:
    return f"podstart-{logical}"


def bucket_names() -> dict[str, str]:
    return {"data": f"podstart-data-{ACCOUNT}", "assets": f"podstart-assets-{ACCOUNT}"}


# Seeded buckets of other teams: one an admin registered (PODSTART_REGISTERED_BUCKETS' default), one nobody did.
TEAM_BUCKET = f"team-datasets-{ACCOUNT}"
OTHER_TEAM_BUCKET = f"other-team-private-{ACCOUNT}"
TEAM_OBJECTS = {"datasets/alpaca_en_demo.json": b'[{"instruction": "Say hi", "input": "", "output": "Hi!"}]\n',
                "datasets/README.md": b"Team datasets for fine-tuning.\n",
                "checkpoints/.keep": b""}
OTHER_OBJECTS = {"payroll/2026.csv": b"name,salary\n", "keys/notes.txt": b"not for PodStart\n"}
# The recipes' default datasets in the data bucket (what their parameters name when left out), as a demo would ship
# them: LLaMA-Factory's dataset_info.json and alpaca_en_demo, MS-Swift's sft/train.jsonl, VERL's gsm8k parquet files;
# and one model already downloaded (download_model wrote it: its files and `_COMPLETE`), so a deploy from
# /data/models/Qwen/Qwen3-0.6B/main/ finds it.
DEMO_MODEL = "models/Qwen/Qwen3-0.6B/main/"
DATA_OBJECTS = {
    **{DEMO_MODEL + name: body for name, body in (
        ("config.json", b'{"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3"}'),
        ("tokenizer.json", b"{}"), ("model.safetensors", b"demo weights"), ("_COMPLETE", b""))},
    "datasets/dataset_info.json": b'{"alpaca_en_demo": {"file_name": "alpaca_en_demo.json"}}\n',
    "datasets/alpaca_en_demo.json": b'[{"instruction": "Say hi", "input": "", "output": "Hi!"}]\n',
    "datasets/sft/train.jsonl": b'{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", '
                                b'"content": "hello"}]}\n',
    "datasets/gsm8k/train.parquet": b"PAR1 demo",
    "datasets/gsm8k/test.parquet": b"PAR1 demo",
}


def create_all(client: Any, function_arns: dict[str, str], role_arn: str) -> dict[str, Any]:
    """Tables, bus, buckets, state machines and event rules; returns the names and ARNs handlers need."""
    ddb = client("dynamodb", REGION)
    existing = set(ddb.list_tables().get("TableNames", []))
    for logical, spec in TABLES.items():
        name = table_name(logical)
        if name in existing:
            continue
        args = {k: v for k, v in spec.items() if k != "ttl"}
        ddb.create_table(TableName=name, BillingMode="PAY_PER_REQUEST", **args)
        if "ttl" in spec:
            ddb.update_time_to_live(TableName=name,
                                    TimeToLiveSpecification={"Enabled": True, "AttributeName": spec["ttl"]})
    events = client("events", REGION)
    if BUS_NAME not in {b["Name"] for b in events.list_event_buses().get("EventBuses", [])}:
        events.create_event_bus(Name=BUS_NAME)
    s3 = client("s3", REGION)
    for bucket in [*bucket_names().values(), TEAM_BUCKET, OTHER_TEAM_BUCKET]:
        try:
            s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": REGION})
        except s3.exceptions.BucketAlreadyOwnedByYou:
            pass
    for bucket, objects in ((TEAM_BUCKET, TEAM_OBJECTS), (OTHER_TEAM_BUCKET, OTHER_OBJECTS),
                            (bucket_names()["data"], DATA_OBJECTS)):
        for key, content in objects.items():
            s3.put_object(Bucket=bucket, Key=key, Body=content)
    sfn = client("stepfunctions", REGION)
    known = {m["name"]: m["stateMachineArn"] for m in sfn.list_state_machines().get("stateMachines", [])}
    workflows: dict[str, str] = {}
    for path in sorted(STATEMACHINES.glob("*.asl.json")):
        kind = kind_of_file(path.name)
        body = path.read_text().replace("${StepsFunctionArn}", function_arns["podstart-steps"])
        body = body.replace("${EventBusName}", BUS_NAME)
        name = "podstart-" + kind.replace(".", "-")
        if name in known:
            sfn.update_state_machine(stateMachineArn=known[name], definition=body)
            workflows[kind] = known[name]
        else:
            workflows[kind] = sfn.create_state_machine(name=name, definition=json.dumps(json.loads(body)),
                                                       roleArn=role_arn)["stateMachineArn"]
    rules = {
        "podstart-executions": {"source": ["aws.states"], "detail-type": ["Step Functions Execution Status Change"]},
        "podstart-hyperpod": {"source": ["aws.sagemaker"], "detail-type": [
            "SageMaker HyperPod Cluster State Change", "SageMaker HyperPod Cluster Node Health",
            "SageMaker HyperPod Cluster Node Health Event", "SageMaker HyperPod Cluster Event"]},
    }
    for rule, pattern in rules.items():
        events.put_rule(Name=rule, EventPattern=json.dumps(pattern), State="ENABLED")
        events.put_targets(Rule=rule, Targets=[{"Id": "projector", "Arn": function_arns["podstart-events"]}])
    # The sweep of orphan operations, on the same schedule as in the stack (the sandbox fires it itself:
    # moto keeps schedules but never runs them).
    events.put_rule(Name="podstart-sweep", ScheduleExpression=f"rate({SWEEP_MINUTES} minutes)", State="ENABLED")
    events.put_targets(Rule="podstart-sweep", Targets=[{"Id": "projector", "Arn": function_arns["podstart-events"]}])
    events.put_rule(Name="podstart-discover", ScheduleExpression=f"rate({DISCOVER_EVERY_MINUTES} minutes)",
                    State="ENABLED")
    events.put_targets(Rule="podstart-discover", Targets=[{
        "Id": "projector", "Arn": function_arns["podstart-events"],
        "Input": json.dumps({"source": "aws.events", "detail-type": "Scheduled Event",
                             "detail": {"podstart": DISCOVER}})}])
    return {"workflows": workflows, "buckets": bucket_names(),
            "tables": {k: table_name(k) for k in TABLES}, "bus": BUS_NAME}
