"""The `podstart` command: `podstart <resource> <verb>`, spec files with -f, -o table|json|yaml.

Exit codes scripts can trust: 0 ok, 1 error; `plan` (and `apply --dry-run`) 0 when nothing would change and 2
when something would (as Terraform's -detailed-exitcode). Data goes to stdout, progress and errors to stderr.
"""

from __future__ import annotations

import getpass
import os
import sys
import uuid
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from podstart_cli import config, follow, output, specfile
from podstart_cli.client import ApiError, Client

EXIT_OK, EXIT_ERROR, EXIT_CHANGES = 0, 1, 2

app = typer.Typer(no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
                  help="PodStart: HyperPod clusters on EKS from the command line (the REST API's fourth face).")


class Fmt(StrEnum):
    table = "table"
    json = "json"
    yaml = "yaml"


Output = Annotated[Fmt, typer.Option("-o", "--output", help="table, json or yaml")]
ClusterOpt = Annotated[str | None, typer.Option("--cluster", "-c", help="Cluster (default: PODSTART_CLUSTER, else "
                                                                        "your active cluster)")]
RegionOpt = Annotated[str | None, typer.Option("--region", help="The cluster's region, if its name is ambiguous")]
Files = Annotated[list[str], typer.Option("-f", "--filename", help="Spec file (YAML or JSON; - reads stdin); "
                                                                  "repeat for several")]


def fail(message: str, code: int = EXIT_ERROR) -> NoReturn:
    output.err.print(f"[bold red]Error:[/] {output.escape(message)}")
    raise typer.Exit(code)


def _client() -> tuple[Client, config.Settings]:
    try:
        s = config.settings()
    except config.ConfigError as exc:
        fail(str(exc))
    return Client(s.endpoint, s.token), s


def _guard(fn: Callable[[], int | None], sources: list[specfile.Source] | None = None) -> None:
    """Run a command; an API problem is printed (with file:line for spec fields) and exits 1."""
    try:
        code = fn()
    except ApiError as exc:
        output.problem(exc, sources)
        raise typer.Exit(EXIT_ERROR) from None
    except specfile.SpecFileError as exc:
        fail(str(exc))
    except TimeoutError as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    raise typer.Exit(code or EXIT_OK)


def _cluster(c: Client, cluster: str | None, region: str | None) -> tuple[str, str | None]:
    cluster = cluster or os.environ.get("PODSTART_CLUSTER")
    if cluster:
        return cluster, region
    active = c.active_cluster()
    if active is None:
        fail("no cluster: pass --cluster NAME (or make one your active cluster)")
    return active[0], region or active[1]


# -- login ----------------------------------------------------------------------------------------------------
@app.command()
def login(
    endpoint: Annotated[str, typer.Option(help="The REST API's base URL")] = "http://127.0.0.1:3099",
    token: Annotated[str | None, typer.Option(help="Bearer token (prompted when not given; see --token-stdin)")]
    = None,
    token_stdin: Annotated[bool, typer.Option("--token-stdin", help="Read the token from stdin")] = False,
    ws_url: Annotated[str | None, typer.Option(help="The live socket's URL, when it is not <endpoint>/ws")] = None,
) -> None:
    """Check the endpoint and token (GET /v1/me), then store them (file mode 0600) in your config directory."""
    if token_stdin:
        token = sys.stdin.readline().strip()
    elif token is None:
        if not sys.stdin.isatty():
            fail("no token: pass --token or --token-stdin")
        token = getpass.getpass("Token: ").strip()
    if not token:
        fail("the token is empty")

    def run() -> int:
        me = Client(endpoint, token or "").me()
        values = {"endpoint": endpoint.rstrip("/"), "token": token}
        if ws_url:
            values["ws_url"] = ws_url
        path = config.save(values)
        output.err.print(f"Logged in to {endpoint} as {me.get('name')} ({me.get('role')}); saved in {path}")
        return EXIT_OK
    _guard(run)


@app.command()
def logout() -> None:
    """Forget the stored endpoint and token."""
    output.err.print("Logged out." if config.forget() else "Not logged in.")


@app.command()
def whoami(fmt: Output = Fmt.table) -> None:
    """Who the API says you are, and where."""
    c, s = _client()

    def run() -> int:
        me = c.me()
        if fmt is Fmt.table:
            output.table([{**me, "endpoint": s.endpoint}], [("name", "name"), ("role", "role"),
                                                             ("endpoint", "endpoint")], "")
        else:
            output.data(me, fmt.value)
        return EXIT_OK
    _guard(run)


