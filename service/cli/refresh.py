"""``shredcat refresh --table NS.TABLE [--workers N] [--json]``: plain-column statistics and
partition values for the live files that have none.

Tables registered before schema 0003 (``shredcat migrate`` adds the tables, not the rows) get
them this way: every live file without such rows is read again (its footer only, in worker
processes for many files) and the rows are added **in place** in one transaction (no new
snapshot; each row begins at its file's own snapshot; Variant statistics untouched). A file that
cannot be read, that changed since it was committed, or whose partition directories conflict
with the table's fails the whole refresh (exit 2; 1 for a database error), and nothing is written. Running it again adds
nothing.

``shredcat refresh --table NS.TABLE --canonical-paths``: the table's live object-store paths in
their canonical form (catalogs written before one object had one path: ``s3a://``, ``gcs://``,
``abfss://``, ``az://`` spellings). One new snapshot ends each non-canonical row; a path whose
canonical twin is live too is ended only (the object was registered twice: counts drop back to
once), any other comes back under its canonical path with the stats it had (nothing is read).
Running it again changes nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from service.cli._common import add_database_argument


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--table", required=True, help="NAMESPACE.TABLE")
    p.add_argument("--workers", type=int, default=None, help="extraction processes (default: CPU count)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument(
        "--canonical-paths",
        action="store_true",
        help="store the table's object-store paths in their canonical form (s3a:// -> s3://...), merging duplicates",
    )
    add_database_argument(p)


def canonical_paths(catalog: Any, ns: str, table: str) -> dict[str, Any]:
    """Commits that make the table's live paths canonical (see the module's docstring): each
    within ``SHREDCAT_MAX_FILES_PER_COMMIT`` files, each atomic (a renamed file is added and its old
    path ended in the same snapshot), so a lake of any size is refreshed and no file is ever
    missing between them."""
    from dataclasses import replace

    from service.storage.objects import canonical_moves

    live: list[str] = []
    after = None
    while page := catalog.list_files(ns, table, after=after, limit=5000):
        live.extend(f.path for f in page)
        after = page[-1].path
    drop, rename = canonical_moves(live)
    step = catalog.limits.max_files_per_commit
    drops, olds = list(drop), list(rename)
    while drops or olds:  # as few commits as the limit allows: one for most tables
        chunk, olds = olds[:step], olds[step:]
        room = step - len(chunk)
        ended, drops = drops[:room], drops[room:]
        moved = [replace(catalog.file_stats(ns, table, old), path=rename[old]) for old in chunk]
        catalog.commit(ns, table, moved, remove=[*ended, *chunk])
    return {"table": f"{ns}.{table}", "dropped": drop, "renamed": rename}


def run(args: argparse.Namespace) -> int:
    from service.cli._common import open_catalog, split_table
    from service.cli.register import _extract_all
    from service.errors import ShredcatError

    try:
        ns, table = split_table(args.table)
        with open_catalog(args) as catalog:
            if args.canonical_paths:
                moves = canonical_paths(catalog, ns, table)
                print(json.dumps(moves) if args.json else
                      f"{moves['table']}: {len(moves['renamed'])} paths made canonical, {len(moves['dropped'])} duplicates ended")  # fmt: skip
                return 0
            result = catalog.refresh(ns, table, read_all=lambda paths: _extract_all(list(paths), args.workers))
    except ShredcatError as e:
        print(f"shredcat refresh: {e.message}", file=sys.stderr)
        return 2 if e.http_status < 500 else 1
    if args.json:
        print(
            json.dumps(
                {
                    "table": result.table,
                    "read": result.read,
                    "refreshed": result.refreshed,
                    "without_columns": result.without_columns,
                }
            )
        )
    else:
        print(
            f"{result.table}: {result.refreshed} files given plain-column statistics and partition values "
            f"({result.read} read, {result.without_columns} without such columns)"
        )
    return 0
