"""Per-request cost over HTTP: a real ``shredcat serve`` on PostgreSQL answering selective plans
(``POST .../plan``, one file kept) from 1, 8 and 32 concurrent keep-alive clients, with
``--workers 1`` and ``--workers 2``.

    .venv/bin/python bench/http_plan.py                                  # 100,000 files, 1000 requests a cell
    .venv/bin/python bench/http_plan.py --files 1000000 --keep           # the issue's scale, data kept
    .venv/bin/python bench/http_plan.py --baseline /tmp/old-checkout     # the same run against older code
    .venv/bin/python bench/http_plan.py --keep --profile 2000            # where a plan's CPU goes, in-process
    .venv/bin/python bench/http_plan.py --keep --instructions 200        # instructions per plan (callgrind)

The catalog is ``bench/prune.py``'s data (same generator, same ``--keep`` database
``shredcat_bench_prune_v<V>_<N>``), loaded through the library and ANALYZEd. Each client is a
thread with one ``http.client`` connection (``TCP_NODELAY``, reader token); the requests cycle
through 64 point predicates on ``$.user.id`` (SQL text, each keeps one file). After a warm-up
of ``--warmup`` requests per client, each cell reports:

* requests/s and client-side p50/p99 latency (the HTTP round trip included);
* the server's own p50 for the same requests (``duration_ms`` of its access log lines);
* CPU per request, in ms, of the client process, of the server (master and workers) and of the
  PostgreSQL backends of the database, all from ``/proc/<pid>/stat`` (backends that end within a
  cell are not counted: see the new-sessions column);
* new PostgreSQL sessions opened during the cell (``pg_stat_database.sessions``, read after the
  backends' once-a-second flush, or the backend pids that appeared, whichever is more; 0 when
  the connection pool fits the load).

``--instructions N`` counts instead the instructions of N in-process plan requests (the whole
ASGI app and the catalog, without uvicorn's socket handling) with valgrind's callgrind: a figure
that repeats whatever else a shared machine is doing, where CPU times there move by 2x with the
neighbours' load (the client's constant work per request shows it). Needs ``valgrind``.

``--standby`` runs on a private PostgreSQL primary + hot standby pair instead (started like the
replication tests' pair, ``tests/support/standby.py``, on free ports; removed afterwards), and
runs every cell twice in the same run: the server with the primary alone, then with the standby
in ``SHREDCAT_READ_DATABASE_URLS``. It adds the standby backends' CPU per request and the catalog
statements each database ran in the cell (``pg_stat_statements``: statements naming a
``ducklake_``/``shredcat_`` table; the primary's must be 0 while the standby is healthy).

    .venv/bin/python bench/http_plan.py --standby --files 20000 --workers 2 --concurrency 8,32

``--baseline DIR`` runs every cell a second time with the server's code from ``DIR`` (a checkout,
e.g. ``git archive <rev> | tar -x -C DIR``) in the same run, for before/after tables.
Only loopback addresses are used.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import itertools
import json
import os
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

# --instructions runs this script under valgrind with another checkout's code first (--baseline).
sys.path.insert(0, os.environ.get(CODE_DIR_ENV := "SHREDCAT_BENCH_CODE_DIR") or str(Path(__file__).resolve().parents[1]))

from bench.machine import describe
from bench.prune import DEFAULT_PG_ADMIN, NS, TABLE, load, postgres_db
from tests.ops.support import PG_STATS_FLUSH_S, TOKENS, server_backends, server_env, sessions_opened
from tests.support.server import running_server

REPO = Path(__file__).resolve().parents[1]
CLK_TCK = os.sysconf("SC_CLK_TCK")
PREDICATES = 64


# --- /proc --------------------------------------------------------------------------------------


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of one process (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def process_tree(pid: int) -> list[int]:
    pids, todo = [], [pid]
    while todo:
        p = todo.pop()
        pids.append(p)
        with contextlib.suppress(OSError):
            for task in os.listdir(f"/proc/{p}/task"):
                todo.extend(int(c) for c in Path(f"/proc/{p}/task/{task}/children").read_text().split())
    return pids


# --- the client ---------------------------------------------------------------------------------


def plan_bodies(n_files: int) -> list[bytes]:
    ids = [(n_files * (2 * k + 1) // (2 * PREDICATES)) * 1000 + 500 for k in range(PREDICATES)]
    return [json.dumps({"sql": f"variant_get(v, '$.user.id', 'bigint') = {i}"}).encode() for i in ids]


@dataclass(frozen=True)
class Cell:
    code: str
    workers: int
    concurrency: int
    requests: int
    seconds: float
    rps: float
    p50_ms: float
    p99_ms: float
    server_p50_ms: float
    client_cpu_ms: float
    server_cpu_ms: float
    pg_cpu_ms: float
    new_sessions: int
    #: --standby: the standby backends' CPU per request, and the catalog statements each database
    #: ran in the cell (-1: not counted).
    standby_cpu_ms: float = 0.0
    primary_statements: int = -1
    standby_statements: int = -1


def _connect(host: str, port: int) -> http.client.HTTPConnection:
    conn = http.client.HTTPConnection(host, port, timeout=60)
    conn.connect()
    assert conn.sock is not None
    conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return conn


def _plan(conn: http.client.HTTPConnection, path: str, body: bytes, headers: dict[str, str]) -> None:
    conn.request("POST", path, body=body, headers=headers)
    resp = conn.getresponse()
    data = resp.read()
    if resp.status != 200:
        raise RuntimeError(f"plan answered {resp.status}: {data[:300]!r}")


def _server_durations(log: Path, offset: int) -> list[float]:
    out = []
    with log.open("rb") as f:
        f.seek(offset)
        for line in f:
            with contextlib.suppress(ValueError):
                rec = json.loads(line)
                if rec.get("path", "").endswith("/plan") and "duration_ms" in rec:
                    out.append(float(rec["duration_ms"]))
    return out


#: What pg_stat_statements counts as a catalog statement: one naming the catalog's tables.
CATALOG_STATEMENTS = (
    "SELECT coalesce(sum(calls), 0)::bigint FROM pg_stat_statements WHERE dbid = "
    "(SELECT oid FROM pg_database WHERE datname = current_database()) "
    "AND (query ILIKE '%ducklake\\_%' OR query ILIKE '%shredcat\\_%') AND query NOT ILIKE '%pg_stat_statements%'"
)


def catalog_statements(url: str, *, reset: bool = False) -> int:
    """Catalog statements run on ``url``'s database since the last reset (``reset``: reset now)."""
    from tests.ops.support import admin_execute

    if reset:
        admin_execute(url, "SELECT pg_stat_statements_reset()")
        return 0
    return int(admin_execute(url, CATALOG_STATEMENTS)[0][0])


