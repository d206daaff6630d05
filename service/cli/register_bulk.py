"""``shredcat register --bulk --table NS.TABLE PATH...``: every file as one snapshot, through
:meth:`service.catalog.Catalog.bulk_load`, for a lake of more files than one commit may take.

The files are listed as the plain register lists them, then extracted in batches of
``SHREDCAT_MAX_FILES_PER_COMMIT`` files, each only when the load asks for it: the load's memory is
the batch being written and the next one, whatever the number of files, but for the list of
paths, held whole (~160 MB per million paths; why it is not streamed: the load's file order is the
plain register's, sorted over each whole listing, and a path given twice is dropped by what was
seen: docs/benchmarks-history.md, "The list of paths of register --bulk").
The load is one transaction: a file that cannot be read or that the commit would refuse, a
conflict, Ctrl-C, stop it with nothing loaded (the plain register's errors and exit status).

A missing table is created in the load's transaction, as the plain register creates it in its
commit: with the Variant columns of every file (a later batch's too), so a failed load leaves no
table, no namespace, no snapshot (``Catalog.bulk_load(..., create=True)``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Generator
from contextlib import ExitStack, closing
from itertools import chain
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from service.catalog import Catalog
    from service.catalog.results import BulkLoadResult
    from service.stats.model import FileStats

#: The plain register's table check and batched extraction (``service.cli.register``).
CheckedCatalog = Callable[[argparse.Namespace, str, str, ExitStack], "Catalog | None"]
Extracted = Callable[[list[str], "int | None", int], Generator["list[FileStats]", None, None]]


def run_bulk(args: argparse.Namespace, *, checked_catalog: CheckedCatalog, extracted: Extracted) -> int:
    """``checked_catalog`` and ``extracted`` are the plain register's (passed in, so that this
    module, which ``service.cli.register`` runs, imports nothing of it back)."""
    from service.cli._common import normalize_source, open_created_catalog, split_table
    from service.errors import ShredcatError
    from service.storage import expand_sources

    start = time.monotonic()
    try:
        ns, table = split_table(args.table)
        with ExitStack() as opened:
            catalog = checked_catalog(args, ns, table, opened)
            sources = list(dict.fromkeys(normalize_source(p) for p in expand_sources(args.paths)))
            size = _batch_size(args, catalog)
            batches = opened.enter_context(closing(extracted(sources, args.workers, size)))
            first = next(batches, [])
            if catalog is None:  # created only now: a file of the first batch that cannot be read leaves none,
                catalog = open_created_catalog(args, opened)  # nor does a load that fails later
            result = catalog.bulk_load(ns, table, chain([first], batches), create=True)
    except ShredcatError as e:
        print(f"shredcat register: {e.message}", file=sys.stderr)
        return 1
    _report(args, f"{ns}.{table}", result, time.monotonic() - start)
    return 0


def _batch_size(args: argparse.Namespace, catalog: Catalog | None) -> int:
    if catalog is not None:
        return catalog.limits.max_files_per_commit
    from service.cli._common import catalog_settings

    return catalog_settings(args.database_url)[1].max_files_per_commit


def _report(args: argparse.Namespace, name: str, result: BulkLoadResult, seconds: float) -> None:
    files = result.added + result.unchanged
    rate = files / seconds if seconds > 0 else 0.0
    if args.json:
        out = {
            "snapshot_id": result.snapshot_id,
            "added": result.added,
            "unchanged": result.unchanged,
            "batches": result.batches,
            "created": result.created,
            "seconds": round(seconds, 3),
            "files_per_second": round(rate, 1),
        }
        print(json.dumps(out))
        return
    snap = "no new snapshot" if result.snapshot_id is None else f"snapshot {result.snapshot_id}"
    if result.created:
        snap += ", table created"
    print(
        f"{name}: {result.added} added, {result.unchanged} unchanged in {result.batches} batches ({snap}); "
        f"{seconds:.1f} s, {rate:.0f} files/s"
    )
