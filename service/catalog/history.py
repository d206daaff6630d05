"""What the admin dashboard reads beyond the catalog's API: a table's size per snapshot, a path's
types over time, a files page by number, paths for completion (the dashboard itself holds no SQL). Each runs through the catalog's read
boundary (:meth:`Catalog._read`: a standby when fit) and is bounded (a ``LIMIT``, or a ``GROUP
BY`` whose rows are snapshots or types, never files)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from service.catalog import models as m
from service.catalog import repository as repo
from service.catalog.admin import admin_reads
from service.catalog.repository.common import VP, D, aware
from service.catalog.repository.reads import FILE_INFO_COLUMNS, file_filter, file_info, like_pattern

if TYPE_CHECKING:
    from sqlalchemy import Connection

    from service.catalog import Catalog, DataFileInfo

#: Snapshots drawn in a table's history chart at most (the newest).
HISTORY_POINTS = 200
#: Entries a completion answers at most.
COMPLETIONS = 20


def _cached(catalog: Catalog, conn: Connection, t: repo.TableRow, kind: str, extra: tuple[Any, ...], compute: Callable[[], Any]) -> Any:
    """``compute()``, kept in the catalog's per-table-state cache (the one of ``path_bounds``):
    keyed by the table row's :attr:`~repo.TableRow.metadata_key`, read in this transaction, so a
    snapshot of the table (a commit or a removal moves its ``current_snapshot_id``) is a new key.
    A history or a path's types change only with a snapshot of the table (``refresh`` adds
    plain-column rows only). Viewed again, each costs the table row's read instead of a scan."""
    return admin_reads(catalog)._bounds.derived(kind, t.metadata_key, extra, compute)


@dataclass(frozen=True, slots=True)
class HistoryPoint:
    """The table's live files, rows and bytes just after one of its snapshots."""

    snapshot_id: int
    time: datetime | None
    files: int
    rows: int
    bytes: int
    added: int
    removed: int


def table_history(catalog: Catalog, namespace: str, table: str, limit: int = HISTORY_POINTS) -> list[HistoryPoint]:
    """The newest ``limit`` snapshots of the table, oldest first, each with what was live after it:
    the table's live totals, less what each newer snapshot added and plus what it removed (the
    counts and sums each snapshot row keeps), one read of ``limit`` snapshot rows."""

    def op(conn: Connection) -> list[HistoryPoint]:
        t = repo.require_table(conn, namespace, table, cache=catalog._tables)
        return _cached(catalog, conn, t, "table_history", (limit,), lambda: _history(conn, t, limit))

    result: list[HistoryPoint] = catalog._read(op)
    return result


def _history(conn: Connection, t: repo.TableRow, limit: int) -> list[HistoryPoint]:
    Sn = m.Snapshot
    stmt = (
        select(
            Sn.snapshot_id, Sn.snapshot_time, Sn.added_files, Sn.removed_files,
            Sn.added_records, Sn.removed_records, Sn.added_bytes, Sn.removed_bytes,
        )
        .where(Sn.table_id == t.table_id)
        .order_by(Sn.snapshot_id.desc())
        .limit(limit)
    )  # fmt: skip
    files, records, size = t.live_file_count, t.live_record_count, t.live_bytes
    out: list[HistoryPoint] = []
    for snap, time, added, removed, added_records, removed_records, added_bytes, removed_bytes in conn.execute(stmt):
        out.append(HistoryPoint(int(snap), aware(time), files, records, size, int(added), int(removed)))
        files += int(removed) - int(added)
        records += int(removed_records) - int(added_records)
        size += int(removed_bytes) - int(added_bytes)
    out.reverse()
    return out


@dataclass(frozen=True, slots=True)
class TypeSpan:
    """One shredded type of a path over time: the first snapshot a file with it was added, the
    last one that removed such a file while none is live (None: still live), live files now."""

    shredded_type: str
    first_snapshot: int
    first_time: datetime | None
    until_snapshot: int | None
    until_time: datetime | None
    live_files: int
    files_ever: int


