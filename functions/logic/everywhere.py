"""Lists across clusters (GET /v1/jobs, GET /v1/endpoints): the same per-cluster reads, run for every cluster PodStart
manages (or the one named), side by side; a cluster that cannot be read is named with why, never silently left out."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from functions.domain.clusters.record import ClusterRecord, ClusterStatus
from functions.domain.errors import Problem
from functions.domain.training import status as job_status
from functions.domain.training.jobs import Unreachable
from functions.domain.views import ClusterEndpointList, EndpointView
from functions.logic.deps import Deps
from functions.logic.inference import endpoint_views
from functions.logic.training import jobs
from functions.observability import logger

T = TypeVar("T")
MAX_CLUSTERS_READ_AT_ONCE = 8
PER_CLUSTER = 1000  # rows read per cluster (a cluster's own list pages at 100; this bounds one cluster's share)


def _clusters(deps: Deps, cluster: str | None, region: str | None) -> list[ClusterRecord]:
    return sorted((r for r in deps.records.all()
                   if (cluster is None or r.name == cluster) and (region is None or r.region == region)),
                  key=lambda r: (r.name, r.region))


def across(deps: Deps, recs: list[ClusterRecord],
           read: Callable[[ClusterRecord], list[T]]) -> tuple[list[T], list[Unreachable]]:
    """`read` each cluster (at most 8 at once): the rows of those read, and the ones that could not be, with why."""
    def one(rec: ClusterRecord) -> tuple[list[T], Unreachable | None]:
        try:
            return read(rec), None
        except Problem as err:  # not ACTIVE (409), gone (404): the API's own words
            return [], Unreachable(cluster=rec.name, region=rec.region, reason=err.detail)
        except Exception as err:  # an unreachable Kubernetes API: the others are still listed
            logger.warning("cluster not read for a list across clusters", cluster=rec.name, error=str(err))
            return [], Unreachable(cluster=rec.name, region=rec.region, reason=f"could not be read: {err}")

    if not recs:
        return [], []
    with ThreadPoolExecutor(max_workers=min(MAX_CLUSTERS_READ_AT_ONCE, len(recs))) as pool:
        results = list(pool.map(one, recs))
    return [row for rows, _ in results for row in rows], [u for _, u in results if u is not None]


def _page(rows: list[T], limit: int, token: str | None) -> tuple[list[T], str | None]:
    start = int(token or 0)
    return rows[start:start + limit], (str(start + limit) if start + limit < len(rows) else None)


def all_jobs(deps: Deps, cluster: str | None, region: str | None, status: str | None, limit: int,
             token: str | None) -> job_status.ClusterJobList:
    """Jobs PodStart submitted on every ACTIVE cluster (or the one named), newest first."""
    recs = _clusters(deps, cluster, region)
    active = [r for r in recs if r.status == ClusterStatus.ACTIVE]
    skipped = [Unreachable(cluster=r.name, region=r.region, reason=f"the cluster is {r.status.value}: it has no "
                                                                      f"jobs to list until it is ACTIVE")
               for r in recs if r.status != ClusterStatus.ACTIVE and cluster is not None]

    def read(rec: ClusterRecord) -> list[job_status.ClusterJob]:
        page = jobs.jobs_page(deps, rec.name, rec.region, status, PER_CLUSTER, None)
        return [job_status.ClusterJob(**j.model_dump(), cluster=rec.name, region=rec.region) for j in page.items]

    rows, unreachable = across(deps, active, read)
    rows.sort(key=lambda j: (j.created_at or "", j.cluster, j.namespace, j.name), reverse=True)
    items, nxt = _page(rows, limit, token)
    return job_status.ClusterJobList(items=items, next_token=nxt, unreachable=[*skipped, *unreachable])


def all_endpoints(deps: Deps, cluster: str | None, region: str | None, limit: int,
                  token: str | None) -> ClusterEndpointList:
    """Inference endpoints on every cluster (or the one named), live status where the cluster answers."""
    def read(rec: ClusterRecord) -> list[EndpointView]:
        return endpoint_views.list_endpoints(deps, rec.name, rec.region, PER_CLUSTER, None).items

    rows, unreachable = across(deps, _clusters(deps, cluster, region), read)
    rows.sort(key=lambda e: (e.cluster, e.region, e.name))
    items, nxt = _page(rows, limit, token)
    return ClusterEndpointList(items=items, next_token=nxt, unreachable=unreachable)
