"""Register what a Spark job wrote: exactly the files of that write, as one commit.

``write_and_register(df, "/lake/events", "lake.events", client=c)`` lists the table's directory,
writes ``df`` as Parquet (Variant columns are shredded by Spark's writer), lists again, and
commits the new data files, nothing else: not files that were there before (earlier jobs,
other tables' files), not ``_SUCCESS``, ``.crc``, ``_temporary/`` or other hidden files. All new
files must come from one Spark write job (their names carry its UUID); files of another job that
appeared meanwhile are never registered (a concurrent writer of the same job kind in the same
directory is an error, since its files cannot be told apart).

Registration is by path (the service reads the footers; the directory must be inside its
``SHREDCAT_WAREHOUSE_ROOTS``) or with client-side statistics (``client_stats=True``: extracted
on the Spark executors, or on the driver for a few files, with shredcat's own extractor). The
commit carries a deterministic ``Idempotency-Key`` (table + the new paths), so repeating the
registration of one write is applied once.

With ``mode="overwrite"`` Spark deletes the directory's files first: the ones that vanished are
removed from the table in the commit that adds the new files (one snapshot: a reader of the table
sees the old files or the new ones, never an empty table between the two). Only when the server
refuses that many paths in one request (413) are they removed first, in chunks, each a snapshot.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from service.spark._common import (
    SPARK_PART_FILE,
    chunks,
    client_for,
    idempotency_key,
    split_table,
)
from service.storage import list_data_files

if TYPE_CHECKING:
    from service.client import CommitResult, ShredcatClient

__all__ = ["WriteResult", "register_written", "variant_columns_of", "write_and_register"]

log = logging.getLogger("service.spark")

#: Below this many files, client-side statistics are extracted on the driver (a Spark job costs more).
DRIVER_EXTRACT_MAX = 16
REMOVE_CHUNK = 1000


@dataclass(frozen=True, slots=True)
class WriteResult:
    #: The files this write produced (and registered), sorted.
    paths: tuple[str, ...]
    #: The commit (None when the write neither produced nor replaced a file).
    commit: CommitResult | None
    #: Files that vanished from the directory during the write (overwrite) and were removed from the table.
    removed: tuple[str, ...] = ()
    #: New files of other writers that were left alone.
    ignored: tuple[str, ...] = ()


def variant_columns_of(schema: Any, prefix: str = "") -> list[str]:
    """The Variant columns of a Spark schema (dotted names for Variants inside structs)."""
    from pyspark.sql.types import StructType, VariantType

    out: list[str] = []
    for f in schema.fields:
        name = prefix + f.name
        if isinstance(f.dataType, VariantType):
            out.append(name)
        elif isinstance(f.dataType, StructType):
            out.extend(variant_columns_of(f.dataType, name + "."))
    return out


def extract_payloads(spark: Any, paths: Sequence[str]) -> list[dict[str, Any]]:
    """Client-side statistics of ``paths`` (commit JSON), on the executors for many files.
    Raises on the first file that cannot be extracted."""
    from service.client import file_stats_payload
    from service.stats.batch import extract_all

    if spark is None or len(paths) <= DRIVER_EXTRACT_MAX:
        return [file_stats_payload(fs) for fs in extract_all(paths)]  # object-store files overlapped
    from service.spark.backfill import extract_on_executors

    out = []
    for path, payload, error in extract_on_executors(spark, paths):
        if error is not None:
            raise RuntimeError(f"cannot extract the statistics of {path}: {error}")
        out.append(payload)
    return out


def _job_files(new: Iterable[str]) -> tuple[list[str], list[str]]:
    """Split new files into those of one Spark write job and the others; more than one job: error."""
    by_job: dict[str, list[str]] = {}
    others = []
    for p in new:
        m = SPARK_PART_FILE.match(p.rsplit("/", 1)[-1])
        if m is None:
            others.append(p)
        else:
            by_job.setdefault(m.group(1).lower(), []).append(p)
    if len(by_job) > 1:
        raise RuntimeError(
            f"files of {len(by_job)} Spark write jobs appeared during this write ({sorted(by_job)}): "
            "another job wrote into the same directory concurrently; nothing was registered"
        )
    ours = next(iter(by_job.values()), [])
    return sorted(ours), sorted(others)


def register_written(
    root: str,
    table: str | tuple[str, str],
    before: Iterable[str],
    *,
    client: ShredcatClient | None = None,
    url: str | None = None,
    token: str | None = None,
    client_stats: bool = False,
    spark: Any = None,
    variant_columns: Sequence[str] | None = None,
    remove_vanished: bool = True,
) -> WriteResult:
    """Register the files of the Spark write that just went into ``root``: those listed now and
    not in ``before`` (the listing of :func:`~service.storage.list_data_files` taken before the
    write). A missing table is created by the commit (``variant_columns``, else those of the new files)."""
    ns, name = split_table(table)
    before_set = set(before)
    after = list_data_files(root)
    ours, others = _job_files(p for p in after if p not in before_set)
    if others:
        log.warning("%s: %d new files were not written by this Spark job and are left alone", root, len(others))
    vanished = sorted(before_set - set(after))
    with client_for(client, url, token) as c:
        # A missing table is created by the commit itself (its own transaction), so a refused
        # commit leaves no empty table behind.
        create: bool | list[str] = (list(variant_columns) if variant_columns else True) if ours else False
        gone = vanished if remove_vanished else []
        if not ours and not gone:
            return WriteResult((), None, (), tuple(others))
        # The removals are part of the request, so of its key: two overwrites that produced the
        # same files (or none) but replaced different ones are different commits.
        salt = hashlib.sha256("\n".join(gone).encode()).hexdigest() if gone else ""
        key = idempotency_key("write", ns, name, ours, salt=salt)
        given: dict[str, Any] = {}
        if ours:
            given = {"files": extract_payloads(spark, ours)} if client_stats else {"paths": ours}
        from service.client.errors import PayloadTooLarge

        removed: tuple[str, ...] = ()
        try:
            result = c.commit(
                ns, name, **given, remove=gone, remove_missing_ok=True, idempotency_key=key, create_if_missing=create
            )
            removed = result.removed
        except PayloadTooLarge as e:
            if not gone:
                raise
            limit = e.details.get("limit")
            size = min(REMOVE_CHUNK, limit) if isinstance(limit, int) and limit > 0 else REMOVE_CHUNK
            log.warning(
                "%s.%s: the server refused %d new and %d replaced files in one commit (%s); the replaced files are "
                "removed first, in chunks of %d (readers may see the table without them meanwhile)",
                ns, name, len(ours), len(gone), e, size,
            )  # fmt: skip
            from service.client import NotFound

            try:
                parts = [c.remove_files(ns, name, list(part), missing_ok=True).removed for part in chunks(gone, size)]
            except NotFound:
                if not create:
                    raise
                parts = []  # no table yet, so nothing to remove: the commit below creates it
            removed = tuple(p for part in parts for p in part)
            if not ours:
                return WriteResult((), None, removed, tuple(others))
            result = c.commit(
                ns, name, **given, idempotency_key=idempotency_key("write", ns, name, ours), create_if_missing=create
            )
    log.info(
        "%s.%s: registered %d files written to %s, replacing %d (snapshot %s)",
        ns, name, len(ours), root, len(removed), result.snapshot_id,
    )  # fmt: skip
    return WriteResult(tuple(ours), result, removed, tuple(others))


def write_and_register(
    df: Any,
    path: str,
    table: str | tuple[str, str],
    *,
    client: ShredcatClient | None = None,
    url: str | None = None,
    token: str | None = None,
    mode: str = "append",
    partition_by: Sequence[str] | None = None,
    options: dict[str, str] | None = None,
    client_stats: bool = False,
) -> WriteResult:
    """Write ``df`` as Parquet to ``path`` (``mode``: append, overwrite, error, ignore) and
    register exactly the files this write produced as one commit of ``table`` (``"ns.table"``,
    created with ``df``'s Variant columns when missing). See the module docstring."""
    before = list_data_files(path)
    writer = df.write.mode(mode)
    if partition_by:
        writer = writer.partitionBy(*partition_by)
    if options:
        writer = writer.options(**options)
    writer.parquet(path)
    return register_written(
        path,
        table,
        before,
        client=client,
        url=url,
        token=token,
        client_stats=client_stats,
        spark=df.sparkSession,
        variant_columns=variant_columns_of(df.schema) or None,
    )
