"""A job's metrics by step (the job page's chart): parsed from training log lines when it does not report to MLflow,
read from its MLflow run (the tracking server's MLflow REST API) when it does."""

from __future__ import annotations

from typing import Any

import pytest

from functions.adapters import mlflow_aws
from functions.domain.training import jobs as training

PYTORCH = "2026-01-01T00:00:0{s}.000Z [rank 0] step {step} loss {loss} throughput {tp} samples/s"


def test_pytorch_and_ray_lines_give_one_point_a_step_per_series() -> None:
    # Given a PyTorch log (steps 1..3, step 2 printed twice: the last print wins) and a Ray driver line
    lines = [PYTORCH.format(s=i, step=step, loss=loss, tp=tp)
             for i, (step, loss, tp) in enumerate([(1, 2.5, 40.0), (2, 2.3, 41.0), (2, 2.2, 41.5), (3, 2.0, 42.0)])]
    lines += ["no step here: loss 9.9", "x (TaskRunner) step:4 - actor/pg_loss:1.5517 critic/score/mean:0.24 "
              "perf/throughput:950.0 tokens/s (25.0 samples/s)", "step 5 lr 3e-05 loss 1.4"]
    # When parsed
    got = training.metrics_from_logs(lines)
    # Then each series has one point a step, in step order, with what the line printed
    assert got["loss"] == [(1, 2.5), (2, 2.2), (3, 2.0), (4, 1.5517), (5, 1.4)]
    assert got["throughput (samples/s)"] == [(1, 40.0), (2, 41.5), (3, 42.0), (4, 25.0)]
    assert got["learning rate"] == [(5, 3e-05)]


def test_only_the_newest_steps_are_kept() -> None:
    lines = [f"step {i} loss {1 / (i + 1):.4f}" for i in range(training.MAX_METRIC_POINTS + 50)]
    loss = training.metrics_from_logs(lines)["loss"]
    assert len(loss) == training.MAX_METRIC_POINTS
    assert (loss[0][0], loss[-1][0]) == (50, training.MAX_METRIC_POINTS + 49)


def test_lines_without_a_step_or_a_value_give_nothing() -> None:
    assert training.metrics_from_logs(["starting", "loss 2.0", "epoch 1 done", "step 3"]) == {}


class _Client:
    def describe_mlflow_tracking_server(self, TrackingServerName: str) -> dict[str, Any]:
        return {"TrackingServerName": TrackingServerName,
                "TrackingServerUrl": "https://t-abc.us-west-2.experiments.sagemaker.aws"}


@pytest.fixture
def rest() -> Any:
    """A fake MLflow REST API: an experiment with two runs, the job's and a newer one."""
    sent: list[tuple[str, str, Any]] = []

    def transport(method: str, url: str, body: dict[str, Any] | None) -> tuple[int, dict[str, Any]]:
        sent.append((method, url, body))
        if url.endswith("/experiments/search"):
            return (200, {"experiments": [{"experiment_id": "7", "name": "exp"}]}
                    if body and body["filter"] == "name = 'exp'" else {"experiments": []})
        if url.endswith("/runs/search"):
            return 200, {"runs": [
                {"info": {"run_id": "r-new", "run_name": "someone-else"}, "data": {"metrics": [{"key": "loss"}]}},
                {"info": {"run_id": "r-job", "run_name": "sft"},
                 "data": {"metrics": [{"key": "loss"}, {"key": "acc"}]}},
            ]}
        if "/metrics/get-history?" in url:
            key = "loss" if "metric_key=loss" in url else "acc"
            assert "run_id=r-job" in url
            return 200, {"metrics": [{"key": key, "step": 2, "value": 0.5}, {"key": key, "step": 1, "value": 0.9}]}
        return 404, {}

    mlflow_aws.register_transport(transport)
    yield sent
    mlflow_aws.register_transport(None)


def test_the_job_s_run_is_read_from_the_tracking_server_s_mlflow_api(rest: Any) -> None:
    servers = mlflow_aws.AwsMlflowServers(client=lambda _s, _r: _Client())
    run, series = servers.metric_history("us-west-2", "podstart-demo", "exp", "sft")  # type: ignore[misc]
    assert run == "sft"
    assert series == {"acc": [(1, 0.9), (2, 0.5)], "loss": [(1, 0.9), (2, 0.5)]}
    api = "https://t-abc.us-west-2.experiments.sagemaker.aws/api/2.0/mlflow/"
    assert all(url.startswith(api) for _, url, _ in rest)
    assert [m for m, _, _ in rest] == ["POST", "POST", "GET", "GET"]  # reads only


def test_no_experiment_yet_is_none(rest: Any) -> None:
    servers = mlflow_aws.AwsMlflowServers(client=lambda _s, _r: _Client())
    assert servers.metric_history("us-west-2", "podstart-demo", "missing", "sft") is None
