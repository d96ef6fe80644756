"""The `podstart` command as a user runs it: installed with `pip install .` (into a folder of its own), then driven
as a subprocess against the sandbox, with only the REST API between them.

One cluster is made from a spec file and shared by the tests in file order: export it and plan the export (no
changes), edit a group's count and a feature (exactly those two changes, exit 2), apply them, refuse an invalid
field naming the file, line and field, apply a job and an endpoint, follow the job's log."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.conftest import eventually

REPO = Path(__file__).resolve().parents[2]

SPEC = """\
# two groups, storage and a feature
apiVersion: podstart/v1
kind: Cluster
metadata:
  name: {name}
  region: us-west-2
spec:
  instance_groups:
    - name: gpu
      instance_type: ml.g5.8xlarge
      instance_count: 1
      availability_zone: us-west-2a
    - name: cpu
      instance_type: ml.c5.large
      instance_count: 1
      availability_zone: usw2-az1
      capacity_type: spot
  storage:
    s3: true
    fsx_lustre:
      storage_capacity_gib: 1200
  volumes:
    - kind: s3
      name: datasets
      bucket: {bucket}
      prefix: datasets/
      read_only: true
  features:
    training_operator:
      enabled: true
"""

WORKLOADS = """\
apiVersion: podstart/v1
kind: TrainingJob
metadata:
  name: train
  cluster: {name}
spec:
  recipe: pytorch
  image: 123456789012.dkr.ecr.us-west-2.amazonaws.com/train:2.5.1
  instance_type: ml.c5.large
  nodes: 1
  parameters:
    script: train.py
    epochs: 50
---
apiVersion: podstart/v1
kind: Endpoint
metadata:
  name: chat
  cluster: {name}
spec:
  mode: self-managed
  engine: vllm
  image: vllm/vllm-openai:v0.10.1
  model:
    source: huggingface
    model_id: Qwen/Qwen3-0.6B
  instance_type: ml.g5.8xlarge
  gpus: 1
