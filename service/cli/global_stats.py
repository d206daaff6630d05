"""``shredcat global-stats --table NS.TABLE``: the table's global Variant stats, DuckLake's JSON.

Prints one line per Variant column: ``{"column": ..., "extra_stats": <the JSON array or null>}``.
"""

from __future__ import annotations

import argparse
import json

from service.cli._common import add_database_argument


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--table", required=True, help="NAMESPACE.TABLE")
    add_database_argument(p)


def run(args: argparse.Namespace) -> int:
    from service.cli._common import open_catalog, refused, split_table
    from service.errors import ShredcatError

    try:
        ns, table = split_table(args.table)
        with open_catalog(args) as catalog:
            per_column = catalog.global_stats_json(ns, table)
    except ShredcatError as e:
        return refused("global-stats", e)
    for column, extra in per_column.items():
        print(json.dumps({"column": column, "extra_stats": None if extra is None else json.loads(extra)}, ensure_ascii=False))
    return 0
