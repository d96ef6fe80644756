"""The step contract's pieces: error classification, backoff, the generated state machines."""

from __future__ import annotations

import json
from pathlib import Path

from botocore.exceptions import ClientError

from functions.domain.asl import TRANSIENT_ERRORS, definition
from functions.domain.errors import PermanentStepError, TransientStepError
from functions.domain.kinds import KINDS, execution_timeout, state_machine_file, step_budget
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
        assert on_disk == definition(kind, steps, execution_timeout(kind)), f"run `make asl` to regenerate {kind}"


def test_each_workflow_runs_exactly_the_steps_of_its_kind_and_state_machine() -> None:
    """Workflows are values listed in one table; their step names are the kind's contract and the state
    machine's Task states, in the same order."""
    from functions.workflows.registry import WORKFLOWS

    assert set(WORKFLOWS) == set(KINDS)
    for kind, workflow in WORKFLOWS.items():
        assert workflow.kind == kind and workflow.step_names == KINDS[kind]
        states = json.loads((ROOT / "statemachines" / state_machine_file(kind)).read_text())["States"]
        tasks = [n for n, st in states.items() if st["Type"] == "Task" and "step" in st["Parameters"]["Payload"]]
        assert tuple(tasks) == workflow.step_names
        assert states[tasks[0]]["Parameters"]["Payload"]["step"] == tasks[0]


def test_every_state_machine_has_a_timeout_and_every_step_a_budget() -> None:
    for kind in KINDS:
        d = json.loads((ROOT / "statemachines" / state_machine_file(kind)).read_text())
        assert 0 < d["TimeoutSeconds"] <= 24 * 3600, kind
        assert all(step_budget(kind, s) <= 4 * 3600 for s in KINDS[kind])


def test_no_workflow_module_is_loaded_by_import_side_effect() -> None:
    # the table lists every kind's module itself and never swallows an import error; no workflow module adds
    # itself to it (LazyWorkflows.register is the sandbox's, for test-only kinds)
    source = (ROOT / "functions" / "workflows" / "registry.py").read_text()
    assert "suppress(ImportError)" not in source and "except ImportError" not in source
    for module in (ROOT / "functions" / "workflows").glob("*.py"):
        if module.name != "registry.py":
            assert "register(" not in module.read_text(), module.name


def test_every_step_retries_transient_errors_and_catches_the_rest() -> None:
    d = definition("x.y", ("one", "two"))
    for name in ("Begin", "one", "two", "Finish"):
        state = d["States"][name]
        assert state["Retry"][0]["ErrorEquals"] == TRANSIENT_ERRORS
        assert state["Catch"][0]["Next"] == "RecordFailure"
    assert d["States"]["one~wait"]["SecondsPath"] == "$.result.wait_seconds"
    assert d["States"]["two?"]["Default"] == "Finish"
