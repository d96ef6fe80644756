"""Durable state: the three DynamoDB tables and the S3 buckets."""

from __future__ import annotations

from pathlib import Path

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_s3 as s3
from constructs import Construct

from infra.bundling import REPO_ROOT
from infra.checkov import skip

LIFECYCLE_SCRIPTS = REPO_ROOT / "functions" / "assets" / "lifecycle"

_S = dynamodb.AttributeType.STRING


class DataConstruct(Construct):
    """Tables (operations, idempotency, state, audit) and buckets (data, assets, access logs).

    Everything here holds user data, so it is retained when the stack is deleted.
    """

    operations: dynamodb.Table
    idempotency: dynamodb.Table
    state: dynamodb.Table
    audit: dynamodb.Table
    logs_bucket: s3.Bucket
    data_bucket: s3.Bucket
    assets_bucket: s3.Bucket

    def __init__(self, scope: Construct, construct_id: str, *, lifecycle_scripts: Path = LIFECYCLE_SCRIPTS):
        super().__init__(scope, construct_id)
        self._build_operations_table()
        self._build_idempotency_table()
        self._build_state_table()
        self._build_audit_table()
        self._build_logs_bucket()
        self._build_data_bucket()
        self._build_assets_bucket(lifecycle_scripts)

    @property
    def tables(self) -> tuple[dynamodb.Table, ...]:
        return (self.operations, self.idempotency, self.state)

    # -- tables ---------------------------------------------------------------------------------

    def _table(self, construct_id: str, **kwargs: object) -> dynamodb.Table:
        table = dynamodb.Table(
            self,
            construct_id,
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            encryption=dynamodb.TableEncryption.AWS_MANAGED,
            removal_policy=cdk.RemovalPolicy.RETAIN,
            **kwargs,  # type: ignore[arg-type]
        )
        skip(table, ("CKV_AWS_119", "Encrypted with the AWS managed key (aws/dynamodb): no key to pay for or "
                                    "rotate; a customer managed key costs $1/month idle."))
        return table

    def _build_operations_table(self) -> None:
        self.operations = self._table("Operations", partition_key=dynamodb.Attribute(name="pk", type=_S))
        # by_status: the sweeper's query for PENDING operations older than a few minutes.
        for index_name, pk in (("by_created", "list_pk"), ("by_target", "target_key"), ("by_status", "status")):
            self.operations.add_global_secondary_index(
                index_name=index_name,
                partition_key=dynamodb.Attribute(name=pk, type=_S),
                sort_key=dynamodb.Attribute(name="created_key", type=_S),
                projection_type=dynamodb.ProjectionType.ALL,
            )

    def _build_idempotency_table(self) -> None:
        # Powertools idempotency layout: key `id`, TTL `expiration`.
        self.idempotency = self._table(
            "Idempotency",
            partition_key=dynamodb.Attribute(name="id", type=_S),
            time_to_live_attribute="expiration",
        )

    def _build_state_table(self) -> None:
        self.state = self._table(
            "State",
            partition_key=dynamodb.Attribute(name="pk", type=_S),
            sort_key=dynamodb.Attribute(name="sk", type=_S),
            time_to_live_attribute="ttl",
        )

    def _build_audit_table(self) -> None:
        """Append-only audit records: pk AUDIT + sk `<time>#<id>` (everything, newest first), by_actor and
        by_cluster for one query per page; items expire on `expires_at` (the retention the deployer sets)."""
        self.audit = self._table(
            "Audit",
            partition_key=dynamodb.Attribute(name="pk", type=_S),
            sort_key=dynamodb.Attribute(name="sk", type=_S),
            time_to_live_attribute="expires_at",
        )
        for index_name, pk in (("by_actor", "actor"), ("by_cluster", "cluster_key")):
            self.audit.add_global_secondary_index(
                index_name=index_name,
                partition_key=dynamodb.Attribute(name=pk, type=_S),
                sort_key=dynamodb.Attribute(name="sk", type=_S),
                projection_type=dynamodb.ProjectionType.ALL,
            )

    # -- buckets --------------------------------------------------------------------------------

    def _build_logs_bucket(self) -> None:
        # Target of S3 server access logs and CloudFront standard logs; CloudFront's legacy log
        # delivery writes with ACLs, hence object ownership BUCKET_OWNER_PREFERRED.
        self.logs_bucket = s3.Bucket(
            self,
            "AccessLogs",
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            encryption=s3.BucketEncryption.S3_MANAGED,
            enforce_ssl=True,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_PREFERRED,
            versioned=True,  # a deleted or overwritten log stays recoverable for 30 days
            lifecycle_rules=[
                s3.LifecycleRule(
                    expiration=cdk.Duration.days(365), noncurrent_version_expiration=cdk.Duration.days(30)
                )
            ],
            removal_policy=cdk.RemovalPolicy.RETAIN,
        )
        skip(self.logs_bucket, ("CKV_AWS_18", "This is the access-log destination bucket; logging it into itself "
                                              "would loop."))
        cdk.Validations.of(self.logs_bucket).acknowledge(
            cdk.Acknowledgment(
                id="AwsSolutions-S1",
                reason="This is the access-log destination bucket; logging it into itself would loop.",
            )
        )

    def _private_bucket(self, construct_id: str, prefix: str) -> s3.Bucket:
        return s3.Bucket(
            self,
            construct_id,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            encryption=s3.BucketEncryption.S3_MANAGED,
            enforce_ssl=True,
            versioned=True,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            server_access_logs_bucket=self.logs_bucket,
            server_access_logs_prefix=f"s3/{prefix}/",
            lifecycle_rules=[
                s3.LifecycleRule(noncurrent_version_expiration=cdk.Duration.days(30)),
                s3.LifecycleRule(abort_incomplete_multipart_upload_after=cdk.Duration.days(7)),
            ],
            removal_policy=cdk.RemovalPolicy.RETAIN,
        )

    def _build_data_bucket(self) -> None:
        # Shared data (datasets, checkpoints, downloaded models), mounted in pods.
        self.data_bucket = self._private_bucket("DataBucket", "data")

    def _build_assets_bucket(self, lifecycle_scripts: Path) -> None:
        # HyperPod lifecycle scripts (instance group `LifeCycleConfig.SourceS3Uri`). The steps
        # function uploads them from its own bundle under lifecycle/<content hash>/ before
        # CreateCluster, so the scripts a cluster runs always match the code that created it.
        self.assets_bucket = self._private_bucket("AssetsBucket", "assets")
