"""Given the synthesized stack, no AWS event is lost and no function can take the account's whole pool."""

from __future__ import annotations

import json

import pytest

from infra.functions import RESERVED_CONCURRENCY
from infra.stack import reserved_concurrency_overrides


def _alarmed(synth, queue_id):
    return [a["Properties"] for a in synth.of_type("AWS::CloudWatch::Alarm").values()
            if a["Properties"]["MetricName"] == "ApproximateNumberOfMessagesVisible"
            and a["Properties"]["Dimensions"][0]["Value"] == {"Fn::GetAtt": [queue_id, "QueueName"]}]


def _assert_dead_letter_queue(synth, queue_id):
    queue = synth.resources[queue_id]
    assert queue["Type"] == "AWS::SQS::Queue"
    assert queue["Properties"]["SqsManagedSseEnabled"] is True
    [alarm] = _alarmed(synth, queue_id)
    assert alarm["Threshold"] == 0
    assert alarm["ComparisonOperator"] == "GreaterThanThreshold"


def test_events_function_sends_what_it_fails_to_process_to_an_alarmed_queue(synth):
    events_id, _ = synth.function("events")
    [config] = [c["Properties"] for c in synth.of_type("AWS::Lambda::EventInvokeConfig").values()
                if c["Properties"]["FunctionName"] == {"Ref": events_id}]
    destination = config["DestinationConfig"]["OnFailure"]["Destination"]
    queue_id = destination["Fn::GetAtt"][0]
    _assert_dead_letter_queue(synth, queue_id)
    assert config["MaximumRetryAttempts"] == 2
    # And its role may send there
    sends = [s for s in synth.role_statements("events") if "sqs:SendMessage" in json.dumps(s["Action"])]
    assert sends and all(s["Resource"] == destination for s in sends)


def test_every_rule_target_retries_then_dead_letters(synth):
    events_id, _ = synth.function("events")
    live_id, _ = synth.function("live")
    rules = list(synth.of_type("AWS::Events::Rule").values())
    assert len(rules) == 5  # workflow status, HyperPod events, sweeper, discovery; the podstart bus to the sockets
    for rule in rules:
        to_sockets = rule["Properties"].get("EventBusName") is not None
        for target in rule["Properties"]["Targets"]:
            assert target["Arn"] == {"Fn::GetAtt": [live_id if to_sockets else events_id, "Arn"]}
            assert target["RetryPolicy"]["MaximumRetryAttempts"] > 0
            _assert_dead_letter_queue(synth, target["DeadLetterConfig"]["Arn"]["Fn::GetAtt"][0])


def test_a_schedule_sweeps_orphan_operations_every_5_minutes(synth):
    events_id, _ = synth.function("events")
    [sweeper] = [r["Properties"] for r in synth.of_type("AWS::Events::Rule").values()
                 if "ScheduleExpression" in r["Properties"] and "Input" not in r["Properties"]["Targets"][0]]
    assert sweeper["ScheduleExpression"] == "rate(5 minutes)"
    assert sweeper["State"] == "ENABLED"
    assert [t["Arn"] for t in sweeper["Targets"]] == [{"Fn::GetAtt": [events_id, "Arn"]}]


def test_a_schedule_discovers_untracked_clusters_every_10_minutes(synth):
    from functions.events.projector import DISCOVER, SCHEDULED
    from functions.logic.clusters.discovery import DISCOVER_EVERY_MINUTES

    events_id, _ = synth.function("events")
    [rule] = [r["Properties"] for r in synth.of_type("AWS::Events::Rule").values()
              if "Input" in (r["Properties"].get("Targets") or [{}])[0]]
    assert rule["ScheduleExpression"] == f"rate({DISCOVER_EVERY_MINUTES} minutes)"
    [target] = rule["Targets"]
    assert target["Arn"] == {"Fn::GetAtt": [events_id, "Arn"]}
    # the input the projector recognises as the discovery (not the sweep)
    event = json.loads(target["Input"])
    assert (event["source"], event["detail-type"], event["detail"]) == ("aws.events", SCHEDULED, {"podstart": DISCOVER})


def test_the_sweeper_can_query_operations_by_status(synth, template):
    from aws_cdk.assertions import Match

    template.has_resource_properties("AWS::DynamoDB::Table", {"GlobalSecondaryIndexes": Match.array_with([
        {"IndexName": "by_status",
         "KeySchema": [{"AttributeName": "status", "KeyType": "HASH"},
                       {"AttributeName": "created_key", "KeyType": "RANGE"}],
         "Projection": {"ProjectionType": "ALL"}}])})
    [ops_id] = [k for k in synth.of_type("AWS::DynamoDB::Table") if k.startswith("DataOperations")]
    statements = [s for s in synth.role_statements("events") if "dynamodb:Query" in s["Action"]]
    resources = json.dumps([s["Resource"] for s in statements])
    assert ops_id in resources and "/index/*" in resources
    actions = {a for s in synth.role_statements("events") for a in s["Action"] if a.startswith("dynamodb:")}
    assert {"dynamodb:Query", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:DeleteItem"} <= actions


def test_every_function_has_a_reserved_concurrency_bound(synth):
    functions = synth.of_type("AWS::Lambda::Function")
    assert len(functions) >= 5  # four PodStart functions and CDK's BucketDeployment handler
    for name, fn in functions.items():
        assert fn["Properties"].get("ReservedConcurrentExecutions", 0) >= 1, name
    for name, count in RESERVED_CONCURRENCY.items():
        assert synth.function(name)[1]["Properties"]["ReservedConcurrentExecutions"] == count
    # 100 of the account's default 1,000 stay unreserved; PodStart takes a small share
    assert sum(f["Properties"]["ReservedConcurrentExecutions"] for f in functions.values()) <= 100


def test_reserved_concurrency_is_a_context_value():
    assert reserved_concurrency_overrides(None) == {}
    assert reserved_concurrency_overrides({"steps": 40, "api": None}) == {"steps": 40, "api": None}
    assert reserved_concurrency_overrides('{"events": 3}') == {"events": 3}  # -c on the cdk command line
    assert reserved_concurrency_overrides({"web-deploy": None}) == {"web-deploy": None}
    for bad in ({"steps": 0}, {"steps": "ten"}, {"nope": 3}):
        with pytest.raises(ValueError):
            reserved_concurrency_overrides(bad)