"""


class Cli:
    def __init__(self, site: Path, home: Path, base_url: str, token: str) -> None:
        self.site, self.home, self.base_url, self.token = site, home, base_url, token
        self.config = home / "config.json"

    def env(self, token: str | None, logged_in: bool) -> dict[str, str]:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.home), "PYTHONPATH": str(self.site),
               "PODSTART_CONFIG": str(self.config), "NO_COLOR": "1", "LANG": "C.UTF-8"}
        if not logged_in:
            env |= {"PODSTART_ENDPOINT": self.base_url, "PODSTART_TOKEN": token or self.token}
        return env

    def __call__(self, *args: str, token: str | None = None, stdin: str | None = None, logged_in: bool = False,
                 cwd: Path | None = None, timeout: float = 180) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.site / "bin" / "podstart"), *args], env=self.env(token, logged_in),
                              input=stdin, capture_output=True, text=True, cwd=cwd or self.home, timeout=timeout)

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen([str(self.site / "bin" / "podstart"), *args], env=self.env(None, False),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=self.home)


@pytest.fixture(scope="module")
def cli(sandbox: Any, tmp_path_factory: pytest.TempPathFactory) -> Cli:
    site = tmp_path_factory.mktemp("podstart-cli")
    # `pip install .`, as a user would (no network: the build backend and the dependencies are the venv's)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
                    "--no-build-isolation", "--target", str(site), str(REPO)], check=True, capture_output=True)
    assert (site / "bin" / "podstart").exists(), "pip install . installs the podstart console script"
    return Cli(site, tmp_path_factory.mktemp("home"), sandbox.base_url, sandbox.tokens.admin)


@pytest.fixture(scope="module")
def made(cli: Cli, api: Any) -> dict[str, Any]:
    """The cluster made from the spec file by `podstart apply -f spec.yaml --yes`."""
    name = f"cli-{uuid.uuid4().hex[:6]}"
    bucket = api.get("/v1/sandbox").json()["buckets"]["data"]
    spec = cli.home / "spec.yaml"
    spec.write_text(SPEC.format(name=name, bucket=bucket))
    started = time.monotonic()
    r = cli("apply", "-f", str(spec), "--yes")
    assert r.returncode == 0, r.stdout + r.stderr
    return {"name": name, "spec": spec, "bucket": bucket, "apply": r, "seconds": time.monotonic() - started}


def _export(cli: Cli, name: str, file: str) -> tuple[Any, list[dict[str, Any]]]:
    """The cluster as it is now, written to `file` (each test starts from the live state: test files may be split
    between pytest workers, each with its own cluster)."""
    out = cli.home / file
    r = cli("export", name, "-o", str(out))
    assert r.returncode == 0, r.stderr
    return out, list(yaml.safe_load_all(out.read_text()))


def _ops(api: Any, cluster: str) -> list[dict[str, Any]]:
    return list(api.get("/v1/operations", params={"cluster": cluster, "limit": 100}).json()["items"])


def test_pip_install_gives_the_console_script_and_login_stores_the_token_for_the_user_only(cli: Cli,
                                                                                            sandbox: Any) -> None:
    # Given the installed command and no stored login
    r = cli("whoami", logged_in=True)
    assert r.returncode == 1 and "podstart login" in r.stderr
    # When the user logs in with a wrong token, then the right one (read from stdin, never from argv)
    bad = cli("login", "--endpoint", sandbox.base_url, "--token-stdin", stdin="wrong\n", logged_in=True)
    assert bad.returncode == 1 and "401" in bad.stderr and not cli.config.exists()
    ok = cli("login", "--endpoint", sandbox.base_url, "--token-stdin", stdin=sandbox.tokens.operator + "\n",
             logged_in=True)
    assert ok.returncode == 0, ok.stderr
    # Then the token is stored readable by the user only, and later commands use it
    assert stat.S_IMODE(cli.config.stat().st_mode) == 0o600
    assert json.loads(cli.config.read_text())["endpoint"] == sandbox.base_url
    who = cli("whoami", "-o", "json", logged_in=True)
    assert who.returncode == 0 and json.loads(who.stdout)["role"] == "operator"
    # and environment variables override the stored token
    env_who = cli("whoami", "-o", "json", token=sandbox.tokens.viewer)
    assert json.loads(env_who.stdout)["role"] == "viewer"
    assert cli("logout", logged_in=True).returncode == 0 and not cli.config.exists()


def test_apply_of_a_new_cluster_runs_create_storage_and_features_as_child_operations(made: dict[str, Any],
                                                                                     api: Any, cli: Cli) -> None:
    name = made["name"]
    # The apply showed its plan (the create with its cost), then followed one spec.apply operation to its end
    assert f"+ Cluster {name}: create" in made["apply"].stdout
    assert "cluster.create" in made["apply"].stdout and "/h" in made["apply"].stdout
    assert "spec.apply" in made["apply"].stderr and "SUCCEEDED" in made["apply"].stderr
    ops = _ops(api, name)
    parent = next(o for o in ops if o["kind"] == "spec.apply")
    assert [s["name"] for s in parent["steps"]] == ["cluster", "storage", "features"]
    children = [o for o in ops if (o["idempotency_key"] or "").startswith(parent["id"] + "/")]
    assert sorted(o["kind"] for o in children) == ["cluster.create", "features.update", "storage.add"]
    assert all(o["status"] == "SUCCEEDED" for o in children)
    # and the cluster is what the file says
    detail = api.get(f"/v1/clusters/{name}").json()
    assert {(g["name"], g["target_count"], g["capacity_type"]) for g in detail["instance_groups"]} == {
        ("gpu", 1, "on-demand"), ("cpu", 1, "spot")}
    storage = {i["name"]: i for i in api.get(f"/v1/clusters/{name}/storage").json()["items"]}
    assert storage["datasets"]["prefix"] == "datasets/" and storage["datasets"]["read_only"] is True
    assert "podstart-fsx" in storage
    assert api.get(f"/v1/clusters/{name}/features").json()["training_operator"]["enabled"] is True
    # the table faces see it too
    listed = cli("clusters", "list")
    assert listed.returncode == 0 and name in listed.stdout and "gpu:1/1" in listed.stdout


def test_export_then_plan_reports_no_changes(made: dict[str, Any], cli: Cli) -> None:
    out, docs = _export(cli, made["name"], "export.yaml")
    doc = docs[0]
    # server-chosen defaults are explicit: the zone by name, the health checks the group got, the VPC
    gpu = next(g for g in doc["spec"]["instance_groups"] if g["name"] == "gpu")
    assert gpu["deep_health_checks"] == ["InstanceStress", "InstanceConnectivity"] and gpu["volume_size_gb"] == 500
    cpu = next(g for g in doc["spec"]["instance_groups"] if g["name"] == "cpu")
    assert cpu["availability_zone"] == "us-west-2b" and cpu["deep_health_checks"] == []
    assert doc["spec"]["vpc_cidr"] and doc["spec"]["kubernetes_version"]
    assert doc["spec"]["features"]["training_operator"] == {"enabled": True}
    for path in (out, made["spec"]):  # the export, and the file it was made from (zone given by id)
        plan = cli("plan", "-f", str(path))
        assert plan.returncode == 0, plan.stdout + plan.stderr
        assert "No changes." in plan.stdout


def test_editing_a_count_and_a_feature_plans_exactly_those_two_changes_and_apply_makes_them(
        made: dict[str, Any], cli: Cli, api: Any) -> None:
    name = made["name"]
    _, docs = _export(cli, name, "before-edit.yaml")
    cpu = next(g for g in docs[0]["spec"]["instance_groups"] if g["name"] == "cpu")
    count = cpu["instance_count"]
    cpu["instance_count"] = count + 1
    ray = docs[0]["spec"]["features"]["kuberay_operator"]["enabled"]
    docs[0]["spec"]["features"]["kuberay_operator"]["enabled"] = not ray
    edit = cli.home / "edit.yaml"
    edit.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    # When the user plans the edit (as JSON, for a script)
    r = cli("plan", "-f", str(edit), "-o", "json")
    # Then exactly the two fields differ, old -> new, and the exit code says changes are pending
    assert r.returncode == 2, r.stderr
    plan = json.loads(r.stdout)
    diffs = {(d["path"], d["old"], d["new"], d["change"]) for d in plan["documents"][0]["diffs"]}
    assert diffs == {("spec.instance_groups[cpu].instance_count", count, count + 1, "update"),
                     ("spec.features.kuberay_operator.enabled", ray, not ray, "update")}
    assert [o["kind"] for o in plan["documents"][0]["operations"]] == ["instance_group.scale", "features.update"]
    scale = plan["documents"][0]["operations"][0]["plan"]
    assert scale["cost"]["hourly"] > 0  # one more ml.c5.large
    # and the table names the lines of the edited fields
    table = cli("plan", "-f", str(edit))
    lines = edit.read_text().splitlines()
    count_line = next(i for i, line in enumerate(lines, 1) if f"instance_count: {count + 1}" in line)
    assert f"edit.yaml:{count_line})" in table.stdout
    # When it is applied
    before = len(_ops(api, name))
    applied = cli("apply", "-f", str(edit), "--yes")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    # Then the cluster changed, through one parent and two children
    assert len(_ops(api, name)) == before + 3
    groups = {g["name"]: g["target_count"] for g in api.get(f"/v1/clusters/{name}").json()["instance_groups"]}
    assert groups["cpu"] == count + 1
    assert api.get(f"/v1/clusters/{name}/features").json()["kuberay_operator"]["enabled"] is (not ray)
    # and the same file now plans as no change, and applies as a no-op (nothing started)
    again = cli("apply", "-f", str(edit), "--yes")
    assert again.returncode == 0 and "No changes." in again.stdout
    assert len(_ops(api, name)) == before + 3


def test_an_invalid_field_fails_naming_the_file_line_and_field_and_changes_nothing(made: dict[str, Any],
                                                                                   cli: Cli, api: Any) -> None:
    text = made["spec"].read_text().replace("capacity_type: spot", "capacity_type: spots")
    bad = cli.home / "bad.yaml"
    bad.write_text(text)
    line = next(i for i, s in enumerate(text.splitlines(), 1) if "spots" in s)
    before = len(_ops(api, made["name"]))
    for command in ("plan", "apply"):
        r = cli(command, "-f", str(bad), "--yes") if command == "apply" else cli(command, "-f", str(bad))
        assert r.returncode == 1, r.stdout
        assert "422" in r.stderr
        assert f"bad.yaml:{line}: spec.instance_groups[1].capacity_type:" in r.stderr, r.stderr
    # a YAML mistake is shown at its line too, before anything is sent
    broken = cli.home / "broken.yaml"
    broken.write_text("apiVersion: podstart/v1\nkind: Cluster\nmetadata: {name: x\n")
    r = cli("plan", "-f", str(broken))
    assert r.returncode == 1 and "broken.yaml:" in r.stderr and "YAML" in r.stderr
    assert len(_ops(api, made["name"])) == before


def test_a_field_no_operation_can_change_is_replace_needed_and_apply_refuses_it(made: dict[str, Any],
                                                                               cli: Cli, api: Any) -> None:
    current, _ = _export(cli, made["name"], "before-replace.yaml")
    text = current.read_text().replace("instance_type: ml.c5.large", "instance_type: ml.c5.xlarge")
    repl = cli.home / "replace.yaml"
    repl.write_text(text)
    r = cli("plan", "-f", str(repl), "-o", "json")
    assert r.returncode == 2
    diff = json.loads(r.stdout)["documents"][0]["diffs"]
    assert [(d["path"], d["change"]) for d in diff] == [("spec.instance_groups[cpu].instance_type", "replace-needed")]
    before = len(_ops(api, made["name"]))
    assert cli("apply", "-f", str(repl), "--yes").returncode == 1
    # the API refuses it too (409, naming the field), whoever sends it
    body = {"documents": list(yaml.safe_load_all(text))}
    direct = api.post("/v1/specs/apply", json=body, key=uuid.uuid4().hex)
    assert direct.status_code == 409 and "instance_type" in direct.json()["errors"][0]["msg"]
    assert len(_ops(api, made["name"])) == before


def test_the_weakest_roles_that_should_fail(made: dict[str, Any], cli: Cli, sandbox: Any, api: Any) -> None:
    name = made["name"]
    _, docs = _export(cli, name, "before-roles.yaml")
    before = len(_ops(api, name))
    # a viewer may plan, not apply
    docs[0]["spec"]["instance_groups"][0]["instance_count"] += 1
    more = cli.home / "more.yaml"
    more.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    assert cli("plan", "-f", str(more), token=sandbox.tokens.viewer).returncode == 2
    r = cli("apply", "-f", str(more), "--yes", token=sandbox.tokens.viewer)
    assert r.returncode == 1 and "403" in r.stderr
    # an operator may scale, but pruning a group (it terminates instances) needs an admin: nothing starts
    docs[0]["spec"]["instance_groups"] = [g for g in docs[0]["spec"]["instance_groups"] if g["name"] != "gpu"]
    fewer = cli.home / "fewer.yaml"
    fewer.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    without = cli("plan", "-f", str(fewer))
    assert without.returncode == 0 and "kept (prune deletes it)" in without.stdout
    r = cli("apply", "-f", str(fewer), "--prune", "--yes", token=sandbox.tokens.operator)
    assert r.returncode == 1 and "403" in r.stderr and "admin" in r.stderr
    assert len(_ops(api, name)) == before


def test_apply_of_a_job_and_an_endpoint_runs_both_and_logs_follow_prints_lines_as_they_come(
        made: dict[str, Any], cli: Cli, api: Any) -> None:
    name = made["name"]
    work = cli.home / "work.yaml"
    work.write_text(WORKLOADS.format(name=name))
    r = cli("apply", "-f", str(work), "--yes")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "+ TrainingJob default/train: create" in r.stdout and "+ Endpoint chat: create" in r.stdout
    jobs = json.loads(cli("jobs", "list", "-c", name, "-o", "json").stdout)
    assert [(j["name"], j["status"]) for j in jobs] == [("train", "Running")]
    eps = json.loads(cli("endpoints", "list", "-c", name, "-o", "json").stdout)
    assert [(e["name"], e["status"]) for e in eps] == [("chat", "READY")]
    answer = cli("invoke", "chat", "Say hi", "-c", name)
    assert answer.returncode == 0 and answer.stdout.strip(), answer.stderr
    # the workloads export and plan back as no change
    export = cli("export", name, "--include", "jobs,endpoints")
    assert export.returncode == 0 and [d["kind"] for d in yaml.safe_load_all(export.stdout)] == [
        "Cluster", "TrainingJob", "Endpoint"]
    (cli.home / "all.yaml").write_text(export.stdout)
    assert cli("plan", "-f", str(cli.home / "all.yaml")).returncode == 0
    # `logs -f`: the tail, then lines the pod writes after the command started, as they come
    proc = cli.popen("logs", "train", "-c", name, "-f", "--tail", "1")
    try:
        first = proc.stdout.readline() if proc.stdout else ""
        t0 = time.monotonic()
        later = [proc.stdout.readline() for _ in range(3)] if proc.stdout else []
        assert first and all(later), "the follow printed lines"
        steps = [int(line.split("step ")[1].split()[0]) for line in [first, *later]]
        assert steps == sorted(steps) and steps[-1] > steps[0], steps
        assert time.monotonic() - t0 > 0.2, "later lines came as the pod wrote them, not all at once"
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert "polling" not in err  # it followed over the live socket


def test_ops_wait_follows_an_operation_and_says_how_it_ended(made: dict[str, Any], cli: Cli, api: Any) -> None:
    parent = next(o for o in _ops(api, made["name"]) if o["kind"] == "spec.apply")
    r = cli("ops", "wait", parent["id"])
    assert r.returncode == 0 and "SUCCEEDED" in r.stderr
    listed = cli("operations", "list", "--cluster", made["name"], "-o", "json")
    assert parent["id"] in {o["id"] for o in json.loads(listed.stdout)}
    eventually(lambda: cli("ops", "get", parent["id"], "-o", "json").returncode == 0)
