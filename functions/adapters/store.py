"""DynamoDB adapters: operations (with per-target locks) and per-user state (preferences)."""

from __future__ import annotations

import base64
import json
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from botocore.exceptions import ClientError

from functions.adapters import aws
from functions.domain.errors import BadRequest
from functions.domain.operations import Operation, OperationStatus, Target
from functions.domain.ports import LockHeld, StaleWrite

_LIST_PK = "OP"
_MAX_KEY_BYTES = 1024  # DynamoDB's limit for a sort key value (2048 for a partition key); ours are ~60 bytes


def _s(v: str) -> dict[str, str]:
    return {"S": v}


def _n(v: int) -> dict[str, str]:
    return {"N": str(v)}


def _encode_token(key: dict[str, Any] | None) -> str | None:
    """A query's LastEvaluatedKey as an opaque page token (base64 JSON; see _decode_token)."""
    return base64.urlsafe_b64encode(json.dumps(key, separators=(",", ":")).encode()).decode() if key else None


def _decode_token(token: str | None, partition: tuple[str, str]) -> dict[str, Any] | None:
    """A page token back into the ExclusiveStartKey of the query it continues, or 400 naming next_token.

    Tokens are not signed; they are checked for shape instead, which is what DynamoDB needs to answer rather than
    fail: exactly the key attributes of the query's index (the table key `pk`, the index's `partition` attribute
    with the value this query reads, and `created_key`), each a non-empty string {"S": ...} within DynamoDB's key
    size. A token from another index or another cluster's listing is refused too.
    """
    if not token:
        return None
    refused = BadRequest.field(["query", "next_token"], "not a page token this listing issued")
    try:
        key = json.loads(base64.urlsafe_b64decode(token.encode()))
    except (ValueError, RecursionError):  # binascii.Error, JSONDecodeError, UnicodeDecodeError are ValueErrors
        raise refused from None
    attr, value = partition
    if not isinstance(key, dict) or set(key) != {"pk", attr, "created_key"}:
        raise refused
    for name, typed in key.items():
        if not (isinstance(typed, dict) and set(typed) == {"S"} and isinstance(typed["S"], str) and typed["S"]):
            raise refused
        try:
            if len(typed["S"].encode()) > _MAX_KEY_BYTES:
                raise refused
        except UnicodeEncodeError:  # a lone surrogate from a JSON escape
            raise refused from None
        if name == attr and typed["S"] != value:
            raise refused
    return key


@dataclass
class DynamoOperationRepository:
    table: str
    region: str | None = None

    @property
    def _ddb(self) -> Any:
        return aws.client("dynamodb", self.region)

    def _item(self, op: Operation) -> dict[str, Any]:
        return {
            "pk": _s(op.id),
            "list_pk": _s(_LIST_PK),
            "created_key": _s(f"{op.created_at}#{op.id}"),
            "target_key": _s(op.target.index_key),
            "status": _s(op.status.value),
            "kind": _s(op.kind),
            "revision": _n(op.revision),
            "body": _s(op.model_dump_json()),
        }

    def _lock_item(self, op: Operation) -> dict[str, Any]:
        return {"pk": _s(op.target.lock_key), "operation_id": _s(op.id), "since": _s(op.updated_at)}

    def create(self, op: Operation) -> None:
        try:
            self._ddb.transact_write_items(TransactItems=[
                {"Put": {"TableName": self.table, "Item": self._item(op),
                         "ConditionExpression": "attribute_not_exists(pk)"}},
                {"Put": {"TableName": self.table, "Item": self._lock_item(op),
                         "ConditionExpression": "attribute_not_exists(pk)"}},
            ])
        except ClientError as err:
            if err.response["Error"]["Code"] != "TransactionCanceledException":
                raise
            holder = self.holder(op.target)
            raise LockHeld(holder or "unknown") from None

    def acquire(self, op: Operation) -> None:
        try:
            self._ddb.put_item(
                TableName=self.table, Item=self._lock_item(op),
                ConditionExpression="attribute_not_exists(pk) OR operation_id = :id",
                ExpressionAttributeValues={":id": _s(op.id)},
            )
        except ClientError as err:
            if err.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
            raise LockHeld(self.holder(op.target) or "unknown") from None

    def release(self, op: Operation) -> None:
        self.break_lock(op.target, op.id)

    def break_lock(self, target: Target, holder_id: str) -> None:
        try:
            self._ddb.delete_item(
                TableName=self.table, Key={"pk": _s(target.lock_key)},
                ConditionExpression="operation_id = :id", ExpressionAttributeValues={":id": _s(holder_id)},
            )
        except ClientError as err:
            if err.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise

    def holder(self, target: Target) -> str | None:
        item = self._ddb.get_item(TableName=self.table, Key={"pk": _s(target.lock_key)},
                                  ConsistentRead=True).get("Item")
        return item["operation_id"]["S"] if item else None

    def get(self, op_id: str) -> Operation | None:
        item = self._ddb.get_item(TableName=self.table, Key={"pk": _s(op_id)}, ConsistentRead=True).get("Item")
        if not item or "body" not in item:
            return None
        return Operation.model_validate_json(item["body"]["S"])

    def save(self, old: Operation, new: Operation) -> Operation:
        try:
            self._ddb.put_item(
                TableName=self.table, Item=self._item(new),
                ConditionExpression="revision = :r", ExpressionAttributeValues={":r": _n(old.revision)},
            )
        except ClientError as err:
            if err.response["Error"]["Code"] == "ConditionalCheckFailedException":
                raise StaleWrite(new.id) from None
            raise
        return new

    def pending_older_than(self, seconds: float, now: float | None = None) -> list[Operation]:
        cutoff = datetime.fromtimestamp((now if now is not None else time.time()) - seconds, UTC)
        args: dict[str, Any] = {
            "TableName": self.table, "IndexName": "by_status",
            "KeyConditionExpression": "#st = :st AND created_key < :cut",
            "ExpressionAttributeNames": {"#st": "status"},
            "ExpressionAttributeValues": {":st": _s(OperationStatus.PENDING.value),
                                          ":cut": _s(cutoff.isoformat(timespec="milliseconds").replace("+00:00", "Z"))},
        }
        out: list[Operation] = []
        while True:
            page = self._ddb.query(**args)
            out.extend(Operation.model_validate_json(i["body"]["S"]) for i in page.get("Items", []))
            if "LastEvaluatedKey" not in page or len(out) >= 500:
                return out
            args["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def list(
        self, *, cluster: str | None, status: OperationStatus | None, limit: int, token: str | None
    ) -> tuple[list[Operation], str | None]:
        args: dict[str, Any] = {"TableName": self.table, "ScanIndexForward": False, "Limit": limit}
        if cluster:
            args |= {"IndexName": "by_target", "KeyConditionExpression": "target_key = :t",
                     "ExpressionAttributeValues": {":t": _s(Target(cluster=cluster).index_key)}}
        else:
            args |= {"IndexName": "by_created", "KeyConditionExpression": "list_pk = :p",
                     "ExpressionAttributeValues": {":p": _s(_LIST_PK)}}
        if status:
            args["FilterExpression"] = "#st = :st"
            args["ExpressionAttributeNames"] = {"#st": "status"}
            args["ExpressionAttributeValues"][":st"] = _s(status.value)
        start = _decode_token(token, ("target_key", Target(cluster=cluster).index_key) if cluster
                              else ("list_pk", _LIST_PK))
        if start:
            args["ExclusiveStartKey"] = start
        page = self._ddb.query(**args)
        items = [Operation.model_validate_json(i["body"]["S"]) for i in page.get("Items", [])]
        return items, _encode_token(page.get("LastEvaluatedKey"))


