"""The embedded DynamoDB's conditional writes are atomic, as DynamoDB's are: of two writers that read the same
version, one wins and the other's condition fails, however their threads interleave (moto alone checks, then
writes, and a thread switch between the two let both win)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError
from moto.dynamodb.models import table as moto_table

from functions.adapters import aws
from tests.functional.moto_env import mocked_aws


@pytest.fixture
def ddb(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    with mocked_aws(monkeypatch):
        client = aws.client("dynamodb")
        client.create_table(TableName="t", BillingMode="PAY_PER_REQUEST",
                            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}])
        client.put_item(TableName="t", Item={"pk": {"S": "k"}, "version": {"N": "1"}})
        yield client


def test_of_two_writers_on_the_same_version_exactly_one_wins(ddb: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # a thread switch right after a condition is found true: the widest window there is for the other writer
    real = moto_table.get_filter_expression

    def slow_condition(*args: Any, **kwargs: Any) -> Any:
        op = real(*args, **kwargs)
        check = op.expr

        def expr(item: Any) -> bool:
            ok = bool(check(item))
            time.sleep(0.05)
            return ok

        op.expr = expr
        return op

    monkeypatch.setattr(moto_table, "get_filter_expression", slow_condition)
    outcomes: list[str] = []
    gate = threading.Barrier(2)

    def write(who: str) -> None:
        gate.wait()
        try:
            ddb.put_item(TableName="t", Item={"pk": {"S": "k"}, "version": {"N": "2"}, "by": {"S": who}},
                         ConditionExpression="version = :v", ExpressionAttributeValues={":v": {"N": "1"}})
            outcomes.append("won")
        except ClientError as err:
            outcomes.append(err.response["Error"]["Code"])

    threads = [threading.Thread(target=write, args=(w,)) for w in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["ConditionalCheckFailedException", "won"]