def run_cell(
    server: Any,
    url: str,
    code: str,
    workers: int,
    concurrency: int,
    requests: int,
    warmup: int,
    bodies: list[bytes],
    standby_url: str | None = None,
) -> Cell:
    host, port = server.base_url.removeprefix("http://").split(":")
    path = f"/v1/namespaces/{NS}/tables/{TABLE}/plan"
    headers = {"Authorization": f"Bearer {TOKENS['reader']}", "Content-Type": "application/json"}
    counter = itertools.count()
    latencies: list[float] = []
    errors: list[BaseException] = []
    warmed = threading.Barrier(concurrency + 1)
    go = threading.Barrier(concurrency + 1)

    def client(k: int) -> None:
        try:
            conn = _connect(host, int(port))
        except BaseException as e:
            errors.append(e)
            conn = None
        try:
            for j in range(warmup if conn else 0):
                _plan(conn, path, bodies[(k + j) % len(bodies)], headers)  # type: ignore[arg-type]
        except BaseException as e:
            errors.append(e)
        warmed.wait()
        go.wait()
        mine = []
        try:
            while conn is not None and not errors and (i := next(counter)) < requests:
                t0 = time.perf_counter()
                _plan(conn, path, bodies[i % len(bodies)], headers)
                mine.append(time.perf_counter() - t0)
        except BaseException as e:
            errors.append(e)
        finally:
            if conn is not None:
                conn.close()
        latencies.extend(mine)

    threads = [threading.Thread(target=client, args=(k,)) for k in range(concurrency)]
    for t in threads:
        t.start()
    warmed.wait()
    # Let the warm-up's access lines reach the log, and PostgreSQL's backends flush the session
    # counts of the warm-up's connections (at most once a second), so they are not the cell's.
    time.sleep(PG_STATS_FLUSH_S)
    log_offset = server.log_path.stat().st_size
    server_pids = process_tree(server.proc.pid)
    pg_pids = server_backends(url)
    sessions0 = sessions_opened(url)
    standby_pids = server_backends(standby_url) if standby_url else set()
    if standby_url:
        catalog_statements(url, reset=True)
        catalog_statements(standby_url, reset=True)
    server0 = sum(cpu_s(p) for p in server_pids)
    pg0 = {p: cpu_s(p) for p in pg_pids}
    standby0 = {p: cpu_s(p) for p in standby_pids}
    client0 = sum(os.times()[:2])
    t0 = time.perf_counter()
    go.wait()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - t0
    client_cpu = sum(os.times()[:2]) - client0
    server_cpu = sum(cpu_s(p) for p in server_pids) - server0
    pg_after = server_backends(url)
    pg_cpu = sum(cpu_s(p) - pg0.get(p, 0.0) for p in pg_after)
    standby_cpu = sum(cpu_s(p) - standby0.get(p, 0.0) for p in server_backends(standby_url)) if standby_url else 0.0
    counted = (catalog_statements(url), catalog_statements(standby_url)) if standby_url else (-1, -1)
    if errors:
        raise RuntimeError(f"{len(errors)} client errors, first: {errors[0]!r}")
    time.sleep(PG_STATS_FLUSH_S)
    # The counter also sees sessions that began and ended within the cell; the pids, sessions
    # whose count a backend has not flushed yet.
    new_sessions = max(sessions_opened(url) - sessions0, len(pg_after - pg_pids))
    server_times = _server_durations(server.log_path, log_offset)
    lat = sorted(latencies)
    n = len(lat)
    return Cell(
        code=code,
        workers=workers,
        concurrency=concurrency,
        requests=n,
        seconds=round(seconds, 2),
        rps=round(n / seconds, 1),
        p50_ms=round(lat[n // 2] * 1000, 2),
        p99_ms=round(lat[min(n - 1, int(n * 0.99))] * 1000, 2),
        server_p50_ms=round(statistics.median(server_times), 2) if server_times else float("nan"),
        client_cpu_ms=round(client_cpu * 1000 / n, 2),
        server_cpu_ms=round(server_cpu * 1000 / n, 2),
        pg_cpu_ms=round(pg_cpu * 1000 / n, 2),
        new_sessions=new_sessions,
        standby_cpu_ms=round(standby_cpu * 1000 / n, 2),
        primary_statements=counted[0],
        standby_statements=counted[1],
    )


# --- where the CPU goes (--profile) ------------------------------------------------------------

#: (label, module path suffix, function name): what a plan request's CPU is split into. Nested
#: entries are parts of the one above them; the shares are of the whole app call.
PROFILE_PARTS = (
    ("the app (middlewares, routing, FastAPI, the plan)", "service/api/logging.py", "__call__"),
    ("  role check before the body (RouteRoles)", "service/api/auth.py", "role_for"),
    ("  FastAPI dependencies and body validation", "fastapi/dependencies/utils.py", "solve_dependencies"),
    ("  response model and JSON", "fastapi/routing.py", "serialize_response"),
    ("  Catalog.plan (one read transaction)", "service/catalog/service.py", "plan"),
    ("    table row and columns", "service/catalog/repository/tables.py", "find_table"),
    ("    predicate parse (cache misses only)", "service/api/plan.py", "_parse_sql"),
    ("    planner (its statements included)", "service/catalog/planner/plan.py", "plan_in"),
    ("    warnings of the first page", "service/catalog/service.py", "_plan_warnings"),
    ("    pool checkout", "sqlalchemy/pool/base.py", "_checkout"),
    ("    every statement's execution (SQLAlchemy, psycopg)", "sqlalchemy/engine/base.py", "_execute_context"),
)


def _in_process_app(url: str, n_files: int) -> tuple[Any, Any]:
    """The whole ASGI app in this process (no socket, no uvicorn: their cost is the server CPU of
    the cells minus this), the thread hop of the plan made a direct call so that one profiler
    sees it all; and ``one(i)``, a coroutine sending the i-th plan request through it."""
    import anyio.to_thread

    from service.api.app import create_app
    from service.settings import Settings

    async def direct(fn: Any, *args: Any, limiter: Any = None) -> Any:
        return fn(*args)

    anyio.to_thread.run_sync = direct  # type: ignore[assignment]
    os.environ.update(server_env(url))
    app = create_app(Settings())
    bodies = plan_bodies(n_files)
    path = f"/v1/namespaces/{NS}/tables/{TABLE}/plan"
    headers = [(b"host", b"127.0.0.1"), (b"authorization", f"Bearer {TOKENS['reader']}".encode())]
    headers.append((b"content-type", b"application/json"))

    async def one(i: int) -> None:
        body = bodies[i % len(bodies)]
        scope = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
            "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"",
            "root_path": "", "server": ("127.0.0.1", 80), "client": ("127.0.0.1", 1),
            "headers": [*headers, (b"content-length", str(len(body)).encode())],
        }  # fmt: skip
        messages = [{"type": "http.request", "body": body, "more_body": False}]
        sent: list[Any] = []

        async def receive() -> Any:
            return messages.pop() if messages else {"type": "http.disconnect"}

        async def send(message: Any) -> None:
            sent.append(message)

        await app(scope, receive, send)
        if sent[0]["status"] != 200:
            raise RuntimeError(f"plan answered {sent[0]['status']}: {sent[1:]}")

    return app, one


def drive_in_process(url: str, n_files: int, requests: int) -> None:
    """``requests`` plans through the in-process app, nothing else (what ``--instructions`` runs
    under callgrind)."""
    import asyncio

    app, one = _in_process_app(url, n_files)

    async def run() -> None:
        async with app.router.lifespan_context(app):
            for i in range(requests):
                await one(i)

    asyncio.run(run())


#: Requests of the shorter of ``--instructions``' two runs (the longer runs N more): start-up,
#: imports and the first requests' warm-up cost the same in both and cancel out.
INSTRUCTIONS_BASE = 20


def instructions_per_request(url: str, n_files: int, requests: int, code_dir: Path) -> float:
    """Instructions per in-process plan request of the server's code in ``code_dir``, counted by
    valgrind's callgrind (repeatable whatever else the machine runs, unlike CPU time on a shared
    host): the difference between a run of ``INSTRUCTIONS_BASE`` requests and one of that many
    more, over ``requests``."""
    import re
    import subprocess

    totals = []
    for n in (INSTRUCTIONS_BASE, INSTRUCTIONS_BASE + requests):
        with tempfile.TemporaryDirectory() as tmp:
            env = {**os.environ, CODE_DIR_ENV: str(code_dir)}
            out = subprocess.run(
                [
                    "valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.out",
                    sys.executable, str(Path(__file__).resolve()),
                    "--files", str(n_files), "--drive", str(n), "--drive-url", url,
                ],
                env=env, capture_output=True, text=True, check=True, cwd=code_dir,
            )  # fmt: skip
        found = re.search(r"Collected : (\d+)", out.stderr)
        if found is None:
            raise RuntimeError(f"callgrind printed no total:\n{out.stderr[-2000:]}")
        totals.append(int(found.group(1)))
    return (totals[1] - totals[0]) / requests


def profile_in_process(url: str, n_files: int, requests: int) -> str:
    """``requests`` plans through the in-process app (:func:`_in_process_app`): CPU per request
    without the profiler, then cProfile's CPU-time split (the profiler's own overhead inflates
    small calls; the shares are indicative)."""
    import asyncio
    import cProfile
    import pstats

    app, one = _in_process_app(url, n_files)
    profiler = cProfile.Profile(time.process_time)

    async def run() -> float:
        async with app.router.lifespan_context(app):
            for i in range(50):
                await one(i)
            cpu0 = time.process_time()
            for i in range(requests):
                await one(i)
            cpu = time.process_time() - cpu0
            profiler.enable()
            for i in range(requests):
                await one(i)
            profiler.disable()
            return cpu

    cpu = asyncio.run(run())
    stats: dict[Any, Any] = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    cumulative: dict[tuple[str, str], float] = {}
    for (filename, _line, name), (_cc, _nc, _tt, ct, _callers) in stats.items():
        for _label, suffix, fn in PROFILE_PARTS:
            if name == fn and filename.endswith(suffix):
                cumulative[(suffix, fn)] = max(cumulative.get((suffix, fn), 0.0), ct)
    whole = cumulative.get(PROFILE_PARTS[0][1:], 0.0) or 1.0
    lines = [
        f"in-process CPU per plan request: {cpu * 1000 / requests:.2f} ms ({requests} requests, no profiler)",
        "",
        "| part | share of the app's CPU (cProfile) |",
        "|---|---|",
    ]
    for label, suffix, fn in PROFILE_PARTS:
        share = 100 * cumulative.get((suffix, fn), 0.0) / whole
        lines.append(f"| {label.replace('  ', '&nbsp;&nbsp;')} | {share:.0f} % |")
    return "\n".join(lines)


# --- main ---------------------------------------------------------------------------------------


@contextlib.contextmanager
def server_for(url: str, code_dir: Path, workers: int, **extra: str) -> Iterator[Any]:
    env = server_env(url, PYTHONPATH=str(code_dir), SHREDCAT_LOG_LEVEL="info") | extra
    with tempfile.TemporaryDirectory() as tmp, running_server(env, Path(tmp) / "server.log", workers=workers) as s:
        yield s


def table(cells: list[Cell]) -> str:
    head = (
        "| code | workers | clients | requests/s | p50 ms | p99 ms | server p50 ms | client CPU ms/req "
        "| server CPU ms/req | PostgreSQL CPU ms/req | new PG sessions |\n" + "|---" * 11 + "|"
    )
    rows = [
        f"| {c.code} | {c.workers} | {c.concurrency} | {c.rps:,.0f} | {c.p50_ms:.1f} | {c.p99_ms:.1f} | "
        f"{c.server_p50_ms:.1f} | {c.client_cpu_ms:.2f} | {c.server_cpu_ms:.2f} | {c.pg_cpu_ms:.2f} | {c.new_sessions} |"
        for c in cells
    ]
    return "\n".join([head, *rows])


def standby_table(cells: list[Cell]) -> str:
    head = (
        "| databases | workers | clients | requests/s | p50 ms | p99 ms | server CPU ms/req | primary CPU ms/req "
        "| standby CPU ms/req | catalog statements on the primary | on the standby |\n" + "|---" * 11 + "|"
    )
    rows = [
        f"| {c.code} | {c.workers} | {c.concurrency} | {c.rps:,.0f} | {c.p50_ms:.1f} | {c.p99_ms:.1f} | "
        f"{c.server_cpu_ms:.2f} | {c.pg_cpu_ms:.2f} | {c.standby_cpu_ms:.2f} | {c.primary_statements:,} | {c.standby_statements:,} |"
        for c in cells
    ]
    return "\n".join([head, *rows])


def run_standby(args: argparse.Namespace, concurrency: list[int], workers: list[int]) -> list[Cell]:
    """The cells of --standby: a private primary + hot standby pair, the server on the primary
    alone and then with the standby, same data, same run."""
    from tests.ops.support import admin_execute, with_database
    from tests.support.standby import start_pair

    pair = start_pair()
    cells: list[Cell] = []
    try:
        with postgres_db(pair.primary.url("postgres"), args.files, False) as (url, _):
            print(f"loading {args.files:,} files on the primary...", flush=True)
            load(url, args.files, 1000, args.seed)
            admin_execute(url, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            pair.wait_replayed(timeout=600)
            standby_url = with_database(pair.standby.url(), url.rsplit("/", 1)[1])
            bodies = plan_bodies(args.files)
            modes = [("primary alone", {}), ("primary + 1 standby", {"SHREDCAT_READ_DATABASE_URLS": json.dumps([standby_url])})]
            for w in workers:
                for code, extra in modes:
                    with server_for(url, REPO, w, **extra) as server:
                        for c in concurrency:
                            cell = run_cell(server, url, code, w, c, args.requests, args.warmup, bodies, standby_url)
                            cells.append(cell)
                            print(standby_table([cell]).splitlines()[-1], flush=True)
    finally:
        pair.close()
    return cells


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--files", type=int, default=100_000, help="files in the catalog (default 100,000)")
    p.add_argument("--requests", type=int, default=1000, help="timed requests per cell (default 1000)")
    p.add_argument("--warmup", type=int, default=10, help="untimed requests per client first (default 10)")
    p.add_argument("--concurrency", default="1,8,32", help="comma-separated client counts (default 1,8,32)")
    p.add_argument("--workers", default="1,2", help="comma-separated server worker counts (default 1,2)")
    p.add_argument("--baseline", type=Path, help="also run every cell with the server's code from this checkout")
    p.add_argument("--pg-admin-url", default=os.environ.get("SHREDCAT_BENCH_PG_ADMIN_URL", DEFAULT_PG_ADMIN))
    p.add_argument("--keep", action="store_true", help="keep (and reuse) the generated database")
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--json", help="write the cells here")
    p.add_argument(
        "--profile", type=int, metavar="N", help="instead of the cells: where the CPU of N in-process plans goes"
    )
    p.add_argument(
        "--instructions",
        type=int,
        metavar="N",
        help="instead of the cells: instructions per in-process plan request over N requests (valgrind's "
        "callgrind; with --baseline, of both codes)",
    )
    p.add_argument(
        "--standby", action="store_true", help="on a private primary + hot standby pair: primary alone vs with the standby"
    )
    p.add_argument("--drive", type=int, help=argparse.SUPPRESS)  # one run of --instructions
    p.add_argument("--drive-url", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.drive is not None:
        drive_in_process(args.drive_url, args.files, args.drive)
        return 0
    concurrency = [int(x) for x in args.concurrency.split(",")]
    workers = [int(x) for x in args.workers.split(",")]
    codes = [("this", REPO)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])

    print(f"machine: {describe()}; load average at start {os.getloadavg()[0]:.2f}", flush=True)
    if args.standby:
        standby_cells = run_standby(args, concurrency, workers)
        print(f"\nload average at end {os.getloadavg()[0]:.2f}\n")
        print(standby_table(standby_cells))
        if args.json:
            Path(args.json).write_text(json.dumps([asdict(x) for x in standby_cells], indent=1))
        return 0
    cells: list[Cell] = []
    with postgres_db(args.pg_admin_url, args.files, args.keep) as (url, loaded):
        if not loaded:
            print(f"loading {args.files:,} files...", flush=True)
            load(url, args.files, 1000, args.seed)
        if args.instructions:
            for code, code_dir in codes:
                per = instructions_per_request(url, args.files, args.instructions, code_dir)
                print(f"{code}: {per / 1e6:.2f} M instructions per in-process plan request ({args.instructions} requests)")
            return 0
        if args.profile:
            print(profile_in_process(url, args.files, args.profile))
            print(f"load average at end {os.getloadavg()[0]:.2f}")
            return 0
        bodies = plan_bodies(args.files)
        for w in workers:
            for code, code_dir in codes:
                with server_for(url, code_dir, w) as server:
                    for c in concurrency:
                        cell = run_cell(server, url, code, w, c, args.requests, args.warmup, bodies)
                        cells.append(cell)
                        print(table([cell]).splitlines()[-1], flush=True)
                        if args.json:
                            Path(args.json).write_text(json.dumps([asdict(x) for x in cells], indent=1))
    print(f"\nload average at end {os.getloadavg()[0]:.2f}\n")
    print(table(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
