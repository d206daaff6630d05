"""Snapshots, namespaces and tables: creating them, ending namespaces and columns, finding and
listing them (a table ends as its files do: :func:`service.catalog.repository.commit.drop_table`).

Writers serialize per table: :func:`find_table` with ``lock=True`` takes ``SELECT ... FOR UPDATE``
on the ``ducklake_table`` row on PostgreSQL (on SQLite the transaction already holds the write lock
from ``BEGIN IMMEDIATE``). Every read that decides a write happens after that lock.
"""

from __future__ import annotations

import threading
import uuid
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, TypeVar, cast

from sqlalchemy import Connection, bindparam, func, insert, or_, select, update

from service.catalog import models as m
from service.catalog.repository.common import aware, chunks, utcnow
from service.catalog.results import NamespaceInfo, TableColumn, TableInfo
from service.errors import NotFoundError
from service.stats.model import FileStats
from service.variant.paths import quote_field

V = TypeVar("V")


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
class ColumnRow:
    """A plain or partition column: its ``ducklake_column`` row (live, or live at a past snapshot:
    :func:`columns_at`)."""

    column_id: int
    #: DuckLake type name as stored (the first file's type; a partition column's declared type,
    #: or the type inferred when it was created: see :func:`service.catalog.repository.partition_types`).
    type_name: str
    kind: str
    declared: bool = False

    @property
    def partition(self) -> bool:
        return self.kind == "partition"


@dataclass(frozen=True, slots=True)
class TableRow:
    """The locked (or just read) table row, with its live Variant columns (``columns``) and its
    live plain and partition columns (``plain``): kept apart so that every Variant reader (global
    stats, coverage, warnings) sees Variant columns only."""

    table_id: int
    schema_id: int
    namespace: str
    name: str
    begin_snapshot: int
    live_file_count: int
    live_record_count: int
    live_bytes: int
    current_snapshot_id: int
    #: Variant column name -> column_id, in column order.
    columns: Mapping[str, int]
    #: Plain and partition column name -> its row, in column order.
    plain: Mapping[str, ColumnRow] = field(default_factory=dict)
    location: str | None = None
    #: What the table's columns and its schema for predicates are a function of, read with the row
    #: by :func:`find_table` given a :class:`TableCache`: ``(table_id, current_snapshot_id, live
    #: column rows, live inferred partition types)``. None when not read (writers).
    metadata_key: tuple[Any, ...] | None = None
    #: A past snapshot this row describes the columns at (a plan's view, see
    #: ``Catalog._as_of``); None: the current ones.
    as_of: int | None = None

    @property
    def qualified_name(self) -> str:
        return f"{self.namespace}.{self.name}"

    @property
    def column_names(self) -> dict[int, str]:
        """Variant column_id -> name."""
        return {cid: name for name, cid in self.columns.items()}

    @property
    def plain_names(self) -> dict[int, str]:
        """Plain and partition column_id -> name."""
        return {c.column_id: name for name, c in self.plain.items()}

    @property
    def partition_columns(self) -> list[str]:
        """The partition columns, in order (their ``partition_key_index`` is the position here)."""
        return [name for name, c in self.plain.items() if c.partition]


def columns_at(conn: Connection, table_id: int, snap: int) -> tuple[dict[str, int], dict[str, ColumnRow]]:
    """(Variant columns, plain and partition columns) a predicate at the past snapshot ``snap``
    may name, in column order: the columns not ended by then. That is the live ones (a column a
    later commit or ``refresh`` added too: files live at ``snap`` hold no value of it, so it never
    prunes them) and those a later relayout ended. Of two columns of one name (a relayout that
    made a plain column a partition column, or back), the one that existed at ``snap``."""
    C = m.Column
    rows = conn.execute(
        select(C.column_name, C.column_id, C.column_type, C.column_kind, C.type_declared, C.begin_snapshot)
        .where(C.table_id == table_id, or_(C.end_snapshot.is_(None), C.end_snapshot > snap))
        .order_by(C.column_order)
    ).all()
    existed = {name for name, _, _, _, _, begin in rows if begin <= snap}
    variant: dict[str, int] = {}
    plain: dict[str, ColumnRow] = {}
    for name, cid, tname, kind, declared, begin in rows:
        if begin > snap and name in existed:
            continue
        if kind == VARIANT:
            variant[name] = int(cid)
        else:
            plain[name] = ColumnRow(int(cid), tname, kind, bool(declared))
    return variant, plain


