"""The reads: counts and keyset pages of files (by path, or by size or rows for the admin pages),
one file and its stats, the stats of many files (for planning) or of every live file (for a
recomputation), snapshots (one, a table's pages, newest-first history), a path's types,
per-file bounds and coverage, and the global stats as stored (DuckLake's JSON per column).
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Iterator, Sequence
from typing import Any, Literal

from sqlalchemy import BigInteger, ColumnElement, Connection, Select, exists, func, literal, select

from service.catalog import models as m
from service.catalog.repository.common import (
    _COLUMN_STATS_READ,
    _STATS_READ,
    CS,
    PV,
    VP,
    D,
    S,
    _column_stats,
    _live_at,
    _path_stats,
    aware,
    chunks,
    in_values,
    keyset_page,
)
from service.catalog.repository.objects import file_objects
from service.catalog.repository.tables import TableRow
from service.catalog.results import DataFileInfo, FileBound, Key, RecentSnapshot, SnapshotInfo
from service.stats.model import ColumnStats, FileStats, PartitionValue, PathStats
from service.values import Bound, ShreddedType, family


def count_files(
    conn: Connection,
    table_id: int,
    snapshot: int | None,
    *,
    prefix: str | None = None,
    contains: str | None = None,
    added_in: int | None = None,
    at_most: int | None = None,
) -> int:
    """Files live at ``snapshot`` (None = now), only those kept by :func:`file_filter` if given.
    ``at_most``: the count stops at ``at_most + 1`` files (a result above ``at_most`` means "more
    than ``at_most``"), so a common substring reads that many matches, not every live path."""
    where = (D.table_id == table_id, _live_at(D, snapshot), *file_filter(prefix, contains, added_in))
    if at_most is None:
        stmt = select(func.count()).select_from(D).where(*where)
    else:
        stmt = select(func.count()).select_from(select(D.data_file_id).where(*where).limit(at_most + 1).subquery())
    return int(conn.execute(stmt).scalar_one())


def stats_for_files(
    conn: Connection, t: TableRow, ids: Sequence[int], paths: Collection[tuple[str, str | None]] | None = None
) -> dict[int, list[PathStats | ColumnStats]]:
    """The PathStats and ColumnStats (plain and partition columns) of the given data files (a
    file's stats rows never change once committed); ``paths``: only the rows of these ``(column,
    variant_path)`` (what a condition reads; variant_path None: a plain or partition column)."""
    names = t.column_names
    out: dict[int, list[PathStats | ColumnStats]] = {}
    only: list[ColumnElement[bool]] = []
    plain_ids: list[int] | None = None
    if paths is not None:
        variant = [(c, p) for c, p in paths if p is not None]
        column_ids = {t.columns[c] for c, _ in variant if c in t.columns}
        only = [S.column_id.in_(sorted(column_ids)), S.variant_path.in_(sorted({p for _, p in variant}))]
        plain_ids = sorted(t.plain[c].column_id for c, p in paths if p is None and c in t.plain)
    for chunk in chunks(list(ids)):
        for r in conn.execute(select(*_STATS_READ).where(S.data_file_id.in_(chunk), *only).order_by(S.path_id)):
            out.setdefault(int(r.data_file_id), []).append(_path_stats(names, r))
        if t.plain and plain_ids != []:
            plain = t.plain_names
            where = [CS.data_file_id.in_(chunk)]
            if plain_ids is not None:
                where.append(CS.column_id.in_(plain_ids))
            for r in conn.execute(select(*_COLUMN_STATS_READ).where(*where).order_by(CS.path_id)):
                out.setdefault(int(r.data_file_id), []).append(_column_stats(plain, r))
    return out


def iter_file_stats(conn: Connection, t: TableRow, snapshot: int | None) -> Iterator[list[PathStats]]:
    """The PathStats of every file with stats rows live at ``snapshot`` (None = now), one list per
    file, read from DuckLake's columns only (independent of the typed keys and counters)."""
    names = t.column_names
    stmt = (
        select(*_STATS_READ)
        .select_from(D)
        .join(S, S.data_file_id == D.data_file_id)
        .where(D.table_id == t.table_id, _live_at(D, snapshot))
        .order_by(S.data_file_id)
        .execution_options(yield_per=10_000)
    )
    cur_id: int | None = None
    cur: list[PathStats] = []
    for r in conn.execute(stmt):
        if r.data_file_id != cur_id:
            if cur_id is not None:
                yield cur
            cur_id, cur = r.data_file_id, []
        cur.append(_path_stats(names, r))
    if cur_id is not None:
        yield cur


# --- files and snapshots ----------------------------------------------------------------------


def prefix_upper_bound(prefix: str) -> str | None:
    """The smallest string greater than every string starting with ``prefix`` in code-point (=
    UTF-8 byte) order, or None if there is none."""
    chars = list(prefix)
    while chars:
        c = ord(chars[-1])
        if c < 0x10FFFF:
            c += 1
            if 0xD800 <= c <= 0xDFFF:
                c = 0xE000
            chars[-1] = chr(c)
            return "".join(chars)
        chars.pop()
    return None


#: The ``ducklake_data_file`` columns :func:`file_info` reads.
FILE_INFO_COLUMNS = (
    D.data_file_id,
    D.path,
    D.file_size_bytes,
    D.record_count,
    D.footer_size,
    D.content_id,
    D.begin_snapshot,
    D.end_snapshot,
)


def file_info(r: Any) -> DataFileInfo:
    """A DataFileInfo from a row carrying :data:`FILE_INFO_COLUMNS`."""
    return DataFileInfo(
        data_file_id=int(r.data_file_id),
        path=r.path,
        file_size_bytes=int(r.file_size_bytes),
        record_count=int(r.record_count),
        footer_size=int(r.footer_size),
        content_id=r.content_id,
        begin_snapshot=int(r.begin_snapshot),
        end_snapshot=None if r.end_snapshot is None else int(r.end_snapshot),
    )


def _prefix_filter(prefix: str | None) -> list[ColumnElement[bool]]:
    """Conditions keeping the paths that start with ``prefix`` (a range: the path index serves it)."""
    if not prefix:
        return []
    conds = [D.path >= prefix]
    upper = prefix_upper_bound(prefix)
    if upper is not None:
        conds.append(D.path < upper)
    return conds


def like_pattern(text: str) -> str:
    """A LIKE pattern matching ``text`` anywhere, its own ``%``, ``_`` and ``\\`` taken literally
    (the escape character is ``\\``)."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def file_filter(
    prefix: str | None, contains: str | None = None, added_in: int | None = None
) -> list[ColumnElement[bool]]:
    """Paths starting with ``prefix``, paths containing ``contains`` (case-insensitive on both
    backends: ILIKE on PostgreSQL, ``lower() LIKE lower()`` on SQLite; a scan of the table's live
    files, no index serves a substring), files added at snapshot ``added_in``."""
    conds = _prefix_filter(prefix)
    if contains:
        conds.append(D.path.ilike(like_pattern(contains), escape="\\"))
    if added_in is not None:
        conds.append(D.begin_snapshot == added_in)
    return conds


def files_removed_at(conn: Connection, table_id: int, snapshot: int, limit: int) -> list[DataFileInfo]:
    """The files a snapshot removed (their ``end_snapshot``), by path."""
    stmt = select(*FILE_INFO_COLUMNS).where(D.table_id == table_id, D.end_snapshot == snapshot)
    return [file_info(r) for r in conn.execute(stmt.order_by(D.path).limit(limit))]


def list_files(
    conn: Connection,
    table_id: int,
    *,
    snapshot: int | None,
    prefix: str | None,
    after: str | None,
    limit: int,
) -> list[DataFileInfo]:
    stmt = select(*FILE_INFO_COLUMNS).where(D.table_id == table_id, _live_at(D, snapshot), *_prefix_filter(prefix))
    stmt = keyset_page(stmt, [D.path], None if after is None else [after], limit=limit)
    return [file_info(r) for r in conn.execute(stmt)]


#: Sort keys of :func:`list_files_sorted`.
FileSort = Literal["path", "size", "rows"]
_FILE_SORT_COLUMNS = {"path": D.path, "size": D.file_size_bytes, "rows": D.record_count}


def list_files_sorted(
    conn: Connection,
    table_id: int,
    *,
    sort: FileSort,
    descending: bool,
    prefix: str | None,
    after: tuple[int | str, str] | None,
    limit: int,
    contains: str | None = None,
    added_in: int | None = None,
) -> list[DataFileInfo]:
    """Live files ordered by ``sort`` then path, keyset on ``(sort value, path)`` (just the path
    for ``sort="path"``), filtered by :func:`file_filter`. No index covers size or record count:
    a top-N sort per page."""
    stmt = select(*FILE_INFO_COLUMNS).where(
        D.table_id == table_id, D.end_snapshot.is_(None), *file_filter(prefix, contains, added_in)
    )
    if sort == "path":
        stmt = keyset_page(stmt, [D.path], None if after is None else [after[1]], limit=limit, descending=descending)
    else:
        key = _FILE_SORT_COLUMNS[sort]
        last = None if after is None else [int(after[0]), after[1]]
        stmt = keyset_page(stmt, [key, D.path], last, limit=limit, descending=descending)
    return [file_info(r) for r in conn.execute(stmt)]


def live_file(conn: Connection, table_id: int, path: str) -> DataFileInfo | None:
    r = conn.execute(
        select(*FILE_INFO_COLUMNS).where(D.table_id == table_id, D.path == path, D.end_snapshot.is_(None))
    ).first()
    return None if r is None else file_info(r)


def _partition_value(row: ColumnStats) -> Bound | None:
    """A partition's value from its stats row (min = max = value): NaN has no bound, only
    contains_nan with values (a NULL partition has no values)."""
    if row.min_value is None and row.contains_nan and row.value_count:
        return math.nan
    return row.min_value


def file_stats(conn: Connection, t: TableRow, path: str, snapshot: int | None) -> FileStats | None:
    r = conn.execute(
        select(*FILE_INFO_COLUMNS, D.variant_columns).where(
            D.table_id == t.table_id, D.path == path, _live_at(D, snapshot)
        )
    ).first()
    if r is None:
        return None
    names = t.column_names
    rows = conn.execute(
        select(*_STATS_READ).where(S.data_file_id == r.data_file_id).order_by(S.path_id)
    ).all()
    columns: tuple[ColumnStats, ...] = ()
    partitions: tuple[PartitionValue, ...] = ()
    if t.plain:
        plain = t.plain_names
        part_of = {name: c for name, c in t.plain.items() if c.partition}
        stats = [
            _column_stats(plain, x)
            for x in conn.execute(
                select(*_COLUMN_STATS_READ).where(CS.data_file_id == r.data_file_id).order_by(CS.column_id)
            )
        ]
        columns = tuple(c for c in stats if c.column not in part_of)
        typed = {c.column: c for c in stats if c.column in part_of}
        pv_rows = conn.execute(
            select(PV.column_id, PV.partition_value)
            .where(PV.data_file_id == r.data_file_id)
            .order_by(PV.partition_key_index)
        ).all()
        partitions = tuple(
            PartitionValue(
                column=plain[int(cid)],
                raw=raw,
                value_type=typed[plain[int(cid)]].column_type,
                value=_partition_value(typed[plain[int(cid)]]),
            )
            for cid, raw in pv_rows
            if int(cid) in plain and plain[int(cid)] in typed
        )
    return FileStats(
        path=r.path,
        file_size_bytes=int(r.file_size_bytes),
        record_count=int(r.record_count),
        footer_size=int(r.footer_size),
        content_id=r.content_id,
        variant_columns=tuple(json.loads(r.variant_columns)),
        paths=tuple(_path_stats(names, x) for x in rows),
        columns=columns,
        partitions=partitions,
        objects=file_objects(conn, t, int(r.data_file_id)),
    )


def snapshot_exists(conn: Connection, snapshot: int) -> bool:
    return (
        conn.execute(select(m.Snapshot.snapshot_id).where(m.Snapshot.snapshot_id == snapshot)).first()
        is not None
    )


_SNAPSHOT_INFO_COLUMNS = (
    m.Snapshot.snapshot_id,
    m.Snapshot.snapshot_time,
    m.Snapshot.table_id,
    m.Snapshot.changes_made,
    m.Snapshot.added_files,
    m.Snapshot.removed_files,
)


def _snapshot_info(r: Any) -> SnapshotInfo:
    return SnapshotInfo(int(r[0]), aware(r[1]) or r[1], r[2], r[3], int(r[4]), int(r[5]))


def snapshot_info(conn: Connection, snapshot: int) -> SnapshotInfo:
    """The snapshot ``snapshot`` (which exists)."""
    r = conn.execute(select(*_SNAPSHOT_INFO_COLUMNS).where(m.Snapshot.snapshot_id == snapshot)).one()
    return _snapshot_info(r)


def list_snapshots(conn: Connection, table_id: int, *, after: int | None, limit: int) -> list[SnapshotInfo]:
    stmt = select(*_SNAPSHOT_INFO_COLUMNS).where(m.Snapshot.table_id == table_id)
    stmt = keyset_page(stmt, [m.Snapshot.snapshot_id], None if after is None else [after], limit=limit)
    return [_snapshot_info(r) for r in conn.execute(stmt)]


def recent_snapshots(
    conn: Connection, table_id: int | None, *, before: int | None, limit: int
) -> list[RecentSnapshot]:
    """Snapshots newest first (of one table, or all), with the table each changed; ``before`` is
    the last snapshot id of the previous page."""
    Sn, T, Sc = m.Snapshot, m.Table, m.Schema
    stmt = (
        select(
            Sn.snapshot_id,
            Sn.snapshot_time,
            Sc.schema_name,
            T.table_name,
            T.end_snapshot,
            Sn.changes_made,
            Sn.added_files,
            Sn.removed_files,
        )
        .outerjoin(T, T.table_id == Sn.table_id)
        .outerjoin(Sc, Sc.schema_id == T.schema_id)
    )
    if table_id is not None:
        stmt = stmt.where(Sn.table_id == table_id)
    stmt = keyset_page(stmt, [Sn.snapshot_id], None if before is None else [before], limit=limit, descending=True)
    return [
        RecentSnapshot(
            snapshot_id=int(r[0]),
            snapshot_time=aware(r[1]),
            table=None if r[3] is None else f"{r[2]}.{r[3]}",
            table_live=r[3] is not None and r[4] is None,
            namespace=r[2],
            table_name=r[3],
            changes_made=r[5],
            added_files=int(r[6] or 0),
            removed_files=int(r[7] or 0),
        )
        for r in conn.execute(stmt)
    ]


def path_types(conn: Connection, table_id: int, column_id: int, variant_path: str) -> list[tuple[int, str, int]]:
    """``(path_id, shredded_type, live files)`` of each type the path is shredded as in live files."""
    rows = conn.execute(
        select(VP.path_id, VP.shredded_type, VP.live_file_count).where(
            VP.table_id == table_id,
            VP.column_id == column_id,
            VP.variant_path == variant_path,
            VP.live_file_count > 0,
        )
    ).all()
    return [(int(r[0]), r[1], int(r[2])) for r in rows]


def _column_list(conn: Connection, base: Select[Any], col: Any, *order: Any) -> list[Any]:
    """The values of ``col`` over ``base``'s rows (a SELECT with no columns yet), in ``order``
    (none: in any order).

    Read as result rows, each value of a 10^4-row answer costs a row tuple and a ``Row`` that
    all live until the list is built: ~10 ms of Python per 10^4 rows, and enough surviving
    objects to set off a full collection of the process's heap (50-100 ms) every few requests.
    So PostgreSQL returns them as one array value (one list, of values the collector does not
    track), and SQLite's rows are read straight off the cursor, each freed before the next."""
    if conn.dialect.name == "postgresql":
        # Imported here: a command reading a SQLite catalog never loads the PostgreSQL dialect.
        from sqlalchemy.dialects.postgresql import aggregate_order_by

        agg = func.array_agg(aggregate_order_by(col, *order) if order else col)
        return conn.execute(base.add_columns(agg)).scalar() or []
    with conn.execute(base.add_columns(col).order_by(*order)) as result:
        return [v for (v,) in result.cursor]


def sorted_keys(conn: Connection, path_id: int, st: ShreddedType) -> tuple[list[Key], list[Key]]:
    """The min keys and the max keys of ``path_id``'s live stats rows, each sorted (rows with no
    key on a side left out): two scans of the partial ``(path_id, min_*)`` and ``(path_id, max_*)``
    indexes, which hold them, rather than a read of every row (2 x 10^4 keys at 10^4 files:
    see :func:`_column_list`)."""
    out = []
    for col in (getattr(S, f"min_{family(st)}"), getattr(S, f"max_{family(st)}")):
        live = select().select_from(S).where(S.path_id == path_id, S.end_snapshot.is_(None), col.is_not(None))
        # In any order (an ordered aggregate sorts on PostgreSQL 15 even when the index scan
        # already gives the keys in order): sorted here as Python compares, which is also what
        # bisecting them needs; a list already in order sorts in one pass.
        keys: list[Key] = _column_list(conn, live, col)
        keys.sort()
        out.append(keys)
    return out[0], out[1]


_BOUND_COLS = (S.data_file_id, D.path, S.value_count, S.null_count, S.min_value, S.max_value, S.contains_nan)


def _bound(r: Any) -> FileBound:
    return FileBound(r[1], int(r[2]), int(r[3]), r[4], r[5], r[6])


def file_bounds_at_min_keys(
    conn: Connection, path_id: int, st: ShreddedType, keys: Collection[Key]
) -> list[tuple[Key, FileBound]]:
    """``(min key, bounds)`` of the live stats rows of ``path_id`` whose min key is one of
    ``keys``, by (min key, ``data_file_id``): one probe of the ``(path_id, min_*)`` index per key."""
    lo = getattr(S, f"min_{family(st)}")
    rows = []
    for chunk in chunks(sorted(set(keys))):
        stmt = (
            select(*_BOUND_COLS, lo)
            .join(D, D.data_file_id == S.data_file_id)
            .where(S.path_id == path_id, S.end_snapshot.is_(None), in_values(conn, lo, chunk))
        )
        rows += conn.execute(stmt).all()
    rows.sort(key=lambda r: (r[7], r[0]))
    return [(r[7], _bound(r)) for r in rows]


def file_bounds_without_min_key(conn: Connection, path_id: int, st: ShreddedType) -> list[FileBound]:
    """The live stats rows of ``path_id`` with no min key (no values, an unknown min, a decimal
    beyond int64), by path. No index leads with ``path_id`` alone: callers ask only when the
    keyed rows are fewer than the path's live counter."""
    lo = getattr(S, f"min_{family(st)}")
    stmt = (
        select(*_BOUND_COLS)
        .join(D, D.data_file_id == S.data_file_id)
        .where(S.path_id == path_id, S.end_snapshot.is_(None), lo.is_(None))
        .order_by(D.path)
    )
    return [_bound(r) for r in conn.execute(stmt)]


def file_ids_by_path(conn: Connection, path_id: int) -> list[int]:
    """The files with a live stats row of ``path_id``, by path."""
    live = (
        select()
        .select_from(S)
        .join(D, D.data_file_id == S.data_file_id)
        .where(S.path_id == path_id, S.end_snapshot.is_(None))
    )
    return _column_list(conn, live, S.data_file_id, D.path)


def file_bounds(conn: Connection, path_id: int, ids: Sequence[int]) -> list[FileBound]:
    """The live stats rows of ``path_id`` in the files ``ids`` (bounds as DuckLake strings), in
    the order of ``ids``."""
    found: dict[int, FileBound] = {}
    for chunk in chunks(sorted(set(ids))):
        stmt = (
            select(*_BOUND_COLS)
            .join(D, D.data_file_id == S.data_file_id)
            .where(S.path_id == path_id, S.end_snapshot.is_(None), in_values(conn, S.data_file_id, chunk))
        )
        for r in conn.execute(stmt).all():
            found[int(r[0])] = _bound(r)
    return [found[i] for i in ids if i in found]


def sample_file_bounds(
    conn: Connection, path_id: int, st: ShreddedType, n: int
) -> list[tuple[Key | None, Key | None, int, FileBound]]:
    """``(min key, max key, data_file_id, bounds)`` of up to ``n`` live stats rows of ``path_id``
    spread over their ``data_file_id`` range: for each of ``n`` evenly spaced ids from the least to
    the greatest, the first row at or after it (each row once), in ``data_file_id`` order.

    ``n`` probes of the ``(path_id, data_file_id)`` index and a primary-key read per row found,
    whatever the number of rows: what a path in millions of files is sampled with (a systematic
    sample in commit order; files just past a run of ids without the path are likelier picks)."""
    live = (S.path_id == path_id, S.end_snapshot.is_(None))
    ends = [
        conn.execute(select(S.data_file_id).where(*live).order_by(o).limit(1)).scalar()
        for o in (S.data_file_id.asc(), S.data_file_id.desc())
    ]
    if ends[0] is None or ends[1] is None:
        return []
    first, last = int(ends[0]), int(ends[1])
    # The probes' targets, counted in SQL (a recursive CTE: both backends, no parameter per probe).
    step = select(literal(0, BigInteger).label("i")).cte("step", recursive=True)
    step = step.union_all(select(step.c.i + 1).where(step.c.i < n - 1))
    probe = S.alias()
    target = literal(first, BigInteger) + step.c.i * (last - first) // max(1, n - 1)
    found = (
        select(probe.data_file_id)
        .where(probe.path_id == path_id, probe.end_snapshot.is_(None), probe.data_file_id >= target)
        .order_by(probe.data_file_id)
        .limit(1)
        .scalar_subquery()
    )
    ids = sorted({int(i) for (i,) in conn.execute(select(found).select_from(step)) if i is not None})
    fam = family(st)
    keys = (getattr(S, f"min_{fam}"), getattr(S, f"max_{fam}"))
    rows: list[Any] = []
    for chunk in chunks(ids):
        stmt = (
            select(*_BOUND_COLS, *keys)
            .join(D, D.data_file_id == S.data_file_id)
            .where(*live, in_values(conn, S.data_file_id, chunk))
        )
        rows += conn.execute(stmt).all()
    rows.sort(key=lambda r: r[0])
    return [(r[7], r[8], int(r[0]), _bound(r)) for r in rows]


def path_coverage_rows(conn: Connection, table_id: int) -> list[tuple[int, str, str, int]]:
    rows = conn.execute(
        select(VP.column_id, VP.variant_path, VP.shredded_type, VP.live_file_count).where(
            VP.table_id == table_id, VP.live_file_count > 0, VP.variant_path != m.COLUMN_KEY_PATH
        )
    ).all()
    return [(int(r[0]), r[1], r[2], int(r[3])) for r in rows]


def shredded_types(
    conn: Connection, table_id: int, keys: Collection[tuple[int, str]], *, live: bool
) -> dict[tuple[int, str], list[tuple[str, int]]]:
    """The types each ``(column_id, variant_path)`` is fully shredded as, with the values the live
    files hold as that type: in a live file (``live``, from the live counters), or in any file
    ever committed (a superset of the types at any past snapshot)."""
    out: dict[tuple[int, str], list[tuple[str, int]]] = {}
    wanted = set(keys)
    column_ids = sorted({cid for cid, _ in wanted})
    for chunk in chunks(sorted({vp for _, vp in wanted})):
        stmt = select(VP.column_id, VP.variant_path, VP.shredded_type, VP.live_value_count).where(
            VP.table_id == table_id, VP.column_id.in_(column_ids), VP.variant_path.in_(chunk)
        )
        if live:
            stmt = stmt.where(VP.live_file_count > 0)
        for cid, vp, tname, values in conn.execute(stmt):
            if (int(cid), vp) in wanted:
                out.setdefault((int(cid), vp), []).append((tname, int(values)))
    return out


def shredded_paths(
    conn: Connection, table_id: int, column_id: int, *, live: bool, limit: int | None = None
) -> list[str]:
    """The variant paths of a column fully shredded in a live file (``live``), or in any file
    ever committed; with ``limit``, that many of them, those in the most live files first."""
    stmt = select(VP.variant_path).where(VP.table_id == table_id, VP.column_id == column_id)
    if live:
        stmt = stmt.where(VP.live_file_count > 0)
    stmt = stmt.group_by(VP.variant_path).order_by(func.max(VP.live_file_count).desc(), VP.variant_path).limit(limit)
    return [r[0] for r in conn.execute(stmt)]


def files_by_path(
    conn: Connection,
    table_id: int,
    column_id: int,
    variant_path: str,
    shredded_type: str | None,
    *,
    after: str | None,
    limit: int,
) -> list[DataFileInfo]:
    """Live files, by path, where ``column_id``/``variant_path`` is fully shredded as
    ``shredded_type``, or (None) where it is not fully shredded with any type."""
    has_path = select(S.data_file_id).where(
        S.data_file_id == D.data_file_id,
        S.column_id == column_id,
        S.variant_path == variant_path,
        S.end_snapshot.is_(None),
    )
    cond = exists(has_path.where(S.shredded_type == shredded_type)) if shredded_type else ~exists(has_path)
    stmt = select(*FILE_INFO_COLUMNS).where(D.table_id == table_id, D.end_snapshot.is_(None), cond)
    stmt = keyset_page(stmt, [D.path], None if after is None else [after], limit=limit)
    return [file_info(r) for r in conn.execute(stmt)]


def live_path_rows(conn: Connection) -> list[tuple[int, int, str, int, int]]:
    """``(table_id, column_id, variant_path, live files with this type, live files of the table)``
    of each type of each path of every live table, for a per-table health summary."""
    rows = conn.execute(
        select(VP.table_id, VP.column_id, VP.variant_path, VP.live_file_count, m.Table.live_file_count)
        .join(m.Table, m.Table.table_id == VP.table_id)
        .where(m.Table.end_snapshot.is_(None), VP.live_file_count > 0, VP.variant_path != m.COLUMN_KEY_PATH)
    ).all()
    return [(int(r[0]), int(r[1]), r[2], int(r[3]), int(r[4])) for r in rows]


def files_without_column_rows(
    conn: Connection, table_id: int, *, limit: int | None = None
) -> list[tuple[int, str, int, tuple[str | None, int, int, int]]]:
    """``(data_file_id, path, begin_snapshot, identity)`` of the live files that have neither a
    plain-column stats row nor a partition value (committed before the catalog kept them, or
    without any such column), in path order (the first ``limit``)."""
    has_cols = select(CS.data_file_id).where(CS.data_file_id == D.data_file_id)
    has_part = select(PV.data_file_id).where(PV.data_file_id == D.data_file_id)
    rows = conn.execute(
        select(
            D.data_file_id, D.path, D.begin_snapshot, D.content_id, D.file_size_bytes, D.record_count, D.footer_size
        )
        .where(D.table_id == table_id, D.end_snapshot.is_(None), ~exists(has_cols), ~exists(has_part))
        .order_by(D.path)
        .limit(limit)
    ).all()
    return [(int(r[0]), r[1], int(r[2]), (r[3], int(r[4]), int(r[5]), int(r[6]))) for r in rows]


def read_global_json(conn: Connection, t: TableRow) -> dict[str, str | None]:
    names = t.column_names
    rows = conn.execute(
        select(m.TableColumnStats.column_id, m.TableColumnStats.extra_stats).where(
            m.TableColumnStats.table_id == t.table_id
        )
    ).all()
    out: dict[str, str | None] = dict.fromkeys(t.columns)
    for cid, doc in rows:
        if int(cid) in names:
            out[names[int(cid)]] = doc
    return out
