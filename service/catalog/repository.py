"""The catalog's SQL (the planner's translation of stats conditions is :mod:`.planner`). Every
function takes a Connection inside a transaction opened (and retried) by
:mod:`service.catalog.service`; nothing here commits. Pages are keyset pages (:func:`keyset_page`).

Writers serialize per table: :func:`find_table` with ``lock=True`` takes ``SELECT ... FOR UPDATE``
on the ``ducklake_table`` row on PostgreSQL (on SQLite the transaction already holds the write lock
from ``BEGIN IMMEDIATE``). Every read that decides a write happens after that lock.
"""

from __future__ import annotations

import json
import uuid
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from sqlalchemy import (
    ColumnElement,
    Connection,
    Select,
    and_,
    any_,
    bindparam,
    case,
    func,
    insert,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import aliased

from service.catalog import models as m
from service.catalog.encode import PreparedBatch, Width, max_width
from service.catalog.results import (
    DataFileInfo,
    FileBound,
    NamespaceInfo,
    RecentSnapshot,
    SnapshotInfo,
    TableInfo,
)
from service.errors import NotFoundError
from service.stats.merge import COUNTER_NAMES, GlobalStats, PathAccumulator, PathCounters, complete_paths
from service.stats.model import FileStats, PathStats
from service.values import Bound, ShreddedType, family, format_bound, parse_bound
from service.variant.paths import quote_field

#: Size of IN-lists and of row batches sent at once.
CHUNK = 500

D = m.DataFile
S = m.FileVariantStats
VP = m.VariantPath


def utcnow() -> datetime:
    return datetime.now(UTC)


def chunks(seq: Sequence[Any], n: int = CHUNK) -> Iterator[Sequence[Any]]:
    for i in range(0, len(seq), n):
        yield seq[i : i + n]


# --- snapshots, namespaces, tables ------------------------------------------------------------


def new_snapshot(
    conn: Connection, table_id: int | None, changes: str, *, added: int = 0, removed: int = 0
) -> int:
    stmt = (
        insert(m.Snapshot)
        .values(
            snapshot_time=utcnow(),
            table_id=table_id,
            changes_made=changes,
            added_files=added,
            removed_files=removed,
        )
        .returning(m.Snapshot.snapshot_id)
    )
    return int(conn.execute(stmt).scalar_one())


def find_namespace(conn: Connection, name: str, *, lock: bool = False) -> NamespaceInfo | None:
    """The live namespace; ``lock`` takes its row lock (PostgreSQL) so that creating a table in it
    and dropping it serialize."""
    stmt = select(m.Schema.schema_id, m.Schema.schema_name, m.Schema.begin_snapshot).where(
        m.Schema.schema_name == name, m.Schema.end_snapshot.is_(None)
    )
    if lock:
        stmt = stmt.with_for_update()
    row = conn.execute(stmt).first()
    return None if row is None else NamespaceInfo(row[0], row[1], row[2])


def insert_namespace(conn: Connection, name: str) -> NamespaceInfo:
    snap = new_snapshot(conn, None, f"created_schema:{quote_field(name)}")
    sid = conn.execute(
        insert(m.Schema)
        .values(schema_uuid=uuid.uuid4(), begin_snapshot=snap, end_snapshot=None, schema_name=name)
        .returning(m.Schema.schema_id)
    ).scalar_one()
    return NamespaceInfo(int(sid), name, snap)


def list_namespaces(conn: Connection) -> list[NamespaceInfo]:
    rows = conn.execute(
        select(m.Schema.schema_id, m.Schema.schema_name, m.Schema.begin_snapshot)
        .where(m.Schema.end_snapshot.is_(None))
        .order_by(m.Schema.schema_name)
    ).all()
    return [NamespaceInfo(r[0], r[1], r[2]) for r in rows]


@dataclass(frozen=True, slots=True)
class TableRow:
    """The locked (or just read) table row, with its live Variant columns."""

    table_id: int
    schema_id: int
    namespace: str
    name: str
    begin_snapshot: int
    live_file_count: int
    live_record_count: int
    live_bytes: int
    current_snapshot_id: int
    #: column name -> column_id, in column order.
    columns: Mapping[str, int]

    @property
    def qualified_name(self) -> str:
        return f"{self.namespace}.{self.name}"

    @property
    def column_names(self) -> dict[int, str]:
        return {cid: name for name, cid in self.columns.items()}


def load_columns(conn: Connection, table_id: int) -> dict[str, int]:
    rows = conn.execute(
        select(m.Column.column_name, m.Column.column_id)
        .where(m.Column.table_id == table_id, m.Column.end_snapshot.is_(None))
        .order_by(m.Column.column_order)
    ).all()
    return {r[0]: int(r[1]) for r in rows}


def find_table(conn: Connection, namespace: str, name: str, *, lock: bool = False) -> TableRow | None:
    T = m.Table
    stmt = (
        select(
            T.table_id,
            T.schema_id,
            T.begin_snapshot,
            T.live_file_count,
            T.live_record_count,
            T.live_bytes,
            T.current_snapshot_id,
        )
        .join(m.Schema, m.Schema.schema_id == T.schema_id)
        .where(
            m.Schema.schema_name == namespace,
            m.Schema.end_snapshot.is_(None),
            T.table_name == name,
            T.end_snapshot.is_(None),
        )
    )
    if lock:
        stmt = stmt.with_for_update(of=T)
    row = conn.execute(stmt).first()
    if row is None:
        return None
    return TableRow(
        table_id=int(row[0]),
        schema_id=int(row[1]),
        namespace=namespace,
        name=name,
        begin_snapshot=int(row[2]),
        live_file_count=int(row[3]),
        live_record_count=int(row[4]),
        live_bytes=int(row[5]),
        current_snapshot_id=int(row[6]),
        columns=load_columns(conn, int(row[0])),
    )


def require_table(conn: Connection, namespace: str, name: str, *, lock: bool = False) -> TableRow:
    t = find_table(conn, namespace, name, lock=lock)
    if t is None:
        raise NotFoundError(
            f"table {namespace}.{name} does not exist", details={"table": f"{namespace}.{name}"}
        )
    return t


def insert_table(conn: Connection, ns: NamespaceInfo, name: str, columns: Sequence[str]) -> int:
    snap = new_snapshot(conn, None, f"created_table:{quote_field(ns.name)}.{quote_field(name)}")
    table_id = int(
        conn.execute(
            insert(m.Table)
            .values(
                table_uuid=uuid.uuid4(),
                begin_snapshot=snap,
                end_snapshot=None,
                schema_id=ns.namespace_id,
                table_name=name,
                live_file_count=0,
                live_record_count=0,
                live_bytes=0,
                current_snapshot_id=snap,
            )
            .returning(m.Table.table_id)
        ).scalar_one()
    )
    conn.execute(update(m.Snapshot).where(m.Snapshot.snapshot_id == snap).values(table_id=table_id))
    for order, col in enumerate(columns):
        column_id = conn.execute(
            insert(m.Column)
            .values(
                begin_snapshot=snap,
                end_snapshot=None,
                table_id=table_id,
                column_order=order,
                column_name=col,
                column_type="variant",
                nulls_allowed=True,
                parent_column=None,
            )
            .returning(m.Column.column_id)
        ).scalar_one()
        conn.execute(
            insert(m.TableColumnStats).values(
                table_id=table_id,
                column_id=column_id,
                contains_null=None,
                contains_nan=None,
                min_value=None,
                max_value=None,
                extra_stats=None,
            )
        )
    return table_id


def drop_namespace(conn: Connection, ns: NamespaceInfo) -> int:
    """End an empty namespace at a new snapshot (callers check it has no live table)."""
    snap = new_snapshot(conn, None, f"dropped_schema:{ns.namespace_id}")
    conn.execute(update(m.Schema).where(m.Schema.schema_id == ns.namespace_id).values(end_snapshot=snap))
    return snap


def count_live_tables(conn: Connection, ns: NamespaceInfo) -> int:
    return int(
        conn.execute(
            select(func.count())
            .select_from(m.Table)
            .where(m.Table.schema_id == ns.namespace_id, m.Table.end_snapshot.is_(None))
        ).scalar_one()
    )


def drop_table(conn: Connection, t: TableRow) -> int:
    snap = new_snapshot(conn, t.table_id, f"dropped_table:{t.table_id}", removed=t.live_file_count)
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
    conn.execute(
        update(D).where(D.table_id == t.table_id, D.end_snapshot.is_(None)).values(end_snapshot=snap)
    )
    # Through the ended files (primary key of the stats rows), not a scan of every table's stats.
    ended = select(D.data_file_id).where(D.table_id == t.table_id, D.end_snapshot == snap)
    conn.execute(
        update(S).where(S.data_file_id.in_(ended), S.end_snapshot.is_(None)).values(end_snapshot=snap)
    )
    return snap


def table_infos(conn: Connection, namespace: str | None = None, name: str | None = None) -> list[TableInfo]:
    T = m.Table
    # Correlated: one index-only count per listed table (index on snapshot.table_id).
    n_snapshots = (
        select(func.count())
        .select_from(m.Snapshot)
        .where(m.Snapshot.table_id == T.table_id)
        .correlate(T)
        .scalar_subquery()
    )
    cur = aliased(m.Snapshot)
    stmt = (
        select(
            T.table_id,
            m.Schema.schema_name,
            T.table_name,
            T.live_file_count,
            T.live_record_count,
            T.live_bytes,
            T.current_snapshot_id,
            n_snapshots,
            cur.snapshot_time,
            T.begin_snapshot,
        )
        .join(m.Schema, m.Schema.schema_id == T.schema_id)
        .outerjoin(cur, cur.snapshot_id == T.current_snapshot_id)
        .where(T.end_snapshot.is_(None), m.Schema.end_snapshot.is_(None))
        .order_by(m.Schema.schema_name, T.table_name)
    )
    if namespace is not None:
        stmt = stmt.where(m.Schema.schema_name == namespace)
    if name is not None:
        stmt = stmt.where(T.table_name == name)
    rows = conn.execute(stmt).all()
    cols: dict[int, list[str]] = defaultdict(list)
    ids = [int(r[0]) for r in rows]
    for chunk in chunks(ids):
        for tid, cname in conn.execute(
            select(m.Column.table_id, m.Column.column_name)
            .where(m.Column.table_id.in_(chunk), m.Column.end_snapshot.is_(None))
            .order_by(m.Column.table_id, m.Column.column_order)
        ):
            cols[int(tid)].append(cname)
    return [
        TableInfo(
            table_id=int(r[0]),
            namespace=r[1],
            name=r[2],
            columns=tuple(cols[int(r[0])]),
            live_file_count=int(r[3]),
            live_record_count=int(r[4]),
            live_bytes=int(r[5]),
            current_snapshot_id=int(r[6]),
            snapshot_count=int(r[7] or 0),
            last_commit_time=aware(r[8]),
            begin_snapshot=int(r[9]),
        )
        for r in rows
    ]


def aware(ts: datetime | None) -> datetime | None:
    """SQLite returns naive datetimes (stored in UTC)."""
    if ts is not None and ts.tzinfo is None:
        return ts.replace(tzinfo=UTC)
    return ts


# --- commit -----------------------------------------------------------------------------------


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


def _in(conn: Connection, col: Any, values: Sequence[Any]) -> Any:
    """``col IN values``: one array parameter on PostgreSQL (``= ANY``), a plain IN-list on SQLite."""
    if _is_postgres(conn):
        return col == any_(bindparam(None, list(values), type_=ARRAY(col.type)))
    return col.in_(values)


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
                select(
                    D.data_file_id, D.path, D.content_id, D.file_size_bytes, D.record_count, D.footer_size
                ).where(D.table_id == table_id, D.end_snapshot.is_(None), D.path.in_(chunk))
            )
        for r in rows:
            out[r[1]] = LiveFile(int(r[0]), r[1], r[2], int(r[3]), int(r[4]), int(r[5]))
    return out