def partition_types_at(
    conn: Connection, table_id: int, column_ids: Collection[int], snapshot: int
) -> dict[int, str | None]:
    """The type of each of these undeclared partition columns at a past ``snapshot``: Spark's
    merge of the types its non-NULL values were stored as in the files live then, as Spark reading
    those files infers it. Neither the live counters (today's files) nor every type ever stored
    will do: ``p=05`` and ``p=5`` make ``p`` an int, where both equal ``'5'``; a later ``p=a``
    makes it a string, where only one does, and a plan typed so would prune the other. A key
    counts if a stats row with values was live at ``snapshot`` (a NULL value is stored under
    varchar but is no type); the keys that never had values, or whose first row came later, are
    not probed."""
    if not column_ids:
        return {}
    VP, S, F = m.VariantPath, m.FileColumnStats, m.DataFile
    # Through the files live at the snapshot (the data files' table index), each probing the
    # stats rows' primary key: no index serves a key's ended rows by themselves.
    live_then = (
        select(S.data_file_id)
        .join(F, F.data_file_id == S.data_file_id)
        .where(
            F.table_id == table_id,
            F.begin_snapshot <= snapshot,
            or_(F.end_snapshot.is_(None), F.end_snapshot > snapshot),
            S.path_id == VP.path_id,
            S.value_count > 0,
        )
        .exists()
    )
    found: dict[int, list[str]] = defaultdict(list)
    for cid, tname in conn.execute(
        # table_id first: the dictionary's one index leads with it.
        select(VP.column_id, VP.shredded_type).where(
            VP.table_id == table_id,
            VP.column_id.in_(list(column_ids)),
            VP.variant_path == m.COLUMN_KEY_PATH,
            VP.had_values.is_(True),
            VP.first_snapshot <= snapshot,
            live_then,
        )
    ):
        found[int(cid)].append(tname)
    return {cid: merge_type_names(names) for cid, names in found.items()}


def load_columns(conn: Connection, table_id: int) -> tuple[dict[str, int], dict[str, ColumnRow]]:
    """(Variant columns, plain and partition columns) live now, in column order."""
    variant: dict[str, int] = {}
    plain: dict[str, ColumnRow] = {}
    for name, cid, tname, kind, declared in conn.execute(_LOAD_COLUMNS, {"table_id": table_id}):
        if kind == VARIANT:
            variant[name] = int(cid)
        else:
            plain[name] = ColumnRow(int(cid), tname, kind, bool(declared))
    return variant, plain


#: ``ducklake_column.column_kind`` values.
VARIANT, PLAIN, PARTITION = "variant", "plain", "partition"


class TableCache:
    """Values derived from a table's metadata (its columns, its predicate schema...), each kept by
    :attr:`TableRow.metadata_key` (an LRU of ``size`` keys). The key is read from the database with
    the table row in the reader's own transaction, so a value is never served for another state of
    the table, whichever process changed it: a commit moves ``current_snapshot_id``; ``shredcat
    refresh`` (which adds columns and partition values to committed files without a snapshot)
    only ever adds live column rows and live (partition column, type) counters, so their counts
    move. Thread-safe."""

    def __init__(self, size: int = 256) -> None:
        self._size = size
        self._entries: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, kind: str, key: tuple[Any, ...]) -> Any:
        with self._lock:
            hit = self._entries.get((kind, *key))
            if hit is not None:
                self._entries.move_to_end((kind, *key))
            return hit

    def put(self, kind: str, key: tuple[Any, ...], value: Any) -> None:
        with self._lock:
            self._entries[(kind, *key)] = value
            self._entries.move_to_end((kind, *key))
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)

    def derived(self, kind: str, metadata_key: tuple[Any, ...] | None, extra: tuple[Any, ...], compute: Callable[[], V]) -> V:
        """``compute()``, kept for this state of the table (its :attr:`TableRow.metadata_key`, read
        in the caller's transaction, and ``extra``) and computed again for another; with no key
        (a table row read without one), computed every time."""
        if metadata_key is None:
            return compute()
        key = (*metadata_key, *extra)
        hit = self.get(kind, key)
        if hit is None:
            hit = compute()
            self.put(kind, key, hit)
        return cast(V, hit)