@dataclass
class DynamoStateStore:
    """Per-user preferences and cluster records: pk = kind#id, sk = detail."""

    table: str
    region: str | None = None
    ttl_attribute: str = "ttl"  # the table's TTL attribute (the live table's is expires_at)

    @property
    def _ddb(self) -> Any:
        return aws.client("dynamodb", self.region)

    def get(self, pk: str, sk: str) -> dict[str, Any] | None:
        item = self._ddb.get_item(TableName=self.table, Key={"pk": _s(pk), "sk": _s(sk)},
                                  ConsistentRead=True).get("Item")
        return json.loads(item["body"]["S"]) if item else None

    def put(self, pk: str, sk: str, body: dict[str, Any], ttl: int | None = None) -> None:
        item: dict[str, Any] = {"pk": _s(pk), "sk": _s(sk), "body": _s(json.dumps(body, default=str))}
        if ttl:
            item[self.ttl_attribute] = _n(ttl)
        self._ddb.put_item(TableName=self.table, Item=item)

    def put_new(self, pk: str, sk: str, body: dict[str, Any], ttl: int | None = None) -> bool:
        """Write only if absent; False when the key is taken."""
        item: dict[str, Any] = {"pk": _s(pk), "sk": _s(sk), "body": _s(json.dumps(body, default=str))}
        if ttl:
            item[self.ttl_attribute] = _n(ttl)
        try:
            self._ddb.put_item(TableName=self.table, Item=item, ConditionExpression="attribute_not_exists(pk)")
        except ClientError as err:
            if err.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def delete(self, pk: str, sk: str) -> None:
        self._ddb.delete_item(TableName=self.table, Key={"pk": _s(pk), "sk": _s(sk)})

    def get_rev(self, pk: str, sk: str) -> tuple[dict[str, Any] | None, int]:
        item = self._ddb.get_item(TableName=self.table, Key={"pk": _s(pk), "sk": _s(sk)},
                                  ConsistentRead=True).get("Item")
        if not item:
            return None, 0
        return json.loads(item["body"]["S"]), int(item.get("rev", {}).get("N", 0))

    def put_rev(self, pk: str, sk: str, body: dict[str, Any], rev: int) -> bool:
        item = {"pk": _s(pk), "sk": _s(sk), "body": _s(json.dumps(body, default=str)), "rev": _n(rev + 1)}
        cond = "attribute_not_exists(rev) OR rev = :r" if rev == 0 else "rev = :r"
        try:
            self._ddb.put_item(TableName=self.table, Item=item, ConditionExpression=cond,
                               ExpressionAttributeValues={":r": _n(rev)})
        except ClientError as err:
            if err.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def query(self, pk: str) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        args: dict[str, Any] = {"TableName": self.table, "KeyConditionExpression": "pk = :p",
                                "ExpressionAttributeValues": {":p": _s(pk)}}
        while True:
            page = self._ddb.query(**args)
            out.extend(json.loads(i["body"]["S"]) for i in page.get("Items", []))
            if "LastEvaluatedKey" not in page:
                return out
            args["ExclusiveStartKey"] = page["LastEvaluatedKey"]
