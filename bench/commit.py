"""Commit throughput of the catalog: N files with pre-extracted stats (P paths each) in batches.

    .venv/bin/python bench/commit.py                      # 100,000 files x 10 paths, batches of 1,000, both backends
    .venv/bin/python bench/commit.py --files 10000 --backend sqlite
    .venv/bin/python bench/commit.py --verify             # also check global stats == recomputation
    .venv/bin/python bench/commit.py --columns 8 --partitioned   # + 8 plain columns, 2 partition columns
    .venv/bin/python bench/commit.py --compare            # Variant-only, then 8 plain + 2 partition columns
    .venv/bin/python bench/commit.py --without-index ix_ducklake_file_variant_stats_live_path_file

``--columns C`` gives every file C plain-column stats rows (the types of the paths, in turn);
``--partitioned`` puts it under two Hive directories (``date=.../hour=...``), whose values the
catalog reads from the path. Without either, files are Variant-only (no ``name=value`` segment).
``--compare`` measures both in the same run, per backend, Variant-only first.

The stats are generated before the clock starts (extraction is not measured). PostgreSQL: a fresh
database ``shredcat_bench_<pid>`` is created on the server of ``--pg-admin-url``, migrated, and
dropped afterwards (``--keep`` keeps it). SQLite: a fresh file in a temporary directory.
Reports files/s and stats rows/s per backend; the timing covers every ``Catalog.commit`` call only;
then one removal of a batch, and the drop of the table (the files left), are timed on their own.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.machine import describe
from service.catalog import Catalog
from service.catalog.db import upgrade_to_head
from service.stats.model import ColumnStats, FileStats, PathStats
from service.values import ShreddedType

DEFAULT_PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"

# Ten paths of a typical event payload: a mix of every key family (num, real, bin).
PATH_TYPES = [
    ('"user_id"', "int64"),
    ('"ts"', "timestamp"),
    ('"price"', "decimal(18,2)"),
    ('"score"', "float64"),
    ('"country"', "varchar"),
    ('"event"', "varchar"),
    ('"qty"', "int32"),
    ('"day"', "date"),
    ('"ratio"', "float32"),
    ('"session"', "uuid"),
]


def make_file(i: int, n_paths: int, seed: int = 7, *, columns: int = 0, partitioned: bool = False) -> FileStats:
    """File number ``i`` (deterministic: any process can build any file)."""
    import uuid

    rnd = random.Random(seed * 1_000_003 + i)
    types = [(p, ShreddedType.parse(t)) for p, t in (PATH_TYPES * (n_paths // len(PATH_TYPES) + 1))[:n_paths]]
    paths = []
    for j, (name, t) in enumerate(types):
        if j >= len(PATH_TYPES):
            name = f'"{name.strip(chr(34))}_{j}"'
        k = t.kind.value
        base = i * 1000
        lo: object
        hi: object
        if k in ("int64", "int32"):
            lo, hi = base + rnd.randrange(100), base + 100 + rnd.randrange(900)
        elif k == "timestamp":
            lo, hi = (
                1_700_000_000_000_000 + base * 1_000_000,
                1_700_000_000_000_000 + (base + 999) * 1_000_000,
            )
        elif k == "date":
            lo, hi = 19000 + i // 100, 19000 + i // 100 + rnd.randrange(3)
        elif k.startswith("decimal"):
            lo = (Decimal(rnd.randrange(100, 10_000)) / 100).quantize(Decimal("0.01"))
            hi = (Decimal(rnd.randrange(10_000, 1_000_000)) / 100).quantize(Decimal("0.01"))
        elif k == "float64":
            lo, hi = rnd.random(), 1.0 + rnd.random()
        elif k == "float32":
            lo, hi = 0.25, 0.75
        elif k == "uuid":
            lo, hi = sorted((uuid.UUID(int=rnd.getrandbits(128)), uuid.UUID(int=rnd.getrandbits(128))))
        else:
            lo, hi = f"a{rnd.randrange(1000):04d}", f"z{rnd.randrange(1000):04d}"
        paths.append(
            PathStats(
                column="payload",
                variant_path=name,
                shredded_type=t,
                column_size_bytes=1000 + rnd.randrange(10_000),
                value_count=10_000,
                null_count=rnd.randrange(100),
                min_value=lo,
                max_value=hi,
                contains_nan=False if t.is_float else None,
            )
        )
    # Plain columns: the same kinds of values as the paths (one per path type, in turn).
    plain = tuple(
        ColumnStats(
            column=f"c{j}",
            column_type=p.shredded_type,
            column_size_bytes=p.column_size_bytes,
            value_count=p.value_count,
            null_count=p.null_count,
            min_value=p.min_value,
            max_value=p.max_value,
            contains_nan=p.contains_nan,
        )
        for j, p in ((j, paths[j % len(paths)]) for j in range(columns))
    )
    where = f"date=2026-01-{1 + i % 28:02d}/hour={i % 24:02d}" if partitioned else f"d2026-01-{1 + i % 28:02d}"
    return FileStats(
        path=f"s3://bench-bucket/events/{where}/part-{i:07d}.parquet",
        file_size_bytes=50_000_000 + i,
        record_count=10_000,
        footer_size=20_000,
        content_id=f"etag-{i:08x}",
        variant_columns=("payload",),
        paths=tuple(paths),
        columns=plain,
    )


#: (plain columns, partitioned) of the files a run commits (set by main for worker processes too).
SHAPE = {"columns": 0, "partitioned": False}


def make_files(n: int, n_paths: int, start: int = 0) -> list[FileStats]:
    return [make_file(i, n_paths, **SHAPE) for i in range(start, start + n)]  # type: ignore[arg-type]


@contextmanager
def sqlite_url() -> Iterator[str]:
    d = tempfile.mkdtemp(prefix="shredcat-bench-")
    try:
        yield f"sqlite:///{d}/bench.db"
    finally:
        shutil.rmtree(d, ignore_errors=True)


@contextmanager
def postgres_url(admin_url: str, keep: bool) -> Iterator[str]:
    import psycopg
    from sqlalchemy import make_url

    admin = make_url(admin_url)
    name = f"shredcat_bench_{os.getpid()}"
    dsn = f"host={admin.host} port={admin.port or 5432} user={admin.username} dbname={admin.database}"
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(f'DROP DATABASE IF EXISTS "{name}"')
        c.execute(f'CREATE DATABASE "{name}"')
    try:
        yield admin.set(drivername="postgresql+psycopg", database=name).render_as_string(hide_password=False)
    finally:
        if not keep:
            with psycopg.connect(dsn, autocommit=True) as c:
                c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _proc_cpu_seconds(pid: int) -> float:
    """utime + stime of a local process (Linux), 0 if unknown."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def _server_cpu_seconds(cat: Catalog) -> float:
    """CPU used so far by this engine's PostgreSQL backends (same machine); 0 for SQLite."""
    if cat.backend != "postgresql":
        return 0.0
    with cat.engine.connect() as c:
        pids = [
            int(p)
            for p in c.exec_driver_sql(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                "AND backend_type = 'client backend' AND application_name = 'shredcat'"
            ).scalars()
        ]
    return sum(_proc_cpu_seconds(p) for p in pids)


