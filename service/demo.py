"""``make demo``: the whole pipeline on the embedded default, with a real local Spark.

1. PySpark (``local[2]``) generates an event stream: nested objects (``user``, ``user.device``),
   arrays (``items`` of objects, ``tags``), a field whose type drifts (``latency_ms``: integers,
   then doubles after a client upgrade), fields that are missing in most events (``amount``,
   ``referrer``) or explicitly null (``coupon``). Events arrive in time order and users come in
   bursts, so each file covers a short time range and a few users.
2. Spark writes it as shredded Parquet over many files under ``./demo-data/events/``,
   ``partitionBy("event_date")`` (one ``event_date=YYYY-MM-DD`` directory per day) with a plain
   ``user_id`` column beside the Variant; :func:`service.spark.write_and_register` registers
   exactly those files with the service, which reads the partition values from the paths and the
   plain columns' statistics from the footers.
3. The service runs in this process (uvicorn on a free port of 127.0.0.1, ``SHREDCAT_AUTH=off``,
   SQLite catalog ``./demo-data/catalog.db``), or ``--url`` points at a running one (whose
   ``SHREDCAT_WAREHOUSE_ROOTS`` must include ``./demo-data``; token in ``SHREDCAT_TOKEN``).
4. A few queries run through :func:`service.spark.read_pruned`, Variant paths alone and mixed
   with the partition and plain columns in one WHERE clause; for each the demo prints the files
   total / candidates / pruned, and the time of the pruned read (service call included) against
   a plain ``spark.read.parquet(dir).where(...)``, checking both return the same rows.

``python -m service.demo [--events N] [--files N] [--url URL]``. Everything under
``./demo-data/`` is replaced on each run.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

OUT = Path("demo-data")
START = "2024-03-01 00:00:00"
SECONDS_PER_EVENT = 27  # 96k events span about a month


def event_stream(spark: Any, n_events: int, n_files: int) -> Any:
    """The events as one Variant column ``v``, ``n_files`` partitions in time order. Each kind of
    event has its own shape: fields of other kinds are missing, ``coupon`` is an explicit null."""
    drift_at = int(n_events * 0.75)
    incident = (int(n_events * 0.42), int(n_events * 0.43))
    common = f"""'event_id', concat('e', id), 'type', kind, 'ts', ts,
        'user', named_struct(
            'id', uid,
            'country', element_at(array('FR', 'DE', 'US', 'BR', 'JP', 'NZ'), CAST(uid % 6 + 1 AS INT)),
            'device', named_struct('os', CASE WHEN uid % 3 = 0 THEN 'ios' ELSE 'android' END,
                                   'version', 10 + uid % 5)),
        'tags', CASE WHEN id % 4 = 0 THEN array('promo', 'spring') ELSE array('organic') END,
        'latency_ms', CASE
            WHEN id BETWEEN {incident[0]} AND {incident[1]} THEN CAST(3000 + id % 500 AS VARIANT)
            WHEN id < {drift_at} THEN CAST(20 + id % 180 AS VARIANT)
            ELSE CAST((20 + id % 180) * 1.01D AS VARIANT) END"""
    items = """'items', array(named_struct('sku', concat('sku-', id % 97), 'qty', 1 + id % 3),
                            named_struct('sku', concat('sku-', id % 89), 'qty', 1))"""
    return (
        spark.range(0, n_events, 1, n_files)
        .selectExpr(
            "id",
            f"TIMESTAMP '{START}' + make_interval(0, 0, 0, 0, 0, 0, id * {SECONDS_PER_EVENT}) AS ts",
            "1000 + id DIV 240 AS uid",
            "CASE WHEN id % 20 = 0 THEN 'purchase' WHEN id % 7 = 0 THEN 'add_to_cart' "
            "WHEN id % 3 = 0 THEN 'click' ELSE 'page_view' END AS kind",
        )
        .selectExpr(
            "to_date(ts) AS event_date",
            "uid AS user_id",
            f"""CASE kind
            WHEN 'purchase' THEN to_variant_object(named_struct({common}, {items},
                'amount', round(5 + (id * 7919) % 400 * 1.37D, 2), 'coupon', CAST(NULL AS VARIANT)))
            WHEN 'add_to_cart' THEN to_variant_object(named_struct({common}, {items}))
            WHEN 'page_view' THEN CASE WHEN id % 10 = 1
                THEN to_variant_object(named_struct({common}, 'referrer', 'news.example'))
                ELSE to_variant_object(named_struct({common})) END
            ELSE to_variant_object(named_struct({common}, 'target', concat('button-', id % 12)))
            END AS v"""
        )
    )


def _day_of_user(uid: int) -> str:
    """The day the events of user ``uid`` happen (users come in bursts of 240 events)."""
    from datetime import datetime, timedelta

    first = (uid - 1000) * 240
    return (datetime.fromisoformat(START) + timedelta(seconds=first * SECONDS_PER_EVENT)).date().isoformat()


def queries() -> list[tuple[str, Any]]:
    from pyspark.sql import functions as F

    return [
        (
            "one day AND one user (partition + Variant)",
            f"event_date = '{_day_of_user(1234)}' AND variant_get(v, '$.user.id', 'bigint') = 1234",
        ),
        (
            "plain range OR Variant range",
            "user_id BETWEEN 1100 AND 1101 OR variant_get(v, '$.ts', 'timestamp') "
            "BETWEEN TIMESTAMP '2024-03-12 10:00:00' AND TIMESTAMP '2024-03-12 11:00:00'",
        ),
        ("a week of one event type (partition range + Variant)",
         "event_date BETWEEN DATE '2024-03-04' AND DATE '2024-03-10' AND variant_get(v, '$.type', 'string') = 'purchase'"),
        ("one user's events (user.id = 1234)", "variant_get(v, '$.user.id', 'bigint') = 1234"),
        (
            "one hour of the stream (ts)",
            "variant_get(v, '$.ts', 'timestamp') BETWEEN TIMESTAMP '2024-03-12 10:00:00' "
            "AND TIMESTAMP '2024-03-12 11:00:00'",
        ),
        (
            "big purchases of 20 users (Column API)",
            F.variant_get("v", "$.user.id", "bigint").between(1300, 1320) & (F.variant_get("v", "$.amount", "double") > 300),
        ),
        ("slow requests (latency_ms drifts int -> double)", "v:latency_ms::bigint >= 3000"),
        ("all purchases (not selective)", "variant_get(v, '$.type', 'string') = 'purchase'"),
    ]


def _time(fn: Any, repeat: int) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t)
    return best, result


def run(url: str | None, n_events: int, n_files: int, repeat: int) -> int:
    from service.client import ShredcatClient
    from service.spark import LocalService, local_session, write_and_register

    started = time.perf_counter()
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    events_dir = str((OUT / "events").resolve())
    logging.getLogger("service.api").setLevel(logging.ERROR)  # "SHREDCAT_AUTH=off" is said below
    # A plan's warnings are printed once under its row, not logged by each timed read.
    logging.getLogger("service.spark").setLevel(logging.ERROR)

    print("starting Spark (local[2]) ...", flush=True)
    spark = local_session("shredcat-demo")
    local = None
    try:
        if url is None:
            local = LocalService(f"sqlite:///{(OUT / 'catalog.db').resolve()}", [str(OUT.resolve())])
            local.start()
            url = local.url
            print(f"shredcat service in this process at {url} (SHREDCAT_AUTH=off, SQLite {OUT}/catalog.db)")
        with ShredcatClient(url, os.environ.get("SHREDCAT_TOKEN")) as client:
            t = time.perf_counter()
            df = event_stream(spark, n_events, n_files)
            written = write_and_register(df, events_dir, "demo.events", client=client, partition_by=["event_date"])
            table = client.load_table("demo", "events")
            print(
                f"Spark wrote {len(written.paths)} shredded Parquet files ({table.live_record_count} events, "
                f"{table.live_bytes / 1e6:.1f} MB) into {OUT}/events/event_date=.../ and registered them as "
                f"demo.events (snapshot {table.current_snapshot_id}) in {time.perf_counter() - t:.1f}s"
            )
            print("columns: " + ", ".join(f"{c.name} {c.type} ({c.kind})" for c in table.columns))
            _print_shredded_paths(written.paths)
            if not _compare_reads(spark, client, events_dir, repeat):
                return 1
            print(
                f"\nEvery pruned read returned exactly the rows of the plain read. Times: best of {repeat}, "
                "the pruned read including the service call. Total demo time "
                f"{time.perf_counter() - started:.0f}s."
            )
    finally:
        if local is not None:
            local.stop()
        spark.stop()
    return 0


def _print_shredded_paths(paths: Sequence[str]) -> None:
    """The first file's DuckLake rows, and how the first and last files shredded latency_ms."""
    from service.stats.extract import extract_file

    first = extract_file(paths[0])
    print(f"\nfully shredded paths of {Path(paths[0]).name} (DuckLake rows, abridged):")
    for ps in first.paths:
        row = ps.ducklake_row()
        print(
            f"  {row['variant_path']:<28} {row['shredded_type']:<12} "
            f"min={row['min_value']!s:<26} max={row['max_value']!s:<26} nulls={row['null_count']}"
        )
    first_type, last_type = (
        {x.variant_path: x.shredded_type.name for x in extract_file(p).paths}.get('"latency_ms"', "not fully shredded")
        for p in (paths[0], paths[-1])
    )
    print(f"  latency_ms is shredded as {first_type} in the first file, as {last_type} in the last one")


