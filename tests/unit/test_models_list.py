"""The models list from the bucket (paged by model, bounded reads) and the download plan, over fakes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from functions.domain import inference_manifests as im
from functions.domain.cluster_record import ClusterRecord, ClusterStatus
from functions.domain.errors import BadRequest
from functions.domain.inference import model_of_key
from functions.domain.operations import Target
from functions.domain.planners import PLANNERS, PlanInput
from functions.logic import models
from tests.fakes import World


@dataclass
class Bucket:
    keys: list[str]
    calls: list[tuple[str | None, int]] = field(default_factory=list)

    def list_objects(self, bucket: str, prefix: str, start_after: str | None,
                     max_keys: int) -> tuple[list[dict[str, Any]], bool]:
        self.calls.append((start_after, max_keys))
        left = sorted(k for k in self.keys if k.startswith(prefix) and (start_after is None or k > start_after))
        page = left[:max_keys]
        return [{"key": k, "size": 10, "last_modified": f"2026-01-0{1 + len(k) % 9}T00:00:00+00:00"}
                for k in page], len(left) > max_keys


def world(keys: list[str]) -> tuple[World, Bucket]:
    w = World()
    w.deps.records.save(ClusterRecord(name="llm", region="us-west-2", status=ClusterStatus.ACTIVE,
                                      eks_cluster_name="llm", created_by="o", created_at="x"))
    b = Bucket(keys)
    w.deps.objects = b
    return w, b


def files(model: str, rev: str, n: int) -> list[str]:
    return [f"data/models/{model}/{rev}/f{i:03d}" for i in range(n)]


def test_a_page_holds_whole_models_and_the_next_page_starts_after_the_last() -> None:
    w, _ = world([*files("a/one", "main", 3), *files("a/one", "v2", 2), *files("b/two", "main", 4),
                  "data/models/stray.txt", "datasets/x/y"])
    first = models.list_models(w.deps, "llm", "us-west-2", 2, None)
    assert [(m.model_id, m.revision, m.files, m.bytes) for m in first.items] == [
        ("a/one", "main", 3, 30), ("a/one", "v2", 2, 20)]
    assert first.items[0].path == "/data/models/a/one/main/" and first.next_token
    second = models.list_models(w.deps, "llm", "us-west-2", 2, first.next_token)
    assert [(m.model_id, m.files) for m in second.items] == [("b/two", 4)] and second.next_token is None


def test_a_page_reads_a_bounded_number_of_keys() -> None:
    w, b = world(files("big/model", "main", models.PAGE_KEYS * models.MAX_CALLS + 5))
    page = models.list_models(w.deps, "llm", "us-west-2", 50, None)
    assert len(b.calls) == models.MAX_CALLS
    assert page.items[0].files == models.PAGE_KEYS * models.MAX_CALLS and page.next_token
    rest = models.list_models(w.deps, "llm", "us-west-2", 50, page.next_token)
    assert (rest.items[0].files, rest.next_token) == (5, None)


def test_a_token_not_issued_here_is_refused() -> None:
    w, _ = world([])
    with pytest.raises(BadRequest):
        models.list_models(w.deps, "llm", "us-west-2", 10, models.encode_token("datasets/x"))
    assert model_of_key("data/models/org/name/main/config.json") == ("org/name", "main", "config.json")
    assert model_of_key("data/models/org/name/main/") is None


def _plan(job: dict[str, Any] | None, present: int) -> list[tuple[str, str]]:
    req = {"job_name": "dl-x", "bucket": "b", "prefix": "data/models/o/m/main/", "image": "i", "model_id": "o/m",
           "revision": "main", "token_secret": None}
    draft = PLANNERS["model.download"](PlanInput(kind="model.download", target=Target(cluster="c", region="r"),
                                                 request=req, facts={"job": job, "files_in_bucket": present}))
    return [(c.action, c.kind) for c in draft.changes]


def _job(cond: str | None, total: int) -> dict[str, Any]:
    return {"metadata": {"annotations": {"podstart.dev/files-total": str(total)}},
            "status": {"conditions": [{"type": cond, "status": "True"}] if cond else []}}


def test_the_plan_creates_the_job_unless_an_earlier_one_left_every_file_there() -> None:
    assert _plan(None, 0) == [("create", "Kubernetes Job"), ("update", "S3 prefix")]
    assert _plan(_job("Complete", 7), 7) == [("none", "Kubernetes Job"), ("none", "S3 prefix")]
    assert _plan(_job("Complete", 7), 6) == [("delete", "Kubernetes Job"), ("create", "Kubernetes Job"),
                                             ("update", "S3 prefix")]
    assert _plan(_job("Failed", 7), 7) == [("delete", "Kubernetes Job"), ("create", "Kubernetes Job"),
                                           ("update", "S3 prefix")]
    assert _plan(_job(None, 7), 3)[0] == ("none", "Kubernetes Job")  # running: the operation watches it
    assert im.download_present(_job("Complete", 7), 7) and not im.download_present(_job(None, 7), 7)
