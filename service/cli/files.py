"""``shredcat files --table NS.TABLE [--snapshot N] [--prefix P] [--json]``: the live files."""

from __future__ import annotations

import argparse
import json

from service.cli._common import add_database_argument, add_min_snapshot_argument


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--table", required=True, help="NAMESPACE.TABLE")
    p.add_argument("--snapshot", type=int, default=None, help="files live at this snapshot (default: now)")
    p.add_argument("--prefix", default=None, help="only paths starting with this prefix")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    add_min_snapshot_argument(p)
    add_database_argument(p)


def run(args: argparse.Namespace) -> int:
    from service.cli._common import read_catalog, refused, split_table
    from service.errors import ShredcatError

    try:
        ns, table = split_table(args.table)
        with read_catalog(args) as catalog:
            after = None
            while True:
                page = catalog.list_files(
                    ns, table, snapshot=args.snapshot, prefix=args.prefix, after=after, limit=5000,
                    min_snapshot_id=args.min_snapshot_id,
                )
                for f in page:
                    if args.json:
                        print(
                            json.dumps(
                                {
                                    "path": f.path,
                                    "file_size_bytes": f.file_size_bytes,
                                    "record_count": f.record_count,
                                    "footer_size": f.footer_size,
                                    "begin_snapshot": f.begin_snapshot,
                                    "end_snapshot": f.end_snapshot,
                                }
                            )
                        )
                    else:
                        print(f.path)
                if len(page) < 5000:
                    break
                after = page[-1].path
    except ShredcatError as e:
        return refused("files", e)
    return 0
