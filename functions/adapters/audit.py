"""The audit table on DynamoDB: append-only (PutItem with a condition; the API role may not update or
delete), newest first by time. Keys: pk "AUDIT" + sk "<at>#<id>" (everything), GSIs by_actor (actor, sk)
and by_cluster (cluster_key, sk); one query per page (a filtered page reads at most a few). Items expire
(TTL `expires_at`) after the retention the deployer sets."""

from __future__ import annotations

import base64
import json
import time
from dataclasses import dataclass
from typing import Any

from functions.adapters import aws
from functions.domain.audit.records import AuditQuery, AuditRecord, sort_key
from functions.domain.errors import BadRequest

PK = "AUDIT"
MAX_QUERIES_PER_PAGE = 4  # a filter (action, face) may leave a page short: read a few more, never scan


def _s(v: str) -> dict[str, str]:
    return {"S": v}


@dataclass
class DynamoAuditLog:
    table: str
    retention_days: int = 400
    region: str | None = None

    @property
    def _ddb(self) -> Any:
        return aws.client("dynamodb", self.region)

    def append(self, record: AuditRecord) -> None:
        item: dict[str, Any] = {
            "pk": _s(PK), "sk": _s(sort_key(record.at, record.id)), "actor": _s(record.principal.sub),
            "action": _s(record.action), "face": _s(record.face.value), "body": _s(record.model_dump_json()),
            "expires_at": {"N": str(int(time.time()) + self.retention_days * 86400)},
        }
        if record.target.cluster:
            item["cluster_key"] = _s(record.target.cluster)
        self._ddb.put_item(TableName=self.table, Item=item, ConditionExpression="attribute_not_exists(pk)")

    def query(self, q: AuditQuery) -> tuple[list[AuditRecord], str | None]:
        names: dict[str, str] = {}
        values: dict[str, Any] = {}
        if q.actor:
            index, attr, value = "by_actor", "actor", q.actor
        elif q.cluster:
            index, attr, value = "by_cluster", "cluster_key", q.cluster
        else:
            index, attr, value = None, "pk", PK
        names["#p"] = attr
        values[":p"] = _s(value)
        cond = "#p = :p"
        if q.since or q.until:
            values[":lo"] = _s(q.since or "0")
            values[":hi"] = _s((q.until or "9999") + "~")
            names["#sk"] = "sk"
            cond += " AND #sk BETWEEN :lo AND :hi"
        filters = []
        for field, v in (("action", q.action), ("face", q.face.value if q.face else None),
                         ("cluster_key", q.cluster if q.actor else None)):
            if v:
                names[f"#{field}"] = field
                values[f":{field}"] = _s(v)
                filters.append(f"#{field} = :{field}")
        args: dict[str, Any] = {"TableName": self.table, "KeyConditionExpression": cond, "ScanIndexForward": False,
                                "ExpressionAttributeNames": names, "ExpressionAttributeValues": values}
        if index:
            args["IndexName"] = index
        if filters:
            args["FilterExpression"] = " AND ".join(filters)
        start = _decode(q.token, {"pk", "sk"} | ({attr} if index else set()))
        items: list[AuditRecord] = []
        for _ in range(MAX_QUERIES_PER_PAGE):
            args["Limit"] = max(q.limit, 25) if filters else q.limit - len(items)
            if start:
                args["ExclusiveStartKey"] = start
            page = self._ddb.query(**args)
            raw_items = page.get("Items", [])
            for i, raw in enumerate(raw_items):
                items.append(AuditRecord.model_validate_json(raw["body"]["S"]))
                if len(items) >= q.limit:
                    more = i + 1 < len(raw_items) or "LastEvaluatedKey" in page
                    return items, _encode({k: raw[k] for k in ("pk", "sk", attr) if k in raw}) if more else None
            start = page.get("LastEvaluatedKey")
            if not start:
                return items, None
        return items, _encode(start)


def _encode(key: dict[str, Any] | None) -> str | None:
    return base64.urlsafe_b64encode(json.dumps(key, separators=(",", ":")).encode()).decode() if key else None


def _decode(token: str | None, keys: set[str]) -> dict[str, Any] | None:
    if not token:
        return None
    refused = BadRequest.field(["query", "next_token"], "not a page token this listing issued")
    try:
        key = json.loads(base64.urlsafe_b64decode(token.encode()))
    except (ValueError, RecursionError):
        raise refused from None
    if not isinstance(key, dict) or set(key) != keys:
        raise refused
    for typed in key.values():
        if not (isinstance(typed, dict) and set(typed) == {"S"} and isinstance(typed["S"], str)
                and 0 < len(typed["S"]) <= 1024):
            raise refused
    return key
