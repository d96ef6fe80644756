"""What the CLI prints: data on stdout (-o table|json|yaml), progress and errors on stderr, colour only on a
terminal (and never with NO_COLOR)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from typing import Any

import yaml
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from podstart_cli.specfile import Source


def _console(stream: Any) -> Console:
    """Colour on a terminal only; off a terminal (a pipe, a file) lines are never cut to a width."""
    tty = bool(getattr(stream, "isatty", lambda: False)())
    return Console(file=stream, highlight=False, soft_wrap=True, no_color=bool(os.environ.get("NO_COLOR")),
                   width=None if tty else 100_000)


out = _console(sys.stdout)
err = _console(sys.stderr)


def reset_consoles() -> None:
    """Bind the consoles to the current streams (tests replace sys.stdout/sys.stderr)."""
    global out, err
    out, err = _console(sys.stdout), _console(sys.stderr)


def data(value: Any, fmt: str) -> None:
    if fmt == "json":
        out.print(escape(json.dumps(value, indent=2, default=str)), markup=True)
    else:
        out.print(escape(yaml.safe_dump(value, sort_keys=False, default_flow_style=False)).rstrip(), markup=True)


def table(rows: Sequence[dict[str, Any]], columns: Sequence[tuple[str, str]], empty: str) -> None:
    if not rows:
        err.print(empty)
        return
    t = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    for _, title in columns:
        t.add_column(title.upper())
    for r in rows:
        t.add_row(*[escape(_cell(r.get(key))) for key, _ in columns])
    out.print(t)


def _cell(v: Any) -> str:
    if v is None or v == "":
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, list | dict):
        return json.dumps(v, default=str)
    return str(v)


# -- problems -----------------------------------------------------------------------------------------------
def loc_path(loc: Sequence[Any]) -> str:
    out_: list[str] = []
    for p in loc:
        if isinstance(p, int):
            out_.append(f"[{p}]")
        else:
            out_.append(("." if out_ else "") + str(p))
    return "".join(out_)


def place(loc: Sequence[Any], sources: Sequence[Source] | None) -> tuple[str | None, Sequence[Any]]:
    """`file:line` of a loc naming a document field (["body", "documents", i, ...]), and the loc inside it."""
    loc = list(loc)
    if sources is not None and loc[:2] == ["body", "documents"] and len(loc) > 2 and isinstance(loc[2], int) \
            and loc[2] < len(sources):
        src = sources[loc[2]]
        inner = tuple(loc[3:])
        line = src.line_of(inner)
        return (f"{src.file}:{line}" if line else src.file), inner
    return None, loc


def problem(exc: Any, sources: Sequence[Source] | None = None) -> None:
    p = exc.problem
    title = p.get("title") or "Error"
    status = p.get("status") or exc.status
    err.print(f"[bold red]Error:[/] {escape(str(title))} ({status}): {escape(str(p.get('detail') or ''))}")
    for e in exc.errors:
        where, inner = place(e.get("loc") or [], sources)
        field = loc_path(inner) or "(document)"
        prefix = f"{where}: " if where else ""
        err.print(f"  {escape(prefix)}[bold]{escape(field)}[/]: {escape(str(e.get('msg', '')))}")
    for key in ("running_operation", "operation_id"):
        if p.get(key):
            err.print(f"  {key.replace('_', ' ')}: {p[key]}")


# -- plans --------------------------------------------------------------------------------------------------
MARK = {"create": ("+", "green"), "update": ("~", "yellow"), "delete": ("-", "red"),
        "replace-needed": ("!", "magenta"), "unchanged": ("=", "dim")}


def _value(v: Any) -> str:
    if isinstance(v, dict | list):
        return json.dumps(v, default=str, separators=(",", ":"))
    return json.dumps(v) if isinstance(v, str | bool) or v is None else str(v)


def _money(x: float) -> str:
    return f"{'+' if x > 0 else '-' if x < 0 else ''}${abs(x):,.2f}"


def plan(p: dict[str, Any], sources: Sequence[Source] | None) -> None:
    for d in p["documents"]:
        sym, colour = MARK.get(d["action"], ("?", "white"))
        ns = f"{d['namespace']}/" if d.get("namespace") else ""
        src = sources[d["index"]] if sources is not None and d.get("index") is not None else None
        at = f"  [dim]({escape(src.file)}:{src.line_of(())})[/]" if src is not None else ""
        out.print(f"[{colour}]{sym} {d['kind']} {escape(ns + d['name'])}[/]: {d['action']}{at}")
        for f in d.get("diffs") or []:
            fs, fc = MARK.get(f["change"], ("?", "white"))
            line = src.line_of(tuple(f["loc"])) if src is not None and f.get("loc") else None
            where = f"  [dim]({escape(src.file)}:{line})[/]" if src is not None and line else ""
            if f["change"] == "create":
                body = f"{escape(f['path'])}: {escape(_value(f['new']))}"
            elif f["change"] == "delete":
                body = f"{escape(f['path'])}: {escape(_value(f['old']))}"
            else:
                body = f"{escape(f['path'])}: {escape(_value(f['old']))} -> {escape(_value(f['new']))}"
            note = f" [dim]({escape(f['note'])})[/]" if f.get("note") else ""
            out.print(f"    [{fc}]{fs}[/] {body}{note}{where}")
        for o in d.get("operations") or []:
            cost = ""
            if o.get("plan"):
                hourly = float(o["plan"]["cost"]["hourly"])
                n = sum(1 for ch in o["plan"].get("changes") or [] if ch.get("action") != "none")
                cost = f" [dim]({n} change{'s' if n != 1 else ''}" + (f", {_money(hourly)}/h)[/]" if hourly else ")[/]")
                for w in o["plan"].get("warnings") or []:
                    out.print(f"      [yellow]warning:[/] {escape(w)}")
            note = f" [dim]({escape(o['note'])})[/]" if o.get("note") else ""
            out.print(f"    [cyan]->[/] {o['phase']}: {o['kind']} {escape(o['resource'])}{cost}{note}")
        for w in d.get("warnings") or []:
            out.print(f"    [yellow]warning:[/] {escape(w)}")
    for w in p.get("warnings") or []:
        out.print(f"[yellow]warning:[/] {escape(w)}")
    s = p["summary"]
    if not p["changed"]:
        out.print(f"[green]No changes.[/] Cluster {p['cluster']} ({p['region']}) matches the documents.")
        return
    cost = p["cost"]
    out.print(f"[bold]Plan[/] for {p['cluster']} ({p['region']}): {s['create']} to create, {s['update']} to update, "
              f"{s['delete']} to delete, {s['replace-needed']} need replacing, {s['unchanged']} unchanged; "
              f"cost {_money(cost['hourly'])}/h (~{_money(cost['monthly_estimate'])}/month)")
