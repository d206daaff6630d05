"""Registration throughput end to end: real Parquet files, footers read and stats extracted, then
committed (``Catalog.register``, what ``shredcat register`` runs; the REST commit by paths does the
same extraction in its thread pool), for Variant-only files against files that also carry plain
columns and Hive partition directories, in the same run.

    .venv/bin/python bench/register.py                          # 4,000 files per layout, both backends
    .venv/bin/python bench/register.py --files 10000 --backend postgres --rounds 3

Two layouts of the same rows, written by DuckDB (which shreds the Variant by itself):

- **Variant-only**: ``v`` = a VARIANT of ten fields of every key family (the ten paths of
  ``bench/commit.py``), one row group of ``--rows`` rows per file;
- **with columns**: the same ``v`` and eight plain columns (int64, timestamp, decimal, double,
  varchar, varchar, int32, date), under ``dt=YYYY-MM-DD/hr=H/`` (two partition columns).

``bench/commit.py --compare`` times ``Catalog.commit`` of pre-extracted stats alone (the catalog's
share); this times what a writer waits for when it registers the files it wrote. Reports files/s
per layout and the change, per round; the CPU of this process (extraction runs here) and of its
PostgreSQL backend. PostgreSQL: a fresh database per layout and round, dropped afterwards.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.commit import DEFAULT_PG_ADMIN, _server_cpu_seconds, postgres_url
from bench.machine import describe
from service.catalog import Catalog
from service.catalog.db import upgrade_to_head

VARIANT = """{
    'user_id': (r * 7919 % 1000000)::BIGINT,
    'ts': TIMESTAMP '2025-01-01' + INTERVAL (r) SECOND,
    'price': (r % 10000 / 100)::DECIMAL(18, 2),
    'score': (r % 1000) * 0.25,
    'country': 'c' || (r % 50),
    'event': 'e' || (r % 7),
    'qty': (r % 100)::INTEGER,
    'day': DATE '2025-01-01' + (r // 86400)::INTEGER,
    'ratio': ((r % 100) / 7)::FLOAT,
    'session': uuid()
}::VARIANT"""

PLAIN = """(r * 31)::BIGINT AS uid, TIMESTAMP '2025-01-01' + INTERVAL (r) SECOND AS seen,
    (r % 1000 / 10)::DECIMAL(12, 2) AS amount, (r % 997) * 0.5 AS weight, 'r' || (r % 9) AS region,
    'k' || (r % 13) AS kind, (r % 1000)::INTEGER AS n, DATE '2025-01-01' + (r // 86400)::INTEGER AS d"""


def write_files(root: Path, files: int, rows: int, *, columns: bool) -> list[str]:
    """``files`` Parquet files of ``rows`` rows each under ``root``, one COPY each (DuckDB's row
    groups do not go below 2,048 rows, so file rotation cannot make small files)."""
    import duckdb

    con = duckdb.connect()
    out = []
    try:
        for i in range(files):
            if columns:
                # 60 files an hour, 24 hours a day, as bench/prune.py's partitioned tables.
                k = i // 60
                d = root / f"dt=2025-01-{1 + k // 24:02d}" / f"hr={k % 24}"
                select = f"SELECT {VARIANT} AS v, {PLAIN}"
            else:
                d = root
                select = f"SELECT {VARIANT} AS v"
            d.mkdir(parents=True, exist_ok=True)
            path = d / f"part-{i:06d}.parquet"
            con.execute(f"COPY ({select} FROM range({i * rows}, {(i + 1) * rows}) t(r)) TO '{path}' (FORMAT parquet)")
            out.append(str(path))
    finally:
        con.close()
    return out


@contextmanager
def catalog_on(backend: str, pg_admin: str, work: Path) -> Iterator[str]:
    if backend == "postgres":
        with postgres_url(pg_admin, keep=False) as url:
            upgrade_to_head(url)
            yield url
    else:
        db = work / f"register-{time.monotonic_ns()}.db"
        url = f"sqlite:///{db}"
        upgrade_to_head(url)
        try:
            yield url
        finally:
            db.unlink(missing_ok=True)


def run_layout(url: str, paths: list[str], batch: int) -> tuple[float, float, float]:
    """(wall seconds, this process's CPU seconds, PostgreSQL backend CPU seconds) to register
    ``paths`` in batches of ``batch`` (the table created by the first)."""
    with Catalog(url) as cat:
        cat.list_tables()  # connect before the clock starts
        cpu0, wall0, srv0 = time.process_time(), time.perf_counter(), _server_cpu_seconds(cat)
        for i in range(0, len(paths), batch):
            cat.register("bench", "events", paths[i : i + batch])
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        server = _server_cpu_seconds(cat) - srv0
        info = cat.get_table("bench", "events")
        assert info.live_file_count == len(paths), (info.live_file_count, len(paths))
        return wall, cpu, server


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=4000, help="files per layout (default 4,000)")
    ap.add_argument("--rows", type=int, default=100, help="rows per file (default 100)")
    ap.add_argument("--batch", type=int, default=1000, help="files per registration (default 1,000)")
    ap.add_argument("--rounds", type=int, default=2, help="rounds, alternating the layouts' order (default 2)")
    ap.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    ap.add_argument("--pg-admin-url", default=DEFAULT_PG_ADMIN)
    args = ap.parse_args()
    print(describe())
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    work = Path(tempfile.mkdtemp(prefix="shredcat-register-"))
    try:
        t = time.perf_counter()
        layouts = {
            "Variant-only": write_files(work / "variant", args.files, args.rows, columns=False),
            "+8 plain, 2 partition columns": write_files(work / "columns", args.files, args.rows, columns=True),
        }
        sizes = {k: sum(Path(p).stat().st_size for p in v) / len(v) for k, v in layouts.items()}
        from service.stats.extract import extract_file

        for name, paths in layouts.items():
            fs = extract_file(paths[0])
            print(f"{name}: {len(fs.paths)} fully shredded Variant paths, {len(fs.columns)} plain-column stats rows per file")
        print(
            f"files written by DuckDB in {time.perf_counter() - t:.0f}s: "
            + "; ".join(f"{k}: {len(v):,} files, {sizes[k] / 1024:.0f} KiB each" for k, v in layouts.items())
        )
        for backend in backends:
            rates: dict[str, list[float]] = {k: [] for k in layouts}
            for r in range(args.rounds):
                order = list(layouts) if r % 2 == 0 else list(reversed(layouts))
                got = {}
                for name in order:
                    with catalog_on(backend, args.pg_admin_url, work) as url:
                        wall, cpu, server = run_layout(url, layouts[name], args.batch)
                    n = len(layouts[name])
                    got[name] = n / wall
                    rates[name].append(n / wall)
                    print(
                        f"{backend:<9} round {r + 1} {name:<30} {n:,} files: {wall:.1f}s = {n / wall:,.0f} files/s; "
                        f"CPU this process {cpu:.1f}s (extraction + catalog client) + database server {server:.1f}s"
                    )
                base, cols = got["Variant-only"], got["+8 plain, 2 partition columns"]
                print(f"{backend:<9} round {r + 1} change with columns: {100 * (cols / base - 1):+.0f} % files/s")
            base = statistics.median(rates["Variant-only"])
            cols = statistics.median(rates["+8 plain, 2 partition columns"])
            print(
                f"{backend:<9} medians: Variant-only {base:,.0f} files/s, with columns {cols:,.0f} files/s: "
                f"{100 * (cols / base - 1):+.0f} %"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
