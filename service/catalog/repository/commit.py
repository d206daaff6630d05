"""Adding and ending files. :func:`add_files` inserts a prepared batch's files and stats rows
(binary COPY on PostgreSQL, executemany on SQLite) and adds its per-path counters;
:func:`end_files` ends files at a snapshot (rows are kept for history) and subtracts their counters,
aggregated in SQL; :func:`drop_table` ends a table after ending every live file that way.
:func:`live_files_by_path` finds the live files a batch names.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, insert, select, text, update

from service.catalog import models as m
from service.catalog.encode import PathTypeKey, PreparedBatch, max_width
from service.catalog.models import COLUMN_KEY_PATH
from service.catalog.repository.common import CHUNK, CS, PV, D, S, chunks, in_values
from service.catalog.repository.objects import add_objects, end_objects
from service.catalog.repository.path_stats import (
    _removed_counters,
    add_counters,
    ensure_paths,
    rebuild_global,
    remove_counters,
    write_global_json,
)
from service.catalog.repository.reads import read_global_json
from service.catalog.repository.tables import TableRow, new_snapshot
from service.stats.merge import PathCounters
from service.stats.model import FileStats


@dataclass(frozen=True, slots=True)
class LiveFile:
    data_file_id: int
    path: str
    content_id: str | None
    file_size_bytes: int
    record_count: int
    footer_size: int

    @property
    def identity(self) -> tuple[str | None, int, int, int]:
        return (self.content_id, self.file_size_bytes, self.record_count, self.footer_size)


# PostgreSQL: one parameterized unique-index probe per path. LIMIT 1 keeps the LATERAL subquery from
# being flattened into a join, so the plan does not depend on table statistics (right after a bulk
# load they are stale, and a plain "path = ANY(...)" was planned as a scan of every live file).
_PG_LIVE_BY_PATH = text(
    "SELECT d.data_file_id, d.path, d.content_id, d.file_size_bytes, d.record_count, d.footer_size "
    "FROM unnest(CAST(:paths AS varchar[])) AS p(path) CROSS JOIN LATERAL ("
    " SELECT * FROM ducklake_data_file x"
    " WHERE x.table_id = :table_id AND x.path = p.path AND x.end_snapshot IS NULL LIMIT 1) AS d"
)


def live_files_by_path(conn: Connection, table_id: int, paths: Sequence[str]) -> dict[str, LiveFile]:
    out: dict[str, LiveFile] = {}
    pg = _is_postgres(conn)
    for chunk in chunks(list(paths), 10_000 if pg else CHUNK):
        if pg:
            rows = conn.execute(_PG_LIVE_BY_PATH, {"paths": list(chunk), "table_id": table_id})
        else:
            rows = conn.execute(
                select(*_LIVE_FILE_COLUMNS).where(D.table_id == table_id, D.end_snapshot.is_(None), D.path.in_(chunk))
            )
        for r in rows:
            out[r[1]] = _live_file(r)
    return out


_LIVE_FILE_COLUMNS = (D.data_file_id, D.path, D.content_id, D.file_size_bytes, D.record_count, D.footer_size)


def _live_file(r: Any) -> LiveFile:
    """A row of :data:`_LIVE_FILE_COLUMNS` (or :data:`_PG_LIVE_BY_PATH`'s, in the same order)."""
    return LiveFile(int(r[0]), r[1], r[2], int(r[3]), int(r[4]), int(r[5]))


STATS_COLUMNS = (
    "data_file_id",
    "table_id",
    "column_id",
    "variant_path",
    "shredded_type",
    "column_size_bytes",
    "value_count",
    "null_count",
    "min_value",
    "max_value",
    "contains_nan",
    "extra_stats",
    "path_id",
    "min_num",
    "max_num",
    "min_real",
    "max_real",
    "min_bin",
    "max_bin",
    "begin_snapshot",
    "end_snapshot",
)
STATS_PG_TYPES = (
    *(
        "int8",
        "int8",
        "int8",
        "varchar",
        "varchar",
        "int8",
        "int8",
        "int8",
        "varchar",
        "varchar",
        "bool",
        "varchar",
    ),
    *("int8", "int8", "int8", "float8", "float8", "bytea", "bytea", "int8", "int8"),
)
COLUMN_STATS_COLUMNS = (
    "data_file_id",
    "table_id",
    "column_id",
    "column_size_bytes",
    "value_count",
    "null_count",
    "min_value",
    "max_value",
    "contains_nan",
    "extra_stats",
    "path_id",
    "column_type",
    "min_num",
    "max_num",
    "min_real",
    "max_real",
    "min_bin",
    "max_bin",
    "begin_snapshot",
    "end_snapshot",
)
COLUMN_STATS_PG_TYPES = (
    *("int8", "int8", "int8", "int8", "int8", "int8", "varchar", "varchar", "bool", "varchar"),
    *("int8", "varchar", "int8", "int8", "float8", "float8", "bytea", "bytea", "int8", "int8"),
)
PARTITION_COLUMNS = (
    "data_file_id",
    "table_id",
    "partition_key_index",
    "partition_value",
    "column_id",
    "begin_snapshot",
    "end_snapshot",
)
PARTITION_PG_TYPES = ("int8", "int8", "int8", "varchar", "int8", "int8", "int8")
FILE_COLUMNS = (
    "data_file_id",
    "table_id",
    "begin_snapshot",
    "end_snapshot",
    "file_order",
    "path",
    "path_is_relative",
    "file_format",
    "record_count",
    "file_size_bytes",
    "footer_size",
    "content_id",
    "variant_columns",
)
FILE_PG_TYPES = (
    *(
        "int8",
        "int8",
        "int8",
        "int8",
        "int8",
        "varchar",
        "bool",
        "varchar",
        "int8",
        "int8",
        "int8",
        "varchar",
        "text",
    ),
)


def _is_postgres(conn: Connection) -> bool:
    return conn.dialect.name == "postgresql"


def _copy_rows(
    conn: Connection, table: str, columns: Sequence[str], types: Sequence[str], rows: Iterable[Sequence[Any]]
) -> None:
    """PostgreSQL binary COPY through the connection's own psycopg connection (same transaction)."""
    raw = conn.connection.driver_connection
    assert raw is not None
    sql = f"COPY {table} ({', '.join(columns)}) FROM STDIN (FORMAT BINARY)"
    with raw.cursor() as cur, cur.copy(sql) as cp:
        cp.set_types(list(types))
        for r in rows:
            cp.write_row(r)


def _insert_files(conn: Connection, table_id: int, snap: int, files: Sequence[FileStats]) -> list[int]:
    def row(f: FileStats) -> tuple[Any, ...]:
        return (
            table_id,
            snap,
            None,
            None,
            f.path,
            False,
            "parquet",
            f.record_count,
            f.file_size_bytes,
            f.footer_size,
            f.content_id,
            json.dumps(list(f.variant_columns), ensure_ascii=False),
        )

    if _is_postgres(conn):
        # Reserve ids from the sequence, then COPY: several times faster than INSERT ... RETURNING.
        ids = [
            int(i)
            for i in conn.exec_driver_sql(
                "SELECT nextval(pg_get_serial_sequence('ducklake_data_file', 'data_file_id')) "
                "FROM generate_series(1, %(n)s)",
                {"n": len(files)},
            ).scalars()
        ]
        _copy_rows(
            conn,
            "ducklake_data_file",
            FILE_COLUMNS,
            FILE_PG_TYPES,
            ((fid, *row(f)) for fid, f in zip(ids, files, strict=True)),
        )
        return ids
    stmt = insert(D).returning(D.data_file_id, sort_by_parameter_order=True)
    params = [dict(zip(FILE_COLUMNS[1:], row(f), strict=True)) for f in files]
    return [int(i) for i in conn.execute(stmt, params).scalars().all()]


_SQLITE_INSERT_STATS = (
    f"INSERT INTO ducklake_file_variant_stats ({', '.join(STATS_COLUMNS)}) "
    f"VALUES ({', '.join('?' * len(STATS_COLUMNS))})"
)


def _insert_stats(conn: Connection, rows: list[tuple[Any, ...]]) -> None:
    _insert_rows(conn, "ducklake_file_variant_stats", STATS_COLUMNS, STATS_PG_TYPES, rows)


def _insert_rows(
    conn: Connection, table: str, columns: Sequence[str], types: Sequence[str], rows: list[tuple[Any, ...]]
) -> None:
    if not rows:
        return
    if _is_postgres(conn):
        _copy_rows(conn, table, columns, types, rows)
        return
    if table == "ducklake_file_variant_stats":
        sql = _SQLITE_INSERT_STATS
    else:
        sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
    conn.exec_driver_sql(sql, rows)  # executemany on the DB-API cursor


def add_files(conn: Connection, t: TableRow, snap: int, batch: PreparedBatch) -> None:
    """Insert the batch's files, their stats rows and the dictionary counters; update the table's
    counters. Global stats are merged by the caller."""
    files = batch.files
    ids = _insert_files(conn, t.table_id, snap, files)
    _add_rows(conn, t, ids, [snap] * len(ids), batch, variant=True)
    add_objects(conn, t, ids, files)
    records, size = sum(f.record_count for f in files), sum(f.file_size_bytes for f in files)
    conn.execute(
        update(m.Table)
        .where(m.Table.table_id == t.table_id)
        .values(
            live_file_count=m.Table.live_file_count + len(files),
            live_record_count=m.Table.live_record_count + records,
            live_bytes=m.Table.live_bytes + size,
            current_snapshot_id=snap,
        )
    )
    _count_in_snapshot(conn, snap, "added", records, size)


def _count_in_snapshot(conn: Connection, snap: int, side: str, records: int, size: int) -> None:
    """Add to the records and bytes ``snap`` added or removed (``side``): what the table's totals
    moved by, kept beside them for its history."""
    Sn = m.Snapshot
    rec, byt = getattr(Sn, f"{side}_records"), getattr(Sn, f"{side}_bytes")
    conn.execute(update(Sn).where(Sn.snapshot_id == snap).values({rec: rec + records, byt: byt + size}))


def add_column_rows(
    conn: Connection, t: TableRow, ids: Sequence[int], begins: Sequence[int], batch: PreparedBatch
) -> None:
    """Add plain-column and partition rows (and their keys' counters) to live files that have
    none: ``shredcat refresh`` of files committed before the catalog kept them. Each row begins
    at its file's ``begin_snapshot`` (``begins``): the file's content is what it always was."""
    _add_rows(conn, t, ids, begins, batch, variant=False)


def _add_rows(
    conn: Connection, t: TableRow, ids: Sequence[int], begins: Sequence[int], batch: PreparedBatch, *, variant: bool
) -> None:
    """Stats rows of the files ``ids`` (rows begin at ``begins``), and the counters and widths of
    their keys: Variant paths and columns, or (``variant=False``) columns only."""
    # Variant and plain/partition column names never clash (one ducklake_column per name).
    cols = {**t.columns, **{name: c.column_id for name, c in t.plain.items()}}
    keys = [k for k in batch.counters if variant or k[1] == COLUMN_KEY_PATH]
    path_rows = ensure_paths(conn, t.table_id, {(cols[c], vp, tn) for c, vp, tn in keys})
    pid_of = {k: path_rows[(cols[k[0]], k[1], k[2])].path_id for k in keys}
    tid = t.table_id
    pids = sorted(set(pid_of.values()))
    if variant:
        stats_rows: list[tuple[Any, ...]] = []
        append = stats_rows.append
        for fid, snap, fr in zip(ids, begins, batch.rows, strict=True):
            for r in fr:
                append(
                    (
                        fid, tid, cols[r[0]], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9],
                        pid_of[(r[0], r[1], r[2])], r[10], r[11], r[12], r[13], r[14], r[15], snap, None,
                    )
                )  # fmt: skip
        _insert_stats(conn, stats_rows)
        add_zones(conn, "ducklake_file_variant_stats", ids, pids)
    if any(batch.col_rows):
        col_stats: list[tuple[Any, ...]] = []
        for fid, snap, fr in zip(ids, begins, batch.col_rows, strict=True):
            for r in fr:
                col_stats.append(
                    (
                        fid, tid, cols[r[0]], r[3], r[4], r[5], r[6], r[7], r[8], r[9],
                        pid_of[(r[0], r[1], r[2])], r[2], r[10], r[11], r[12], r[13], r[14], r[15], snap, None,
                    )
                )  # fmt: skip
        _insert_rows(conn, "ducklake_file_column_stats", COLUMN_STATS_COLUMNS, COLUMN_STATS_PG_TYPES, col_stats)
        add_zones(conn, "ducklake_file_column_stats", ids, pids)
    if any(batch.part_rows):
        index = {name: i for i, name in enumerate(t.partition_columns)}
        parts = [
            (fid, tid, index[name], raw, cols[name], snap, None)
            for fid, snap, fr in zip(ids, begins, batch.part_rows, strict=True)
            for name, raw in fr
        ]
        _insert_rows(conn, "ducklake_file_partition_value", PARTITION_COLUMNS, PARTITION_PG_TYPES, parts)
    deltas = {pid_of[k]: batch.counters[k] for k in keys}
    widths = {
        pid_of[k]: max_width(path_rows[(cols[k[0]], k[1], k[2])].width, batch.widths[k]) for k in keys
    }
    add_counters(conn, deltas, widths, _first_begins(pid_of, begins, batch.rows, batch.col_rows))