# -- resources ------------------------------------------------------------------------------------------------
clusters_app = typer.Typer(no_args_is_help=True, help="Clusters: list, get")
jobs_app = typer.Typer(no_args_is_help=True, help="Training jobs: list, get")
endpoints_app = typer.Typer(no_args_is_help=True, help="Inference endpoints: list, get")
nodes_app = typer.Typer(no_args_is_help=True, help="HyperPod nodes: list, get")
ops_app = typer.Typer(no_args_is_help=True, help="Operations: list, get, wait")
app.add_typer(clusters_app, name="clusters")
app.add_typer(jobs_app, name="jobs")
app.add_typer(endpoints_app, name="endpoints")
app.add_typer(nodes_app, name="nodes")
app.add_typer(ops_app, name="operations")
app.add_typer(ops_app, name="ops", hidden=True)

CLUSTER_COLS = [("name", "name"), ("region", "region"), ("status", "status"), ("hyperpod_status", "hyperpod"),
                ("kubernetes_version", "k8s"), ("groups", "groups"), ("origin", "origin"), ("active", "active")]
JOB_COLS = [("namespace", "namespace"), ("name", "name"), ("kind", "kind"), ("recipe", "recipe"),
            ("status", "status"), ("instance_type", "instance type"), ("nodes", "nodes"),
            ("gpus_per_node", "gpus/node"), ("created_at", "created")]
ENDPOINT_COLS = [("name", "name"), ("mode", "mode"), ("model", "model"), ("instance_type", "instance type"),
                 ("replicas", "replicas"), ("ready_replicas", "ready"), ("status", "status")]
NODE_COLS = [("node_id", "node"), ("group", "group"), ("instance_type", "instance type"), ("zone", "zone"),
             ("status", "status"), ("health", "health"), ("ready", "ready"), ("gpus_allocatable", "gpus")]
OP_COLS = [("id", "id"), ("kind", "kind"), ("status", "status"), ("phase", "phase"), ("target", "target"),
           ("by", "by"), ("created_at", "created")]


def _cluster_row(c: dict[str, Any]) -> dict[str, Any]:
    groups = " ".join(f"{g['name']}:{g.get('current_count') if g.get('current_count') is not None else '?'}"
                      f"/{g.get('target_count', g.get('instance_count'))}" for g in c.get("instance_groups") or [])
    return {**c, "groups": groups}


def _op_row(o: dict[str, Any]) -> dict[str, Any]:
    t = o.get("target") or {}
    target = "/".join(str(x) for x in (t.get("cluster"), t.get("resource")) if x)
    return {**o, "target": target, "by": (o.get("principal") or {}).get("name")}


def _show(items: list[dict[str, Any]] | dict[str, Any], fmt: Fmt, cols: list[tuple[str, str]],
          row: Callable[[dict[str, Any]], dict[str, Any]] = lambda r: r, empty: str = "Nothing here.") -> int:
    if fmt is not Fmt.table:
        output.data(items, fmt.value)
    else:
        rows = items if isinstance(items, list) else [items]
        output.table([row(r) for r in rows], cols, empty)
    return EXIT_OK


@clusters_app.command("list")
def clusters_list(fmt: Output = Fmt.table, region: RegionOpt = None) -> None:
    """Clusters in every region (PodStart's, and HyperPod-on-EKS clusters it could import)."""
    c, _ = _client()
    _guard(lambda: _show(list(c.pages("list_clusters", query={"region": region})), fmt, CLUSTER_COLS, _cluster_row,
                         "No clusters."))


@clusters_app.command("get")
def clusters_get(name: str, fmt: Output = Fmt.yaml, region: RegionOpt = None) -> None:
    """One cluster: EKS, HyperPod, instance groups, storage, latest operations."""
    c, _ = _client()
    _guard(lambda: _show(c.call("get_cluster", {"cluster": name}, {"region": region}).body, fmt, CLUSTER_COLS,
                         _cluster_row))