def _compare_reads(spark: Any, client: Any, events_dir: str, repeat: int) -> bool:
    """Each query read pruned and plain, timed and compared; False at the first that differs."""
    from service.spark import plan_pruned

    plain_dir = events_dir
    spark.read.parquet(plain_dir).where("variant_get(v, '$.user.id', 'bigint') = 0").collect()  # warm-up

    print(f"\n{'query':<53} {'files':>5} {'cand.':>5} {'pruned':>6} {'pruned read':>11} "
          f"{'plain read':>10} {'speed-up':>8} {'rows':>6}")
    for label, predicate in queries():
        scan = plan_pruned(spark, "demo.events", predicate, client=client, base_path=events_dir)

        def pruned(predicate: Any = predicate) -> list[Any]:
            # basePath: the candidates keep their event_date partition column.
            s = plan_pruned(spark, "demo.events", predicate, client=client, base_path=events_dir)
            return s.read(spark, base_path=events_dir).collect()

        def plain(predicate: Any = predicate) -> list[Any]:
            return spark.read.parquet(plain_dir).where(predicate).collect()

        t_pruned, rows = _time(pruned, repeat)
        t_plain, expected = _time(plain, repeat)
        same = sorted(map(str, rows)) == sorted(map(str, expected))
        print(
            f"{label:<53} {scan.files_total:>5} {scan.candidates:>5} {scan.files_pruned:>6} "
            f"{t_pruned:>10.2f}s {t_plain:>9.2f}s {t_plain / t_pruned:>7.1f}x {len(rows):>6}"
            + ("" if same else "  ROWS DIFFER")
        )
        for w in scan.warnings:
            print(f"  warning: {w.message}")
        if not same:
            return False
    return True


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m service.demo", description=__doc__.splitlines()[0])
    p.add_argument("--events", type=int, default=96_000, help="events to generate (default 96,000)")
    p.add_argument("--files", type=int, default=120, help="Parquet files to write (default 120)")
    p.add_argument("--repeat", type=int, default=2, help="timing runs per query, best kept (default 2)")
    p.add_argument("--url", default=None, help="use this running service instead of one in this process")
    args = p.parse_args(argv)
    for name in ("events", "files"):
        if getattr(args, name) < 1:  # else no file is written, and the demo's table never exists
            p.error(f"--{name} must be at least 1")
    return run(args.url, args.events, args.files, max(1, args.repeat))


if __name__ == "__main__":
    sys.exit(main())
