"""End to end with Spark: a pruned read (service call included) vs a plain read of the directory.

    .venv/bin/python bench/spark_e2e.py                      # 240 files x 4,000 events, 7 runs each
    .venv/bin/python bench/spark_e2e.py --files 400 --rows-per-file 2000 --repeat 9

Spark (local[2]) writes ``--files`` shredded Parquet files of time-ordered events (users in
bursts, so one user or one hour lives in one or two files) into a temporary directory and
registers them with a shredcat service running in this process (uvicorn on 127.0.0.1, SQLite).
Then, for each selective predicate on a shredded field, alternately:

* **pruned**: ``read_pruned(spark, table, predicate).collect()``: the plan call to the service,
  building the DataFrame over the candidates, reading them, applying the predicate to rows;
* **plain**: ``spark.read.parquet(directory).where(predicate).collect()``.

Both must return the same rows. Reports the median and best of ``--repeat`` runs (after one
warm-up of each), the speed-up of the medians, and the plan call alone.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from service.spark import LocalService, local_session, plan_pruned, write_and_register

PREDICATES = [
    ("user.id = const", "variant_get(v, '$.user.id', 'bigint') = {uid}"),
    ("ts in one hour", "variant_get(v, '$.ts', 'timestamp') BETWEEN TIMESTAMP '{t0}' AND TIMESTAMP '{t1}'"),
]


def machine() -> dict[str, Any]:
    mem = 0
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem = int(line.split()[1]) // 1024
    except OSError:
        pass
    import pyarrow
    import pyspark

    return {
        "nproc": os.cpu_count(),
        "memory_mib": mem,
        "loadavg_at_start": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "python": platform.python_version(),
        "pyspark": pyspark.__version__,
        "pyarrow": pyarrow.__version__,
        "platform": platform.platform(),
    }


def events(spark: Any, files: int, rows_per_file: int) -> Any:
    n = files * rows_per_file
    return spark.range(0, n, 1, files).selectExpr(
        f"""to_variant_object(named_struct(
            'event_id', concat('e', id),
            'ts', TIMESTAMP '2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, id * 3),
            'user', named_struct('id', id DIV {max(1, rows_per_file // 4)}, 'country',
                                 element_at(array('FR', 'DE', 'US', 'BR'), CAST(id % 4 + 1 AS INT))),
            'type', CASE WHEN id % 20 = 0 THEN 'purchase' WHEN id % 3 = 0 THEN 'click' ELSE 'page_view' END,
            'latency_ms', 20 + id % 180,
            'tags', array('t' || CAST(id % 7 AS STRING), 'organic'),
            'payload', repeat('x', CAST(id % 64 AS INT))
        )) AS v"""
    )


def timed(fn: Any) -> tuple[float, Any]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=240)
    ap.add_argument("--rows-per-file", type=int, default=4000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--dir", default=None, help="work directory (default: a temporary one, removed)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.files < 200:
        print("--files must be at least 200", file=sys.stderr)
        return 2

    import logging

    logging.getLogger("service.api").setLevel(logging.ERROR)  # the in-process service runs with auth off
    info = machine()
    work = Path(args.dir or tempfile.mkdtemp(prefix="shredcat-spark-e2e-"))
    lake = work / "lake"
    lake.mkdir(parents=True, exist_ok=True)
    spark = local_session("shredcat-bench-spark-e2e", driver_memory="2g")
    results = []
    try:
        with LocalService(f"sqlite:///{work / 'catalog.db'}", [str(lake.resolve())]) as svc, svc.client() as client:
            t_write, written = timed(
                lambda: write_and_register(
                    events(spark, args.files, args.rows_per_file), str(lake / "events"), "bench.events", client=client
                )
            )
            table = client.load_table("bench", "events")
            directory = str((lake / "events").resolve())
            print(
                f"wrote and registered {len(written.paths)} files, {table.live_record_count} rows, "
                f"{table.live_bytes / 1e6:.1f} MB in {t_write:.1f}s",
                file=sys.stderr,
            )
            n = args.files * args.rows_per_file
            uid = (n // 2) // max(1, args.rows_per_file // 4)
            mid = n // 2 * 3  # seconds from the start at the middle row
            t0 = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(1704067200 + mid))
            t1 = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(1704067200 + mid + 3600))
            for label, template in PREDICATES:
                predicate = template.format(uid=uid, t0=t0, t1=t1)

                def pruned(predicate: str = predicate) -> tuple[Any, list[Any]]:
                    scan = plan_pruned(spark, "bench.events", predicate, client=client)
                    return scan, scan.read(spark).collect()

                def plain(predicate: str = predicate) -> list[Any]:
                    return spark.read.parquet(directory).where(predicate).collect()

                pruned()
                plain()  # warm-up
                tp, tf, plans = [], [], []
                scan = None
                rows: list[Any] = []
                expected: list[Any] = []
                for _ in range(args.repeat):
                    s, (scan, rows) = timed(pruned)
                    tp.append(s)
                    plans.append(scan.plan_seconds)
                    s, expected = timed(plain)
                    tf.append(s)
                assert scan is not None
                if sorted(map(str, rows)) != sorted(map(str, expected)):
                    print(f"{label}: the pruned read returned other rows", file=sys.stderr)
                    return 1
                r = {
                    "predicate": label,
                    "sql": predicate,
                    "files": scan.files_total,
                    "candidates": scan.candidates,
                    "rows": len(rows),
                    "pruned_median_s": statistics.median(tp),
                    "pruned_best_s": min(tp),
                    "plan_call_median_s": statistics.median(plans),
                    "plain_median_s": statistics.median(tf),
                    "plain_best_s": min(tf),
                }
                r["speedup_median"] = r["plain_median_s"] / r["pruned_median_s"]
                results.append(r)
    finally:
        spark.stop()
        if args.dir is None:
            shutil.rmtree(work, ignore_errors=True)

    report = {"machine": info, "files": args.files, "rows_per_file": args.rows_per_file, "repeat": args.repeat,
              "results": results}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"machine: {info['nproc']} cores, {info['memory_mib']} MiB, load {info['loadavg_at_start']}, "
          f"Python {info['python']}, PySpark {info['pyspark']}, pyarrow {info['pyarrow']}")
    print(f"{args.files} files x {args.rows_per_file} rows, {args.repeat} runs each (after a warm-up)\n")
    print("| predicate | files | candidates | rows | pruned read (median / best) | of which plan call | "
          "plain read (median / best) | speed-up (medians) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in results:
        print(
            f"| {r['predicate']} | {r['files']} | {r['candidates']} | {r['rows']} | "
            f"{r['pruned_median_s']:.3f} s / {r['pruned_best_s']:.3f} s | {r['plan_call_median_s'] * 1000:.0f} ms | "
            f"{r['plain_median_s']:.3f} s / {r['plain_best_s']:.3f} s | {r['speedup_median']:.1f}× |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
