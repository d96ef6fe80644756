"""Job admission checks a job's MLflow tracking server on the MlflowServers port (fake here): same region as the
cluster, one the account has, and one that takes runs now; the catalog page shapes what the port lists."""

from __future__ import annotations

import pytest

from functions.domain.errors import Conflict, InvalidInput
from functions.domain.training import mlflow as mlf
from functions.logic.training import jobs, mlflow_servers
from tests.fakes import FakeMlflowServers, World


def _deps() -> tuple[World, FakeMlflowServers]:
    w, servers = World(), FakeMlflowServers()
    w.deps.mlflow = servers
    return w, servers


def test_a_usable_server_of_the_clusters_region_is_admitted() -> None:
    w, servers = _deps()
    arn = servers.add("us-west-2", "team-a")
    assert jobs.check_mlflow(w.deps, "us-west-2", mlf.MlflowSpec(tracking_server_arn=arn))["TrackingServerArn"] == arn


@pytest.mark.parametrize(("region", "name", "account"), [("us-east-1", "team-a", "123456789012"),
                                                         ("us-west-2", "gone", "123456789012"),
                                                         ("us-west-2", "team-a", "210987654321")])
def test_another_region_an_unknown_server_or_account_is_a_422_naming_the_field(region: str, name: str,
                                                                             account: str) -> None:
    w, servers = _deps()
    servers.add("us-west-2", "team-a")
    servers.add("us-east-1", "team-a")
    spec = mlf.MlflowSpec(tracking_server_arn=f"arn:aws:sagemaker:{region}:{account}:mlflow-tracking-server/{name}")
    with pytest.raises(InvalidInput) as err:
        jobs.check_mlflow(w.deps, "us-west-2", spec)
    assert list(err.value.errors[0]["loc"]) == ["body", "mlflow", "tracking_server_arn"]


def test_a_stopped_server_is_a_conflict_saying_its_status() -> None:
    w, servers = _deps()
    arn = servers.add("us-west-2", "team-a", status="Stopped", active=False)
    with pytest.raises(Conflict, match="Stopped"):
        jobs.check_mlflow(w.deps, "us-west-2", mlf.MlflowSpec(tracking_server_arn=arn))


def test_the_catalog_page_marks_what_is_usable_and_pages() -> None:
    w, servers = _deps()
    servers.add("us-west-2", "a")
    servers.add("us-west-2", "b", status="Stopped", active=False)
    servers.add("us-east-1", "c")
    first = mlflow_servers.servers_page(w.deps, "us-west-2", 1, None)
    assert [(s.name, s.usable) for s in first.items] == [("a", True)] and first.next_token
    rest = mlflow_servers.servers_page(w.deps, "us-west-2", 1, first.next_token)
    assert [(s.name, s.usable, s.status) for s in rest.items] == [("b", False, "Stopped")] and rest.next_token is None
