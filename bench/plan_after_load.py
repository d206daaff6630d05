"""Plan latency right after a bulk load into a fresh PostgreSQL catalog, against the same plans
once every table is fully analyzed (the peer: what the plans cost when PostgreSQL knows the data).

    .venv/bin/python bench/plan_after_load.py                 # 100,000 files
    .venv/bin/python bench/plan_after_load.py --files 20000

Autovacuum is switched off on the fresh database's tables, so "right after the load" is the
window before it would analyze them (a minute or more): what the catalog's own statistics upkeep
(``service.catalog.db.analyze_if_grown``, after each commit) leaves the planner with. Files are
``bench/commit.py``'s (10 Variant paths, 8 plain and 2 partition columns), committed 5,000 at a
time; each query is planned 15 times with counts, and the median is reported.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import text

import service.catalog.service as catalog_service
from bench.commit import DEFAULT_PG_ADMIN, make_file, postgres_url
from bench.machine import describe
from service.catalog import Catalog
from service.catalog.db import upgrade_to_head
from service.pruning.parse_sql import parse_sql

QUERIES = {
    "Variant point": "variant_get(payload, '$.user_id', 'bigint') = {uid}",
    "plain range": "c0 BETWEEN {uid} AND {uid} + 500",
    "partition AND Variant point": "date = DATE '2026-01-21' AND variant_get(payload, '$.user_id', 'bigint') = {uid}",
    "Variant range keeping every file": "variant_get(payload, '$.price', 'decimal(18,2)') > -1",
}


def _bound(sql: str, schema: Any) -> Any:
    return parse_sql(sql, schema=schema)


def _measure(cat: Catalog, uid: int) -> list[float]:
    out = []
    for q in QUERIES.values():
        sql = q.format(uid=uid)
        times = []
        for _ in range(15):
            t = time.perf_counter()
            cat.plan("b", "t", functools.partial(_bound, sql), counts=True)
            times.append((time.perf_counter() - t) * 1000)
        out.append(statistics.median(times))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--pg-admin-url", default=DEFAULT_PG_ADMIN)
    args = ap.parse_args(argv)
    print(describe())
    with postgres_url(args.pg_admin_url, keep=False) as url:
        upgrade_to_head(url)
        with Catalog(url) as cat:
            with cat.engine.begin() as c:
                for (name,) in c.execute(text("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")):
                    c.execute(text(f'ALTER TABLE "{name}" SET (autovacuum_enabled = false)'))
            cat.create_table("b", "t", ["payload"])
            spent: list[float] = []
            upkeep = catalog_service.analyze_if_grown

            def timed(engine: object) -> bool:
                t = time.perf_counter()
                did = upkeep(engine)  # type: ignore[arg-type]
                if did:
                    spent.append((time.perf_counter() - t) * 1000)
                return did

            catalog_service.analyze_if_grown = timed
            t0 = time.perf_counter()
            for s in range(0, args.files, 5000):
                batch = [make_file(i, 10, columns=8, partitioned=True) for i in range(s, min(s + 5000, args.files))]
                cat.commit("b", "t", batch)
            catalog_service.analyze_if_grown = upkeep
            print(
                f"loaded {args.files:,} files in {time.perf_counter() - t0:.1f} s; statistics upkeep ran "
                f"{len(spent)} times: {', '.join(f'{x:.0f}' for x in spent)} ms"
            )
            uid = make_file(args.files // 2, 10, columns=8, partitioned=True).paths[0].min_value
            uid = int(uid)  # type: ignore[arg-type]
            right_after = _measure(cat, uid)
            with cat.engine.begin() as c:
                c.execute(text("ANALYZE"))
            analyzed = _measure(cat, uid)
    print(f"{'query':36} {'right after the load':>22} {'fully analyzed':>16}")
    for name, a, b in zip(QUERIES, right_after, analyzed, strict=True):
        print(f"{name:36} {a:19.1f} ms {b:13.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
