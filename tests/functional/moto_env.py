"""Moto in-process for adapter tests: fake credentials, the mock, and PodStart's cached boto3 clients reset on
the way in and out (a client made before the mock would talk to AWS)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
from moto import mock_aws

from functions.adapters import aws
from sandbox.aws import dynamodb

REGION = "us-west-2"


@contextlib.contextmanager
def mocked_aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for k, v in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                 "AWS_DEFAULT_REGION": REGION}.items():
        monkeypatch.setenv(k, v)
    dynamodb.patch()  # conditional writes atomic, as in DynamoDB (moto's are not across threads)
    with mock_aws():
        aws.client.cache_clear()
        aws._session.cache_clear()
        try:
            yield
        finally:
            aws.client.cache_clear()
            aws._session.cache_clear()
