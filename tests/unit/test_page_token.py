"""Operation list page tokens: what the API issues reads back; what it could not have issued is a 400."""

from __future__ import annotations

import base64
import json

import pytest

from functions.adapters.store import _decode_token, _encode_token
from functions.domain.errors import BadRequest

BY_CREATED = ("list_pk", "OP")
BY_TARGET = ("target_key", "cluster/demo")
LAST_CREATED = {"pk": {"S": "op-abc123"}, "list_pk": {"S": "OP"},
                "created_key": {"S": "2026-01-01T00:00:00Z#op-abc123"}}
LAST_TARGET = {"pk": {"S": "op-abc123"}, "target_key": {"S": "cluster/demo"},
               "created_key": {"S": "2026-01-01T00:00:00Z#op-abc123"}}


@pytest.mark.parametrize(("key", "partition"), [(LAST_CREATED, BY_CREATED), (LAST_TARGET, BY_TARGET)])
def test_a_token_the_api_issued_reads_back_as_the_same_start_key(key: dict, partition: tuple[str, str]) -> None:
    token = _encode_token(key)
    assert token is not None
    assert _decode_token(token, partition) == key


def test_no_token_means_the_first_page() -> None:
    assert _encode_token(None) is None
    assert _decode_token(None, BY_CREATED) is None and _decode_token("", BY_CREATED) is None


def _raw(obj: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode()


@pytest.mark.parametrize(("token", "partition"), [
    ("%%%", BY_CREATED),
    (_raw("x"), BY_CREATED),
    (_raw(LAST_TARGET), BY_CREATED),  # another index
    (_raw(LAST_CREATED), BY_TARGET),
    (_raw(LAST_TARGET), ("target_key", "cluster/other")),  # another cluster's listing
    (_raw({**LAST_CREATED, "pk": {"S": "x" * 1025}}), BY_CREATED),  # past DynamoDB's key size
    (_raw({**LAST_CREATED, "pk": {"S": "\ud800"}}), BY_CREATED),  # a lone surrogate
    (base64.urlsafe_b64encode(b"[" * 5000).decode(), BY_CREATED),
])
def test_anything_else_is_a_400_naming_next_token(token: str, partition: tuple[str, str]) -> None:
    with pytest.raises(BadRequest) as refused:
        _decode_token(token, partition)
    assert refused.value.status == 400
    assert refused.value.errors == [{"loc": ["query", "next_token"], "msg": "not a page token this listing issued"}]
