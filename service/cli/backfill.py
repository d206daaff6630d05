"""``shredcat backfill --table NS.TABLE ROOT_URI``: register an existing lake of shredded Parquet
files, extracting their statistics on Spark executors (``--local``: on this machine, no Spark)
and committing them in batches through the REST API (see :mod:`service.spark.backfill`).

The service is ``--url`` (default ``SHREDCAT_URL``, else http://127.0.0.1:8181) with the bearer
token in ``SHREDCAT_TOKEN`` (a writer's; an admin's when the table must be created). Spark is
the session ``spark-submit`` configured, else ``--master`` (default ``local[*]``). Progress goes
to stderr, the summary to stdout. Exit status 0 when every batch was committed, 1 when some
failed (rerun to retry them: what is live is skipped) or a commit was refused for the token
(401/403: one line, the run stopped there), 2 on bad arguments (a new table's name
the catalog refuses too, before anything is listed or extracted).
"""

from __future__ import annotations

import argparse
from typing import Any


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--table", required=True, help="NAMESPACE.TABLE (created from the first file if missing)")
    p.add_argument("root", metavar="ROOT_URI", help="directory or object-store URI (s3://bucket/lake/events) to register")
    p.add_argument("--url", default=None, help="service URL (default: SHREDCAT_URL, else http://127.0.0.1:8181)")
    p.add_argument("--batch-size", type=int, default=1000, help="files per commit (default 1000)")
    p.add_argument("--files-per-task", type=int, default=100, help="files per Spark task (default 100)")
    p.add_argument("--master", default=None, help="Spark master when not set by spark-submit (default local[*])")
    p.add_argument(
        "--local",
        action="store_true",
        help="extract on this machine without Spark (processes for local files, overlapped requests for object stores)",
    )
    p.add_argument("--no-create", action="store_true", help="fail when the table does not exist")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")


def run(args: argparse.Namespace) -> int:
    import json
    import os
    import sys

    from service.client import ShredcatAPIError, ShredcatClient, ShredcatConnectionError
    from service.errors import InvalidStatsError, ShredcatError
    from service.spark import backfill
    from service.spark._common import DEFAULT_URL, split_table

    if args.batch_size < 1 or args.files_per_task < 1:
        print("shredcat backfill: --batch-size and --files-per-task must be >= 1", file=sys.stderr)
        return 2
    try:
        split_table(args.table)
    except ValueError as e:
        print(f"shredcat backfill: {e}", file=sys.stderr)
        return 2
    if args.local and args.master is not None:
        print("shredcat backfill: --local runs without Spark; drop --master", file=sys.stderr)
        return 2
    spark: Any = None
    owned = False
    if not args.local:
        try:
            from pyspark import SparkConf
            from pyspark.sql import SparkSession
        except ImportError:
            print("shredcat backfill: needs PySpark (pip install 'shredcat[spark]'), or --local", file=sys.stderr)
            return 2
        spark, owned = _spark_session(args.master, SparkConf, SparkSession)
    url = args.url or os.environ.get("SHREDCAT_URL") or DEFAULT_URL
    try:
        with ShredcatClient(url, os.environ.get("SHREDCAT_TOKEN")) as client:
            result = backfill(
                spark,
                args.root,
                args.table,
                client=client,
                batch_size=args.batch_size,
                files_per_task=args.files_per_task,
                create=not args.no_create,
            )
    except InvalidStatsError as e:
        # A new table's name the catalog refuses, found before anything was listed: a bad argument.
        print(f"shredcat backfill: {e.message}", file=sys.stderr)
        return 2
    except (ShredcatAPIError, ShredcatConnectionError, ShredcatError, ValueError, OSError) as e:
        print(f"shredcat backfill: {e.message if isinstance(e, ShredcatError) else e}", file=sys.stderr)
        return 1
    finally:
        if owned:
            spark.stop()
    if args.json:
        print(
            json.dumps(
                {
                    "table": result.table,
                    "root": result.root,
                    "files-listed": result.files_listed,
                    "already-live": result.already_live,
                    "added": result.files_added,
                    "unchanged": result.files_unchanged,
                    "batches": result.batches,
                    "batches-committed": result.batches_committed,
                    "failed": [
                        {"batch": b.index, "files": len(b.paths), "error": b.error, "bad-files": [list(x) for x in b.bad_files]}
                        for b in result.failed
                    ],
                    "seconds": round(result.seconds, 3),
                }
            )
        )
    else:
        print(result.summary())
    return 0 if result.ok else 1


def _spark_session(master: str | None, spark_conf: Any, spark_session: Any) -> tuple[Any, bool]:
    """The active SparkSession (not ours to stop), or a new one (``master``, default local[*])."""
    import os
    import sys

    existing = spark_session.getActiveSession()
    if existing is not None:
        return existing, False
    builder = spark_session.builder.appName("shredcat-backfill")
    if master is None and not spark_conf().contains("spark.master"):
        master = "local[*]"
    if master is not None:
        builder = builder.master(master)
    if master is not None and master.startswith("local"):
        # Local executors are Python processes of this machine: this interpreter has shredcat.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        builder = builder.config("spark.ui.showConsoleProgress", "false")
    return builder.getOrCreate(), True
