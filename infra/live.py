"""The live socket: an API Gateway WebSocket API the web UI keeps open for `podstart` bus events and live
job logs (the protocol of functions/domain/live.py; the sandbox's /ws speaks the same).

* ``$connect`` is authorized by the ``liveauth`` function: the browser offers the sub-protocols
  ``["podstart", <Cognito access token>]`` (a browser cannot set headers on a WebSocket); the token is checked
  against the user pool (signature, issuer, expiry, app client).
* ``$connect``/``$disconnect``/``$default`` go to the ``live`` function, which keeps connections and follows in
  a DynamoDB table (TTL: the 2-hour life of a connection) and starts one ``follow`` function per log follow
  (asynchronous invocation); a follower posts the pod's lines to its socket for up to 14 minutes, and stops
  when the client unfollows or disconnects.
* Every event on the ``podstart`` bus reaches the ``live`` function through a rule and goes to every socket.
* Output: ``LiveUrl`` (what ``/config.json``'s ``wsUrl`` says).
"""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_apigatewayv2 as apigwv2
from aws_cdk import aws_apigatewayv2_authorizers as authorizers
from aws_cdk import aws_apigatewayv2_integrations as integrations
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_logs as logs
from constructs import Construct

from functions.lambdas import LIVE_FOLLOWER
from infra.checkov import skip, skip_log_group
from infra.functions import FunctionsConstruct
from infra.nag import acknowledge, grant
from infra.queues import DeadLetterQueue

STAGE = "live"


class LiveConstruct(Construct):
    api: apigwv2.WebSocketApi
    stage: apigwv2.WebSocketStage
    table: dynamodb.Table
    url: str

    def __init__(self, scope: Construct, construct_id: str, *, functions: FunctionsConstruct,
                 event_bus: events.IEventBus, user_pool_id: str, client_ids: list[str]):
        super().__init__(scope, construct_id)
        live, follow, auth = (functions.functions[n] for n in ("live", LIVE_FOLLOWER, "liveauth"))
        self.table = dynamodb.Table(
            self, "Connections",
            partition_key=dynamodb.Attribute(name="pk", type=dynamodb.AttributeType.STRING),
            sort_key=dynamodb.Attribute(name="sk", type=dynamodb.AttributeType.STRING),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            time_to_live_attribute="expires_at",
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True),
            encryption=dynamodb.TableEncryption.AWS_MANAGED,
            removal_policy=cdk.RemovalPolicy.DESTROY,  # open sockets only: nothing to keep
        )
        skip(self.table, ("CKV_AWS_119", "Encrypted with the AWS managed key (aws/dynamodb); it holds only which "
                                         "sockets are open, for at most 2 hours."))
        authorizer = authorizers.WebSocketLambdaAuthorizer(
            "Authorizer", auth, identity_source=["route.request.header.Sec-WebSocket-Protocol"])
        self.api = apigwv2.WebSocketApi(
            self, "Api", api_name="podstart-live", description="PodStart live events and job logs",
            connect_route_options=apigwv2.WebSocketRouteOptions(
                integration=integrations.WebSocketLambdaIntegration("OnConnect", live), authorizer=authorizer),
            disconnect_route_options=apigwv2.WebSocketRouteOptions(
                integration=integrations.WebSocketLambdaIntegration("OnDisconnect", live)),
            default_route_options=apigwv2.WebSocketRouteOptions(
                integration=integrations.WebSocketLambdaIntegration("OnMessage", live)),
        )
        access_logs = logs.LogGroup(self, "AccessLogs", retention=logs.RetentionDays.ONE_MONTH,
                                    removal_policy=cdk.RemovalPolicy.DESTROY)
        skip_log_group(access_logs)
        self.stage = apigwv2.WebSocketStage(
            self, "Stage", web_socket_api=self.api, stage_name=STAGE, auto_deploy=True,
            throttle=apigwv2.ThrottleSettings(rate_limit=50, burst_limit=100))
        cfn_stage = self.stage.node.default_child
        assert isinstance(cfn_stage, apigwv2.CfnStage)
        # what a connection did, never its sub-protocol header (the token)
        cfn_stage.access_log_settings = apigwv2.CfnStage.AccessLogSettingsProperty(
            destination_arn=access_logs.log_group_arn,
            format='{"requestId":"$context.requestId","ip":"$context.identity.sourceIp","route":"$context.routeKey",'
                   '"status":"$context.status","connectionId":"$context.connectionId",'
                   '"sub":"$context.authorizer.sub","error":"$context.error.message"}')
        self.url = self.stage.url
        management = self.stage.callback_url
        connections = cdk.Stack.of(self).format_arn(
            service="execute-api", resource=self.api.api_id, resource_name=f"{STAGE}/POST/@connections/*")

        for name in ("live", LIVE_FOLLOWER):
            functions.functions[name].add_environment("LIVE_TABLE", self.table.table_name)
            grant(functions.roles[name], sid="LiveConnections",
                  actions=["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:DeleteItem", "dynamodb:Query"]
                  + (["dynamodb:Scan"] if name == "live" else []),  # the bus fan-out lists the sockets
                  resources=[self.table.table_arn])
            grant(functions.roles[name], sid="PostToSockets",
                  actions=["execute-api:ManageConnections"], resources=[connections],
                  reason="Any connection of this API's stage: connection ids are made by API Gateway.")
            # a follow reads the cluster's record and its EKS endpoint (the Kubernetes API through the access
            # entry with the podstart-api group)
            grant(functions.roles[name], sid="DescribeEks", actions=["eks:DescribeCluster"],
                  resources=[f"arn:{cdk.Aws.PARTITION}:eks:*:{cdk.Aws.ACCOUNT_ID}:cluster/*"],
                  reason="Clusters are named by users, in any region; read-only.")
        live.add_environment("LIVE_ENDPOINT", management)
        grant(functions.roles["live"], sid="StartFollowers", actions=["lambda:InvokeFunction"],
              resources=[follow.function_arn])
        auth.add_environment("USER_POOL_ID", user_pool_id)
        auth.add_environment("USER_POOL_CLIENT_IDS", ",".join(client_ids))

        undelivered = DeadLetterQueue(self, "Undelivered", purpose="bus events EventBridge could not give the live "
                                                                   "function")
        events.Rule(self, "BusToSockets", description="Every podstart bus event to the open sockets",
                    event_bus=event_bus, event_pattern=events.EventPattern(source=events.Match.prefix("podstart")),
                    targets=[targets.LambdaFunction(live, retry_attempts=2, max_event_age=cdk.Duration.minutes(5),
                                                    dead_letter_queue=undelivered.queue)])
        acknowledge(self.api, "AwsSolutions-APIG4",
                    "$connect is authorized by the liveauth Lambda (Cognito token); $disconnect and $default "
                    "carry the authorized connection and cannot take an authorizer.")
        cdk.CfnOutput(cdk.Stack.of(self), "LiveUrl", value=self.url, description="Live socket (wss)")
