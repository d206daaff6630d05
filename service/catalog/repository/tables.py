"""Snapshots, namespaces and tables: creating and ending them, finding and listing them.

Writers serialize per table: :func:`find_table` with ``lock=True`` takes ``SELECT ... FOR UPDATE``
on the ``ducklake_table`` row on PostgreSQL (on SQLite the transaction already holds the write lock
from ``BEGIN IMMEDIATE``). Every read that decides a write happens after that lock.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, func, insert, select, update
from sqlalchemy.orm import aliased

from service.catalog import models as m
from service.catalog.repository.common import D, S, aware, chunks, utcnow
from service.catalog.results import NamespaceInfo, TableInfo
from service.errors import NotFoundError
from service.variant.paths import quote_field


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
