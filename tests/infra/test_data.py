"""Given the synthesized stack, the data layer survives accidents and costs nothing idle."""

from __future__ import annotations

from aws_cdk.assertions import Match


def test_three_tables_are_on_demand_with_pitr_and_encryption(synth):
    # When we look at every DynamoDB table
    tables = synth.of_type("AWS::DynamoDB::Table")
    # Then there are three, each pay-per-request, point-in-time recoverable, encrypted, retained
    assert len(tables) == 3
    for table in tables.values():
        props = table["Properties"]
        assert props["BillingMode"] == "PAY_PER_REQUEST"
        assert props["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
        assert props["SSESpecification"]["SSEEnabled"] is True
        assert table["DeletionPolicy"] == "Retain"


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
