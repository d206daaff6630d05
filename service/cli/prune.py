"""``shredcat prune --table NS.TABLE 'PREDICATE' [--snapshot N] [--time-zone TZ] [--explain] [--json]``.

Prints the candidate files, one per line (every page), or the JSON result. The predicate is
Spark SQL text (``variant_get(v, '$.user.id', 'bigint') = 42``) or, when it starts with ``{``,
the Iceberg-style JSON expression. Counts go to stderr so stdout stays a clean file list, and so
do the plan's warnings (a ``warning:`` line each: a path shredded in no live file, a type the path
is not stored as, a term pruning cannot use), also under ``warnings`` in the JSON result. A column the table does not have
is an error (exit 2). ``--time-zone`` reads timestamp literals without a zone as Spark does in that
session time zone (default UTC).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from service.cli._common import add_database_argument, add_min_snapshot_argument

if TYPE_CHECKING:  # the CLI's start-up imports no parser
    from service.pruning import BooleanExpression, TableSchema


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--table", required=True, help="NAMESPACE.TABLE")
    p.add_argument("predicate", help="SQL text, or a JSON expression starting with '{'")
    p.add_argument("--snapshot", type=int, default=None, help="prune the files live at this snapshot")
    p.add_argument(
        "--time-zone",
        default=None,
        metavar="TZ",
        help="read timestamp literals without a zone in this time zone, as Spark's session time zone "
        "(e.g. Europe/Paris, +02:00; default UTC)",
    )
    p.add_argument("--explain", action="store_true", help="why each file is kept or pruned (a sample)")
    p.add_argument("--json", action="store_true", help="print the whole result as JSON")
    p.add_argument(
        "--sql",
        choices=["duckdb"],
        default=None,
        help="print instead a runnable query of that engine over only the candidate files, with the "
        "predicate in its SQL (Spark SQL text only; refused where no exact rendering exists)",
    )
    add_min_snapshot_argument(p)
    add_database_argument(p)


def parse_predicate(text: str, schema: TableSchema | None = None) -> BooleanExpression:
    """The predicate's tree; ``schema`` (the table's, :meth:`service.catalog.Catalog.table_schema`)
    resolves bare column names."""
    from service.cli._common import predicate_limits

    # Each parser is imported only for its own kind of text: the SQL one brings sqlglot.
    lim = predicate_limits()
    stripped = text.lstrip()
    if stripped.startswith("{"):
        from service.pruning.parse_json import decode_json, parse_json

        try:
            obj = decode_json(stripped)
        except json.JSONDecodeError as e:
            from service.errors import InvalidPredicateError

            raise InvalidPredicateError(f"predicate JSON is not valid JSON: {e}") from None
        except RecursionError:
            # Nested past the decoder's recursion (a few thousand levels), far past the limit the
            # parser would refuse it for.
            from service.errors import LimitExceededError

            raise LimitExceededError(
                f"predicate nested deeper than {lim.max_depth}", details={"limit": lim.max_depth}
            ) from None
        return parse_json(obj, schema=schema, **lim.json_keywords())
    from service.pruning.parse_sql import parse_sql

    return parse_sql(text, schema=schema, **lim.sql_keywords())


def run(args: argparse.Namespace) -> int:
    from service.cli._common import read_catalog, refused, split_table
    from service.errors import ShredcatError

    if args.sql == "duckdb":
        return _run_duckdb(args)
    try:
        from service.pruning.zones import reading_in, session_zone

        ns, table = split_table(args.table)
        text = args.predicate
        zone = session_zone(args.time_zone)

        def expr(schema: TableSchema) -> BooleanExpression:  # parsed against the table's columns
            with reading_in(zone):
                return parse_predicate(text, schema)

        with read_catalog(args) as catalog:
            first = catalog.plan(
                ns, table, expr, snapshot_id=args.snapshot, explain=args.explain, page_size=5000, counts=True,
                min_snapshot_id=args.min_snapshot_id,
            )
            pages = [first]
            token = first.next_page_token
            while token is not None:
                nxt = catalog.plan(ns, table, expr, page_size=5000, page_token=token)
                pages.append(nxt)
                token = nxt.next_page_token
    except ShredcatError as e:
        return refused("prune", e)
    candidates = [c for p in pages for c in p.candidates]
    for w in first.warnings:
        print(f"warning: {w.message}", file=sys.stderr)
    if args.json:
        out = {
            "snapshot_id": first.snapshot_id,
            "files_considered": first.files_considered,
            "files_pruned": first.files_pruned,
            "files_kept": first.files_kept,
            "rows_skipped": first.rows_skipped,
            "bytes_skipped": first.bytes_skipped,
            "candidates": [
                {"path": c.path, "file_size_bytes": c.file_size_bytes, "record_count": c.record_count} for c in candidates
            ],
        }
        out["warnings"] = _warnings_json(first.warnings)
        if first.explain is not None:
            out["explain"] = [{"path": e.path, "kept": e.kept, "reason": e.reason} for e in first.explain]
        print(json.dumps(out, ensure_ascii=False))
        return 0
    for c in candidates:
        print(c.path)
    print(
        f"{first.files_kept} of {first.files_considered} files kept, {first.files_pruned} pruned "
        f"({first.rows_skipped} rows, {first.bytes_skipped} bytes skipped) at snapshot {first.snapshot_id}",
        file=sys.stderr,
    )
    if first.explain is not None:
        for e in first.explain:
            print(f"{'KEEP ' if e.kept else 'PRUNE'} {e.path}: {e.reason}", file=sys.stderr)
    return 0


def _warnings_json(warnings: Sequence[Any]) -> list[dict[str, Any]]:
    return [
        {"type": w.type, "column": w.column, "path": w.path, "message": w.message, "suggestions": list(w.suggestions)}
        for w in warnings
    ]


def _run_duckdb(args: argparse.Namespace) -> int:
    """``--sql duckdb``: the DuckDB query on stdout (``--json``: with the candidates), counts on stderr."""
    from service.cli._common import read_catalog, refused, split_table
    from service.errors import ShredcatError

    if args.predicate.lstrip().startswith("{") or args.explain:
        print("shredcat prune: --sql duckdb takes Spark SQL text, without --explain", file=sys.stderr)
        return 2
    try:
        from service.duckdb import engine, plan_pruned

        table = split_table(args.table)
        # plan_pruned logs the plan's warnings for library callers; Python's last-resort handler
        # would print each a second time beside its ``warning:`` line.
        logging.getLogger("service.duckdb").addHandler(logging.NullHandler())
        with read_catalog(args) as catalog:
            con = engine.connect()
            try:
                scan = plan_pruned(
                    con, table, args.predicate, snapshot=args.snapshot, catalog=catalog, time_zone=args.time_zone,
                    min_snapshot_id=args.min_snapshot_id,
                )
            finally:
                con.close()
    except ShredcatError as e:
        return refused("prune", e)
    for w in scan.warnings:
        print(f"warning: {w.message}", file=sys.stderr)
    if args.json:
        out = {
            "snapshot_id": scan.snapshot_id,
            "files_considered": scan.files_total,
            "files_pruned": scan.files_pruned,
            "candidates": list(scan.paths),
            "where": scan.where,
            "sql": scan.sql,
            "warnings": _warnings_json(scan.warnings),
        }
        print(json.dumps(out, ensure_ascii=False))
        return 0
    print(scan.sql + ";")
    print(
        f"{len(scan.paths)} of {scan.files_total} files kept, {scan.files_pruned} pruned at snapshot {scan.snapshot_id}",
        file=sys.stderr,
    )
    return 0