#: The path dictionary's counter columns: ``live_<field>`` for each field of PathCounters.
COUNTER_COLUMNS = tuple(f"live_{n}" for n in COUNTER_NAMES)

_FLOAT64 = ShreddedType.parse("float64")
#: -0.0 and 0.0 as DuckLake renders them (float32 the same). The typed key column ``*_real`` holds
#: both as equal zeros (SQLite stores a whole REAL as an integer, dropping the sign), so in SQL the
#: stored text is the only way to tell them apart; Python checks the typed value
#: (:func:`service.values.is_negative_zero`).
_NEG_ZERO_TEXT = format_bound(_FLOAT64, -0.0)
_POS_ZERO_TEXT = format_bound(_FLOAT64, 0.0)


def _removed_counters() -> list[Any]:
    """SQL aggregates giving the :class:`PathCounters` of a set of stats rows, in field order.

    A projection of :meth:`service.stats.merge.PathAccumulator.add_row` (same definitions, with a
    bound "keyless" when its row has no typed key), kept in SQL so that a removal reads one row per
    path instead of every removed stats row."""

    def flag(cond: Any) -> Any:
        return func.sum(case((cond, 1), else_=0))

    has = S.value_count > 0
    return [
        func.count(),
        func.sum(S.value_count),
        func.sum(S.null_count),
        func.sum(S.column_size_bytes),
        flag(S.contains_nan.is_(True)),
        flag(S.contains_nan.is_(None)),
        flag(and_(has, S.min_value.is_(None))),
        flag(and_(has, S.max_value.is_(None))),
        flag(
            and_(
                has, S.min_value.is_not(None), S.min_num.is_(None), S.min_real.is_(None), S.min_bin.is_(None)
            )
        ),
        flag(
            and_(
                has, S.max_value.is_not(None), S.max_num.is_(None), S.max_real.is_(None), S.max_bin.is_(None)
            )
        ),
        flag(and_(has, S.min_real == 0, S.min_value == _NEG_ZERO_TEXT)),
        flag(and_(has, S.max_real == 0, S.max_value == _POS_ZERO_TEXT)),
    ]


