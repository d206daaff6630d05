"""A path's type timeline (the dashboard's path page): the dictionary read of migration 0012 against
the grouped scan of every stats row of the path it replaced, on the same database.

    .venv/bin/python bench/timeline.py --backend postgres --files 100000
    .venv/bin/python bench/timeline.py --backend sqlite --files 10000 --repeat 20

Data: the synthetic files of ``bench/prune.py`` (10 shredded paths each), committed through
``Catalog.commit`` in batches of 1,000, then every ``--remove-every``-th file removed (batches of
1,000) so the path has removed rows too, then ANALYZEd; a fresh database of this process's own
name, dropped at the end (PostgreSQL at ``--pg-admin-url``; SQLite in a temporary directory).

Timed, uncached (the catalog's per-state cache is bypassed: what the first view after a commit
costs), for the path ``"name"`` of column ``v``: ``dictionary``, :func:`service.catalog.history._timeline`
(the path's dictionary rows and their snapshots' times); ``full-scan``, the statement it replaced
(every stats row of the path joined to the dictionary, grouped by type) plus the same snapshot
read. Both answers are checked equal before timing. p50/p95 in ms over ``--repeat`` runs after
``--warmup``; ``--explain`` prints each statement's plan (EXPLAIN ANALYZE on PostgreSQL).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import Connection, func, select

from bench.machine import describe
from bench.prune import COLUMN, DEFAULT_PG_ADMIN, NS, TABLE, analyze_catalog, load, postgres_db, sqlite_db
from service.catalog import Catalog
from service.catalog import models as m
from service.catalog import repository as repo
from service.catalog.history import TypeSpan, _timeline, type_spans
from service.catalog.repository.common import VP, S

PATH = '"name"'


def _full_scan_stmt(t: repo.TableRow, cid: int, variant_path: str) -> Any:
    return (
        select(
            VP.shredded_type,
            func.min(S.begin_snapshot),
            func.max(S.end_snapshot),
            func.count(),
            func.count() - func.count(S.end_snapshot),
        )
        .join(S, S.path_id == VP.path_id)
        .where(VP.table_id == t.table_id, VP.column_id == cid, VP.variant_path == variant_path)
        .group_by(VP.shredded_type)
    )


def full_scan(conn: Connection, t: repo.TableRow, cid: int, variant_path: str) -> list[TypeSpan]:
    """The timeline as computed before migration 0012 (the peer; the tests' oracle)."""
    return type_spans(conn, conn.execute(_full_scan_stmt(t, cid, variant_path)).all())


def remove_some(url: str, n: int, every: int, batch: int) -> int:
    """End every ``every``-th file (in load order), ``batch`` per removal."""
    with Catalog(url) as cat:
        with cat.engine.connect() as c:
            tid = repo.require_table(c, NS, TABLE).table_id
            paths = list(c.execute(select(m.DataFile.path).where(m.DataFile.table_id == tid).order_by(m.DataFile.data_file_id)).scalars())
        gone = paths[::every]
        for i in range(0, len(gone), batch):
            cat.remove(NS, TABLE, gone[i : i + batch])
        analyze_catalog(cat)
    return len(gone)


def _timed(fn: Callable[[], object], warmup: int, repeat: int) -> tuple[float, float]:
    for _ in range(warmup):
        fn()
    ms = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ms.append((time.perf_counter() - t0) * 1000)
    ms.sort()
    return statistics.median(ms), ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]


def _explain(conn: Connection, backend: str, stmt: Any) -> None:
    sql = str(stmt.compile(conn, compile_kwargs={"literal_binds": True}))
    prefix = "EXPLAIN (ANALYZE, BUFFERS) " if backend == "postgresql" else "EXPLAIN QUERY PLAN "
    for row in conn.exec_driver_sql(prefix + sql):
        print("    " + " | ".join(str(v) for v in row))


def run(url: str, args: argparse.Namespace) -> None:
    with Catalog(url) as cat, cat.engine.connect() as conn:
        t = repo.require_table(conn, NS, TABLE)
        cid = t.columns[COLUMN]
        new, old = _timeline(conn, t, cid, PATH), full_scan(conn, t, cid, PATH)
        assert new == old, (new, old)
        print(f"  spans: {[(s.shredded_type, s.files_ever, s.live_files) for s in new]}")
        for name, fn in (
            ("dictionary", lambda: _timeline(conn, t, cid, PATH)),
            ("full-scan", lambda: full_scan(conn, t, cid, PATH)),
        ):
            p50, p95 = _timed(fn, args.warmup, args.repeat)
            print(f"  {cat.backend:10s} {name:10s} p50 {p50:9.3f} ms  p95 {p95:9.3f} ms  ({args.repeat} runs)")
        if args.explain:
            dictionary = select(VP.shredded_type, VP.first_snapshot, VP.last_end_snapshot, VP.files_ever, VP.live_file_count).where(
                VP.table_id == t.table_id, VP.column_id == cid, VP.variant_path == PATH, VP.files_ever > 0
            )
            for name, stmt in (("dictionary", dictionary), ("full-scan", _full_scan_stmt(t, cid, PATH))):
                print(f"  plan of {name}:")
                _explain(conn, cat.backend, stmt)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--files", type=int, default=100_000)
    p.add_argument("--batch", type=int, default=1_000)
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--remove-every", type=int, default=10)
    p.add_argument("--backend", choices=["sqlite", "postgres"], default="postgres")
    p.add_argument("--pg-admin-url", default=os.environ.get("SHREDCAT_BENCH_PG_ADMIN_URL", DEFAULT_PG_ADMIN))
    p.add_argument("--repeat", type=int, default=30)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--explain", action="store_true")
    args = p.parse_args(argv)
    if args.files % args.batch:
        p.error("--files must be a multiple of --batch")
    print(f"machine: {describe()}; load before: {os.getloadavg()}")
    db = postgres_db(args.pg_admin_url, args.files, keep=False) if args.backend == "postgres" else sqlite_db(Path("."), args.files, keep=False)
    with db as (url, _):
        times = load(url, args.files, args.batch, args.seed)
        gone = remove_some(url, args.files, args.remove_every, args.batch)
        print(f"  loaded {args.files:,} files in {times['total_s']:.0f} s, removed {gone:,}")
        run(url, args)
    print(f"load after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
