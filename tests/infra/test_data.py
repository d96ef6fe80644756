"""Given the synthesized stack, the data layer survives accidents and costs nothing idle."""

from __future__ import annotations

from aws_cdk.assertions import Match


def test_four_tables_are_on_demand_with_pitr_and_encryption(synth):
    # When we look at every DynamoDB table
    tables = synth.of_type("AWS::DynamoDB::Table")
    # Then there are four of data (operations, idempotency, state, audit) and the live socket's, each
    # pay-per-request, point-in-time recoverable, encrypted; the data ones retained (the sockets' is not data)
    assert len(tables) == 5
    for tid, table in tables.items():
        props = table["Properties"]
        assert props["BillingMode"] == "PAY_PER_REQUEST"
        assert props["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
        assert props["SSESpecification"]["SSEEnabled"] is True
        assert table["DeletionPolicy"] == ("Delete" if tid.startswith("LiveConnections") else "Retain")


def test_ttl_expires_idempotency_records_and_state(template):
    # Then Powertools' idempotency records expire on `expiration`
    template.has_resource_properties(
        "AWS::DynamoDB::Table",
        {
            "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
            "TimeToLiveSpecification": {"AttributeName": "expiration", "Enabled": True},
        },
    )
    # And state items on `ttl`
    template.has_resource_properties(
        "AWS::DynamoDB::Table",
        {
            "KeySchema": [
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
            "TimeToLiveSpecification": {"AttributeName": "ttl", "Enabled": True},
        },
    )


def test_operations_can_be_listed_by_creation_and_by_target(template):
    template.has_resource_properties(
        "AWS::DynamoDB::Table",
        {
            "GlobalSecondaryIndexes": Match.array_with(
                [
                    Match.object_like({"IndexName": "by_created", "Projection": {"ProjectionType": "ALL"}}),
                    Match.object_like({"IndexName": "by_target", "Projection": {"ProjectionType": "ALL"}}),
                ]
            )
        },
    )


def test_buckets_are_private_and_tls_only(synth):
    buckets = synth.of_type("AWS::S3::Bucket")
    policies = synth.of_type("AWS::S3::BucketPolicy")
    assert len(buckets) >= 4  # data, assets, access logs, web
    for bucket in buckets.values():
        block = bucket["Properties"]["PublicAccessBlockConfiguration"]
        assert all(
            block[k]
            for k in ("BlockPublicAcls", "BlockPublicPolicy", "IgnorePublicAcls", "RestrictPublicBuckets")
        )
        assert "BucketEncryption" in bucket["Properties"]
    denies_insecure = [
        p
        for p in policies.values()
        for s in p["Properties"]["PolicyDocument"]["Statement"]
        if s["Effect"] == "Deny"
        and s.get("Condition", {}).get("Bool", {}).get("aws:SecureTransport") == "false"
    ]
    assert len(denies_insecure) == len(buckets)


def test_no_idle_compute(synth):
    for cfn_type in (
        "AWS::EC2::NatGateway",
        "AWS::EC2::Instance",
        "AWS::RDS::DBInstance",
        "AWS::ECS::Service",
    ):
        assert synth.of_type(cfn_type) == {}


def test_audit_records_are_found_by_actor_and_by_cluster_and_expire(template):
    # Then the audit table pages newest first by actor and by cluster, and its items expire on `expires_at`
    template.has_resource_properties(
        "AWS::DynamoDB::Table",
        {
            "TimeToLiveSpecification": {"AttributeName": "expires_at", "Enabled": True},
            "GlobalSecondaryIndexes": Match.array_with([
                Match.object_like({"IndexName": "by_actor", "KeySchema": [
                    {"AttributeName": "actor", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]}),
                Match.object_like({"IndexName": "by_cluster", "KeySchema": [
                    {"AttributeName": "cluster_key", "KeyType": "HASH"},
                    {"AttributeName": "sk", "KeyType": "RANGE"}]}),
            ]),
        },
    )


def test_the_api_may_append_and_read_the_audit_trail_never_change_it(synth):
    # When we collect every IAM statement naming the audit table
    tables = synth.of_type("AWS::DynamoDB::Table")
    [audit_id] = [k for k, t in tables.items() if k.startswith("DataAudit")]
    actions: dict[str, set[str]] = {}
    for _pid, policy in synth.of_type("AWS::IAM::Policy").items():
        for st in policy["Properties"]["PolicyDocument"]["Statement"]:
            if audit_id in str(st["Resource"]) and st["Effect"] == "Allow":
                names = st["Action"] if isinstance(st["Action"], list) else [st["Action"]]
                actions.setdefault(str(policy["Properties"]["Roles"]), set()).update(names)
    # Then only the API role may touch it: put and query, nothing that updates or deletes
    assert len(actions) == 1, actions
    assert set(actions.popitem()[1]) == {"dynamodb:PutItem", "dynamodb:Query"}
