"""Discovery of the HyperPod-on-EKS clusters PodStart does not track.

A periodic scan of every HyperPod region (the events function, on its own schedule) stores what it found in
one document; the clusters list reads that document and asks AWS live only for the regions that hold a
cluster PodStart knows of (or the one the user named), so a list costs the same however many regions the
account has. A region the scan could not read (no permission, throttled, not opted in) keeps what the previous
scan found there and is named in `unavailable`.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pydantic import BaseModel, Field

from functions.domain.operations import now_iso
from functions.domain.ports import ClusterReader, StateStore
from functions.domain.views import ClusterSummary

DISCOVERY_KEY = ("discovery", "hyperpod-clusters")
DISCOVER_EVERY_MINUTES = 10  # the schedule (infra.events, the sandbox's own timer)
HIDDEN_STATUSES = ("Deleting",)


class Discovered(BaseModel):
    at: str | None = Field(default=None, description="When the last scan ended (UTC); None: never scanned")
    clusters: list[ClusterSummary] = Field(default_factory=list)
    unavailable: dict[str, str] = Field(default_factory=dict, description="Region -> why the scan could not read it")


def hyperpod_on_eks(reader: ClusterReader, region: str, max_age: float = 0.0,
                    tracked: frozenset[str] = frozenset()) -> list[ClusterSummary]:
    """Every HyperPod cluster of the region orchestrated by EKS (Slurm ones are not PodStart's kind), as
    external rows; the ones PodStart tracks (`tracked`: their HyperPod names) are left out before anything is
    described (the summary does not name the orchestrator: telling EKS from Slurm takes a DescribeCluster)."""
    out = []
    for name, s in reader.hyperpod_clusters(region, max_age=max_age).items():
        if s.get("ClusterStatus") in HIDDEN_STATUSES or name in tracked:
            continue
        eks_arn = reader.eks_orchestrator(region, s)
        if not eks_arn:
            continue
        created: Any = s.get("CreationTime")
        out.append(ClusterSummary(
            name=name, region=region, status=str(s.get("ClusterStatus") or "Unknown"), origin="external",
            managed=False, importable=True, hyperpod_status=s.get("ClusterStatus"),
            eks_cluster_name=str(eks_arn).rsplit("/", 1)[-1],
            created_at=created.isoformat() if hasattr(created, "isoformat") else (str(created) if created else None)))
    return out


def load(state: StateStore) -> Discovered:
    return Discovered.model_validate(state.get(*DISCOVERY_KEY) or {})


def discover(reader: ClusterReader, state: StateStore) -> Discovered:
    """Scan every HyperPod region once and store the result (what the list shows for regions it does not read)."""
    previous = load(state)
    regions = reader.regions()

    def scan(region: str) -> tuple[str, list[ClusterSummary] | str]:
        try:
            return region, hyperpod_on_eks(reader, region)
        except Exception as err:  # one region's failure (AccessDenied, throttling, opt-in) must not hide the rest
            return region, f"{type(err).__name__}: {str(err)[:200]}"

    with ThreadPoolExecutor(max_workers=min(8, max(1, len(regions)))) as pool:
        results = dict(pool.map(scan, regions))
    clusters: list[ClusterSummary] = []
    unavailable: dict[str, str] = {}
    for region in regions:
        found = results[region]
        if isinstance(found, str):
            unavailable[region] = found
            clusters += [c for c in previous.clusters if c.region == region]
        else:
            clusters += found
    now = Discovered(at=now_iso(), clusters=sorted(clusters, key=lambda c: (c.region, c.name)),
                     unavailable=unavailable)
    state.put(*DISCOVERY_KEY, now.model_dump(mode="json"))
    return now