def _table_statement() -> Any:
    T = m.Table
    return (
        select(
            T.table_id,
            T.schema_id,
            T.begin_snapshot,
            T.live_file_count,
            T.live_record_count,
            T.live_bytes,
            T.current_snapshot_id,
            T.location,
        )
        .join(m.Schema, m.Schema.schema_id == T.schema_id)
        .where(
            m.Schema.schema_name == bindparam("namespace"),
            m.Schema.end_snapshot.is_(None),
            T.table_name == bindparam("name"),
            T.end_snapshot.is_(None),
        )
    )


def _metadata_version() -> tuple[Any, Any]:
    """Scalar subqueries of the table statement: its live column rows, and its (undeclared
    partition column, stored type) counters with live values, whose merge is such a column's type
    (see :func:`partition_types_of`)."""
    C, VP = m.Column, m.VariantPath
    columns = select(func.count()).where(C.table_id == m.Table.table_id, C.end_snapshot.is_(None))
    inferred = (
        select(func.count())
        .select_from(VP)
        .join(C, C.column_id == VP.column_id)
        .where(
            C.table_id == m.Table.table_id,
            C.end_snapshot.is_(None),
            C.column_kind == PARTITION,
            C.type_declared.is_(False),
            VP.variant_path == m.COLUMN_KEY_PATH,
            VP.live_value_count > 0,
        )
    )
    return columns.scalar_subquery(), inferred.scalar_subquery()


# Built once: constructing a statement costs more Python time than PostgreSQL takes to run it.
_FIND_TABLE = _table_statement()
_FIND_TABLE_LOCKED = _FIND_TABLE.with_for_update(of=m.Table)
_FIND_TABLE_VERSIONED = _FIND_TABLE.add_columns(*_metadata_version())
_LOAD_COLUMNS = (
    select(m.Column.column_name, m.Column.column_id, m.Column.column_type, m.Column.column_kind, m.Column.type_declared)
    .where(m.Column.table_id == bindparam("table_id"), m.Column.end_snapshot.is_(None))
    .order_by(m.Column.column_order)
)


def find_table(
    conn: Connection, namespace: str, name: str, *, lock: bool = False, cache: TableCache | None = None
) -> TableRow | None:
    """The live table. ``lock``: take its row lock (writers). ``cache``: read its
    :attr:`~TableRow.metadata_key` too, and take its columns from the cache when they are there
    (readers: one statement instead of two)."""
    if lock and cache is not None:
        raise ValueError("a locked read does not use the metadata cache")
    stmt = _FIND_TABLE_LOCKED if lock else _FIND_TABLE_VERSIONED if cache is not None else _FIND_TABLE
    row = conn.execute(stmt, {"namespace": namespace, "name": name}).first()
    if row is None:
        return None
    table_id = int(row[0])
    key: tuple[int, int, int, int] | None = None
    if cache is None:
        variant, plain = load_columns(conn, table_id)
    else:
        key = (table_id, int(row[6]), int(row[8]), int(row[9]))
        columns = cache.get("columns", key)
        if columns is None:
            # Read-only views: every reader of this key shares them.
            variant, plain = (MappingProxyType(x) for x in load_columns(conn, table_id))
            cache.put("columns", key, (variant, plain))
        else:
            variant, plain = columns
    return TableRow(
        table_id=table_id,
        schema_id=int(row[1]),
        namespace=namespace,
        name=name,
        begin_snapshot=int(row[2]),
        live_file_count=int(row[3]),
        live_record_count=int(row[4]),
        live_bytes=int(row[5]),
        current_snapshot_id=int(row[6]),
        columns=variant,
        plain=plain,
        location=row[7],
        metadata_key=key,
    )


def require_table(
    conn: Connection, namespace: str, name: str, *, lock: bool = False, cache: TableCache | None = None
) -> TableRow:
    t = find_table(conn, namespace, name, lock=lock, cache=cache)
    if t is None:
        raise NotFoundError(
            f"table {namespace}.{name} does not exist", details={"table": f"{namespace}.{name}"}
        )
    return t


def insert_table(
    conn: Connection,
    ns: NamespaceInfo,
    name: str,
    columns: Sequence[str],
    *,
    partition_columns: Sequence[tuple[str, str]] = (),
    location: str | None = None,
) -> int:
    """A new table with these Variant columns and declared partition columns ``(name, type)``."""
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
                location=location,
            )
            .returning(m.Table.table_id)
        ).scalar_one()
    )
    conn.execute(update(m.Snapshot).where(m.Snapshot.snapshot_id == snap).values(table_id=table_id))
    for order, col in enumerate(columns):
        _insert_variant_column(conn, table_id, snap, order, col)
    for order, (col, tname) in enumerate(partition_columns, start=len(columns)):
        insert_column(conn, table_id, snap, order, col, tname, PARTITION, declared=True)
    return table_id


