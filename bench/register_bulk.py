"""``shredcat register --bulk`` against the plain ``shredcat register``, as a user runs them: each
registration is its own ``python -m service.cli`` process over a directory of small files, into a
fresh catalog, the same files, in the same run (rounds alternate the order).

    .venv/bin/python bench/register_bulk.py                      # 3,000 files, batches of 500, both backends
    .venv/bin/python bench/register_bulk.py --files 6000 --batch 1000 --backend sqlite

Three ways of registering the directory:

- **plain, one commit**: ``shredcat register --table T DIR`` (possible only while the files fit
  one commit, ``SHREDCAT_MAX_FILES_PER_COMMIT``);
- **plain, per batch**: one ``shredcat register --table T FILES...`` per ``--batch`` files, what a
  lake of more files than a commit may take needs without ``--bulk`` (one snapshot each);
- **bulk**: ``shredcat register --bulk --table T DIR`` with ``SHREDCAT_MAX_FILES_PER_COMMIT`` set
  to ``--batch`` (one snapshot, batches extracted as the load takes them).

Files: ``bench/register.py``'s Variant-only layout (DuckDB shreds a VARIANT of ten fields; one
row group of ``--rows`` rows). Reported: wall seconds of the process(es) and files/s; extraction
runs in ``--workers`` processes. PostgreSQL: a database ``h73_bench_<pid>`` on ``--pg-admin-url``
per registration, dropped after it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.commit import DEFAULT_PG_ADMIN
from bench.machine import describe
from bench.register import write_files
from service.catalog.db import upgrade_to_head

ROOT = Path(__file__).resolve().parents[1]
MODES = ("plain, one commit", "plain, per batch", "bulk")


@contextmanager
def catalog_on(backend: str, pg_admin: str, work: Path) -> Iterator[str]:
    """A fresh, migrated catalog, removed afterwards."""
    if backend == "sqlite":
        db = work / f"catalog-{time.monotonic_ns()}.db"
        url = f"sqlite:///{db}"
        upgrade_to_head(url)
        try:
            yield url
        finally:
            db.unlink(missing_ok=True)
        return
    import psycopg
    from sqlalchemy import make_url

    admin = make_url(pg_admin)
    name = f"h73_bench_{os.getpid()}"
    dsn = f"host={admin.host} port={admin.port or 5432} user={admin.username} dbname={admin.database}"
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(f'DROP DATABASE IF EXISTS "{name}"')
        c.execute(f'CREATE DATABASE "{name}"')
    try:
        url = admin.set(drivername="postgresql+psycopg", database=name).render_as_string(hide_password=False)
        upgrade_to_head(url)
        yield url
    finally:
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _cli(args: list[str], env: dict[str, str]) -> str:
    r = subprocess.run([sys.executable, "-m", "service.cli", *args], cwd=ROOT, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"shredcat {' '.join(args[:3])}... failed ({r.returncode}): {r.stderr.strip()[-500:]}")
    return r.stdout.strip()


def run_mode(mode: str, url: str, directory: Path, paths: list[str], batch: int, workers: int) -> tuple[float, str]:
    """(wall seconds, the last output line) to register every file of ``directory`` by ``mode``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHREDCAT_")}
    base = ["register", "--database-url", url, "--table", "bench.events", "--workers", str(workers)]
    t = time.perf_counter()
    if mode == "plain, one commit":
        out = _cli([*base, str(directory)], env)
    elif mode == "plain, per batch":
        for i in range(0, len(paths), batch):
            out = _cli([*base, *paths[i : i + batch]], env)
    else:
        out = _cli([*base, "--bulk", str(directory)], {**env, "SHREDCAT_MAX_FILES_PER_COMMIT": str(batch)})
    return time.perf_counter() - t, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=3000, help="files (default 3,000)")
    ap.add_argument("--rows", type=int, default=100, help="rows per file (default 100)")
    ap.add_argument("--batch", type=int, default=500, help="files per batch or per plain register (default 500)")
    ap.add_argument("--workers", type=int, default=2, help="extraction processes (default 2)")
    ap.add_argument("--rounds", type=int, default=2, help="rounds, alternating the modes' order (default 2)")
    ap.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    ap.add_argument("--pg-admin-url", default=DEFAULT_PG_ADMIN)
    args = ap.parse_args()
    print(describe(), f"load average {os.getloadavg()[0]:.1f}")
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    work = Path(tempfile.mkdtemp(prefix="shredcat-register-bulk-"))
    try:
        t = time.perf_counter()
        directory = work / "files"
        paths = write_files(directory, args.files, args.rows, columns=False)
        print(f"{len(paths):,} files written by DuckDB in {time.perf_counter() - t:.0f}s; batches of {args.batch}")
        for backend in backends:
            rates: dict[str, list[float]] = {m: [] for m in MODES}
            for r in range(args.rounds):
                for mode in MODES if r % 2 == 0 else tuple(reversed(MODES)):
                    with catalog_on(backend, args.pg_admin_url, work) as url:
                        wall, out = run_mode(mode, url, directory, paths, args.batch, args.workers)
                    rates[mode].append(len(paths) / wall)
                    print(f"{backend:<8} round {r + 1} {mode:<18} {wall:6.1f}s = {len(paths) / wall:5.0f} files/s | {out}")
            print(
                f"{backend:<8} medians: "
                + ", ".join(f"{m} {statistics.median(v):.0f} files/s" for m, v in rates.items())
                + f"; load average now {os.getloadavg()[0]:.1f}"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