@jobs_app.command("list")
def jobs_list(cluster: ClusterOpt = None, region: RegionOpt = None, fmt: Output = Fmt.table) -> None:
    """Training jobs PodStart submitted on the cluster, newest first."""
    c, _ = _client()

    def run() -> int:
        name, rg = _cluster(c, cluster, region)
        return _show(list(c.pages("list_jobs", {"cluster": name}, {"region": rg})), fmt, JOB_COLS, empty="No jobs.")
    _guard(run)


@jobs_app.command("get")
def jobs_get(job: str, cluster: ClusterOpt = None, region: RegionOpt = None,
             namespace: Annotated[str, typer.Option("--namespace", "-n")] = "default", fmt: Output = Fmt.yaml) -> None:
    """One job: status, pods, recovery budget, detections."""
    c, _ = _client()

    def run() -> int:
        name, rg = _cluster(c, cluster, region)
        return _show(c.call("get_job", {"cluster": name, "job": job}, {"region": rg, "namespace": namespace}).body,
                     fmt, JOB_COLS)
    _guard(run)


@endpoints_app.command("list")
def endpoints_list(cluster: ClusterOpt = None, region: RegionOpt = None, fmt: Output = Fmt.table) -> None:
    """Inference endpoints on the cluster, status read live."""
    c, _ = _client()

    def run() -> int:
        name, rg = _cluster(c, cluster, region)
        return _show(list(c.pages("list_endpoints", {"cluster": name}, {"region": rg})), fmt, ENDPOINT_COLS,
                     empty="No endpoints.")
    _guard(run)


@endpoints_app.command("get")
def endpoints_get(endpoint: str, cluster: ClusterOpt = None, region: RegionOpt = None,
                  fmt: Output = Fmt.yaml) -> None:
    """One endpoint: request, live status, objects."""
    c, _ = _client()

    def run() -> int:
        name, rg = _cluster(c, cluster, region)
        return _show(c.call("get_endpoint", {"cluster": name, "endpoint": endpoint}, {"region": rg}).body, fmt,
                     ENDPOINT_COLS)
    _guard(run)


@nodes_app.command("list")
def nodes_list(cluster: ClusterOpt = None, region: RegionOpt = None, fmt: Output = Fmt.table) -> None:
    """The cluster's HyperPod nodes: group, status, health label, Ready, GPUs."""
    c, _ = _client()

    def run() -> int:
        name, rg = _cluster(c, cluster, region)
        return _show(list(c.pages("list_nodes", {"cluster": name}, {"region": rg})), fmt, NODE_COLS,
                     empty="No nodes.")
    _guard(run)


@nodes_app.command("get")
def nodes_get(node_id: str, cluster: ClusterOpt = None, region: RegionOpt = None, fmt: Output = Fmt.yaml) -> None:
    """One node: conditions, taints, pods, recent events."""
    c, _ = _client()

    def run() -> int:
        name, rg = _cluster(c, cluster, region)
        return _show(c.call("get_node", {"cluster": name, "node_id": node_id}, {"region": rg}).body, fmt, NODE_COLS)
    _guard(run)


@ops_app.command("list")
def ops_list(cluster: ClusterOpt = None, status: Annotated[str | None, typer.Option(help="PENDING, RUNNING, "
                                                                                       "SUCCEEDED, FAILED, CANCELLED")]
             = None, limit: Annotated[int, typer.Option(help="At most this many")] = 25, fmt: Output = Fmt.table
             ) -> None:
    """Operations, newest first."""
    c, _ = _client()

    def run() -> int:
        items = c.call("list_operations", query={"cluster": cluster, "status": status, "limit": limit}).body["items"]
        return _show(items, fmt, OP_COLS, _op_row, "No operations.")
    _guard(run)


@ops_app.command("get")
def ops_get(operation_id: str, fmt: Output = Fmt.yaml) -> None:
    """One operation: status, steps, error."""
    c, _ = _client()
    _guard(lambda: _show(c.operation(operation_id), fmt, OP_COLS, _op_row))


@ops_app.command("wait")
def ops_wait(operation_id: str, timeout: Annotated[float | None, typer.Option(help="Give up after this many "
                                                                                   "seconds")] = None,
             fmt: Output = Fmt.table) -> None:
    """Follow an operation to its end; exit 0 if it SUCCEEDED, 1 otherwise."""
    c, _ = _client()

    def run() -> int:
        op = follow.operation(c, operation_id, timeout)
        if fmt is not Fmt.table:
            output.data(op, fmt.value)
        return EXIT_OK if op["status"] == "SUCCEEDED" else _failed(op)
    _guard(run)