@dataclass(slots=True)
class _PathRow:
    path_id: int
    width: Width


def ensure_paths(
    conn: Connection, table_id: int, keys: set[tuple[int, str, str]]
) -> dict[tuple[int, str, str], _PathRow]:
    """Get or create the dictionary rows of ``(column_id, variant_path, shredded_type)``."""
    out: dict[tuple[int, str, str], _PathRow] = {}
    vps = sorted({k[1] for k in keys})
    for chunk in chunks(vps):
        rows = conn.execute(
            select(
                VP.path_id,
                VP.column_id,
                VP.variant_path,
                VP.shredded_type,
                VP.max_width_num,
                VP.max_width_real,
            ).where(VP.table_id == table_id, VP.variant_path.in_(chunk))
        )
        for pid, cid, vp, tname, wn, wr in rows:
            k = (int(cid), vp, tname)
            if k in keys:
                out[k] = _PathRow(
                    int(pid), (None if wn is None else int(wn), None if wr is None else float(wr))
                )
    missing = sorted(keys - out.keys())
    if missing:
        params = [
            {
                "table_id": table_id,
                "column_id": cid,
                "variant_path": vp,
                "shredded_type": tname,
                **dict.fromkeys(COUNTER_COLUMNS, 0),
                "max_width_num": 0,
                "max_width_real": 0.0,
            }
            for cid, vp, tname in missing
        ]
        ids = (
            conn.execute(insert(VP).returning(VP.path_id, sort_by_parameter_order=True), params)
            .scalars()
            .all()
        )
        for k, pid in zip(missing, ids, strict=True):
            out[k] = _PathRow(int(pid), (0, 0.0))
    return out


