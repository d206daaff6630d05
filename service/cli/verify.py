"""``shredcat verify --table NS.TABLE (--sample N | --all) [--seed S] [--json] [--data]``: re-extract a
table's files and report every file whose stored stats differ from the file's.

``--data`` checks instead against the data, read by DuckDB (:mod:`service.duckdb.verify`): a
difference there is a stored fact the values contradict (``stored`` the fact, ``file`` what the
data shows), whatever the footer says.

Stored stats may come from clients (Spark executors send them); this checks them against the files
(:mod:`service.catalog.verify`, compared by value). A file that cannot be read here (missing, an
object store without credentials) is reported as unverifiable, never as different.

Output: a line per differing or unverifiable file (``--json``: one JSON object per such file), then
a summary on stderr. Exit status: 0 every checked file matches, 1 some file differs, 3 none differs
but some could not be read, 2 a usage error (or the table cannot be read).
"""

from __future__ import annotations

import argparse
import json
import sys

from service.cli._common import add_database_argument

EXIT_DIFFERENT = 1
EXIT_USAGE = 2
EXIT_UNVERIFIABLE = 3


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--table", required=True, help="NAMESPACE.TABLE")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--sample", type=int, metavar="N", help="verify N live files chosen at random")
    which.add_argument("--all", action="store_true", help="verify every live file")
    p.add_argument("--seed", type=int, default=None, help="makes the random sample repeatable")
    p.add_argument("--json", action="store_true", help="one JSON object per differing or unverifiable file")
    p.add_argument(
        "--data",
        action="store_true",
        help="check the stored stats against the data itself, read by DuckDB (not the footers): "
        "counts, bounds and NaN of plain columns and Variant paths",
    )
    add_database_argument(p)


def run(args: argparse.Namespace) -> int:
    from functools import partial

    from service.cli._common import open_catalog, split_table
    from service.errors import ShredcatError
    from service.settings import get_settings
    from service.stats.extract import extract_file

    if args.sample is not None and args.sample < 1:
        print("shredcat verify: --sample must be at least 1", file=sys.stderr)
        return EXIT_USAGE
    settings = get_settings()
    read = partial(extract_file, max_footer_bytes=settings.max_footer_bytes, limits=settings.file_limits)
    try:
        ns, table = split_table(args.table)
        with open_catalog(args) as catalog:
            if args.data:
                from service.duckdb.verify import verify_data

                report, _ = verify_data(catalog, ns, table, sample=args.sample, seed=args.seed)
            else:
                report = catalog.verify(ns, table, read, sample=args.sample, seed=args.seed)
    except ShredcatError as e:
        print(f"shredcat verify: {e.message}", file=sys.stderr)
        return EXIT_USAGE
    for check in report.problems:
        if args.json:
            print(json.dumps(check.to_json(), ensure_ascii=False))
        elif check.status == "unverifiable":
            print(f"unverifiable {check.path}: {check.reason}")
        else:
            print(f"different {check.path}")
            for d in check.differences:
                where = f" {d.column}" if d.column is not None else ""
                where += f" {d.variant_path}" if d.variant_path is not None else ""
                print(f"  {d.field}{where}: stored {d.stored!r}, file {d.extracted!r}")
    print(
        f"{report.table} at snapshot {report.snapshot_id}: {report.checked} of {report.live_files} live files "
        f"checked, {report.matching} match, {len(report.different)} differ, "
        f"{len(report.unverifiable)} unverifiable",
        file=sys.stderr,
    )
    if report.different:
        return EXIT_DIFFERENT
    return EXIT_UNVERIFIABLE if report.unverifiable else 0
