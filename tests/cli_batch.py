"""Run many aws CLI commands in one process (`python tests/cli_batch.py < commands.json`, with the python of
.venv-cli): each command goes through the aws CLI's own driver (argument parsing, the call, output formatting)
as `aws ARGS...` would, without paying the CLI's start-up (most of a second) per command.

Input: a JSON list of argument lists. Output: a JSON list of {"rc", "stdout", "stderr"}, in order."""

from __future__ import annotations

import contextlib
import io
import json
import sys


def run(args: list[str]) -> dict[str, object]:
    from awscli.clidriver import create_clidriver

    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = create_clidriver().main(args)
        except SystemExit as exit_:
            rc = exit_.code if isinstance(exit_.code, int) else 1
    texts = []
    for stream in (out, err):
        stream.flush()
        texts.append(stream.buffer.getvalue().decode("utf-8", errors="replace"))  # type: ignore[attr-defined]
    return {"rc": rc, "stdout": texts[0], "stderr": texts[1]}


def main() -> int:
    commands = json.load(sys.stdin)
    json.dump([run(list(c)) for c in commands], sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
