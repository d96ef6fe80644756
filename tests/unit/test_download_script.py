"""The download Job's script (functions/assets/podstart_download.py), run as the Job runs it (main() with the
Job's env) against a fake `huggingface_hub` module and moto S3: the files land under models/{id}/{rev}/ with a
manifest and a _COMPLETE marker, a re-run resumes, gated/missing models fail permanently (exit 3) with the
reason in the termination log, and nothing but the validated env shapes the keys."""

from __future__ import annotations

import json
import os
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from functions.assets import podstart_download as dl

BUCKET = "podstart-data-test"
TOKEN = "hf_realTOKEN"
REPO = {"config.json": b'{"a": 1}', "tokenizer.json": b"t" * 300, "sub/model-00001-of-00002.safetensors": b"x" * 2000,
        "model-00002-of-00002.safetensors": b"y" * 1500}


class _NotFound(Exception):
    pass


class _Gated(_NotFound):
    pass


def fake_hf(calls: list[str], gated: set[str]) -> types.ModuleType:
    """Just the surface the script uses: HfApi().model_info(files_metadata=True), hf_hub_download, errors."""
    hf = types.ModuleType("huggingface_hub")
    errors = types.ModuleType("huggingface_hub.errors")
    errors.RepositoryNotFoundError = _NotFound  # type: ignore[attr-defined]
    errors.GatedRepoError = _Gated  # type: ignore[attr-defined]
    errors.RevisionNotFoundError = type("RevisionNotFoundError", (_NotFound,), {})  # type: ignore[attr-defined]
    errors.EntryNotFoundError = type("EntryNotFoundError", (_NotFound,), {})  # type: ignore[attr-defined]

    def check(repo: str, token: str | None) -> None:
        if repo.startswith("missing/"):
            raise _NotFound(f"404 Client Error: Repository Not Found for url: https://huggingface.co/{repo}")
        if repo in gated and token != TOKEN:
            raise _Gated(f"401 Client Error: access to model {repo} is restricted")

    class HfApi:
        def model_info(self, repo: str, *, revision: str, files_metadata: bool, token: str | None) -> Any:
            assert files_metadata
            if repo.startswith("missing/"):  # metadata of a gated repo is public, as on the Hub
                check(repo, token)
            return types.SimpleNamespace(siblings=[types.SimpleNamespace(rfilename=n, size=len(b))
                                                   for n, b in REPO.items()])

    def hf_hub_download(*, repo_id: str, filename: str, revision: str, token: str | None, local_dir: str) -> str:
        check(repo_id, token)
        calls.append(filename)
        path = Path(local_dir) / filename
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(REPO[filename])
        return str(path)

    hf.HfApi = HfApi  # type: ignore[attr-defined]
    hf.hf_hub_download = hf_hub_download  # type: ignore[attr-defined]
    hf.errors = errors  # type: ignore[attr-defined]
    return hf


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[dict[str, Any]]:
    calls: list[str] = []
    gated: set[str] = set()
    hf = fake_hf(calls, gated)
    monkeypatch.setitem(sys.modules, "huggingface_hub", hf)
    monkeypatch.setitem(sys.modules, "huggingface_hub.errors", hf.errors)  # type: ignore[attr-defined]
    monkeypatch.setattr(dl, "TERMINATION_LOG", str(tmp_path / "termination-log"))
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(k, "testing")
    with mock_aws():
        s3 = boto3.client("s3", region_name="us-west-2")
        s3.create_bucket(Bucket=BUCKET, CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
        yield {"s3": s3, "calls": calls, "gated": gated, "tmp": tmp_path}


def env(tmp: Path, model: str = "acme/tiny", rev: str = "main", **extra: str) -> dict[str, str]:
    return {"MODEL_ID": model, "REVISION": rev, "BUCKET": BUCKET, "PREFIX": f"models/{model}/{rev}/",
            "AWS_REGION": "us-west-2", "WORKDIR": str(tmp / "work"), **extra}


def objects(s3: Any, prefix: str) -> dict[str, bytes]:
    out = s3.list_objects_v2(Bucket=BUCKET, Prefix=prefix)
    return {o["Key"][len(prefix):]: s3.get_object(Bucket=BUCKET, Key=o["Key"])["Body"].read()
            for o in out.get("Contents") or []}


def test_main_copies_every_file_to_the_models_prefix_with_a_manifest_and_a_complete_marker(world: Any) -> None:
    assert dl.main(env(world["tmp"])) == 0
    got = objects(world["s3"], "models/acme/tiny/main/")
    assert {k: v for k, v in got.items() if k not in dl.MARKERS} == REPO
    assert got[dl.COMPLETE] == b""
    m = json.loads(got[dl.MANIFEST])
    assert (m["files_total"], m["files_done"], m["files_skipped"], m["complete"]) == (4, 4, 0, True)
    assert m["bytes_done"] == m["bytes_total"] == sum(len(b) for b in REPO.values())
    assert os.listdir(world["tmp"] / "work" / "sub") == []  # each file removed once uploaded


def test_a_rerun_resumes_fetching_only_what_is_missing_or_a_different_size(world: Any) -> None:
    s3, prefix = world["s3"], "models/acme/tiny/main/"
    assert dl.main(env(world["tmp"])) == 0
    s3.delete_object(Bucket=BUCKET, Key=prefix + "tokenizer.json")
    s3.put_object(Bucket=BUCKET, Key=prefix + "config.json", Body=b"{")  # a truncated upload
    world["calls"].clear()
    assert dl.main(env(world["tmp"])) == 0
    assert sorted(world["calls"]) == ["config.json", "tokenizer.json"]
    m = json.loads(objects(s3, prefix)[dl.MANIFEST])
    assert (m["files_done"], m["files_skipped"]) == (4, 2)


def test_progress_is_in_the_manifest_while_it_runs_and_complete_is_absent_until_the_end(world: Any) -> None:
    s3, spec = world["s3"], dl.spec_from_env(env(world["tmp"]))
    hub = dl.HfHub()
    m = dl.start(hub, s3, spec)
    assert dl.copy_next(hub, s3, spec, m, str(world["tmp"]), log=lambda _: None)
    seen = json.loads(objects(s3, spec.prefix)[dl.MANIFEST])
    assert (seen["files_done"], seen["files_total"], seen["complete"]) == (1, 4, False)
    assert dl.COMPLETE not in objects(s3, spec.prefix)


@pytest.mark.parametrize(("model", "token", "says"), [("missing/nothing", None, "404"),
                                                       ("acme/gated", None, "401"),
                                                       ("acme/gated", "hf_wrong", "401")])
def test_a_missing_or_gated_model_without_a_valid_token_fails_permanently_with_the_reason(
        world: Any, model: str, token: str | None, says: str) -> None:
    world["gated"].add("acme/gated")
    extra = {"HF_TOKEN": token} if token else {}
    assert dl.main(env(world["tmp"], model=model, **extra)) == dl.EXIT_PERMANENT
    reason = Path(dl.TERMINATION_LOG).read_text()
    assert reason.startswith("permanent:") and says in reason
    assert token is None or token not in reason
    assert dl.COMPLETE not in objects(world["s3"], f"models/{model}/main/")


def test_a_gated_model_with_the_right_token_downloads(world: Any) -> None:
    world["gated"].add("acme/gated")
    assert dl.main(env(world["tmp"], model="acme/gated", HF_TOKEN=TOKEN)) == 0
    assert dl.COMPLETE in objects(world["s3"], "models/acme/gated/main/")


@pytest.mark.parametrize("bad", [{"MODEL_ID": "../etc"}, {"REVISION": "a b"}, {"PREFIX": "datasets/x/"},
                                 {"BUCKET": "Not_A_Bucket"}, {"MODEL_ID": "a/..", "PREFIX": "models/a/../main/"}])
def test_env_outside_the_contract_is_refused_before_anything_is_written(world: Any, bad: dict[str, str]) -> None:
    assert dl.main({**env(world["tmp"]), **bad}) == dl.EXIT_PERMANENT
    assert world["s3"].list_objects_v2(Bucket=BUCKET).get("KeyCount") == 0


def test_a_transient_failure_exits_for_the_jobs_retry(world: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*a: Any, **k: Any) -> str:
        raise ConnectionError("connection reset by peer")

    monkeypatch.setattr(sys.modules["huggingface_hub"], "hf_hub_download", boom)
    assert dl.main(env(world["tmp"])) == 1
    assert "ConnectionError" in Path(dl.TERMINATION_LOG).read_text()