_UPDATE_COUNTERS = (
    update(VP)
    .where(VP.path_id == bindparam("p_path_id"))
    .values({**{name: getattr(VP, name) + bindparam(f"d_{name}") for name in COUNTER_COLUMNS}})
)
_UPDATE_COUNTERS_AND_WIDTHS = (
    update(VP)
    .where(VP.path_id == bindparam("p_path_id"))
    .values(
        {
            **{name: getattr(VP, name) + bindparam(f"d_{name}") for name in COUNTER_COLUMNS},
            "max_width_num": bindparam("p_width_num", type_=VP.max_width_num.type),
            "max_width_real": bindparam("p_width_real", type_=VP.max_width_real.type),
        }
    )
)


def _apply_counters(
    conn: Connection, counters: Mapping[int, PathCounters], widths: Mapping[int, Width] | None, *, sign: int = 1
) -> None:
    """Add (``sign=1``) or subtract (``sign=-1``) these counters to the path dictionary's."""
    params = []
    for pid, c in sorted(counters.items()):
        p: dict[str, Any] = {
            "p_path_id": pid,
            **{f"d_{name}": sign * v for name, v in zip(COUNTER_COLUMNS, c.values(), strict=True)},
        }
        if widths is not None:
            p["p_width_num"], p["p_width_real"] = widths[pid]
        params.append(p)
    if params:
        conn.execute(_UPDATE_COUNTERS_AND_WIDTHS if widths is not None else _UPDATE_COUNTERS, params)


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
    with raw.cursor() as cur, cur.copy(sql) as cp:  # type: ignore[attr-defined]
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
    if not rows:
        return
    if _is_postgres(conn):
        _copy_rows(conn, "ducklake_file_variant_stats", STATS_COLUMNS, STATS_PG_TYPES, rows)
        return
    conn.exec_driver_sql(_SQLITE_INSERT_STATS, rows)  # executemany on the DB-API cursor


