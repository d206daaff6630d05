"""A bulk load: many batches of files into one table as **one** snapshot, in one transaction
(:meth:`service.catalog.Catalog.bulk_load` drives it).

It leaves what committing the same batches in order through :meth:`~service.catalog.Catalog.commit`
would leave (files, stats rows with their typed keys, plain and partition columns, the path
dictionary's counters and widths, zones, object shapes, the table's counters, global stats), except
that all of it begins at one snapshot, whose ``added_files`` counts every file added. Each batch
takes the commit's own steps (:func:`~.request.check_request`, then :func:`~.steps.resolve_table`,
:func:`~.steps.validate_layout`, :func:`~.steps.detect_conflicts` and the repository's row writes),
so a bad file or a conflicting path is the same typed error, and nothing of the load stays.

What it saves against one commit per batch: a transaction, a snapshot and a global-stats rewrite
per batch, and the wait for the database: the next batch is read, validated and encoded in a
second thread while PostgreSQL takes the rows of the current one (the driver waits outside the
GIL). Indexes are kept: see :meth:`~service.catalog.Catalog.bulk_load` for why.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace

from sqlalchemy import Connection, update

from service.catalog import models as m
from service.catalog import repository as repo
from service.catalog.commit.request import CommitRequest
from service.catalog.commit.steps import Resolved, detect_conflicts, resolve_table, validate_layout
from service.catalog.creation import creation_forbidden, insert_table
from service.catalog.db import analyze_grown
from service.catalog.results import BulkLoadResult
from service.catalog.validate import check_object_name, check_table_totals
from service.errors import AlreadyExistsError
from service.stats.merge import GlobalStatsAccumulator, from_ducklake_json


def prefetched(requests: Iterator[CommitRequest]) -> Generator[CommitRequest, None, None]:
    """``requests``, each computed in a second thread while the caller writes the previous one."""
    with ThreadPoolExecutor(1, thread_name_prefix="shredcat-bulk") as pool:

        def ahead() -> Future[CommitRequest | None]:
            return pool.submit(next, requests, None)

        nxt = ahead()
        while (req := nxt.result()) is not None:
            nxt = ahead()
            yield req


@dataclass
class _Load:
    """The load so far: its snapshot (taken at the first new file), the table as the last batch
    left it, the global stats before the load and the batches' own merged into them, the counts."""

    snapshot_id: int | None = None
    table: repo.TableRow | None = None
    old_json: dict[str, str | None] | None = None
    merged: GlobalStatsAccumulator | None = None
    added: int = 0
    unchanged: int = 0
    batches: int = 0
    #: Whether the load created its table (None: not known yet, the table not looked up).
    created: bool | None = None


def run_bulk(conn: Connection, requests: Iterable[CommitRequest]) -> BulkLoadResult:
    """Every request's files in ``conn``'s transaction, at one snapshot (see the module)."""
    load = _Load()
    for req in requests:
        load.batches += 1
        if req.creating is None and req.may_create and not req.batch:
            continue  # an empty batch of a load that may create its table: nothing to create it for
        if load.created is None:
            load.created = req.creating is not None and _creates(conn, req)
        r = resolve_table(conn, req)  # read again: the previous batch's columns and counters
        if load.created and req.creating:
            r = _with_columns(conn, r, req.creating)
        matched = detect_conflicts(conn, r, validate_layout(conn, req, r))
        load.unchanged += len(matched.same)
        if matched.new:
            _add(conn, r, matched.new, load)
            if conn.dialect.name == "postgresql":
                # No commit in between runs analyze_if_grown: without it the next batches' probes
                # are planned on the empty tables' guesses and read every live file per path.
                analyze_grown(conn)
    if load.snapshot_id is not None:
        _finish(conn, load)
    if load.created and load.table is not None:
        repo.order_columns_as_created(conn, load.table.table_id)
    return BulkLoadResult(load.snapshot_id, load.added, load.unchanged, load.batches, bool(load.created))


def _creates(conn: Connection, req: CommitRequest) -> bool:
    """Create the load's table when it is missing; whether this load created it. Decided under
    the namespace's lock, where a commit creates its table: a table another writer created (and
    committed) meanwhile is theirs, and is never given this load's columns."""
    assert req.creating is not None
    if repo.find_table(conn, req.namespace, req.table) is not None:
        return False
    if not req.may_create:
        raise creation_forbidden(req.namespace, req.table)
    check_object_name("namespace", req.namespace)
    check_object_name("table", req.table)
    try:
        insert_table(conn, req.namespace, req.table, req.creating, (), None, if_not_exists=False)
    except AlreadyExistsError:
        return False
    return True


def _with_columns(conn: Connection, r: Resolved, variant: Sequence[str]) -> Resolved:
    """The batch's table with the Variant columns it brings and the table lacks: a table the load
    created gets those of every batch, as one commit of all the files would create it (its plain
    and partition columns come with the files, as in any commit; the places of all of them are
    set at the end, as that commit would have set them)."""
    missing = [c for c in variant if c not in r.table.columns]
    return replace(r, table=repo.add_variant_columns(conn, r.table, missing)) if missing else r


def _add(conn: Connection, r: Resolved, new: Sequence[int], load: _Load) -> None:
    """Add the batch's new files (indexes into it) at the load's snapshot, as a commit adds them."""
    t = r.table
    check_table_totals(t.qualified_name, t.live_record_count, t.live_bytes, [r.batch[i] for i in new])
    if load.snapshot_id is None:
        load.snapshot_id = repo.new_snapshot(conn, t.table_id, f"inserted_into_table:{t.table_id}")
        load.old_json = repo.read_global_json(conn, t)
        load.merged = GlobalStatsAccumulator(from_ducklake_json(t.live_file_count, load.old_json))
    assert load.merged is not None
    adding = r.prepared if len(new) == len(r.batch) else r.prepared.subset(new)
    t = repo.add_file_columns(conn, t, load.snapshot_id, adding.files)
    repo.add_files(conn, t, load.snapshot_id, adding)
    load.merged.merge(adding.aggregate)
    load.added += len(adding.files)
    load.table = t


def _finish(conn: Connection, load: _Load) -> None:
    """The snapshot's count of added files and the table's global stats, once for the load."""
    assert load.snapshot_id is not None and load.table is not None
    assert load.merged is not None and load.old_json is not None
    conn.execute(
        update(m.Snapshot).where(m.Snapshot.snapshot_id == load.snapshot_id).values(added_files=load.added)
    )
    t = load.table
    repo.write_global_json(conn, t, load.merged.freeze().column_json(t.columns), load.old_json)
