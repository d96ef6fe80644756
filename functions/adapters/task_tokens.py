"""Ending a workflow's task-token wait (functions.domain.wakes): the steps and events functions' SendTaskSuccess.

Not part of StepFunctionsRunner: the API function loads the runner, and it may not resume anything."""

from __future__ import annotations

import json
from typing import Any

from botocore.exceptions import ClientError

from functions.adapters import aws

STALE_TOKEN = ("InvalidToken", "TaskTimedOut", "TaskDoesNotExist")


def resume(token: str) -> bool:
    """End a task-token wait (SendTaskSuccess). False when the token is no longer waited on (the wait timed out
    into its poll, the execution ended, it was already resumed): resuming twice is harmless."""
    sfn: Any = aws.client("stepfunctions", None)
    try:
        sfn.send_task_success(taskToken=token, output=json.dumps({"woken": True}))
    except ClientError as err:
        if err.response.get("Error", {}).get("Code") in STALE_TOKEN:
            return False
        raise
    return True