def _insert_variant_column(conn: Connection, table_id: int, snap: int, order: int, name: str) -> None:
    """A Variant column and its (empty) global stats row."""
    column_id = insert_column(conn, table_id, snap, order, name, "variant", VARIANT)
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


def add_variant_columns(conn: Connection, t: TableRow, names: Sequence[str]) -> TableRow:
    """Give a table created in ``conn``'s own transaction more Variant columns, as if it had been
    created with them (at its creation snapshot); their places are set by
    :func:`order_columns_as_created`. Only for a table nobody else has seen yet (a bulk load that
    created it): a committed table's columns are history."""
    if not names:
        return t
    order = int(
        conn.execute(
            select(func.coalesce(func.max(m.Column.column_order), -1)).where(m.Column.table_id == t.table_id)
        ).scalar_one()
    ) + 1
    for k, name in enumerate(names):
        _insert_variant_column(conn, t.table_id, t.begin_snapshot, order + k, name)
    variant, plain = load_columns(conn, t.table_id)
    return replace(t, columns=variant, plain=plain)


def order_columns_as_created(conn: Connection, table_id: int) -> None:
    """Place a table's columns as one commit of all its files would have created them: Variant,
    then plain, then partition columns, each kind in the order they came. For a table created in
    ``conn``'s own transaction, whose columns came batch by batch (a later batch's Variant or
    plain column after an earlier batch's partition columns)."""
    rank = {VARIANT: 0, PLAIN: 1, PARTITION: 2}
    rows = conn.execute(
        select(m.Column.column_id, m.Column.column_kind, m.Column.column_order).where(m.Column.table_id == table_id)
    ).all()
    placed = sorted(rows, key=lambda r: (rank.get(r.column_kind, 1), r.column_order))
    for order, r in enumerate(placed):
        if r.column_order != order:
            conn.execute(update(m.Column).where(m.Column.column_id == r.column_id).values(column_order=order))


def insert_column(
    conn: Connection, table_id: int, snap: int, order: int, name: str, type_name: str, kind: str, *, declared: bool = False
) -> int:
    """A plain or partition column (no ``ducklake_table_column_stats`` row: global stats are
    Variant stats)."""
    return int(
        conn.execute(
            insert(m.Column)
            .values(
                begin_snapshot=snap,
                end_snapshot=None,
                table_id=table_id,
                column_order=order,
                column_name=name,
                column_type=type_name,
                nulls_allowed=True,
                parent_column=None,
                column_kind=kind,
                type_declared=declared,
            )
            .returning(m.Column.column_id)
        ).scalar_one()
    )


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
    cur = m.Snapshot.alias()
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
            T.location,
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
    every: dict[int, list[TableColumn]] = defaultdict(list)
    ids = [int(r[0]) for r in rows]
    for chunk in chunks(ids):
        for tid, cname, tname, kind, declared in conn.execute(
            select(
                m.Column.table_id, m.Column.column_name, m.Column.column_type, m.Column.column_kind, m.Column.type_declared
            )
            .where(m.Column.table_id.in_(chunk), m.Column.end_snapshot.is_(None))
            .order_by(m.Column.table_id, m.Column.column_order)
        ):
            if kind == VARIANT:
                cols[int(tid)].append(cname)
            every[int(tid)].append(TableColumn(cname, tname, kind, bool(declared)))
    merged = partition_types_of(conn, [t for t in ids if any(c.kind == PARTITION for c in every[t])])
    for tid, types in merged.items():
        every[tid] = [
            replace(c, type=types[c.name] or c.type)
            if c.kind == PARTITION and not c.declared and c.name in types
            else c
            for c in every[tid]
        ]
    return [
        TableInfo(
            table_id=int(r[0]),
            namespace=r[1],
            name=r[2],
            variant_columns=tuple(cols[int(r[0])]),
            live_file_count=int(r[3]),
            live_record_count=int(r[4]),
            live_bytes=int(r[5]),
            current_snapshot_id=int(r[6]),
            snapshot_count=int(r[7] or 0),
            last_commit_time=aware(r[8]),
            begin_snapshot=int(r[9]),
            columns=tuple(every[int(r[0])]),
            location=r[10],
        )
        for r in rows
    ]


