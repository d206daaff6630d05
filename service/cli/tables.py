"""``shredcat tables [--json]``: every table with its live file count, rows and bytes, and its
columns: ``name type`` each, comma-separated (a partition column marked ``partition``); under
``--json`` as ``columns`` objects ``{"name", "type", "kind"}`` (``variant``, ``plain`` or
``partition``)."""

from __future__ import annotations

import argparse
import json

from service.cli._common import add_database_argument, add_min_snapshot_argument


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    add_min_snapshot_argument(p)
    add_database_argument(p)


def run(args: argparse.Namespace) -> int:
    from service.cli._common import read_catalog, refused
    from service.errors import ShredcatError

    try:
        with read_catalog(args) as catalog:
            tables = catalog.list_tables(min_snapshot_id=args.min_snapshot_id)
    except ShredcatError as e:
        return refused("tables", e)
    for t in tables:
        if args.json:
            print(
                json.dumps(
                    {
                        "table": t.qualified_name,
                        "variant_columns": list(t.variant_columns),
                        "files": t.live_file_count,
                        "rows": t.live_record_count,
                        "bytes": t.live_bytes,
                        "snapshot_id": t.current_snapshot_id,
                        "snapshots": t.snapshot_count,
                        "columns": [{"name": c.name, "type": c.type, "kind": c.kind} for c in t.columns],
                        "partition_columns": list(t.partition_columns),
                    }
                )
            )
        else:
            cols = ", ".join(
                f"{c.name} {c.type}" + (" partition" if c.kind == "partition" else "") for c in t.columns
            )
            print(
                f"{t.qualified_name}\t{t.live_file_count} files\t{t.live_record_count} rows\t{t.live_bytes} bytes"
                f"\t{cols}"
            )
    return 0