def _commit_all(
    url: str, prepared: list[list[FileStats]], start_at: float | None
) -> tuple[list[float], float, float]:
    """Commit the batches in order; returns batch latencies, client and server CPU seconds."""
    with Catalog(url) as cat:
        cat.list_tables()  # connect before the clock starts
        if start_at is not None:
            time.sleep(max(0.0, start_at - time.time()))
        cpu0, srv0 = time.process_time(), _server_cpu_seconds(cat)
        latencies = []
        for files in prepared:
            b0 = time.perf_counter()
            cat.commit("bench", "events", files)
            latencies.append(time.perf_counter() - b0)
        return latencies, time.process_time() - cpu0, _server_cpu_seconds(cat) - srv0


def _writer(
    url: str, n_paths: int, batches: list[tuple[int, int]], start_at: float, shape: dict[str, object]
) -> tuple[list[float], float, float]:
    """One writer process: build its batches, wait for the common start, commit them."""
    SHAPE.update(shape)  # type: ignore[arg-type]
    return _commit_all(url, [make_files(n, n_paths, start) for start, n in batches], start_at)


#: Indexes dropped after migrating with ``--without-index`` (to measure what one costs a commit).
WITHOUT: list[str] = []


def run(url: str, n_files: int, n_paths: int, batch: int, writers: int, verify: bool) -> dict[str, float]:
    upgrade_to_head(url)
    if WITHOUT:
        from sqlalchemy import text

        from service.catalog.db import make_engine

        engine = make_engine(url)
        with engine.begin() as conn:
            for name in WITHOUT:
                conn.execute(text(f"DROP INDEX {name}"))
        engine.dispose()
    with Catalog(url) as cat:
        cat.create_table("bench", "events", ["payload"])
    batches = [(s, min(batch, n_files - s)) for s in range(0, n_files, batch)]
    if writers == 1:
        files = make_files(n_files, n_paths)
        t0 = time.perf_counter()
        latencies, client_cpu, server_cpu = _commit_all(url, [files[s : s + n] for s, n in batches], None)
        elapsed = time.perf_counter() - t0
    else:
        # Separate processes (like several API workers): batch k goes to writer k % writers.
        ctx = multiprocessing.get_context("spawn")
        start_at = time.time() + 5.0 + n_files / 20_000  # after every writer has built its files
        with ctx.Pool(writers) as pool:
            parts = [batches[w::writers] for w in range(writers)]
            res = [pool.apply_async(_writer, (url, n_paths, part, start_at, dict(SHAPE))) for part in parts]
            outs = [r.get() for r in res]
        elapsed = time.time() - start_at
        latencies = [x for o in outs for x in o[0]]
        client_cpu = sum(o[1] for o in outs)
        server_cpu = sum(o[2] for o in outs)
    with Catalog(url) as cat:
        info = cat.get_table("bench", "events")
        assert info.live_file_count == n_files, info
        out = {
            "seconds": elapsed,
            "files_per_s": n_files / elapsed,
            "rows_per_s": n_files * n_paths / elapsed,
            "p50_batch_ms": sorted(latencies)[len(latencies) // 2] * 1000,
            "max_batch_ms": max(latencies) * 1000,
            "client_cpu_s": client_cpu,
            "server_cpu_s": server_cpu,
        }
        # One removal of a batch (rebuilds global stats from the per-path counters).
        gone = [make_file(i, n_paths, **SHAPE).path for i in range(batch)]  # type: ignore[arg-type]
        r0 = time.perf_counter()
        cat.remove("bench", "events", gone)
        out["remove_batch_ms"] = (time.perf_counter() - r0) * 1000
        if verify:
            v0 = time.perf_counter()
            assert cat.global_stats("bench", "events") == cat.recompute_global_stats("bench", "events")
            out["verify_s"] = time.perf_counter() - v0
        # Dropping the table ends every remaining file as a removal would (counters included).
        d0 = time.perf_counter()
        cat.drop_table("bench", "events")
        out["drop_ms"] = (time.perf_counter() - d0) * 1000
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--files", type=int, default=100_000)
    p.add_argument("--batch", type=int, default=1_000)
    p.add_argument("--paths", type=int, default=10)
    p.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    p.add_argument("--pg-admin-url", default=os.environ.get("SHREDCAT_BENCH_PG_ADMIN_URL", DEFAULT_PG_ADMIN))
    p.add_argument("--keep", action="store_true", help="keep the PostgreSQL bench database")
    p.add_argument("--verify", action="store_true", help="check global stats == recomputation at the end")
    p.add_argument("--writers", type=int, default=1, help="concurrent writer processes (default 1)")
    p.add_argument("--columns", type=int, default=0, help="plain-column stats rows per file (default 0)")
    p.add_argument("--partitioned", action="store_true", help="files under date=/hour= directories")
    p.add_argument(
        "--compare", action="store_true", help="Variant-only, then 8 plain + 2 partition columns, same run"
    )
    p.add_argument(
        "--without-index",
        action="append",
        default=[],
        metavar="NAME",
        help="drop this catalog index after migrating (repeatable): what it costs a commit",
    )
    args = p.parse_args(argv)
    WITHOUT[:] = args.without_index

    print(f"machine: {describe()}; load average {os.getloadavg()[0]:.1f} at start")
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    shapes = (
        [(0, False), (8, True)] if args.compare else [(args.columns, args.partitioned)]
    )
    for b in backends:
        measured: list[dict[str, float]] = []
        for columns, partitioned in shapes:
            SHAPE.update(columns=columns, partitioned=partitioned)
            ctx = sqlite_url() if b == "sqlite" else postgres_url(args.pg_admin_url, args.keep)
            with ctx as url:
                r = run(url, args.files, args.paths, args.batch, args.writers, args.verify)
            extra = f", verify {r['verify_s']:.1f}s" if "verify_s" in r else ""
            cpu = r["client_cpu_s"] + r["server_cpu_s"]
            shape = f"+{columns} plain, {2 if partitioned else 0} partition columns"
            print(
                f"{b:9s} [{shape}] {args.files:,} files in batches of {args.batch:,}, {args.writers} writer(s): "
                f"{r['seconds']:.1f}s = {r['files_per_s']:,.0f} files/s ({r['rows_per_s']:,.0f} stats rows/s); "
                f"batch p50 {r['p50_batch_ms']:.0f} ms, max {r['max_batch_ms']:.0f} ms; "
                f"remove of one batch {r['remove_batch_ms']:.0f} ms, drop of the table {r['drop_ms']:.0f} ms{extra}; "
                f"load average {os.getloadavg()[0]:.1f}\n"
                f"{'':9s} CPU: client {r['client_cpu_s']:.1f}s + database server {r['server_cpu_s']:.1f}s "
                f"= {cpu * 1000 / args.files:.3f} ms per file -> {args.files / cpu:,.0f} files per CPU-second",
                flush=True,
            )
            measured.append({"files_per_s": r["files_per_s"], "files_per_cpu_s": args.files / cpu})
        if args.compare:
            # The goal is on files/s; files per CPU-second (client + server) is the same comparison
            # with less noise from other processes on a shared machine.
            (v, c) = measured
            print(
                f"{b:9s} change with columns: {(c['files_per_s'] / v['files_per_s'] - 1) * 100:+.0f} % files/s, "
                f"{(c['files_per_cpu_s'] / v['files_per_cpu_s'] - 1) * 100:+.0f} % files per CPU-second",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
