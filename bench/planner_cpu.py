"""The client CPU of one plan (``Catalog.plan``, first page) on a 300-file table, file i holding
ids [10 i, 10 i + 9]: a point, an AND, the playground's 200-term OR (one key: 200 points), and
a 5,000-item IN list. ``time.process_time``, the median and the least of ``--repeat`` after 3
warm-ups each (at load, the least is the steadier: other processes only add to it).
Run it for two builds of the planner alternately (issue 33 item 3: the text builder against the
statements built with SQLAlchemy Core), one process each::

    .venv/bin/python bench/planner_cpu.py --backend sqlite|postgres [--repeat 20]

PostgreSQL: a database ``bench_planner_cpu_<pid>`` on ``--admin-url``'s server, dropped after."""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
from sqlalchemy import make_url

from service.catalog import Catalog
from service.catalog.db import upgrade_to_head
from service.pruning.parse_sql import parse_sql
from service.stats.model import FileStats, PathStats
from service.values import ShreddedType

A = "variant_get(v, '$.a', 'bigint')"
B = "variant_get(v, '$.b', 'bigint')"
QUERIES = {
    "point": f"{A} = 1234",
    "and": f"{A} BETWEEN 100 AND 400 AND {B} > 1500",
    "or200": " OR ".join(f"{A} = {7 * i + 3}" for i in range(200)),
    "in5000": f"{A} IN ({', '.join(str(3 * i) for i in range(5000))})",
}
INT64 = ShreddedType.parse("int64")


def _path(name: str, lo: int, hi: int) -> PathStats:
    return PathStats(
        column="v", variant_path=f'"{name}"', shredded_type=INT64, column_size_bytes=100, value_count=10,
        null_count=0, min_value=lo, max_value=hi, contains_nan=None, extra_stats=None,
    )  # fmt: skip


def _files(n: int) -> list[FileStats]:
    return [
        FileStats(
            path=f"s3://b/t/f{i:05d}.parquet", file_size_bytes=1000, record_count=10, footer_size=100,
            content_id=f"etag:{i}", variant_columns=("v",),
            paths=(_path("a", 10 * i, 10 * i + 9), _path("b", 5 * i, 5 * i + 4)),
        )
        for i in range(n)
    ]


def measure(url: str, repeat: int) -> dict[str, tuple[float, float]]:
    """Per query: the median and the least CPU of a plan, ms."""
    upgrade_to_head(url)
    cat = Catalog(url)
    try:
        cat.create_table("ns", "t", ["v"])
        cat.commit("ns", "t", _files(300))
        out = {}
        for name, sql in QUERIES.items():
            expr = parse_sql(sql)
            times = []
            for i in range(3 + repeat):
                t0 = time.process_time()
                cat.plan("ns", "t", expr)
                if i >= 3:
                    times.append(time.process_time() - t0)
            out[name] = (statistics.median(times) * 1000, min(times) * 1000)
        return out
    finally:
        cat.close()


@contextlib.contextmanager
def catalog_url(backend: str, admin_url: str, name: str) -> Iterator[str]:
    """An empty catalog database's URL for the block: a SQLite file in a temporary directory, or
    the PostgreSQL database ``name`` created on ``admin_url``'s server and dropped afterwards."""
    if backend == "sqlite":
        with tempfile.TemporaryDirectory() as d:
            yield f"sqlite:///{Path(d) / 'c.db'}"
        return
    admin = make_url(admin_url)
    dsn = admin.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(f'CREATE DATABASE "{name}"')
    try:
        yield admin.set(drivername="postgresql+psycopg", database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--admin-url", default=os.environ.get("SHREDCAT_PG_ADMIN_URL", "postgresql://postgres@127.0.0.1:5432/test"))
    args = ap.parse_args()
    with catalog_url(args.backend, args.admin_url, f"bench_planner_cpu_{os.getpid()}") as url:
        result = measure(url, args.repeat)
    print(" ".join(f"{k}={med:.2f}/{least:.2f}" for k, (med, least) in result.items()))


if __name__ == "__main__":
    main()
