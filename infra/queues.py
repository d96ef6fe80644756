"""Dead-letter queues: encrypted, TLS-only, kept 14 days, alarmed as soon as one message waits."""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra.checkov import skip
from infra.nag import acknowledge


class DeadLetterQueue(Construct):
    """``queue`` holds what ``purpose`` could not deliver or process; ``alarm`` fires on the first message."""

    queue: sqs.Queue
    alarm: cloudwatch.Alarm

    def __init__(self, scope: Construct, construct_id: str, *, purpose: str):
        super().__init__(scope, construct_id)
        self.queue = sqs.Queue(
            self,
            "Queue",
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            retention_period=cdk.Duration.days(14),
        )
        self.alarm = cloudwatch.Alarm(
            self,
            "NotEmpty",
            alarm_description=f"PodStart dead letters waiting: {purpose}. Inspect, fix, then redrive or delete.",
            metric=self.queue.metric_approximate_number_of_messages_visible(
                period=cdk.Duration.minutes(5), statistic=cloudwatch.Stats.MAXIMUM
            ),
            threshold=0,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            evaluation_periods=1,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )
        acknowledge(self.queue, "AwsSolutions-SQS3", f"This queue is itself a dead-letter queue ({purpose}).")
        skip(
            self.queue,
            (
                "CKV_AWS_27",
                "Encrypted at rest with SQS-managed keys (SSE-SQS): EventBridge cannot write to a queue under "
                "the AWS managed aws/sqs KMS key, and a customer managed key costs $1/month idle.",
            ),
        )