def add_files(conn: Connection, t: TableRow, snap: int, batch: PreparedBatch) -> None:
    """Insert the batch's files, their stats rows and the dictionary counters; update the table's
    counters. Global stats are merged by the caller."""
    files = batch.files
    ids = _insert_files(conn, t.table_id, snap, files)
    cols = t.columns
    path_rows = ensure_paths(conn, t.table_id, {(cols[c], vp, tn) for c, vp, tn in batch.counters})
    pid_of = {k: path_rows[(cols[k[0]], k[1], k[2])].path_id for k in batch.counters}
    tid = t.table_id
    stats_rows: list[tuple[Any, ...]] = []
    append = stats_rows.append
    for fid, fr in zip(ids, batch.rows, strict=True):
        for r in fr:
            append(
                (
                    fid, tid, cols[r[0]], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9],
                    pid_of[(r[0], r[1], r[2])], r[10], r[11], r[12], r[13], r[14], r[15], snap, None,
                )
            )  # fmt: skip
    _insert_stats(conn, stats_rows)
    deltas = {pid_of[k]: c for k, c in batch.counters.items()}
    widths = {
        pid_of[k]: max_width(path_rows[(cols[k[0]], k[1], k[2])].width, w) for k, w in batch.widths.items()
    }
    _apply_counters(conn, deltas, widths)
    conn.execute(
        update(m.Table)
        .where(m.Table.table_id == t.table_id)
        .values(
            live_file_count=m.Table.live_file_count + len(files),
            live_record_count=m.Table.live_record_count + sum(f.record_count for f in files),
            live_bytes=m.Table.live_bytes + sum(f.file_size_bytes for f in files),
            current_snapshot_id=snap,
        )
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
    agg = _removed_counters()
    for chunk in chunks(ids, 10_000 if _is_postgres(conn) else CHUNK):
        conn.execute(update(D).where(_in(conn, D.data_file_id, chunk)).values(end_snapshot=snap))
        for row in conn.execute(
            select(S.path_id, *agg)
            .where(_in(conn, S.data_file_id, chunk), S.end_snapshot.is_(None))
            .group_by(S.path_id)
        ):
            pid = int(row[0])
            c = PathCounters(*(int(v or 0) for v in row[1:]))  # PostgreSQL sums to NUMERIC
            prev = removed.get(pid)
            removed[pid] = c if prev is None else prev + c
        conn.execute(
            update(S)
            .where(_in(conn, S.data_file_id, chunk), S.end_snapshot.is_(None))
            .values(end_snapshot=snap)
        )
    _apply_counters(conn, removed, None, sign=-1)
    conn.execute(
        update(m.Table)
        .where(m.Table.table_id == t.table_id)
        .values(
            live_file_count=m.Table.live_file_count - len(live),
            live_record_count=m.Table.live_record_count - sum(lf.record_count for lf in live),
            live_bytes=m.Table.live_bytes - sum(lf.file_size_bytes for lf in live),
            current_snapshot_id=snap,
        )
    )


# --- global stats -----------------------------------------------------------------------------


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


def write_global_json(
    conn: Connection, t: TableRow, new: Mapping[str, str | None], old: Mapping[str, str | None]
) -> None:
    for col, doc in new.items():
        if old.get(col) != doc:
            conn.execute(
                update(m.TableColumnStats)
                .where(
                    m.TableColumnStats.table_id == t.table_id, m.TableColumnStats.column_id == t.columns[col]
                )
                .values(extra_stats=doc)
            )


def _probe_bound(conn: Connection, path_id: int, t: ShreddedType, *, want_min: bool) -> Bound | None:
    """The extreme known bound among live rows with values, through the partial index."""
    fam = family(t)
    key = getattr(S, f"{'min' if want_min else 'max'}_{fam}")
    value = S.min_value if want_min else S.max_value
    s = conn.execute(
        select(value)
        .where(S.path_id == path_id, S.end_snapshot.is_(None), key.is_not(None), S.value_count > 0)
        .order_by(key.asc() if want_min else key.desc())
        .limit(1)
    ).scalar()
    return None if s is None else parse_bound(t, s)


def _scan_path(conn: Connection, names: Mapping[int, str], path_id: int, t: ShreddedType) -> PathAccumulator:
    """The merge of a path's live rows, read one by one: for bounds without a typed key, which the
    index cannot order."""
    stmt = select(*_STATS_READ).where(S.path_id == path_id, S.end_snapshot.is_(None))
    acc: PathAccumulator | None = None
    for r in conn.execute(stmt.execution_options(yield_per=10_000)):
        ps = _path_stats(names, r)
        if acc is None:
            acc = PathAccumulator(ps.column, ps.variant_path, t)
        acc.add(ps)
    assert acc is not None, "a path with keyless bounds has live rows"
    return acc


def rebuild_global(conn: Connection, t: TableRow, live_file_count: int) -> GlobalStats:
    """Global stats of the live files from the dictionary counters plus one index probe per kept
    bound: O(paths), not O(stats rows). Used after removals (where an incremental merge is
    impossible)."""
    if live_file_count == 0:
        return GlobalStats(0, {})
    names = t.column_names
    # Only the paths every live file has (complete_paths keeps no other).
    rows = conn.execute(
        select(
            VP.path_id, VP.column_id, VP.variant_path, VP.shredded_type, *(getattr(VP, c) for c in COUNTER_COLUMNS)
        ).where(VP.table_id == t.table_id, VP.live_file_count == live_file_count)
    ).all()
    paths: list[PathAccumulator] = []
    for r in rows:
        pid, cid, vp, tname = int(r[0]), int(r[1]), r[2], r[3]
        if cid not in names:
            continue
        c = PathCounters(*(int(v) for v in r[4:]))
        st = ShreddedType.parse(tname)
        if c.min_keyless_files or c.max_keyless_files:
            paths.append(_scan_path(conn, names, pid, st))
            continue
        lo = _probe_bound(conn, pid, st, want_min=True) if c.min_is_known else None
        hi = _probe_bound(conn, pid, st, want_min=False) if c.max_is_known else None
        paths.append(PathAccumulator.restore(names[cid], vp, st, c, lo, hi))
    return complete_paths(live_file_count, paths)


def _live_at(model: Any, snapshot: int | None) -> Any:
    if snapshot is None:
        return model.end_snapshot.is_(None)
    return and_(
        model.begin_snapshot <= snapshot, or_(model.end_snapshot.is_(None), model.end_snapshot > snapshot)
    )


def _path_stats(names: Mapping[int, str], r: Any) -> PathStats:
    st = ShreddedType.parse(r.shredded_type)
    return PathStats(
        column=names.get(int(r.column_id), f"#{r.column_id}"),
        variant_path=r.variant_path,
        shredded_type=st,
        column_size_bytes=int(r.column_size_bytes),
        value_count=int(r.value_count),
        null_count=int(r.null_count),
        min_value=None if r.min_value is None else parse_bound(st, r.min_value),
        max_value=None if r.max_value is None else parse_bound(st, r.max_value),
        contains_nan=r.contains_nan,
        extra_stats=r.extra_stats,
    )


_STATS_READ = (
    S.data_file_id,
    S.column_id,
    S.variant_path,
    S.shredded_type,
    S.column_size_bytes,
    S.value_count,
    S.null_count,
    S.min_value,
    S.max_value,
    S.contains_nan,
    S.extra_stats,
)


def count_files(conn: Connection, table_id: int, snapshot: int | None, *, prefix: str | None = None) -> int:
    """Files live at ``snapshot`` (None = now), only those under ``prefix`` if given."""
    return int(
        conn.execute(
            select(func.count())
            .select_from(D)
            .where(D.table_id == table_id, _live_at(D, snapshot), *_prefix_filter(prefix))
        ).scalar_one()
    )


def stats_for_files(conn: Connection, t: TableRow, ids: Sequence[int]) -> dict[int, list[PathStats]]:
    """The PathStats of the given data files (a file's stats rows never change once committed)."""
    names = t.column_names
    out: dict[int, list[PathStats]] = {}
    for chunk in chunks(list(ids)):
        for r in conn.execute(select(*_STATS_READ).where(S.data_file_id.in_(chunk)).order_by(S.path_id)):
            out.setdefault(int(r.data_file_id), []).append(_path_stats(names, r))
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


def keyset_page(
    stmt: Select[Any],
    keys: Sequence[ColumnElement[Any]],
    after: Sequence[Any] | None,
    *,
    limit: int,
    descending: bool = False,
) -> Select[Any]:
    """``stmt`` ordered by ``keys`` (all ascending, or all descending), from the first row past
    the one whose keys are ``after`` (the last row of the previous page; None: from the start), at
    most ``limit`` rows. Later keys break ties of earlier ones, so the key tuple must be unique."""
    if after is not None:
        stmt = stmt.where(_past(keys, after, descending))
    return stmt.order_by(*(k.desc() if descending else k for k in keys)).limit(limit)


def _past(keys: Sequence[ColumnElement[Any]], after: Sequence[Any], descending: bool) -> ColumnElement[bool]:
    # (k1, k2) > (v1, v2) as k1 > v1 OR (k1 = v1 AND k2 > v2): row values are not portable, and
    # the leading plain comparison keeps an index on k1 usable.
    (key, *more_keys), (value, *more_values) = keys, after
    beyond = key < value if descending else key > value
    if not more_keys:
        return beyond
    return or_(beyond, and_(key == value, _past(more_keys, more_values, descending)))


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
) -> list[DataFileInfo]:
    """Live files ordered by ``sort`` then path, keyset on ``(sort value, path)`` (just the path
    for ``sort="path"``). No index covers size or record count: a top-N sort per page."""
    stmt = select(*FILE_INFO_COLUMNS).where(D.table_id == table_id, D.end_snapshot.is_(None), *_prefix_filter(prefix))
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
    return FileStats(
        path=r.path,
        file_size_bytes=int(r.file_size_bytes),
        record_count=int(r.record_count),
        footer_size=int(r.footer_size),
        content_id=r.content_id,
        variant_columns=tuple(json.loads(r.variant_columns)),
        paths=tuple(_path_stats(names, x) for x in rows),
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


def file_bounds(
    conn: Connection, path_id: int, st: ShreddedType, order: Literal["min", "path"], limit: int
) -> list[FileBound]:
    """The live stats rows of ``path_id`` (at most ``limit``), by the typed min key (rows without
    one last, by path) or by file path."""
    cols = (D.path, S.value_count, S.null_count, S.min_value, S.max_value, S.contains_nan)
    base = (
        select(*cols)
        .join(D, D.data_file_id == S.data_file_id)
        .where(S.path_id == path_id, S.end_snapshot.is_(None))
    )
    if order == "path":
        rows: Sequence[Any] = conn.execute(base.order_by(D.path).limit(limit)).all()
    else:
        key = getattr(S, f"min_{family(st)}")
        # Two probes so the keyed part walks the partial (path_id, min_*) index in order.
        rows = list(conn.execute(base.where(key.is_not(None)).order_by(key, S.data_file_id).limit(limit)))
        if len(rows) < limit:
            rows += conn.execute(base.where(key.is_(None)).order_by(D.path).limit(limit - len(rows))).all()
    return [FileBound(r[0], int(r[1]), int(r[2]), r[3], r[4], r[5]) for r in rows]


def path_coverage_rows(conn: Connection, table_id: int) -> list[tuple[int, str, str, int]]:
    rows = conn.execute(
        select(VP.column_id, VP.variant_path, VP.shredded_type, VP.live_file_count).where(
            VP.table_id == table_id, VP.live_file_count > 0
        )
    ).all()
    return [(int(r[0]), r[1], r[2], int(r[3])) for r in rows]


# --- idempotency keys -------------------------------------------------------------------------


def get_commit_key(conn: Connection, table_id: int, principal: str, key: str) -> tuple[str, str] | None:
    row = conn.execute(
        select(m.CommitKey.request_hash, m.CommitKey.result).where(
            m.CommitKey.table_id == table_id,
            m.CommitKey.principal == principal,
            m.CommitKey.idempotency_key == key,
        )
    ).first()
    return None if row is None else (row[0], row[1])


def put_commit_key(
    conn: Connection, table_id: int, principal: str, key: str, request_hash: str, snapshot: int | None, result: str
) -> None:
    conn.execute(
        insert(m.CommitKey).values(
            table_id=table_id,
            principal=principal,
            idempotency_key=key,
            request_hash=request_hash,
            snapshot_id=snapshot,
            result=result,
            created_at=utcnow(),
        )
    )
