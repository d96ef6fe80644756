"""The step contract's pieces: error classification, backoff, the generated state machines."""

from __future__ import annotations

import json
from pathlib import Path

from botocore.exceptions import ClientError

from functions.domain.asl import TRANSIENT_ERRORS, definition
from functions.domain.errors import PermanentStepError, TransientStepError
from functions.domain.kinds import KINDS, state_machine_file
from functions.domain.workflow import next_wait
from functions.steps.engine import classify

ROOT = Path(__file__).resolve().parents[2]


def client_error(code: str, status: int = 400) -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": "m"}, "ResponseMetadata": {"HTTPStatusCode": status}},
                       "CreateCluster")


def test_throttling_and_5xx_are_transient_the_rest_permanent() -> None:
    assert isinstance(classify(client_error("ThrottlingException")), TransientStepError)
    assert isinstance(classify(client_error("Whatever", 503)), TransientStepError)
    err = classify(client_error("AccessDeniedException", 403))
    assert isinstance(err, PermanentStepError) and err.code == "AccessDeniedException"
    assert "CreateCluster" in err.message


def test_first_wait_covers_most_of_a_known_duration_then_backs_off() -> None:
    assert next_wait(0, 600, 1) == 480  # EKS: ~10 min -> look again after 8 min
    assert next_wait(1, 600, 1) == 10 and next_wait(2, 600, 1) == 20
    assert next_wait(10, None, 1) == 30  # capped: an AWS state change shows within 30 s
    assert next_wait(0, 600, 60) == 8  # the sandbox compresses the same schedule
    assert next_wait(5, None, 10_000) == 1  # Wait states need an integer >= 1


def test_state_machine_files_are_the_generated_definitions() -> None:
    for kind, steps in KINDS.items():
        on_disk = json.loads((ROOT / "statemachines" / state_machine_file(kind)).read_text())
        assert on_disk == definition(kind, steps), f"run `make asl` to regenerate {kind}"


def test_every_step_retries_transient_errors_and_catches_the_rest() -> None:
    d = definition("x.y", ("one", "two"))
    for name in ("Begin", "one", "two", "Finish"):
        state = d["States"][name]
        assert state["Retry"][0]["ErrorEquals"] == TRANSIENT_ERRORS
        assert state["Catch"][0]["Next"] == "RecordFailure"
    assert d["States"]["one~wait"]["SecondsPath"] == "$.result.wait_seconds"
    assert d["States"]["two?"]["Default"] == "Finish"