def _failed(op: dict[str, Any]) -> int:
    err = op.get("error") or {}
    step = next((s for s in op.get("steps") or [] if s["status"] == "FAILED"), None)
    output.err.print(f"[red]{op['kind']} {op['id']} {op['status']}[/]"
                     + (f" at {step['name']}" if step else "") + (f": {output.escape(str(err.get('message')))}"
                                                                  if err.get("message") else ""))
    return EXIT_ERROR


# -- specs ----------------------------------------------------------------------------------------------------
@app.command()
def schema(fmt: Annotated[Fmt, typer.Option("-o", "--output", help="json or yaml")] = Fmt.json) -> None:
    """The JSON Schema of spec documents (for editors: e.g. yaml-language-server's $schema)."""
    c, _ = _client()

    def run() -> int:
        output.data(c.call("spec_schema").body, "yaml" if fmt is Fmt.yaml else "json")
        return EXIT_OK
    _guard(run)


@app.command()
def export(
    cluster: str,
    out_file: Annotated[str, typer.Option("-o", "--output", help="File to write (.json: JSON, else YAML); - for "
                                                                 "stdout")] = "-",
    include: Annotated[str | None, typer.Option(help="Also export: jobs, endpoints or jobs,endpoints")] = None,
    region: RegionOpt = None,
) -> None:
    """Write a live cluster as spec documents: plan the file back and nothing changes."""
    c, _ = _client()

    def run() -> int:
        docs = c.call("export_spec", {"cluster": cluster}, {"region": region, "include": include}).body["documents"]
        import json

        text = json.dumps(docs if len(docs) > 1 else docs[0], indent=2) + "\n" if out_file.endswith(".json") \
            else specfile.dump_yaml(docs)
        if out_file == "-":
            sys.stdout.write(text)
        else:
            Path(out_file).write_text(text)
            output.err.print(f"Wrote {len(docs)} document(s) to {out_file}")
        return EXIT_OK
    _guard(run)


def _load(files: list[str]) -> list[specfile.Source]:
    if not files:
        fail("name a spec file with -f FILE")
    try:
        return specfile.load(files)
    except specfile.SpecFileError as exc:
        fail(str(exc))


def _plan_groups(c: Client, sources: list[specfile.Source], prune: bool, fmt: Fmt) -> list[tuple[list[
        specfile.Source], dict[str, Any]]]:
    planned = []
    for group in specfile.group_by_cluster(sources):
        try:
            p = c.plan([s.data for s in group], prune)
        except ApiError as exc:
            output.problem(exc, group)
            raise typer.Exit(EXIT_ERROR) from None
        if fmt is Fmt.table:
            output.plan(p, group)
        planned.append((group, p))
    if fmt is not Fmt.table:
        plans = [p for _, p in planned]
        output.data(plans[0] if len(plans) == 1 else plans, fmt.value)
    return planned


@app.command()
def plan(files: Files = [], prune: Annotated[bool, typer.Option(help="Also plan deleting what the documents no "  # noqa: B006
                                                                      "longer name")] = False,
         fmt: Output = Fmt.table) -> None:
    """Diff spec files against the live clusters. Exit 0: no changes; 2: changes; 1: error."""
    sources = _load(files)
    c, _ = _client()

    def run() -> int:
        planned = _plan_groups(c, sources, prune, fmt)
        return EXIT_CHANGES if any(p["changed"] for _, p in planned) else EXIT_OK
    _guard(run)


