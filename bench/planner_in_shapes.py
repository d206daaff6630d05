"""The first plan of each IN-list length in a fresh process: ``id IN (...)`` of lengths 1..``--max``
on bench/planner_cpu.py's 300-file table (file i holding ids [10 i, 10 i + 9]), each length planned
once (first page), in order, then every length once more (its shape compiled already). A new
length was a new statement shape (a Core build and compile each: :mod:`service.catalog.planner.sql`);
with the lists padded to powers of two, only a new power of two is. Wall time per plan
(``time.perf_counter``; one process per run, so that no shape is compiled before), and the shapes
the planner's cache holds afterwards::

    .venv/bin/python bench/planner_in_shapes.py --backend sqlite|postgres [--max 64]

PostgreSQL: a database ``<--db-prefix>planner_in_<pid>`` on ``--admin-url``'s server, dropped after.
The load average is printed with the figures (on a shared machine they are upper bounds)."""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.planner_cpu import _files, catalog_url  # noqa: E402
from service.catalog import Catalog  # noqa: E402
from service.catalog.db import upgrade_to_head  # noqa: E402
from service.catalog.planner import sql as planner_sql  # noqa: E402
from service.pruning.parse_sql import parse_sql  # noqa: E402

A = "variant_get(v, '$.a', 'bigint')"


def measure(url: str, longest: int) -> tuple[list[float], list[float], int]:
    """Wall ms of the first and of the second plan of each length 1..``longest``, and the shapes
    kept afterwards."""
    upgrade_to_head(url)
    cat = Catalog(url)
    try:
        cat.create_table("ns", "t", ["v"])
        cat.commit("ns", "t", _files(300))
        cat.plan("ns", "t", parse_sql(f"{A} > 5"))  # the table's metadata read, connections opened
        exprs = [parse_sql(f"{A} IN ({', '.join(str(7 * i + 3) for i in range(n))})") for n in range(1, longest + 1)]
        rounds: list[list[float]] = [[], []]
        for times in rounds:
            for expr in exprs:
                t0 = time.perf_counter()
                cat.plan("ns", "t", expr)
                times.append((time.perf_counter() - t0) * 1000)
        return rounds[0], rounds[1], len(planner_sql._kept)
    finally:
        cat.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    ap.add_argument("--max", type=int, default=64)
    ap.add_argument("--admin-url", default=os.environ.get("SHREDCAT_PG_ADMIN_URL", "postgresql://postgres@127.0.0.1:5432/test"))
    ap.add_argument("--db-prefix", default="bench_", help="the PostgreSQL database's name starts with it")
    args = ap.parse_args()
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with catalog_url(args.backend, args.admin_url, f"{args.db_prefix}planner_in_{os.getpid()}") as url:
        first, again, kept = measure(url, args.max)
    print(
        f"{args.backend}: lengths 1..{args.max}, first plans {sum(first):.0f} ms in all "
        f"(median {statistics.median(first):.2f} ms, max {max(first):.2f} ms); "
        f"second plans {sum(again):.0f} ms (median {statistics.median(again):.2f} ms); shapes kept {kept}"
    )
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
