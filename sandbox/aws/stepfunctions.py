"""moto's Step Functions, made cheaper to run (the sandbox runs every operation of every test through it).

- Its interpreter parses a state machine's definition with ANTLR (pure Python, ~75-110 ms of CPU for one of
  PodStart's) when the machine is created, again to validate it, and again for every execution. The parse tree of
  a definition is kept; each execution still builds its own program from it (moto's preprocessor, ~15 ms), so no
  execution shares state with another.
- It builds a boto3 client for every Lambda task it runs (~50 ms of CPU each); the clients it builds for one
  region and port are all alike (its fixed keys, the local endpoint; the state's credentials are not used), so one
  serves them all.
"""

from __future__ import annotations

import threading
from typing import Any

_MAX_TREES = 256  # definitions kept: PodStart's kinds and the workflows tests register


def patch() -> None:
    parse_each_definition_once()
    share_state_machine_clients()


def parse_each_definition_once() -> None:
    from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser
    from moto.stepfunctions.parser.asl.parse.preprocessor import Preprocessor

    parse = AmazonStateLanguageParser.parse
    if getattr(parse, "_podstart", False):
        return
    trees: dict[str, Any] = {}
    lock = threading.Lock()

    def parse_once(definition: str) -> tuple[Any, Any]:
        with lock:
            tree = trees.get(definition)
        if tree is None:
            program, tree = parse(definition)  # a definition that does not parse raises, and is not kept
            with lock:
                if len(trees) >= _MAX_TREES:
                    trees.clear()
                trees[definition] = tree
            return program, tree
        return Preprocessor().visit(tree), tree

    parse_once._podstart = True  # type: ignore[attr-defined]
    AmazonStateLanguageParser.parse = staticmethod(parse_once)  # type: ignore[method-assign,assignment]


def share_state_machine_clients() -> None:
    from moto import settings
    from moto.stepfunctions.parser.asl.component.state.exec.state_task import lambda_eval_utils

    build = lambda_eval_utils.boto_client_for
    if getattr(build, "_podstart", False):
        return
    built: dict[tuple[str, str, str], Any] = {}
    lock = threading.Lock()

    def shared(region: str, service: str, state_credentials: Any = None) -> Any:
        key = (region, service, str(settings.moto_server_port()))
        with lock:
            if key not in built:
                built[key] = build(region=region, service=service, state_credentials=state_credentials)
            return built[key]

    shared._podstart = True  # type: ignore[attr-defined]
    lambda_eval_utils.boto_client_for = shared  # type: ignore[assignment]

