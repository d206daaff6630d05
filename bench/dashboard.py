"""Server time of every dashboard page at 10,000 files per table, on SQLite and PostgreSQL.

    .venv/bin/python bench/dashboard.py                          # 10,000 files, both back ends
    .venv/bin/python bench/dashboard.py --backend sqlite --repeat 50
    .venv/bin/python bench/dashboard.py --backend postgres --keep   # PostgreSQL at SHREDCAT_BENCH_PG_ADMIN_URL
    .venv/bin/python bench/dashboard.py --files 1000000 --mixed --backend postgres --keep --only "first view|contains" --export-stream 2

Data: the synthetic files of ``bench/prune.py`` (10 shredded paths each, clustered ids and
times), committed through ``Catalog.commit`` in batches of 1,000 and ANALYZEd; a fresh database
per run (PostgreSQL at ``--pg-admin-url``, default ``SHREDCAT_BENCH_PG_ADMIN_URL``, SQLite in a
temporary directory), or with ``--keep`` one kept per size and reused (``bench/prune.py``'s). The
pages asked by number and the path searched are taken within the table, so the markers hold at
any ``--files``.

Each page is requested in-process through the ASGI app (``create_app``, auth off, Starlette's
TestClient: no network, no uvicorn) with ``Accept: text/html``; the time is taken around the
whole request, so it is the server's time plus the in-process transport (a fraction of a ms).
After ``--warmup`` requests, ``--repeat`` timed ones per page: p50 and p99 (nearest rank) of the
wall time, in ms, the p50 of this process's CPU time for the request (the app and, on SQLite,
the database: what the wall time approaches on an idle machine; PostgreSQL's own CPU is not in it)
and, on PostgreSQL, the p50 of the request's time inside ``cursor.execute`` (psycopg returns once
the server has answered and the rows are read: the database's share of the wall time, round trips
included; on SQLite rows are stepped after ``execute`` returns, so it is not reported there).
Every response is checked for its status (200; 422 for the syntax error) and the page's own marker, so a page that fails fast is
not reported as fast.

The app settles the process's garbage collector after start-up as ``shredcat serve``'s workers
do (``service.api.app.settle_collector``; ``--unsettled``: Python's default collector, as a
library caller has it).

``--only`` times the pages whose names contain one of its parts (separated by ``|``). ``--export-stream
K``: then K CSV exports of every kept file read off the ASGI app as a server streams them: the time
to the first chunk and to the last, and the peak of Python's allocations meanwhile
(:func:`export_stream`).

The range charts (and a table's history, a path's types) are cached per table snapshot by the
catalog (``AdminReads.path_bounds``), and the playground keeps its last parsed predicates (the filter,
page and export buttons send a predicate again), so the repeated requests of those pages measure
a page viewed again; the "first view" rows empty both caches before each request, which is what
the first view of a path at a snapshot, or of a new predicate, costs.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.machine import describe
from bench.prune import DEFAULT_PG_ADMIN, MIXED, NS, TABLE, load, postgres_db, sqlite_db

T = f"/admin/tables/{NS}/{TABLE}"
def point(n: int) -> str:
    """An id of the middle file of ``n`` (file i holds ids ~[1000 i, 1000 i + 999], bench/prune.py)."""
    return f"variant_get(v, '$.user.id', 'bigint') = {n // 2 * 1000 + 500}"


WIDE = "variant_get(v, '$.user.id', 'bigint') >= 0"
# An int64 path asked as string prunes for = and IN only (issue 34); a range is not comparable.
MISTYPED = "variant_get(v, '$.user.id', 'string') > 'x'"
#: A 90 KB IN list of 10,000 ids (the default limit): posted, as the playground's form sends it.
LONG_IN = f"variant_get(v, '$.user.id', 'bigint') IN ({', '.join(str(9_000_000 + i) for i in range(10_000))})"
#: A 5 KB OR of 200 comparisons: every skipped file's reason names its bound once.
WIDE_OR = " OR ".join(f"variant_get(v, '$.user.id', 'bigint') = {9_000_000 + 7 * k}" for k in range(200))
# Without a literal prefix (LIKE 'a%' prunes through its prefix range since issue 34).
UNUSABLE = "variant_get(v, '$.name', 'string') LIKE '%a'"
#: Pages whose name ends so are timed with the catalog's path-bounds cache emptied first.
FIRST = "first view"
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def pages(first_file: str, cursor_page: str, n: int) -> list[tuple[str, str, str, dict[str, str] | None]]:
    """(name, URL, a marker the page must contain, the form posted to it or None for a GET), for a
    table of ``n`` files whose first listed file is ``first_file``: the pages asked by number and
    the path searched are taken within the table, so every marker is there at any size."""

    def prune(**q: Any) -> str:
        return f"{T}/prune?{urlencode(q)}"

    def export(**q: Any) -> str:
        return f"{T}/prune/export?{urlencode(q)}"

    def path(**q: Any) -> str:
        return f"{T}/path?{urlencode({'column': 'v', **q})}"

    user_id = '"user"."id"'
    # The 100th page where the table has one (10,000 files: 200 pages of 50, 100 of 100), else its middle.
    table_page = min(100, max(1, n // 100))
    play_page = min(100, max(1, n // 200))
    play_mid = min(50, max(1, n // 200))
    # A part of the first file's name: a path search that finds files at any size.
    contains = first_file.rsplit("/", 1)[-1][:12] or "part-"
    # Common substrings: one in every path, one in about a 24th of them (an hour's directory).
    every, hourly = "part-", "hr=2/"
    POINT = point(n)
    coverage = f"{T}/coverage?" + urlencode({"column": "v", "path": user_id, "type": "int64"})
    gets: list[tuple[str, str, str]] = [
        ("overview", "/admin", 'id="tables"'),
        ("table", T, 'id="files-table"'),
        ("table, files page 2", cursor_page, 'id="files-range"'),
        ("table, files by size", f"{T}?sort=size&order=desc", 'id="files-table"'),
        (f"table, path contains {contains!r}", f"{T}?{urlencode({'contains': contains})}", 'id="files-table"'),
        (f"table, path contains {every!r} (common)", f"{T}?{urlencode({'contains': every})}", 'id="files-table"'),
        (f"table, path contains {hourly!r} (common)", f"{T}?{urlencode({'contains': hourly})}", 'id="files-table"'),
        ("file", f"{T}/file?{urlencode({'path': first_file})}", 'id="file-stats"'),
        ("coverage (int64 files)", coverage, 'id="coverage-files"'),
        (f"chart int64 (500 of {n:,})", path(path=user_id), "<svg"),
        ("chart $.user.id (JSON path)", path(path="$.user.id"), "<svg"),
        ("chart timestamptz", path(path='"ts"'), "<svg"),
        ("chart varchar", path(path='"name"'), "<svg"),
        ("chart, unknown path", path(path="$.user.idd"), 'id="path-suggestions"'),
        (f"chart int64, {FIRST}", path(path=user_id), "<svg"),
        (f"chart timestamptz, {FIRST}", path(path='"ts"'), "<svg"),
        (f"chart varchar, {FIRST}", path(path='"name"'), "<svg"),
        (f"chart varchar by path, {FIRST}", path(path='"name"', order="path"), "<svg"),
        ("playground, empty", f"{T}/prune", 'id="sql"'),
        ("playground, point", prune(sql=POINT), 'id="plan-files"'),
        ("playground, point, kept", prune(sql=POINT, show="kept"), 'id="plan-files"'),
        (f"playground, all kept, page {play_mid}", prune(sql=WIDE, page=play_mid), 'id="plan-files"'),
        (f"playground, point, skipped p.{play_page}", prune(sql=POINT, show="skipped", page=play_page), 'id="plan-files"'),
        ("playground, type mismatch", prune(sql=MISTYPED), 'data-warning="type_not_comparable"'),
        ("playground, syntax error", prune(sql="variant_get(v, '$.user.id', 'bigint') ="), 'id="predicate-caret"'),
        ("playground, LIKE (term not used)", prune(sql=UNUSABLE), 'data-warning="term_not_used"'),
        ("playground, unknown column error", prune(sql="variant_get(w, '$.user.id', 'bigint') = 1"), 'id="predicate-caret"'),
        # Issue 36, items 9-12: path search, a files page by number, completion, exports.
        (f"table, {FIRST}", T, 'id="files-table"'),
        ("table, path search (q=user)", f"{T}?q=user&cov_sort=status", 'id="path-search-said"'),
        (f"table, files page {table_page} by number", f"{T}?page={table_page}&sort=size", 'id="files-page"'),
        ("completion (q=us)", f"{T}/complete?q=us", '"text"'),
        ("export CSV, point (1 file)", export(sql=POINT, format="csv"), "path,file_size_bytes"),
        (f"export CSV, all {n:,} kept", export(sql=WIDE, format="csv"), "path,file_size_bytes"),
        ("export Spark read, all kept", export(sql=WIDE, format="spark"), "spark.read"),
    ]
    posts = [
        ("playground, 90 KB IN list (POST)", f"{T}/prune", 'id="no-url"', {"sql": LONG_IN}),
        ("playground, 5 KB OR (POST)", f"{T}/prune", 'id="plan-files"', {"sql": WIDE_OR}),
        (f"playground, 90 KB IN list (POST), {FIRST}", f"{T}/prune", 'id="no-url"', {"sql": LONG_IN}),
        (f"playground, 5 KB OR (POST), {FIRST}", f"{T}/prune", 'id="plan-files"', {"sql": WIDE_OR}),
    ]
    no_body: list[tuple[str, str, str, dict[str, str] | None]] = [(n, u, m, None) for n, u, m in gets]
    return no_body + list(posts)


def pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[max(0, math.ceil(p / 100 * len(s)) - 1)]


@contextmanager
def app_client(url: str, settle: bool = True) -> Iterator[Any]:
    warnings.filterwarnings("ignore", message=".*httpx2.*")
    from fastapi.testclient import TestClient

    from service.api import create_app
    from service.settings import Settings

    settings = Settings(database_url=url, warehouse_roots=[], auth="off")
    with TestClient(create_app(settings, settle=settle), raise_server_exceptions=True) as c:
        c.headers.update({"Accept": "text/html"})
        yield c


def forget_path_bounds(client: Any) -> None:
    """Empty the app's catalog's path-bounds cache (which also keeps a table's history and a
    path's types) and the playground's parsed predicates (private attributes: the bench's
    business only; a catalog without that cache is left alone)."""
    from service.dashboard.pages import playground

    catalog = client.app.state.ctx.catalog
    try:
        from service.catalog.admin import admin_reads
    except ImportError:  # a baseline tree from before the admin reads moved out of the catalog
        reads = catalog
    else:
        reads = admin_reads(catalog)
    if hasattr(reads, "_bounds"):
        reads._bounds = type(reads._bounds)(1)
    playground._parsed.clear()


def run(
    url: str, n: int, warmup: int, repeat: int, settle: bool = True, only: tuple[str, ...] = ()
) -> list[tuple[str, float, float, float, int, float]]:
    import re
    from html import unescape

    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    in_db = [0.0]  # seconds inside cursor.execute during the current request

    def before(conn: Any, *_: Any) -> None:
        conn.info["bench_t0"] = time.perf_counter()

    def after(conn: Any, *_: Any) -> None:
        in_db[0] += time.perf_counter() - conn.info.pop("bench_t0", time.perf_counter())

    event.listen(Engine, "before_cursor_execute", before)
    event.listen(Engine, "after_cursor_execute", after)
    out = []
    with app_client(url, settle) as c:
        table = c.get(T).text
        nxt = re.search(r'rel="next" href="([^"]+)"', table)
        cursor_page = unescape(nxt.group(1)).split("#")[0] if nxt else T
        m = re.search(r'class="path"><a class="mid" href="[^"]*" title="([^"]+)"', table)
        first = unescape(m.group(1)) if m else ""
        # The playground's form carries the CSRF token of the session cookie the client now holds.
        csrf = re.search(r'name="csrf_token" value="([^"]+)"', c.get(f"{T}/prune").text)
        for name, page_url, marker, form in pages(first, cursor_page, n):
            if only and not any(o in name for o in only):
                continue
            # A form is encoded once: the 90 KB IN list's urlencoding was ~60 ms of this process's
            # CPU per request, counted as the server's.
            body = None if form is None else urlencode({**form, "csrf_token": csrf.group(1) if csrf else ""})
            times, cpus, dbs = [], [], []
            for k in range(warmup + repeat):
                if name.endswith(FIRST):
                    forget_path_bounds(c)
                in_db[0] = 0.0
                c0, t0 = time.process_time(), time.perf_counter()
                r = c.get(page_url) if body is None else c.post(page_url, content=body, headers=FORM)
                dt = (time.perf_counter() - t0) * 1000
                cpu = (time.process_time() - c0) * 1000
                if r.status_code != (422 if "error" in name else 200) or marker not in r.text:
                    raise SystemExit(f"{name}: status {r.status_code}, marker {marker!r} missing ({page_url})")
                if k >= warmup:
                    times.append(dt)
                    cpus.append(cpu)
                    dbs.append(in_db[0] * 1000)
            out.append(
                (name, statistics.median(times), pct(times, 99), statistics.median(cpus), len(r.content), statistics.median(dbs))
            )
            print(
                f"  {name:36s} p50 {out[-1][1]:7.1f} ms  p99 {out[-1][2]:7.1f} ms  cpu p50 {out[-1][3]:6.1f} ms"
                f"  in execute p50 {out[-1][5]:6.1f} ms",
                flush=True,
            )
    event.remove(Engine, "before_cursor_execute", before)
    event.remove(Engine, "after_cursor_execute", after)
    return out


def export_stream(client: Any, n: int, repeat: int) -> list[tuple[float, float, int, int]]:
    """The CSV export of every kept file read straight off the ASGI app as a server sends it (the
    TestClient keeps the whole body before it returns): per request, the seconds to the first body
    chunk and to the last, the bytes sent and the peak of the memory Python allocated meanwhile
    (tracemalloc, which slows the request: its times are not the table's)."""
    import asyncio
    import tracemalloc

    path = f"{T}/prune/export"
    qs = urlencode({"sql": WIDE, "format": "csv"}).encode()
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
        "path": path, "raw_path": path.encode(), "query_string": qs, "root_path": "",
        "headers": [(b"host", b"bench"), (b"accept", b"text/html")], "client": ("127.0.0.1", 1), "server": ("bench", 80),
    }  # fmt: skip

    async def once() -> tuple[float, float, int]:
        t0, first, size = time.perf_counter(), 0.0, 0
        asked = [False]

        async def receive() -> dict[str, Any]:
            if asked[0]:  # the client never leaves: wait until the response's end cancels this
                await asyncio.Event().wait()
            asked[0] = True
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            nonlocal first, size
            if message["type"] == "http.response.body" and message.get("body"):
                first = first or time.perf_counter() - t0
                size += len(message["body"])

        await client.app(scope, receive, send)
        return first, time.perf_counter() - t0, size

    out = []
    for _ in range(repeat):
        tracemalloc.start()
        first, last, size = asyncio.run(once())
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        out.append((first, last, size, peak))
        print(f"  export CSV streamed: first chunk {first * 1000:.1f} ms, last {last * 1000:.0f} ms, {size:,} bytes, peak {peak / 2**20:.1f} MiB", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--files", type=int, default=10_000)
    p.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--repeat", type=int, default=30)
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--pg-admin-url", default=os.environ.get("SHREDCAT_BENCH_PG_ADMIN_URL", DEFAULT_PG_ADMIN))
    p.add_argument("--keep", action="store_true", help="keep (and reuse) the loaded databases, as bench/prune.py --keep")
    p.add_argument("--data-dir", default=str(Path(tempfile.gettempdir()) / "shredcat-bench-prune"))
    p.add_argument("--unsettled", action="store_true", help="leave the garbage collector as Python starts it")
    p.add_argument("--mixed", action="store_true", help="bench/prune.py --mixed's data (and its kept databases)")
    p.add_argument("--only", default="", help="parts of page names separated by |: time only the pages named so")
    p.add_argument("--export-stream", type=int, default=0, metavar="K", help="K streamed CSV exports of every file (export_stream)")
    args = p.parse_args(argv)
    MIXED["on"] = args.mixed
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    results: dict[str, list[tuple[str, float, float, float, int, float]]] = {}
    for backend in backends:
        print(f"{backend}: loading {args.files:,} files", flush=True)
        ctx = (
            sqlite_db(Path(args.data_dir), args.files, args.keep)
            if backend == "sqlite"
            else postgres_db(args.pg_admin_url, args.files, args.keep)
        )
        with ctx as (url, loaded):
            if not loaded:
                load(url, args.files, 1_000, args.seed)
            only = tuple(o for o in args.only.split("|") if o)
            results[backend] = run(url, args.files, args.warmup, args.repeat, not args.unsettled, only)
            if args.export_stream:
                with app_client(url, not args.unsettled) as c:
                    export_stream(c, args.files, args.export_stream)
    print()
    collector = "Python's default garbage collector" if args.unsettled else "collector settled as shredcat serve's"
    print(
        f"Dashboard pages, {args.files:,} files in one table, server time in-process (ms), {args.repeat} requests each,"
        f" {collector}"
    )
    print(f"Machine: {describe()}")
    print()
    def heads(b: str) -> str:
        return f"{b} p50 | {b} p99 | {b} CPU p50" + (f" | {b} in DB p50" if b == "postgres" else "")

    def cells(b: str, i: int) -> str:
        r = results[b][i]
        return f"{r[1]:.1f} | {r[2]:.1f} | {r[3]:.1f}" + (f" | {r[5]:.1f}" if b == "postgres" else "")

    print("| page | " + " | ".join(heads(b) for b in backends) + " | HTML size |")
    print("|" + " --- |" * (2 + sum(4 if b == "postgres" else 3 for b in backends)))
    first = results[backends[0]]
    for i, (name, *_rest) in enumerate(first):
        print(f"| {name} | {' | '.join(cells(b, i) for b in backends)} | {first[i][4] / 1024:.0f} KiB |")
    worst = max(r[2] for b in backends for r in results[b])
    print()
    print(f"slowest p99: {worst:.1f} ms (target: under 50 ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
