"""``shredcat register --table NS.TABLE PATH...``: extract and commit the files as one snapshot.

A directory or object-store prefix stands for its data files (:func:`service.storage.expand_sources`).

The table is created when it does not exist, with the Variant columns found in the files. A file
already live with the same content whose stored stats differ from the extraction is restated.
``--remove OLD`` (repeatable) ends live files in the same snapshot: a compaction's new file and
the files it replaces change together, and a reader sees the table before or after, never between.
Extraction runs in worker processes for many local files, and on threads with
``SHREDCAT_OBJECT_STORE_CONCURRENCY`` requests in flight for object-store files; the commit is one
transaction: a file that cannot be extracted fails the whole registration.

``--bulk`` takes any number of files through ``Catalog.bulk_load`` instead
(:mod:`service.cli.register_bulk`); both extract by :func:`_extracted`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Generator, Iterable, Iterator
from contextlib import ExitStack
from itertools import islice
from typing import TYPE_CHECKING, TypeVar

from service.cli._common import add_database_argument

if TYPE_CHECKING:  # the CLI's start-up imports no extractor
    from service.catalog import Catalog
    from service.stats.model import FileStats

T = TypeVar("T")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--table", required=True, help="NAMESPACE.TABLE (created if missing)")
    p.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="Parquet files, directories or prefixes (local paths or object-store URIs such as s3://bucket/lake/; a URI ending in / "
        "or not in .parquet is a prefix): a directory means its data files, listed as Spark does",
    )
    p.add_argument("--workers", type=int, default=None, help="extraction processes (default: CPU count)")
    p.add_argument("--idempotency-key", default=None, help="replaying a key returns the original result")
    p.add_argument(
        "--remove",
        action="append",
        default=[],
        metavar="OLD",
        help="a live file of the table to end in the same snapshot (repeatable; one not live fails the whole "
        "registration, unless --remove-missing-ok)",
    )
    p.add_argument(
        "--remove-missing-ok", action="store_true", help="report --remove paths that are not live instead of failing"
    )
    p.add_argument(
        "--bulk",
        action="store_true",
        help="load every file as one snapshot through the bulk path (Catalog.bulk_load), in batches of "
        "SHREDCAT_MAX_FILES_PER_COMMIT files extracted as the load takes them: for a lake of more files than one "
        "commit may take; one transaction for the whole load (not with --remove or --idempotency-key)",
    )
    p.add_argument("--json", action="store_true", help="print the commit result as JSON")
    add_database_argument(p)


def _batched(items: Iterable[T], size: int) -> Iterator[list[T]]:
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


def _extracted(sources: list[str], workers: int | None, size: int) -> Generator[list[FileStats], None, None]:
    """The sources' stats, extracted in order, in batches of ``size``: each batch only when the
    caller asks for it (a bulk load's memory is one batch and the next, whatever the lake's size).
    Object-store files overlap their round trips on threads; many local files are extracted in
    worker processes (their cost is CPU), a batch at a time."""
    import os
    from functools import partial

    from service.cli._common import Progress
    from service.errors import ShredcatError
    from service.settings import get_settings
    from service.stats.batch import process_pool
    from service.stats.extract import extract_file
    from service.storage.objects import is_remote

    settings = get_settings()
    extract = partial(extract_file, max_footer_bytes=settings.max_footer_bytes, limits=settings.file_limits)
    progress = Progress(len(sources), "extracting")
    n = workers if workers is not None else min(os.cpu_count() or 1, 8)
    if any(is_remote(s) for s in sources):
        from service.stats.batch import extract_many

        # extract_many reads a bounded window ahead of what is taken from it.
        stream = extract_many(sources, extract=extract)
        try:
            for chunk in _batched(stream, size):
                batch: list[FileStats] = []
                for _, fs in chunk:
                    if isinstance(fs, ShredcatError):
                        raise fs
                    batch.append(fs)
                progress.step(len(chunk))
                yield batch
        finally:
            stream.close()
        return
    if n <= 1 or len(sources) < 64:
        for names in _batched(sources, size):
            out = []
            for s in names:
                out.append(extract(s))
                progress.step()
            yield out
        return
    with process_pool(n) as pool:
        for names in _batched(sources, size):
            out = []
            for fs in pool.imap(extract, names, chunksize=32):
                out.append(fs)
                progress.step()
            yield out


def _extract_all(sources: list[str], workers: int | None) -> list[FileStats]:
    """Every source's stats, in order (one batch: a commit takes them all at once)."""
    return [f for batch in _extracted(sources, workers, max(len(sources), 1)) for f in batch]


