"""What the primary's per-read ``statement_timeout`` (``SET LOCAL`` in the message of each armed
read transaction's ``BEGIN``: :mod:`service.catalog.deadlines`) costs a read: two primary engines
(``ReadRouter``, ``shared_with_writes``), one as installed, one with the ``SET LOCAL`` switched off
per connection (the behaviour before it), their reads interleaved so that the machine's load
drifts alike on both. Reads: ``SELECT 1`` (the overhead at its largest share) and ``table_infos``
on a small catalog (five files). Client CPU and wall µs per read, medians of ``--rounds``::

    .venv/bin/python bench/primary_read_timeout.py [--admin-url postgresql://postgres@127.0.0.1:5432/postgres]

The catalog is a database ``<--db-prefix>read_timeout_<pid>`` on that server, dropped after."""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import psycopg  # noqa: E402
from sqlalchemy import event, make_url  # noqa: E402
from sqlalchemy.engine import Connection  # noqa: E402

from service.catalog import Catalog  # noqa: E402
from service.catalog import repository as repo  # noqa: E402
from service.catalog.db import make_engine, upgrade_to_head  # noqa: E402
from service.catalog.replicas import ReadRouter  # noqa: E402
from tests.support.events import write_event_files  # noqa: E402

READS: dict[str, Callable[[Connection], Any]] = {
    "SELECT 1": lambda c: c.exec_driver_sql("SELECT 1").scalar(),
    "table_infos": lambda c: repo.table_infos(c, "lake", "events"),
}
KINDS = ("with SET LOCAL", "without (before)")


def measure(url: str, reads: int, rounds: int) -> dict[str, list[list[tuple[float, float]]]]:
    """Per read: per round, (CPU µs, wall µs) per read of each of :data:`KINDS`."""
    upgrade_to_head(url)
    with tempfile.TemporaryDirectory() as d, Catalog(url) as cat:
        cat.register("lake", "events", write_event_files(Path(d) / "warehouse" / "events"))
    engines = [make_engine(url, pool_size=1, max_overflow=0) for _ in KINDS]
    routers = [ReadRouter(e, read_timeout_s=10.0) for e in engines]

    @event.listens_for(engines[1], "connect")
    def _before(dbapi: Any, _record: Any) -> None:
        dbapi.read_timeout_ms = None  # no SET LOCAL: the deadline alone, as before

    try:
        out: dict[str, list[list[tuple[float, float]]]] = {}
        for name, fn in READS.items():
            for r in routers:
                for _ in range(100):  # connect, warm the caches
                    r.read(fn, primary=True)
            out[name] = []
            for _ in range(rounds):
                spent = [[0.0, 0.0] for _ in KINDS]
                for _ in range(reads):
                    for r, total in zip(routers, spent, strict=True):
                        cpu, wall = time.process_time(), time.perf_counter()
                        r.read(fn, primary=True)
                        total[0] += time.process_time() - cpu
                        total[1] += time.perf_counter() - wall
                out[name].append([(c / reads * 1e6, w / reads * 1e6) for c, w in spent])
        return out
    finally:
        for e in engines:
            e.dispose()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--admin-url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    ap.add_argument("--db-prefix", default="bench_", help="the database's name starts with it")
    ap.add_argument("--reads", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    admin = make_url(args.admin_url)
    dsn = admin.set(drivername="postgresql").render_as_string(hide_password=False)
    name = f"{args.db_prefix}read_timeout_{os.getpid()}"
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(f'CREATE DATABASE "{name}"')
    try:
        url = admin.set(drivername="postgresql+psycopg", database=name).render_as_string(hide_password=False)
        result = measure(url, args.reads, args.rounds)
    finally:
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
    for read, rounds in result.items():
        for i, kind in enumerate(KINDS):
            cpu = statistics.median(r[i][0] for r in rounds)
            wall = statistics.median(r[i][1] for r in rounds)
            print(f"{read}, {kind}: {cpu:.1f} µs CPU, {wall:.1f} µs wall per read")
        added = sorted(r[0][1] - r[1][1] for r in rounds)
        cpu_added = sorted(r[0][0] - r[1][0] for r in rounds)
        print(
            f"{read}, added per read: wall {statistics.median(added):+.1f} µs (rounds {', '.join(f'{x:+.0f}' for x in added)}), "
            f"CPU {statistics.median(cpu_added):+.1f} µs"
        )
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
