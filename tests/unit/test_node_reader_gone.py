"""A cluster whose HyperPod or EKS cluster is gone (being deleted, not created yet) answers a 409 that says so
on the nodes routes, never a 500."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from functions.adapters.nodes import AwsNodeReader
from functions.domain.errors import Conflict


def _gone(code: str) -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": "not found"}}, "Op")


class Client:
    def __init__(self, code: str) -> None:
        self.code = code

    def list_cluster_nodes(self, **_: Any) -> Any:
        raise _gone(self.code)

    def describe_cluster(self, **_: Any) -> Any:
        raise _gone(self.code)


@pytest.mark.parametrize("code", ["ResourceNotFound", "ResourceNotFoundException"])
def test_a_hyperpod_cluster_that_is_gone_is_a_conflict_naming_it(code: str) -> None:
    reader = AwsNodeReader(client=lambda service, region: Client(code))
    with pytest.raises(Conflict, match="HyperPod cluster hp-1 is not there"):
        reader.list_cluster_nodes("us-west-2", "hp-1", None, 100, None)


def test_an_eks_cluster_that_is_gone_is_a_conflict_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from functions.adapters import aws

    monkeypatch.setattr(aws, "client", lambda service, region=None: Client("ResourceNotFoundException"))
    reader = AwsNodeReader()
    with pytest.raises(Conflict, match="EKS cluster eks-1 is not there"):
        reader.kube_nodes("us-west-2", "eks-1", "a=b")