def partition_types_of(conn: Connection, table_ids: Sequence[int]) -> dict[int, dict[str, str | None]]:
    """The type of each undeclared partition column of these tables: Spark's merge
    (:func:`service.storage.partitions.merge_types`) of the types its non-NULL values are stored as
    in live files, read from the key dictionary's live counters (one row per type, no file scan).
    A column with no live non-NULL value is absent (its stored type stands)."""
    if not table_ids:
        return {}
    C, VP = m.Column, m.VariantPath
    found: dict[int, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for chunk in chunks(list(table_ids)):
        for tid, cname, tname in conn.execute(
            select(C.table_id, C.column_name, VP.shredded_type)
            .join(VP, VP.column_id == C.column_id)
            .where(
                C.table_id.in_(chunk),
                C.end_snapshot.is_(None),
                C.column_kind == PARTITION,
                C.type_declared.is_(False),
                VP.variant_path == m.COLUMN_KEY_PATH,
                # Types of non-NULL values only (a NULL value is no type, as in Spark).
                VP.live_value_count > 0,
            )
        ):
            found[int(tid)][cname].append(tname)
    out: dict[int, dict[str, str | None]] = {}
    for tid, by_col in found.items():
        out[tid] = {c: merge_type_names(ts) for c, ts in by_col.items()}
    return out


def merge_type_names(names: Sequence[str]) -> str | None:
    """Spark's partition type merge of stored type names (one name: itself; none: None, Spark's
    ``void``)."""
    unique = sorted(set(names))
    if len(unique) <= 1:
        return unique[0] if unique else None
    from service.storage.partitions import merge_types
    from service.values import ShreddedType

    merged = merge_types([ShreddedType.parse(n) for n in unique])
    return None if merged is None else merged.name



def add_file_columns(conn: Connection, t: TableRow, snap: int, files: Sequence[FileStats]) -> TableRow:
    """Create the plain and partition columns these (validated, checked) files bring, at ``snap``;
    the table row with them. A plain column takes the type of the first file that has it (a later
    file with another type keeps its own type in its stats rows; the planner decides whether those
    serve a predicate). New partition columns (a table that had none) take Spark's merge of the
    types the batch's values were inferred as, in the first file's order."""
    new_plain: dict[str, str] = {}
    for f in files:
        for c in f.columns:
            if c.column not in t.plain and c.column not in new_plain:
                new_plain[c.column] = c.column_type.name
    new_parts: dict[str, list[str]] = {}
    if not t.partition_columns:
        for f in files:
            for pv in f.partitions:
                types = new_parts.setdefault(pv.column, [])
                if pv.value is not None or pv.raw is not None:  # NULL takes no part in the merge
                    types.append(pv.value_type.name)
    if not new_plain and not new_parts:
        return t
    # After the last of all the table's columns, ended ones included: an ended column keeps its
    # place in history, and a live column's place must stay unique among the live ones.
    order = int(
        conn.execute(
            select(func.coalesce(func.max(m.Column.column_order), -1)).where(m.Column.table_id == t.table_id)
        ).scalar_one()
    ) + 1
    for name, tname in new_plain.items():
        insert_column(conn, t.table_id, snap, order, name, tname, PLAIN)
        order += 1
    for name, tnames in new_parts.items():
        # Every value NULL (Spark's void): stored as varchar; NULL counts prune the same in any type.
        insert_column(conn, t.table_id, snap, order, name, merge_type_names(tnames) or "varchar", PARTITION)
        order += 1
    variant, plain = load_columns(conn, t.table_id)
    return replace(t, columns=variant, plain=plain)


def end_columns(conn: Connection, t: TableRow, snap: int, names: Collection[str]) -> TableRow:
    """End these plain or partition columns at ``snap`` (a replacement of every live file that
    brings another partition layout); the table row without them. Their files' rows stay, for
    history: a file keeps the column ids it was committed with."""
    ids = [t.plain[n].column_id for n in names]
    if not ids:
        return t
    conn.execute(
        update(m.Column)
        .where(m.Column.table_id == t.table_id, m.Column.column_id.in_(ids), m.Column.end_snapshot.is_(None))
        .values(end_snapshot=snap)
    )
    return replace(t, plain={n: c for n, c in t.plain.items() if n not in names})