def _checked_catalog(args: argparse.Namespace, ns: str, table: str, opened: ExitStack) -> Catalog | None:
    """The catalog, opened (in ``opened``) to check what would refuse the commit whatever the files
    hold before any file is read (an extraction may take hours): an unreachable catalog, one not
    migrated (or by a newer shredcat), the name of a table to create. The commit then uses it:
    one engine and one schema check per run, but no connection held while the files are
    extracted (:func:`_idle`). None for an embedded SQLite catalog
    that does not exist yet, which is not created here (a file that cannot be read leaves none
    behind): the table is new there."""
    import os

    from service.catalog.db import normalize_url
    from service.catalog.validate import check_object_name
    from service.cli._common import catalog_settings, open_catalog
    from service.errors import NotFoundError

    url = normalize_url(catalog_settings(args.database_url)[0])
    embedded = url.get_backend_name() == "sqlite" and (
        url.database in (None, "", ":memory:") or not os.path.exists(url.database)
    )
    catalog = None if embedded else opened.enter_context(open_catalog(args))
    if catalog is not None:
        try:
            catalog.get_table(ns, table, primary=True)
        except NotFoundError:
            pass
        else:
            return _idle(catalog)
    # Checked as the commit checks a table it creates (an existing one keeps the name it has).
    check_object_name("namespace", ns)
    check_object_name("table", table)
    return None if catalog is None else _idle(catalog)


def _idle(catalog: Catalog) -> Catalog:
    """``catalog`` with no connection open: the extraction that follows may take hours, and a
    pooled connection kept for the commit would hold a PostgreSQL session slot (and SQLite's file)
    all that time; the commit connects again."""
    catalog.engine.dispose()
    return catalog


#: Options --bulk does not take: a bulk load only adds files, and is not replayed.
BULK_EXCLUDES = (("remove", "--remove"), ("remove_missing_ok", "--remove-missing-ok"), ("idempotency_key", "--idempotency-key"))


def run(args: argparse.Namespace) -> int:
    if args.bulk:
        given = [flag for attr, flag in BULK_EXCLUDES if getattr(args, attr)]
        if given:
            print(f"shredcat register: --bulk cannot be combined with {', '.join(given)}", file=sys.stderr)
            return 2
        from service.cli.register_bulk import run_bulk

        return run_bulk(args, checked_catalog=_checked_catalog, extracted=_extracted)
    return _run_commit(args)


def _run_commit(args: argparse.Namespace) -> int:
    from service.cli._common import normalize_source, open_created_catalog, split_table
    from service.errors import ShredcatError
    from service.storage import expand_sources

    try:
        ns, table = split_table(args.table)
        with ExitStack() as opened:
            catalog = _checked_catalog(args, ns, table, opened)
            sources = list(dict.fromkeys(normalize_source(p) for p in expand_sources(args.paths)))
            files = _extract_all(sources, args.workers)
            if catalog is None:  # created only now: a file that cannot be read leaves none behind,
                catalog = open_created_catalog(args, opened)  # nor does a commit that fails
            # Extracted here from the files: a live file whose stored stats differ is restated.
            # A missing table is created in the commit's transaction.
            result = catalog.register(
                ns,
                table,
                sources,
                extract_all=lambda _: files,
                idempotency_key=args.idempotency_key,
                remove=[normalize_source(p) for p in args.remove],
                remove_missing_ok=args.remove_missing_ok,
            )
    except ShredcatError as e:
        print(f"shredcat register: {e.message}", file=sys.stderr)
        return 1
    if args.json:
        print(
            json.dumps(
                {
                    "snapshot_id": result.snapshot_id,
                    "added": list(result.added),
                    "unchanged": list(result.unchanged),
                    "restated": list(result.restated),
                    "replayed": result.replayed,
                    "removed": list(result.removed),
                    "missing": list(result.missing),
                }
            )
        )
    else:
        snap = "no new snapshot" if result.snapshot_id is None else f"snapshot {result.snapshot_id}"
        restated = f", {len(result.restated)} restated" if result.restated else ""
        removed = f", {len(result.removed)} removed" if result.removed else ""
        missing = f", {len(result.missing)} to remove not live" if result.missing else ""
        print(
            f"{ns}.{table}: {len(result.added)} added, {len(result.unchanged)} unchanged{restated}{removed}{missing} ({snap})"
        )
    return 0