@app.command()
def apply(
    files: Files = [],  # noqa: B006
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Apply without asking")] = False,
    prune: Annotated[bool, typer.Option(help="Also delete what the documents no longer name (each deletion needs "
                                             "its role: a group needs an admin)")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the plan only (exit 0: no changes, 2: changes)")]
    = False,
    wait: Annotated[bool, typer.Option(help="Follow the operation to its end")] = True,
    fmt: Output = Fmt.table,
) -> None:
    """Show the plan, ask, apply it as one operation per cluster, and follow it to its end."""
    sources = _load(files)
    c, _ = _client()

    def run() -> int:
        planned = _plan_groups(c, sources, prune, fmt)
        todo = [(g, p) for g, p in planned if p["changed"]]
        if dry_run or not todo:
            return EXIT_CHANGES if dry_run and todo else EXIT_OK
        blocked = [p for _, p in todo if p["summary"].get("replace-needed")]
        if blocked:
            fail("some fields cannot change in place (marked !): nothing was applied")
        if not yes:
            if not sys.stdin.isatty():
                fail("not a terminal to ask on: pass --yes to apply")
            names = ", ".join(p["cluster"] for _, p in todo)
            if not typer.confirm(f"Apply these changes to {names}?", default=False, err=True):
                output.err.print("Nothing applied.")
                return EXIT_ERROR
        code = EXIT_OK
        for group, p in todo:
            try:
                answer = c.apply([s.data for s in group], prune, key=str(uuid.uuid4()))
            except ApiError as exc:
                output.problem(exc, group)
                return EXIT_ERROR
            if answer.status == 200:
                output.err.print(f"{p['cluster']}: nothing differs any more: nothing started.")
                continue
            op = answer.body
            output.err.print(f"{p['cluster']}: {op['kind']} {op['id']} started")
            if not wait:
                if fmt is not Fmt.table:
                    output.data(op, fmt.value)
                continue
            final = follow.operation(c, op["id"])
            if fmt is not Fmt.table:
                output.data(final, fmt.value)
            if final["status"] != "SUCCEEDED":
                code = _failed(final)
            else:
                output.err.print(f"[green]Applied[/] to {p['cluster']}.")
        return code
    _guard(run, sources)


# -- workloads ----------------------------------------------------------------------------------------------
@app.command()
def logs(
    job: str,
    cluster: ClusterOpt = None,
    region: RegionOpt = None,
    namespace: Annotated[str, typer.Option("--namespace", "-n")] = "default",
    pod: Annotated[str | None, typer.Option(help="Pod (default: the job's first)")] = None,
    tail: Annotated[int, typer.Option(help="Lines of history first")] = 100,
    follow_: Annotated[bool, typer.Option("--follow", "-f", help="Print new lines as the pod writes them")] = False,
) -> None:
    """A job pod's log; with -f, lines as they come (over the live socket, else by polling)."""
    c, s = _client()

    def write(lines: list[str]) -> None:
        for line in lines:
            sys.stdout.write(line + "\n")
        sys.stdout.flush()

    def run() -> int:
        name, rg = _cluster(c, cluster, region)
        path = {"cluster": name, "job": job}
        query = {"region": rg, "namespace": namespace, "pod": pod, "tail": tail}
        if not follow_:
            write(list(c.call("get_job_logs", path, query).body.get("lines") or []))
            return EXIT_OK
        request = {"action": "follow_logs", "id": "cli", "cluster": name, "job": job, "namespace": namespace,
                   "tail": min(tail, 1000), **({"region": rg} if rg else {}), **({"pod": pod} if pod else {})}
        try:
            reason = follow.follow_socket(s, request, write)
        except follow.SocketUnavailable as exc:
            output.err.print(f"[dim]live socket unavailable ({output.escape(str(exc))}): polling[/]")

            def ended() -> bool:
                st = c.call("get_job", path, {"region": rg, "namespace": namespace}).body.get("status")
                return st in ("Succeeded", "Failed")
            reason = follow.poll(c, path, query, write, ended)
        output.err.print(f"[dim]{output.escape(reason)}[/]")
        return EXIT_OK
    _guard(run)


@app.command()
def invoke(
    endpoint: str,
    prompt: str,
    cluster: ClusterOpt = None,
    region: RegionOpt = None,
    system: Annotated[str | None, typer.Option(help="A system message first")] = None,
    max_tokens: Annotated[int, typer.Option(help="At most this many tokens back")] = 256,
    fmt: Annotated[Fmt | None, typer.Option("-o", "--output", help="json or yaml: the whole answer")] = None,
) -> None:
    """Chat with an endpoint (OpenAI-compatible) and print its answer."""
    c, _ = _client()

    def run() -> int:
        name, rg = _cluster(c, cluster, region)
        messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
        body = c.call("invoke_endpoint", {"cluster": name, "endpoint": endpoint}, {"region": rg},
                      body={"messages": messages, "max_tokens": max_tokens}).body
        if fmt is not None and fmt is not Fmt.table:
            output.data(body, fmt.value)
        else:
            sys.stdout.write(str(body.get("content") or "") + "\n")
        return EXIT_OK
    _guard(run)


def run() -> None:
    output.reset_consoles()
    app()
