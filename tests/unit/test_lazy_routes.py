"""The API's routes load with the first request that needs them: the table that says which module serves a path
names the module that defines every route, so no request is answered 404 for a route that exists."""

from __future__ import annotations

import importlib
import re

from functions.api import handler


def test_every_route_is_found_in_the_module_the_table_names() -> None:
    seen = 0
    for name in handler.ROUTE_MODULES:
        module = importlib.import_module(f"functions.api.routes.{name}")
        for route in module.router._routes:  # (rule, methods, ...) as Powertools' Router keeps them
            rule = route[0]
            path = re.sub(r"<(\w+)>", lambda m: "x" if m.group(1) != "cluster" else "c1", rule)
            assert handler.module_for(path) == name, (rule, handler.module_for(path), name)
            seen += 1
    assert seen >= 70


def test_the_entry_module_loads_no_route_module_and_no_planner() -> None:
    import subprocess
    import sys

    code = ("import sys, functions.api.handler\n"
            "heavy = [m for m in sys.modules if m.startswith(('functions.api.routes.', "
            "'functions.domain.plans.registry', 'functions.logic.', 'functions.domain.capacity', "
            "'functions.domain.views', 'boto3', 'kubernetes'))]\n"
            "print(','.join(sorted(heavy)))")
    env = {"OPERATIONS_TABLE": "o", "STATE_TABLE": "s", "IDEMPOTENCY_TABLE": "i", "POWERTOOLS_TRACE_DISABLED": "1",
           "PATH": "/usr/bin:/bin", "PYTHONPATH": "."}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == ""
