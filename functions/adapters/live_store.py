"""The deployed live socket's state in DynamoDB, and the API Gateway Management API that writes to sockets.

Items (table `LiveTable`, key pk/sk, TTL attribute `expires_at`):
* `pk=<connection id>, sk="connection"`: who is connected (sub);
* `pk=<connection id>, sk="follow#<id>"`: a log follow the connection holds (its follower checks it is still
  there, so an unfollow or a disconnect ends the follower);
* `pk="user#<sub>", sk="follows"`: the user's follows across connections, `{"<connection>#<id>": expires_at}`,
  written with optimistic concurrency (`version`) so two follows at once cannot pass the per-user limit;
  expired entries (a connection that vanished without $disconnect) stop counting when they expire.
"""

from __future__ import annotations

import json
import time
from typing import Any

from botocore.exceptions import ClientError

from functions.adapters import aws

CONNECTION_SECONDS = 2 * 3600  # API Gateway closes a WebSocket connection after 2 hours


class DynamoLiveConnections:
    def __init__(self, table: str, clock: Any = time.time) -> None:
        self.table = table
        self.clock = clock

    @property
    def _ddb(self) -> Any:
        return aws.client("dynamodb")

    def _expires(self) -> int:
        return int(self.clock()) + CONNECTION_SECONDS

    def add_connection(self, connection_id: str, sub: str, lease: list[list[str]] | None = None) -> None:
        self._ddb.put_item(TableName=self.table, Item={
            "pk": {"S": connection_id}, "sk": {"S": "connection"}, "sub": {"S": sub},
            "lease": {"S": json.dumps(lease or [])}, "expires_at": {"N": str(self._expires())}})

    def lease_of(self, connection_id: str) -> list[list[str]]:
        item = self._ddb.get_item(TableName=self.table, ConsistentRead=True,
                                  Key={"pk": {"S": connection_id}, "sk": {"S": "connection"}}).get("Item") or {}
        raw = json.loads(item.get("lease", {}).get("S") or "[]")
        return raw if isinstance(raw, list) else []

    def _items(self, connection_id: str) -> list[dict[str, Any]]:
        out, start = [], None
        while True:
            kw: dict[str, Any] = {"TableName": self.table, "KeyConditionExpression": "pk = :c",
                                  "ExpressionAttributeValues": {":c": {"S": connection_id}}}
            if start:
                kw["ExclusiveStartKey"] = start
            page = self._ddb.query(**kw)
            out += page.get("Items", [])
            start = page.get("LastEvaluatedKey")
            if not start:
                return out

    def remove_connection(self, connection_id: str) -> list[str]:
        items = self._items(connection_id)
        sub = next((i["sub"]["S"] for i in items if i["sk"]["S"] == "connection" and "sub" in i), None)
        gone = [i["sk"]["S"].removeprefix("follow#") for i in items if i["sk"]["S"].startswith("follow#")]
        for i in items:
            self._ddb.delete_item(TableName=self.table, Key={"pk": i["pk"], "sk": i["sk"]})
        if sub and gone:
            self._update_user(sub, drop={f"{connection_id}#{f}" for f in gone})
        return gone

    def _update_user(self, sub: str, add: str | None = None, limit: int = 0, drop: set[str] | None = None) -> bool:
        key = {"pk": {"S": f"user#{sub}"}, "sk": {"S": "follows"}}
        for _ in range(8):
            item = self._ddb.get_item(TableName=self.table, Key=key, ConsistentRead=True).get("Item")
            version = int(item["version"]["N"]) if item else 0
            now = self.clock()
            held = {k: v for k, v in json.loads(item["follows"]["S"] if item else "{}").items()
                    if v > now and k not in (drop or set())}
            if add is not None:
                if add not in held and len(held) >= limit:
                    return False
                held[add] = self._expires()
            put = {**key, "follows": {"S": json.dumps(held)}, "version": {"N": str(version + 1)},
                   "expires_at": {"N": str(self._expires())}}
            cond = ({"ConditionExpression": "version = :v", "ExpressionAttributeValues": {":v": {"N": str(version)}}}
                    if item else {"ConditionExpression": "attribute_not_exists(pk)"})
            try:
                self._ddb.put_item(TableName=self.table, Item=put, **cond)
                return True
            except ClientError as err:
                if err.response["Error"]["Code"] != "ConditionalCheckFailedException":
                    raise
        raise RuntimeError(f"the follows of {sub} kept changing; try again")

    def add_follow(self, connection_id: str, sub: str, follow_id: str, limit: int) -> bool:
        if not self._update_user(sub, add=f"{connection_id}#{follow_id}", limit=limit):
            return False
        self._ddb.put_item(TableName=self.table, Item={
            "pk": {"S": connection_id}, "sk": {"S": f"follow#{follow_id}"}, "sub": {"S": sub},
            "expires_at": {"N": str(self._expires())}})
        return True

    def remove_follow(self, connection_id: str, follow_id: str) -> bool:
        try:
            old = self._ddb.delete_item(TableName=self.table, ReturnValues="ALL_OLD",
                                        Key={"pk": {"S": connection_id}, "sk": {"S": f"follow#{follow_id}"}})
        except ClientError as err:
            if err.response["Error"]["Code"] != "ResourceNotFoundException":
                raise
            return False
        item = old.get("Attributes")
        if item and "sub" in item:
            self._update_user(item["sub"]["S"], drop={f"{connection_id}#{follow_id}"})
        return item is not None

    def has_follow(self, connection_id: str, follow_id: str) -> bool:
        got = self._ddb.get_item(TableName=self.table, ConsistentRead=True,
                                 Key={"pk": {"S": connection_id}, "sk": {"S": f"follow#{follow_id}"}})
        return "Item" in got

    def connections(self) -> list[str]:
        """Every open connection (a scan: a control plane has tens of sockets open, not millions)."""
        out, start = [], None
        while True:
            kw: dict[str, Any] = {"TableName": self.table, "FilterExpression": "sk = :c",
                                  "ExpressionAttributeValues": {":c": {"S": "connection"}},
                                  "ProjectionExpression": "pk"}
            if start:
                kw["ExclusiveStartKey"] = start
            page = self._ddb.scan(**kw)
            out += [i["pk"]["S"] for i in page.get("Items", [])]
            start = page.get("LastEvaluatedKey")
            if not start:
                return out


class ApiGatewayPoster:
    """post_to_connection on the WebSocket API's management endpoint (https://{api}.execute-api.{region}
    .amazonaws.com/{stage})."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint

    def post(self, connection_id: str, message: dict[str, Any]) -> bool:
        client = aws.client("apigatewaymanagementapi", endpoint_url=self.endpoint)
        try:
            client.post_to_connection(ConnectionId=connection_id, Data=json.dumps(message).encode())
        except ClientError as err:
            if err.response["Error"]["Code"] in ("GoneException", "410"):
                return False
            raise
        return True