def _first_begins(
    pid_of: Mapping[PathTypeKey, int], begins: Sequence[int], *per_file_rows: Sequence[Sequence[tuple[Any, ...]]]
) -> dict[int, int]:
    """The least snapshot each key's new rows begin at (their files' ``begins``); rows of keys not
    in ``pid_of`` (not added) are skipped."""
    out: dict[int, int] = {}
    for rows in per_file_rows:
        # A batch without plain columns has no per-file list at all.
        for snap, fr in zip(begins, rows, strict=False):
            for r in fr:
                pid = pid_of.get((r[0], r[1], r[2]))
                if pid is not None and (pid not in out or snap < out[pid]):
                    out[pid] = snap
    return out


# --- zones ------------------------------------------------------------------------------------

#: A zone's summary of stats rows ``s`` grouped by (path_id, zone): only rows with values speak for
#: the keys, and one such row without a key makes the zone's key unknown (NULL), as in a stats row.
ZONE_AGGREGATES = (
    "count(*), sum(s.value_count), "
    + ", ".join(
        f"CASE WHEN sum(CASE WHEN s.value_count > 0 AND s.{k} IS NULL THEN 1 ELSE 0 END) > 0 THEN NULL "
        f"ELSE {agg}(CASE WHEN s.value_count > 0 THEN s.{k} END) END"
        for agg, k in (("min", "min_num"), ("max", "max_num"), ("min", "min_real"), ("max", "max_real"))
    )
    + ", CASE WHEN sum(CASE WHEN s.value_count > 0 AND s.contains_nan IS NULL THEN 1 ELSE 0 END) > 0 THEN NULL "
    "ELSE max(CASE WHEN s.value_count > 0 AND s.contains_nan THEN 1 ELSE 0 END) = 1 END"
)
ZONE_COLUMNS = "path_id, zone, files, value_count, min_num, max_num, min_real, max_real, contains_nan"


