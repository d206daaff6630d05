"""``shredcat ducklake export --table NS.TABLE --to PATH [--data-path DIR] [--json]``.

Writes the table's live files as a new DuckLake catalog (a DuckDB file at PATH) that DuckDB
attaches with ``ATTACH 'ducklake:PATH' AS lake (DATA_PATH ...)`` and prunes on shredcat's column
statistics (:mod:`service.duckdb.ducklake`). Prints the ATTACH statement; files and columns left
out are named on stderr (``--json``: all in one object). Exit 0 written, 2 usage error or a
table/catalog that cannot be exported, 1 DuckDB failed.
"""

from __future__ import annotations

import argparse
import json
import sys

from service.cli._common import add_database_argument


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=["export"], help="export: write a DuckLake catalog of the table")
    p.add_argument("--table", required=True, help="NAMESPACE.TABLE")
    p.add_argument("--to", required=True, metavar="PATH", help="the new DuckLake catalog (a DuckDB file; must not exist)")
    p.add_argument("--data-path", default=None, metavar="DIR", help="DuckLake's DATA_PATH (default PATH without its suffix + .files/)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    add_database_argument(p)


def run(args: argparse.Namespace) -> int:
    from service.cli._common import open_catalog, split_table
    from service.errors import ShredcatError

    try:
        from service.duckdb.ducklake import export_table

        ns, table = split_table(args.table)
        with open_catalog(args) as catalog:
            result = export_table(catalog, ns, table, args.to, data_path=args.data_path)
    except ShredcatError as e:
        print(f"shredcat ducklake: {e.message}", file=sys.stderr)
        return 2 if e.http_status < 500 else 1
    if args.json:
        print(json.dumps({
            "catalog": result.catalog_path, "data_path": result.data_path, "table": result.table,
            "files": result.files, "rows": result.rows, "attach": result.attach,
            "skipped_files": [{"path": p, "reason": r} for p, r in result.skipped_files],
            "skipped_columns": [{"column": c, "reason": r} for c, r in result.skipped_columns],
        }, ensure_ascii=False))  # fmt: skip
        return 0
    print(result.attach + ";")
    for path, why in result.skipped_files:
        print(f"skipped file {path}: {why}", file=sys.stderr)
    for column, why in result.skipped_columns:
        print(f"skipped column {column}: {why}", file=sys.stderr)
    print(f"{result.table}: {result.files} files, {result.rows} rows exported to {result.catalog_path}", file=sys.stderr)
    return 0
