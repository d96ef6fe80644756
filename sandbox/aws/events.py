"""EventBridge extensions: Lambda (and Step Functions) rule targets deliver in-process, and Step
Functions executions emit 'Step Functions Execution Status Change' events on the default bus."""

from __future__ import annotations

import copy
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sandbox.aws.runtime import LOG, RUNTIME

_EXECUTOR: ThreadPoolExecutor | None = None
_EXECUTOR_LOCK = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    global _EXECUTOR
    with _EXECUTOR_LOCK:
        if _EXECUTOR is None:
            _EXECUTOR = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sandbox-events")
        return _EXECUTOR


def shutdown() -> None:
    """Drop deliveries not yet started, wait for the one running; the next use starts a new executor."""
    global _EXECUTOR
    with _EXECUTOR_LOCK:
        executor, _EXECUTOR = _EXECUTOR, None
    if executor is not None:
        executor.shutdown(wait=True, cancel_futures=True)


def _deliver_lambda(arn: str, event: Any) -> None:
    from sandbox.aws.lambdas import call_handler, function_name_of

    name = function_name_of(arn)
    if name not in RUNTIME.lambda_handlers:
        LOG.warning("EventBridge target %s has no routed handler; event dropped", arn)
        return
    _, error = call_handler(name, arn, json.dumps(event, default=str))
    if error:
        LOG.warning("EventBridge target %s failed on %s", arn, event.get("detail-type"))


def _deliver_state_machine(arn: str, event: Any) -> None:
    from moto.stepfunctions.responses import get_backend

    parts = arn.split(":")
    get_backend(parts[4], parts[3]).start_execution(arn, None, json.dumps(event, default=str))  # type: ignore[arg-type]


def patch_rule_targets() -> None:
    """Rule.send_to_targets: Lambda and Step Functions targets are delivered here, asynchronously,
    the rest go to moto's implementation."""
    from moto.events.models import EventTemplateParser, Rule

    if getattr(Rule.send_to_targets, "_podstart", False):
        return
    original = Rule.send_to_targets

    def send_to_targets(self: Any, original_event: Any, transform_input: bool = True) -> None:
        if not self.event_pattern.matches_event(original_event):
            return
        ours = [t for t in self.targets if t["Arn"].split(":")[2] in ("lambda", "states")]
        if ours:
            for target in ours:
                event: Any = original_event.copy()
                if transform_input and (target.get("InputTransformer") or target.get("Input") is not None):
                    if target.get("Input") is not None:
                        event = json.loads(target["Input"])
                    else:
                        transformer = target["InputTransformer"]
                        event = EventTemplateParser.parse(
                            input_template=transformer.get("InputTemplate"),
                            input_paths_map=transformer.get("InputPathsMap", {}),
                            event=original_event,
                        )
                deliver = (
                    _deliver_lambda if target["Arn"].split(":")[2] == "lambda" else _deliver_state_machine
                )
                _executor().submit(_safe, deliver, target["Arn"], event)
        rest = [t for t in self.targets if t not in ours]
        if rest:
            clone = copy.copy(self)
            clone.targets = rest
            original(clone, original_event, transform_input)

    send_to_targets._podstart = True  # type: ignore[attr-defined]
    Rule.send_to_targets = send_to_targets  # type: ignore[method-assign]


def _safe(fn: Any, *args: Any) -> None:
    try:
        fn(*args)
    except Exception:
        LOG.exception("EventBridge delivery to %s failed", args[0])


def _execution_event(execution: Any) -> None:
    def millis(value: Any) -> int | None:
        return int(value.timestamp() * 1000) if value is not None else None

    output = execution.output
    detail = {
        "executionArn": execution.exec_arn,
        "stateMachineArn": execution.state_machine_arn,
        "name": execution.name,
        "status": execution.exec_status.value if execution.exec_status else "RUNNING",
        "startDate": millis(execution.start_date),
        "stopDate": millis(execution.stop_date),
        "input": json.dumps(execution.input_data),
        "output": json.dumps(output) if output is not None and not isinstance(output, str) else output,
        "error": execution.error,
        "cause": execution.cause,
    }
    RUNTIME.put_event(
        execution.region_name,
        "aws.states",
        "Step Functions Execution Status Change",
        detail,
        [execution.exec_arn],
    )


def patch_execution_events() -> None:
    """Emit RUNNING at start and the terminal status when moto's ASL interpreter ends an execution."""
    from moto.stepfunctions.parser.backend import execution as module

    comm = module.BaseExecutionWorkerCommunication
    if getattr(comm.terminated, "_podstart", False):
        return
    original_terminated = comm.terminated
    original_start = module.Execution.start

    def terminated(self: Any) -> None:
        original_terminated(self)
        _execution_event(self.execution)

    def start(self: Any) -> None:
        _execution_event(self)  # exec_status is still None: RUNNING
        original_start(self)

    terminated._podstart = True  # type: ignore[attr-defined]
    comm.terminated = terminated  # type: ignore[method-assign]
    module.Execution.start = start  # type: ignore[method-assign]


def patch() -> None:
    patch_rule_targets()
    patch_execution_events()
