"""The clusters list asks AWS only where PodStart has clusters (or where the user asked); the untracked clusters
of every other region come from the periodic discovery, with its time."""

from __future__ import annotations

from typing import Any

from functions.events.projector import DISCOVER, SCHEDULED, Projector
from functions.logic.clusters import discovery
from functions.logic.clusters import views as cluster_views
from tests.fakes import FakeOperationRepository, FakePublisher, FakeRunner, World
from tests.functional.test_admission import active


class ManyRegions:
    """HyperPod clusters in several regions (name -> orchestrator: "eks" or "slurm"), counting list calls."""

    def __init__(self, clusters: dict[str, dict[str, str]], failing: set[str] | None = None):
        self.clusters = clusters
        self.failing = failing or set()
        self.listed: list[str] = []
        self.described: list[str] = []

    def regions(self) -> list[str]:
        return sorted(self.clusters)

    def hyperpod_clusters(self, region: str, max_age: float = 0.0) -> dict[str, dict[str, Any]]:
        self.listed.append(region)
        if region in self.failing:
            raise PermissionError(f"AccessDenied: not authorized to list clusters in {region}")
        return {n: {"ClusterName": n, "ClusterArn": f"arn:aws:sagemaker:{region}:1:cluster/{n}",
                    "ClusterStatus": "Deleting" if n.startswith("going") else "InService"}
                for n in self.clusters.get(region, {})}

    def eks_orchestrator(self, region: str, summary: dict[str, Any]) -> str | None:
        self.described.append(summary["ClusterName"])
        kind = self.clusters[region][summary["ClusterName"]]
        return f"arn:aws:eks:{region}:1:cluster/{summary['ClusterName']}-eks" if kind == "eks" else None

    def __getattr__(self, name: str) -> Any:  # the rest of ClusterReader is not read by the list
        raise AttributeError(name)


def _world(regions: ManyRegions) -> World:
    w = World()
    active(w)  # PodStart's "demo" in us-west-2
    w.deps.reader = regions  # type: ignore[assignment]
    return w


def _rows(w: World, region: str | None = None) -> dict[tuple[str, str], Any]:
    return {(c.name, c.region): c for c in cluster_views.list_clusters(w.deps, "o", 100, None, region).items}


THEIRS = {"us-west-2": {"demo": "eks", "west-theirs": "eks"},
          "us-east-1": {"east-theirs": "eks", "east-slurm": "slurm", "going-away": "eks"},
          "eu-west-1": {"eu-theirs": "eks"}}


def test_the_list_asks_only_the_regions_holding_podstarts_clusters() -> None:
    regions = ManyRegions(THEIRS)
    w = _world(regions)
    first = cluster_views.list_clusters(w.deps, "o", 100, None)
    assert regions.listed == ["us-west-2"]  # one list call, in the one region holding a PodStart cluster
    assert regions.described == ["west-theirs"]  # PodStart's own cluster is never described to tell EKS from Slurm
    assert {(c.name, c.origin) for c in first.items} == {("demo", "created"), ("west-theirs", "external")}
    assert first.discovered_at is None  # nothing scanned yet: other regions are not guessed at


def test_other_regions_come_from_the_last_discovery_with_its_time() -> None:
    regions = ManyRegions(THEIRS)
    w = _world(regions)
    scan = discovery.discover(regions, w.deps.state)
    assert sorted(regions.listed) == ["eu-west-1", "us-east-1", "us-west-2"]
    regions.listed.clear()
    listed = cluster_views.list_clusters(w.deps, "o", 100, None)
    assert regions.listed == ["us-west-2"]
    rows = {(c.name, c.region): c for c in listed.items}
    # Slurm clusters and clusters being deleted are not PodStart's to import; PodStart's own is not external
    assert set(rows) == {("demo", "us-west-2"), ("west-theirs", "us-west-2"), ("east-theirs", "us-east-1"),
                         ("eu-theirs", "eu-west-1")}
    assert rows[("east-theirs", "us-east-1")].importable and rows[("east-theirs", "us-east-1")].eks_cluster_name == \
        "east-theirs-eks"
    assert listed.discovered_at == scan.at and listed.undiscovered_regions == []


def test_a_named_region_is_read_live_and_only_it() -> None:
    regions = ManyRegions(THEIRS)
    w = _world(regions)
    rows = _rows(w, "us-east-1")
    assert regions.listed == ["us-east-1"]
    assert set(rows) == {("east-theirs", "us-east-1")}


def test_a_cluster_adopted_after_the_scan_is_listed_once() -> None:
    regions = ManyRegions(THEIRS)
    w = _world(regions)
    discovery.discover(regions, w.deps.state)
    active(w, "eu-theirs")  # imported since (its record's region is us-west-2 in this fake: move it)
    rec = w.deps.records.load("us-west-2", "eu-theirs")
    assert rec is not None
    w.deps.records.delete("us-west-2", "eu-theirs")
    w.deps.records.save(rec.model_copy(update={"region": "eu-west-1"}))
    rows = _rows(w)
    assert rows[("eu-theirs", "eu-west-1")].origin == "created"
    assert [k for k in rows if k[0] == "eu-theirs"] == [("eu-theirs", "eu-west-1")]


def test_a_region_the_scan_cannot_read_keeps_what_it_had_and_is_named() -> None:
    regions = ManyRegions(THEIRS)
    w = _world(regions)
    discovery.discover(regions, w.deps.state)
    regions.failing = {"eu-west-1"}
    regions.clusters = {**THEIRS, "us-east-1": {}}  # east-theirs was deleted since
    scan = discovery.discover(regions, w.deps.state)
    assert "AccessDenied" in scan.unavailable["eu-west-1"]
    listed = cluster_views.list_clusters(w.deps, "o", 100, None)
    names = {c.name for c in listed.items}
    assert "eu-theirs" in names and "east-theirs" not in names
    assert listed.undiscovered_regions == ["eu-west-1"]


def test_the_scheduled_discovery_event_runs_the_scan_and_the_sweep_event_does_not() -> None:
    ran: list[str] = []
    w = World()
    projector = Projector(repo=FakeOperationRepository(), publisher=FakePublisher(), state=w.deps.state, workflows={},
                          runner=FakeRunner(), describe_hyperpod=lambda r, n: None,
                          discover=lambda: ran.append("scan") or "discovered 0")
    scheduled = {"source": "aws.events", "detail-type": SCHEDULED}
    assert projector.project({**scheduled, "detail": {"podstart": DISCOVER}}) == "discovered 0"
    assert projector.project({**scheduled, "detail": {}}).startswith("swept")
    assert ran == ["scan"]
