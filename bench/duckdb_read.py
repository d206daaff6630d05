"""DuckDB: a selective query through ``service.duckdb.read_pruned`` vs DuckDB reading the whole
table directory, in the same run; and the cost of ``verify --data`` per file.

    .venv/bin/python bench/duckdb_read.py                     # 1,000 files x 200 events, 5 runs each
    .venv/bin/python bench/duckdb_read.py --files 200 --repeat 3

DuckDB writes ``--files`` shredded Parquet files of time-ordered events (``id``, a Variant ``v``
with ``user.id`` in bursts of 50 events and ``ts``) into a temporary directory; they are
registered in an embedded SQLite catalog. For each selective predicate, alternately (after one
warm-up of each):

* **pruned**: ``read_pruned(con, table, predicate, catalog=cat).fetchall()``: the catalog's plan,
  the DuckDB rendering, reading only the candidates, the predicate applied to rows;
* **directory, same SQL**: ``SELECT * FROM read_parquet('<dir>/*.parquet') WHERE <the same DuckDB
  SQL>`` (exactly what ``read_pruned`` applies, so the rows are the same);
* **directory, DuckDB's own filter**: the same with the filter a DuckDB user writes
  (``variant_extract(...)::BIGINT = 42``, which DuckDB may push into the shredded columns).

The third query keeps every file (what a read pays per candidate). All three must return the same rows. Then ``verify_data`` over ``--verify-sample`` files, per file.
Prints one JSON object with the medians and the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.machine import describe
from service.catalog import Catalog
from service.catalog.db import upgrade_to_head
from service.duckdb import engine, plan_pruned
from service.duckdb.verify import verify_data

BURST = 50


def write_files(root: Path, files: int, rows: int) -> list[str]:
    """One COPY per file (DuckDB's ROW_GROUP_SIZE rounds up to 2,048 rows, so it cannot cut small files)."""
    root.mkdir(parents=True)
    con = engine.connect()
    con.execute(
        f"""CREATE TABLE ev AS SELECT id, {{'user': {{'id': id // {BURST}}},
                   'ts': TIMESTAMPTZ '2024-03-01 00:00:00+00' + to_seconds(id),
                   'kind': CASE WHEN id % 4 = 0 THEN 'buy' ELSE 'view' END}}::VARIANT AS v
            FROM range({files * rows}) r(id)"""
    )
    for i in range(files):
        con.execute(f"COPY (SELECT * FROM ev WHERE id >= {i * rows} AND id < {(i + 1) * rows} ORDER BY id) TO '{root}/part-{i:05d}.parquet'")
    con.close()
    return sorted(str(p) for p in root.glob("*.parquet"))


def timed(fn: Any) -> tuple[float, Any]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--rows-per-file", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--verify-sample", type=int, default=100)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="shredcat-duckdb-bench-"))
    data = tmp / "events"
    t_write, paths = timed(lambda: write_files(data, args.files, args.rows_per_file))
    url = f"sqlite:///{tmp}/catalog.db"
    upgrade_to_head(url)
    total = args.files * args.rows_per_file
    uid = (total // 2) // BURST + 1
    queries = [
        ("user.id = const", f"variant_get(v, '$.user.id', 'bigint') = {uid}",
         f"TRY_CAST(variant_extract(variant_extract(v, 'user'), 'id') AS BIGINT) = {uid}"),
        ("id range", f"id BETWEEN {total // 3} AND {total // 3 + 99}", f"id BETWEEN {total // 3} AND {total // 3 + 99}"),
        # Every file a candidate: what a read pays per candidate (each one's schema is read to find
        # Variant columns DuckDB would read as a STRUCT), against the directory read.
        ("every file (id >= 0)", "id >= 0", "id >= 0"),
    ]  # fmt: skip
    out: dict[str, Any] = {"machine": describe(), "files": len(paths), "rows": total, "write_s": round(t_write, 2)}
    with Catalog(url) as cat:
        t_reg, _ = timed(lambda: cat.register("bench", "events", paths))
        out["register_s"] = round(t_reg, 2)
        con = engine.connect()
        directory = f"read_parquet('{data}/*.parquet')"
        for name, spark_sql, native in queries:
            scan = plan_pruned(con, "bench.events", spark_sql, catalog=cat)
            runs: dict[str, list[float]] = {"pruned": [], "dir_same_sql": [], "dir_native": []}
            fns = {
                "pruned": lambda s=spark_sql: plan_pruned(con, "bench.events", s, catalog=cat).relation(con).fetchall(),
                "dir_same_sql": lambda w=scan.where: engine.fetch(con, f"SELECT * FROM {directory} WHERE {w}"),
                "dir_native": lambda w=native: engine.fetch(con, f"SELECT * FROM {directory} WHERE {w}"),
            }
            answers = {k: sorted(r[0] for r in f()) for k, f in fns.items()}  # warm-up, and the same rows
            assert answers["pruned"] == answers["dir_same_sql"] == answers["dir_native"] and answers["pruned"], name
            for _ in range(args.repeat):
                for k, f in fns.items():
                    runs[k].append(timed(f)[0])
            med = {k: statistics.median(v) for k, v in runs.items()}
            out[name] = {
                "candidates": len(scan.paths), "rows": len(answers["pruned"]),
                **{f"{k}_ms": round(v * 1000, 1) for k, v in med.items()},
                "speedup_same_sql": round(med["dir_same_sql"] / med["pruned"], 1),
                "speedup_native": round(med["dir_native"] / med["pruned"], 1),
            }  # fmt: skip
        n = min(args.verify_sample, len(paths))
        t_ver, (report, _) = timed(lambda: verify_data(cat, "bench", "events", sample=n, seed=1))
        assert report.matching == n, report.problems[:3]
        out["verify_data_ms_per_file"] = round(t_ver * 1000 / n, 2)
    out["loadavg"] = os.getloadavg()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