def _merged(key: str, pick: str) -> str:
    """A zone's key after adding ``excluded``'s rows: either side without values says nothing,
    an unknown (NULL) key on a side with values stays unknown."""
    return (
        f"CASE WHEN z.value_count = 0 THEN excluded.{key} WHEN excluded.value_count = 0 THEN z.{key} "
        f"WHEN z.{key} IS NULL OR excluded.{key} IS NULL THEN NULL "
        f"WHEN excluded.{key} {pick} z.{key} THEN excluded.{key} ELSE z.{key} END"
    )


_ZONE_UPSERT = (
    "ON CONFLICT (path_id, zone) DO UPDATE SET files = z.files + excluded.files, "
    "value_count = z.value_count + excluded.value_count, "
    f"min_num = {_merged('min_num', '<')}, max_num = {_merged('max_num', '>')}, "
    f"min_real = {_merged('min_real', '<')}, max_real = {_merged('max_real', '>')}, "
    "contains_nan = CASE WHEN z.value_count = 0 THEN excluded.contains_nan "
    "WHEN excluded.value_count = 0 THEN z.contains_nan "
    "WHEN z.contains_nan IS NULL OR excluded.contains_nan IS NULL THEN NULL "
    "ELSE (z.contains_nan OR excluded.contains_nan) END"
)