def type_timeline(catalog: Catalog, namespace: str, table: str, column: str, variant_path: str) -> list[TypeSpan]:
    """Which types ``column``/``variant_path`` was fully shredded as, from which snapshot (and its
    time), in order of first appearance: the path's dictionary rows (one per type) and their snapshots."""

    def op(conn: Connection) -> list[TypeSpan]:
        t = repo.require_table(conn, namespace, table, cache=catalog._tables)
        cid = t.columns.get(column)
        if cid is None:
            return []
        return _cached(catalog, conn, t, "type_timeline", (cid, variant_path), lambda: _timeline(conn, t, cid, variant_path))

    result: list[TypeSpan] = catalog._read(op)
    return result


def _timeline(conn: Connection, t: repo.TableRow, cid: int, variant_path: str) -> list[TypeSpan]:
    # The dictionary rows' own counters (kept by commits and removals): the path's removed stats
    # rows, which no index serves by path, are not read.
    stmt = select(VP.shredded_type, VP.first_snapshot, VP.last_end_snapshot, VP.files_ever, VP.live_file_count).where(
        VP.table_id == t.table_id, VP.column_id == cid, VP.variant_path == variant_path, VP.files_ever > 0
    )
    return type_spans(conn, conn.execute(stmt).all())


def type_spans(conn: Connection, rows: Sequence[Any]) -> list[TypeSpan]:
    """The spans of rows ``(type, first snapshot, last end snapshot, files ever, live files)``,
    with their snapshots' times, in order of first appearance."""
    snaps = {int(r[1]) for r in rows} | {int(r[2]) for r in rows if r[2] is not None}
    Sn = m.Snapshot
    times = {int(s): aware(tm) for s, tm in conn.execute(select(Sn.snapshot_id, Sn.snapshot_time).where(Sn.snapshot_id.in_(snaps)))}
    spans = []
    for tname, first, last_end, ever, live in rows:
        until = None if int(live) > 0 or last_end is None else int(last_end)
        spans.append(
            TypeSpan(tname, int(first), times.get(int(first)), until, None if until is None else times.get(until), int(live), int(ever))
        )
    return sorted(spans, key=lambda s: (s.first_snapshot, s.shredded_type))


def files_at(
    catalog: Catalog,
    namespace: str,
    table: str,
    *,
    sort: str,
    descending: bool,
    filters: dict[str, Any],
    offset: int,
    limit: int,
) -> list[DataFileInfo]:
    """A page of live files from position ``offset`` in the table page's order (``sort`` then path,
    both in one direction), kept by its filters: the page a "go to page N" asks for. An offset
    costs the rows before it; the keyset cursors of Previous/Next continue from here."""
    keys = {"path": D.path, "size": D.file_size_bytes, "rows": D.record_count}
    order = [keys[sort]] if sort == "path" else [keys[sort], D.path]

    def op(conn: Connection) -> list[DataFileInfo]:
        t = repo.require_table(conn, namespace, table)
        stmt = select(*FILE_INFO_COLUMNS).where(
            D.table_id == t.table_id, D.end_snapshot.is_(None), *file_filter(filters["prefix"], filters["contains"], filters["snapshot"])
        )
        stmt = stmt.order_by(*(c.desc() if descending else c.asc() for c in order)).offset(offset).limit(limit)
        return [file_info(r) for r in conn.execute(stmt)]

    result: list[DataFileInfo] = catalog._read(op)
    return result


@dataclass(frozen=True, slots=True)
class Completion:
    column: str
    variant_path: str
    shredded_type: str
    live_files: int


def complete_paths(catalog: Catalog, namespace: str, table: str, text: str, limit: int = COMPLETIONS) -> list[Completion]:
    """The table's paths fully shredded in a live file whose variant path contains ``text``
    (case-insensitive; every path for ""), those in the most live files first, at most ``limit``."""

    def op(conn: Connection) -> list[Completion]:
        t = repo.require_table(conn, namespace, table)
        names = t.column_names
        stmt = select(VP.column_id, VP.variant_path, VP.shredded_type, VP.live_file_count).where(
            VP.table_id == t.table_id, VP.live_file_count > 0, VP.variant_path != m.COLUMN_KEY_PATH
        )
        if text:
            stmt = stmt.where(VP.variant_path.ilike(like_pattern(text), escape="\\"))
        stmt = stmt.order_by(VP.live_file_count.desc(), VP.variant_path, VP.shredded_type).limit(limit)
        return [Completion(names[int(c)], vp, ty, int(n)) for c, vp, ty, n in conn.execute(stmt) if int(c) in names]

    result: list[Completion] = catalog._read(op)
    return result
