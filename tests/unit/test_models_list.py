"""The models list from the bucket (paged by model, bounded reads) and the download plan, over fakes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from functions.domain.clusters.record import ClusterRecord, ClusterStatus
from functions.domain.errors import BadRequest
from functions.domain.inference import manifests as im
from functions.domain.inference.requests import model_of_key
from functions.domain.operations import Target
from functions.domain.plans.registry import PLANNERS, PlanInput
from functions.logic.inference import models
from tests.fakes import World


@dataclass
class Bucket:
    keys: list[str]
    calls: list[tuple[str | None, int]] = field(default_factory=list)
    bodies: dict[str, bytes] = field(default_factory=dict)
    reads: list[str] = field(default_factory=list)

    def read_small(self, bucket: str, key: str, max_bytes: int) -> bytes | None:
        self.reads.append(key)
        return self.bodies.get(key)

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
    return [f"models/{model}/{rev}/f{i:03d}" for i in range(n)]


def test_a_page_holds_whole_models_and_the_next_page_starts_after_the_last() -> None:
    w, _ = world([*files("a/one", "main", 3), *files("a/one", "v2", 2), *files("b/two", "main", 4),
                  "models/stray.txt", "datasets/x/y"])
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
    assert model_of_key("models/org/name/main/config.json") == ("org/name", "main", "config.json")
    assert model_of_key("models/org/name/main/") is None


def _plan(job: dict[str, Any] | None, present: int, total: int | None = 7, complete: bool = True,
          **identity: Any) -> list[tuple[str, str]]:
    req = {"job_name": "dl-x", "bucket": "b", "prefix": "models/o/m/main/", "image": "i", "model_id": "o/m",
           "revision": "main", "token_secret": None}
    facts = {"job": job, "files_in_bucket": present, "complete": complete, "role": "podstart-c-models-abc123",
             "manifest": {"files_total": total} if total is not None else None,
             "linked": True, "service_account": True, "script_current": True, **identity}
    draft = PLANNERS["model.download"](PlanInput(kind="model.download", target=Target(cluster="c", region="r"),
                                                 request=req, facts=facts))
    return [(c.action, c.kind) for c in draft.changes if c.step == "download"]


def _identity(**facts: Any) -> list[tuple[str, str]]:
    req = {"job_name": "dl-x", "bucket": "b", "prefix": "models/o/m/main/", "image": "i", "model_id": "o/m",
           "revision": "main", "token_secret": None}
    draft = PLANNERS["model.download"](PlanInput(kind="model.download", target=Target(cluster="c", region="r"),
                                                 request=req, facts={"job": None, "role": "podstart-c-models-a",
                                                                     **facts}))
    return [(c.action, c.kind) for c in draft.changes if c.step == "identity"]


def _job(cond: str | None) -> dict[str, Any]:
    return {"metadata": {}, "status": {"conditions": [{"type": cond, "status": "True"}] if cond else []}}


def test_the_plan_creates_the_job_unless_an_earlier_one_left_every_file_and_the_marker_there() -> None:
    assert _plan(None, 0) == [("create", "Kubernetes Job"), ("update", "S3 prefix")]
    assert _plan(_job("Complete"), 7) == [("none", "Kubernetes Job"), ("none", "S3 prefix")]
    assert _plan(_job("Complete"), 6) == [("delete", "Kubernetes Job"), ("create", "Kubernetes Job"),
                                          ("update", "S3 prefix")]
    assert _plan(_job("Complete"), 7, complete=False)[0] == ("delete", "Kubernetes Job")  # no _COMPLETE marker
    assert _plan(_job("Failed"), 7) == [("delete", "Kubernetes Job"), ("create", "Kubernetes Job"),
                                        ("update", "S3 prefix")]
    assert _plan(_job(None), 3)[0] == ("none", "Kubernetes Job")  # running: the operation watches it
    assert im.download_present({"files_total": 7}, True, 7) and not im.download_present({"files_total": 7}, False, 7)
    assert not im.download_present(None, True, 7)


def test_the_plan_makes_the_downloaders_identity_only_where_it_is_missing() -> None:
    kinds = ["AWS::IAM::Role", "Kubernetes ServiceAccount", "AWS::EKS::PodIdentityAssociation", "Kubernetes ConfigMap"]
    assert _identity() == [("create", k) for k in kinds]
    assert _identity(linked=True, service_account=True, script_current=True) == [("none", k) for k in kinds]
    assert _identity(linked=True, service_account=True)[-1] == ("create", "Kubernetes ConfigMap")  # script changed


def test_the_markers_are_not_files_complete_comes_from_the_marker_and_progress_from_the_manifest() -> None:
    done = [*files("a/done", "main", 3), "models/a/done/main/_COMPLETE", "models/a/done/main/_podstart_manifest.json"]
    going = [*files("b/going", "main", 2), "models/b/going/main/_podstart_manifest.json"]
    w, b = world(done + going)
    b.bodies["models/b/going/main/_podstart_manifest.json"] = b'{"files_total": 7, "files_done": 2}'
    items = {m.model_id: m for m in models.list_models(w.deps, "llm", "us-west-2", 10, None).items}
    assert (items["a/done"].files, items["a/done"].complete, items["a/done"].files_total) == (3, True, None)
    assert (items["b/going"].files, items["b/going"].complete, items["b/going"].files_total) == (2, False, 7)
    assert b.reads == ["models/b/going/main/_podstart_manifest.json"]  # a complete model costs no read