def add_zones(conn: Connection, table: str, ids: Sequence[int], path_ids: Sequence[int]) -> None:
    """Widen the zones of ``path_ids`` (:class:`~service.catalog.models.StatsZone`) by their live
    rows in ``table`` of the files between the least and greatest of ``ids``: the rows just
    inserted, read back on the primary key and summed in the database. Rows of that range already counted before
    (``shredcat refresh`` adding a key to older files) are counted again: the counts are estimates,
    and the bounds only ever widen."""
    if not ids or not path_ids:
        return
    lo, hi = min(ids), max(ids)
    pids = ", ".join(str(int(p)) for p in path_ids)
    conn.exec_driver_sql(
        f"INSERT INTO shredcat_stats_zone AS z ({ZONE_COLUMNS}) "
        f"SELECT s.path_id, s.data_file_id / {m.ZONE_FILES}, {ZONE_AGGREGATES} FROM {table} s "
        f"WHERE s.data_file_id BETWEEN {int(lo)} AND {int(hi)} AND s.path_id IN ({pids}) AND s.end_snapshot IS NULL "
        f"GROUP BY s.path_id, s.data_file_id / {m.ZONE_FILES} {_ZONE_UPSERT}"
    )


# --- removal ----------------------------------------------------------------------------------


def end_files(conn: Connection, t: TableRow, snap: int, live: Sequence[LiveFile]) -> None:
    """End ``live`` files at ``snap`` (rows are kept for history); update counters."""
    if _is_postgres(conn):
        # Every statement of a removal is an index lookup by design (stats rows by their primary
        # key, bounds through the partial indexes). Right after a bulk load, before autovacuum has
        # analyzed, PostgreSQL costed "data_file_id = ANY(1000 ids)" on 10^6 rows as a parallel
        # sequential scan (200 ms instead of 8 ms): forbid that for this transaction only.
        conn.exec_driver_sql("SET LOCAL enable_seqscan = off")
    ids = [lf.data_file_id for lf in live]
    removed: dict[int, PathCounters] = {}
    with_columns = bool(t.plain)  # a table without plain/partition columns has no such rows
    stats_tables = (S, CS) if with_columns else (S,)
    aggs = [_removed_counters(model) for model in stats_tables]
    for chunk in chunks(ids, 10_000 if _is_postgres(conn) else CHUNK):
        conn.execute(update(D).where(in_values(conn, D.data_file_id, chunk)).values(end_snapshot=snap))
        for model, agg in zip(stats_tables, aggs, strict=True):
            for row in conn.execute(
                select(model.path_id, *agg)
                .where(in_values(conn, model.data_file_id, chunk), model.end_snapshot.is_(None))
                .group_by(model.path_id)
            ):
                pid = int(row[0])
                c = PathCounters(*(int(v or 0) for v in row[1:]))  # PostgreSQL sums to NUMERIC
                prev = removed.get(pid)
                removed[pid] = c if prev is None else prev + c
        for model in (*stats_tables, PV) if with_columns else stats_tables:
            conn.execute(
                update(model)
                .where(in_values(conn, model.data_file_id, chunk), model.end_snapshot.is_(None))
                .values(end_snapshot=snap)
            )
    remove_counters(conn, removed, snap)
    end_objects(conn, ids)
    records, size = sum(lf.record_count for lf in live), sum(lf.file_size_bytes for lf in live)
    conn.execute(
        update(m.Table)
        .where(m.Table.table_id == t.table_id)
        .values(
            live_file_count=m.Table.live_file_count - len(live),
            live_record_count=m.Table.live_record_count - records,
            live_bytes=m.Table.live_bytes - size,
            current_snapshot_id=snap,
        )
    )
    _count_in_snapshot(conn, snap, "removed", records, size)


