"""``shredcat register --bulk --table NS.TABLE PATH...``: every file as one snapshot, through
:meth:`service.catalog.Catalog.bulk_load`, for a lake of more files than one commit may take.

The files are listed as the plain register lists them, then extracted in batches of
``SHREDCAT_MAX_FILES_PER_COMMIT`` files, each only when the load asks for it: the load's memory is
the batch being written and the next one, whatever the number of files (the list of paths aside).
The load is one transaction: a file that cannot be read or that the commit would refuse, a
conflict, Ctrl-C, stop it with nothing loaded (the plain register's errors and exit status).

A missing table is created first, in its own step, as the plain register would create it in its
commit (:func:`service.catalog.creation.create_columns`, here over the first batch: the load then
refuses a file of a later batch with another Variant column, as a commit into that table would),
and dropped again if the load fails (with its namespace if this run created that too): a failed
plain register leaves no table either. A table another writer committed to meanwhile is left.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Generator
from contextlib import ExitStack, closing
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from service.catalog import Catalog
    from service.catalog.results import BulkLoadResult
    from service.stats.model import FileStats

#: The plain register's table check and batched extraction (``service.cli.register``).
CheckedCatalog = Callable[[argparse.Namespace, str, str, ExitStack], "Catalog | None"]
Extracted = Callable[[list[str], "int | None", int], Generator["list[FileStats]", None, None]]


@dataclass(frozen=True)
class Created:
    """The table this run created for its load: what tells it is still as created."""

    table_id: int
    snapshot_id: int
    namespace_created: bool


def run_bulk(args: argparse.Namespace, *, checked_catalog: CheckedCatalog, extracted: Extracted) -> int:
    """``checked_catalog`` and ``extracted`` are the plain register's (passed in, so that this
    module, which ``service.cli.register`` runs, imports nothing of it back)."""
    from service.cli._common import normalize_source, open_catalog, split_table
    from service.errors import ShredcatError
    from service.storage import expand_sources

    start = time.monotonic()
    created: Created | None = None
    try:
        ns, table = split_table(args.table)
        with ExitStack() as opened:
            catalog = checked_catalog(args, ns, table, opened)
            sources = list(dict.fromkeys(normalize_source(p) for p in expand_sources(args.paths)))
            size = _batch_size(args, catalog)
            batches = opened.enter_context(closing(extracted(sources, args.workers, size)))
            first = next(batches, [])
            if catalog is None:  # created only now: a file of the first batch that cannot be read leaves none
                catalog = opened.enter_context(open_catalog(args))
            created = create_missing(catalog, ns, table, first)
            try:
                result = catalog.bulk_load(ns, table, chain([first], batches))
            except BaseException:
                if created is not None:
                    undo_create(catalog, ns, table, created)
                raise
    except ShredcatError as e:
        print(f"shredcat register: {e.message}", file=sys.stderr)
        return 1
    _report(args, f"{ns}.{table}", result, created is not None, time.monotonic() - start)
    return 0


def _batch_size(args: argparse.Namespace, catalog: Catalog | None) -> int:
    if catalog is not None:
        return catalog.limits.max_files_per_commit
    from service.cli._common import catalog_settings

    return catalog_settings(args.database_url)[1].max_files_per_commit


def create_missing(catalog: Catalog, ns: str, table: str, first: list[FileStats]) -> Created | None:
    """Create the table when it is missing, with the columns the plain register's commit would
    give it from these files; None when it exists (or another writer created it meanwhile: not
    this run's to drop)."""
    from service.catalog.creation import create_columns
    from service.errors import AlreadyExistsError, NotFoundError

    try:
        catalog.get_table(ns, table, primary=True)
        return None
    except NotFoundError:
        pass
    columns = create_columns(first, True) or ()
    namespace_existed = any(n.name == ns for n in catalog.list_namespaces())
    try:
        info = catalog.create_table(ns, table, columns)
    except AlreadyExistsError:
        return None
    shown = ", ".join(columns) or "none"
    print(
        f"shredcat register: created table {ns}.{table} (Variant columns: {shown}) for the load; "
        "it is dropped again if the load fails",
        file=sys.stderr,
    )
    return Created(info.table_id, info.current_snapshot_id, not namespace_existed)


def undo_create(catalog: Catalog, ns: str, table: str, created: Created) -> None:
    """Drop the table ``created`` (and its namespace, if created with it) after a failed load,
    unless another writer has changed it since (then it is theirs too)."""
    from service.errors import ShredcatError

    try:
        info = catalog.get_table(ns, table, primary=True)
        if (info.table_id, info.current_snapshot_id, info.live_file_count) != (created.table_id, created.snapshot_id, 0):
            return
        catalog.drop_table(ns, table)
        if created.namespace_created and not catalog.list_tables(ns):
            catalog.drop_namespace(ns)
    except ShredcatError as e:
        print(f"shredcat register: the table created for the load could not be dropped: {e.message}", file=sys.stderr)


def _report(args: argparse.Namespace, name: str, result: BulkLoadResult, created: bool, seconds: float) -> None:
    files = result.added + result.unchanged
    rate = files / seconds if seconds > 0 else 0.0
    if args.json:
        out = {
            "snapshot_id": result.snapshot_id,
            "added": result.added,
            "unchanged": result.unchanged,
            "batches": result.batches,
            "created": created,
            "seconds": round(seconds, 3),
            "files_per_second": round(rate, 1),
        }
        print(json.dumps(out))
        return
    snap = "no new snapshot" if result.snapshot_id is None else f"snapshot {result.snapshot_id}"
    print(
        f"{name}: {result.added} added, {result.unchanged} unchanged in {result.batches} batches ({snap}); "
        f"{seconds:.1f} s, {rate:.0f} files/s"
    )
