"""EmbeddedAws: moto in server mode, in-process, with PodStart's extensions and seed data."""

from __future__ import annotations

import io
import json
import logging
import os
import socket
import time
import urllib.request
import zipfile
from collections.abc import Callable
from typing import Any

from sandbox.aws import dynamodb, ec2, eks, events, fsx, lambdas, quotas, reads, s3, sagemaker, stepfunctions
from sandbox.aws.calls import CallLog, ClientHooks, FaultInjector, KubeHooks
from sandbox.aws.runtime import ACCOUNT_ID, RUNTIME, KubeRegistry

DEFAULT_REGION = "us-west-2"
SEEDED_REGIONS = ("us-west-2", "us-east-1", "us-east-2", "eu-west-2", "ap-northeast-1")
MOTO_CONFIG = {
    "lambda": {"use_docker": False},
    "stepfunctions": {"execute_state_machine": True},
    "iam": {"load_aws_managed_policies": True},
}
LAMBDA_ROLE = "podstart-sandbox-lambda"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _stop_executions(timeout_s: float = 5.0) -> None:
    """Stop every running execution (moto runs each on daemon threads) and wait for their threads."""
    import datetime as dt

    from moto.stepfunctions.parser.api import ExecutionStatus
    from moto.stepfunctions.parser.models import stepfunctions_parser_backends
    from moto.stepfunctions.parser.utils import TMP_THREADS

    for account in list(stepfunctions_parser_backends):
        for region in list(stepfunctions_parser_backends[account]):
            backend = stepfunctions_parser_backends[account][region]
            for execution in backend._get_executions(ExecutionStatus.RUNNING):
                try:
                    execution.stop(dt.datetime.now(dt.UTC), error="SandboxStopped",
                                   cause="the sandbox is stopping")
                except Exception:  # a worker not yet started has no environment to stop
                    logging.getLogger("sandbox.aws").debug("execution stop failed", exc_info=True)
    deadline = time.monotonic() + timeout_s
    for thread in list(TMP_THREADS):
        thread.join(timeout=max(deadline - time.monotonic(), 0.0))
    TMP_THREADS[:] = [t for t in TMP_THREADS if t.is_alive()]


def _dummy_zip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("index.py", "def handler(event, context):\n    return event\n")
    return buf.getvalue()



def _list_moto_modules_once() -> None:
    """moto's server lists its package directory (a listdir and ~150 isdir) on every request to find the service a
    Host names; the list never changes while it runs, so it is read once."""
    from moto import backends

    if getattr(backends.list_of_moto_modules, "_podstart_once", False):
        return
    modules = tuple(backends.list_of_moto_modules())

    def listed() -> tuple[str, ...]:
        return modules

    listed._podstart_once = True  # type: ignore[attr-defined]
    backends.list_of_moto_modules = listed

class EmbeddedAws:
    def __init__(self, port: int = 0, time_scale: float = 60.0, kube: KubeRegistry | None = None) -> None:
        self._port = port
        self.time_scale = time_scale
        self.kube = kube
        self.region = DEFAULT_REGION
        self.calls = CallLog()
        self.faults = FaultInjector()
        self._server: Any = None
        self._endpoint = ""

    # lifecycle ---------------------------------------------------------------------------------
    def start(self) -> str:
        from moto.server import ThreadedMotoServer

        RUNTIME.time_scale = self.time_scale
        RUNTIME.kube = self.kube
        lambdas.patch_lambda_invoke()
        stepfunctions.patch()
        dynamodb.patch()
        eks.patch()
        sagemaker.patch()
        quotas.patch()
        events.patch()
        ec2.patch()
        fsx.patch()
        s3.patch()
        reads.patch()
        _list_moto_modules_once()

        logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one line per request otherwise
        port = self._port or _free_port()
        os.environ["MOTO_PORT"] = str(port)  # moto's Step Functions reach Lambda through it
        # IAM backends may be built before the config post lands; the env var covers them too.
        os.environ["MOTO_IAM_LOAD_MANAGED_POLICIES"] = "true"
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
        self._server.start()
        self._endpoint = f"http://127.0.0.1:{port}"
        request = urllib.request.Request(
            f"{self._endpoint}/moto-api/config",
            data=json.dumps(MOTO_CONFIG).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=10):
            pass
        ClientHooks(self.calls, self.faults).install()
        KubeHooks(self.calls).install()
        self._seed()
        return self._endpoint

    def stop(self) -> None:
        """Stop everything this started: timers, running Step Functions executions, event delivery,
        then the server. Executions stop as StopExecution would (a Wait state ends at once)."""
        RUNTIME.cancel_timers()
        _stop_executions()
        events.shutdown()
        RUNTIME.cancel_timers()  # any a stopping execution scheduled on its way out
        if self._server is not None:
            self._server.stop()
            self._server = None

    @property
    def endpoint(self) -> str:
        return self._endpoint

    def env(self) -> dict[str, str]:
        return {
            "AWS_ENDPOINT_URL": self._endpoint,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": DEFAULT_REGION,
            "AWS_REGION": DEFAULT_REGION,
        }

    # lambda ------------------------------------------------------------------------------------
    def function_arn(self, function_name: str) -> str:
        return f"arn:aws:lambda:{self.region}:{ACCOUNT_ID}:function:{function_name}"

    def route_lambdas(self, handlers: dict[str, Callable[[dict[str, Any], Any], Any]]) -> None:
        RUNTIME.lambda_handlers.update(handlers)
        client = self._client("lambda")
        existing = {
            f["FunctionName"]
            for p in client.get_paginator("list_functions").paginate()
            for f in p["Functions"]
        }
        for name in handlers:
            if name in existing:
                continue
            client.create_function(
                FunctionName=name,
                Runtime="python3.11",
                Handler="index.handler",
                Role=f"arn:aws:iam::{ACCOUNT_ID}:role/{LAMBDA_ROLE}",
                Code={"ZipFile": _dummy_zip()},
                Timeout=300,
                MemorySize=512,
            )

    # internals ---------------------------------------------------------------------------------
    def client(self, service: str, region: str | None = None) -> Any:
        """A plain boto3 client on the embedded endpoint (not the control plane's factory, so its calls
        stay out of the call log): for seeding and the sandbox's own controls."""
        return self._client(service, region)

    def _client(self, service: str, region: str | None = None) -> Any:
        """A plain boto3 client for seeding (not the control plane's factory, so no call log)."""
        import boto3

        return boto3.client(
            service,
            region_name=region or self.region,
            endpoint_url=self._endpoint,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )

    def _seed(self) -> None:
        iam = self._client("iam")
        iam.create_role(
            RoleName=LAMBDA_ROLE,
            AssumeRolePolicyDocument=json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Principal": {"Service": "lambda.amazonaws.com"},
                            "Action": "sts:AssumeRole",
                        }
                    ],
                }
            ),
        )
        for region in SEEDED_REGIONS:
            sagemaker.seed_training_plans(region)
            sagemaker.seed_tracking_servers(region)