#: Live files a drop ends per :func:`end_files` call: a bounded list in memory, whatever the table's size.
_DROP_PAGE = 10_000


def drop_table(conn: Connection, t: TableRow) -> int:
    """End a table at a new snapshot. Its live files end as a removal of all of them would end them
    (:func:`end_files`: stats rows, the path dictionary's live and timeline counters, object shapes,
    the table's own counters; then empty global stats), so nothing of the table stays counted live."""
    snap = new_snapshot(conn, t.table_id, f"dropped_table:{t.table_id}", removed=t.live_file_count)
    old_json = read_global_json(conn, t)
    # The partial index on live files in id order: each page is the next one, ended files leave it.
    page_stmt = (
        select(*_LIVE_FILE_COLUMNS)
        .where(D.table_id == t.table_id, D.end_snapshot.is_(None))
        .order_by(D.data_file_id)
        .limit(_DROP_PAGE)
    )
    while page := [_live_file(r) for r in conn.execute(page_stmt)]:
        end_files(conn, t, snap, page)
    write_global_json(conn, t, rebuild_global(conn, t, 0).column_json(t.columns), old_json)
    conn.execute(
        update(m.Table)
        .where(m.Table.table_id == t.table_id)
        .values(end_snapshot=snap, current_snapshot_id=snap)
    )
    conn.execute(
        update(m.Column)
        .where(m.Column.table_id == t.table_id, m.Column.end_snapshot.is_(None))
        .values(end_snapshot=snap)
    )
    return snap
