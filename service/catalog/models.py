"""SQLAlchemy Core tables of the catalog (no ORM). The schema itself is created and changed only by
the Alembic migrations in ``migrations/``; :func:`schema` is the source autogenerate compares
against.

DuckLake's table and column names are used wherever the concept is the same (``ducklake_schema``,
``ducklake_table``, ``ducklake_column``, ``ducklake_snapshot``, ``ducklake_data_file``,
``ducklake_file_variant_stats``, ``ducklake_table_column_stats``); DuckLake's columns keep their
names and types, and shredcat's additions come after them. Tables of shredcat's own are prefixed
``shredcat_``.

Designed for pruning at scale (10^6 files x 10 paths = 10^7 stats rows):

* ``ducklake_file_variant_stats`` carries, beside DuckLake's VARCHAR ``min_value``/``max_value``
  (kept byte for byte), order-preserving typed keys from :func:`service.values.index_key` in
  one of three families (``*_num`` BIGINT, ``*_real`` DOUBLE, ``*_bin`` bytea/BLOB), a ``path_id``
  into the small ``shredcat_variant_path`` dictionary, and the owning file's
  ``begin_snapshot``/``end_snapshot`` (so live rows are filtered without a join). Partial indexes
  ``WHERE end_snapshot IS NULL AND <key> IS NOT NULL`` on ``(path_id, <key>)`` serve range probes:
  a row enters only the two indexes of its own family.
* ``shredcat_variant_path`` keeps per-path live counters (files, values, nulls, sizes, NaN and
  unknown-bound files) so that global stats are rebuilt after a removal without scanning the stats
  rows, ``live_file_count`` for pruning (no anti-join needed when it equals the table's live file
  count), and ``max_width_num``/``max_width_real``: the largest ``max - min`` of any file ever
  committed (monotone, an over-estimate; NULL = unbounded), which turns a point probe into a
  bounded index range ``min BETWEEN lit - width AND lit``.
* ``path`` columns use the "C" collation on PostgreSQL, so ordering (keyset pagination, prefix
  ranges) is byte order on both backends.
"""

from __future__ import annotations

import threading
from typing import Any, NamedTuple

from sqlalchemy import (
    BigInteger,
    Boolean,
    DateTime,
    Double,
    ForeignKey,
    FromClause,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    Uuid,
    false,
    text,
)
from sqlalchemy import Column as SqlColumn
from sqlalchemy import Table as SqlTable
from sqlalchemy.schema import SchemaItem

#: Surrogate keys: BIGINT on PostgreSQL, INTEGER (the rowid alias, 64-bit) on SQLite.
BigId = BigInteger().with_variant(Integer(), "sqlite")
#: File paths: byte-order collation on PostgreSQL ("C"), SQLite's default BINARY is byte order.
PathString = String().with_variant(String(collation="C"), "postgresql")

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

LIVE = "end_snapshot IS NULL"


class _PartialIndex(NamedTuple):
    table: str
    name: str
    columns: tuple[str, ...]
    where: str
    unique: bool


#: The partial indexes over live rows, declared with their tables below and built by
#: :func:`schema` only: SQLAlchemy validates a ``postgresql_where`` by importing its whole
#: PostgreSQL dialect (some 40 ms of CPU), which a command reading a SQLite catalog would pay for
#: indexes it never reads (the migrations create them; Alembic's comparison is their one reader).
_PARTIAL: list[_PartialIndex] = []
_PARTIAL_LOCK = threading.Lock()


def _live(table: str, name: str, *columns: str, unique: bool = False, extra: str | None = None) -> None:
    """Declares a partial index ``WHERE end_snapshot IS NULL [AND extra]`` for both backends."""
    where = LIVE if extra is None else f"{LIVE} AND {extra}"
    _PARTIAL.append(_PartialIndex(table, name, columns, where, unique))


class Columns:
    """One of the catalog's tables, its columns read as attributes (``DataFile.path``): usable
    wherever SQLAlchemy takes a table (``select``, ``insert``, ``update``, ``join``: it is its
    ``__clause_element__``). Core only: no ORM is imported or mapped, which keeps the start of
    every command that reads the catalog short."""

    def __init__(self, table: FromClause) -> None:
        self.__table__ = table
        for c in table.c:
            setattr(self, c.key, c)

    # Any: SQLAlchemy's typing takes an object with __clause_element__ as a column expression
    # only; what it returns is the table, which every statement accepts where a table goes.
    def __clause_element__(self) -> Any:
        return self.__table__

    def __getattr__(self, name: str) -> SqlColumn[Any]:
        # Reached only for a name that is not a column (the columns are instance attributes).
        raise AttributeError(f"{self.__table__.description} has no column {name!r}")

    def alias(self) -> Columns:
        """An anonymous alias of the table (a second reference to it in one statement)."""
        return Columns(self.__table__.alias())


#: The catalog's tables, without the partial indexes until :func:`schema` adds them.
_metadata = MetaData(naming_convention=NAMING)


def schema() -> MetaData:
    """The whole schema, partial indexes included: what Alembic's autogenerate and
    :func:`service.catalog.db.schema_drift` compare the migrations against."""
    with _PARTIAL_LOCK:
        while _PARTIAL:
            p = _PARTIAL.pop()
            t = _metadata.tables[p.table]
            where = text(p.where)
            Index(p.name, *(t.c[c] for c in p.columns), unique=p.unique, postgresql_where=where, sqlite_where=where)
    return _metadata


#: ``ducklake_snapshot``: one per change, globally and monotonically numbered.
Snapshot = Columns(
    SqlTable(
        "ducklake_snapshot",
        _metadata,
        SqlColumn("snapshot_id", BigId, primary_key=True, autoincrement=True),
        SqlColumn("snapshot_time", DateTime(timezone=True), nullable=False),
        #: The table this snapshot changed (NULL for a namespace change).
        SqlColumn("table_id", BigInteger, nullable=True),
        #: DuckLake-style summary: ``inserted_into_table:3``, ``created_table:"ns"."t"``...
        SqlColumn("changes_made", String, nullable=False),
        SqlColumn("added_files", BigInteger, default=0, nullable=False),
        SqlColumn("removed_files", BigInteger, default=0, nullable=False),
        #: Records and bytes of the files the snapshot added and removed: with the table's live
        #: totals, what was live after each of its newest snapshots, without reading their files
        #: (the dashboard's table history). Kept where the table's totals are kept (migration 0013
        #: filled them from the files).
        SqlColumn("added_records", BigInteger, default=0, server_default="0", nullable=False),
        SqlColumn("added_bytes", BigInteger, default=0, server_default="0", nullable=False),
        SqlColumn("removed_records", BigInteger, default=0, server_default="0", nullable=False),
        SqlColumn("removed_bytes", BigInteger, default=0, server_default="0", nullable=False),
        Index("ix_ducklake_snapshot_table_id_snapshot_id", "table_id", "snapshot_id"),
        sqlite_autoincrement=True,
    )
)


#: ``ducklake_schema``: namespaces.
Schema = Columns(
    SqlTable(
        "ducklake_schema",
        _metadata,
        SqlColumn("schema_id", BigId, primary_key=True, autoincrement=True),
        SqlColumn("schema_uuid", Uuid, nullable=False),
        SqlColumn("begin_snapshot", BigInteger, nullable=False),
        SqlColumn("end_snapshot", BigInteger, nullable=True),
        SqlColumn("schema_name", String, nullable=False),
    )
)
_live("ducklake_schema", "uq_ducklake_schema_live_name", "schema_name", unique=True)


#: ``ducklake_table`` plus live counters and the table's current snapshot (the row writers lock).
Table = Columns(
    SqlTable(
        "ducklake_table",
        _metadata,
        SqlColumn("table_id", BigId, primary_key=True, autoincrement=True),
        SqlColumn("table_uuid", Uuid, nullable=False),
        SqlColumn("begin_snapshot", BigInteger, nullable=False),
        SqlColumn("end_snapshot", BigInteger, nullable=True),
        SqlColumn("schema_id", ForeignKey("ducklake_schema.schema_id"), nullable=False),
        SqlColumn("table_name", String, nullable=False),
        # shredcat: maintained on every commit/removal, under the table lock.
        SqlColumn("live_file_count", BigInteger, default=0, nullable=False),
        SqlColumn("live_record_count", BigInteger, default=0, nullable=False),
        SqlColumn("live_bytes", BigInteger, default=0, nullable=False),
        SqlColumn("current_snapshot_id", BigInteger, nullable=False),
        #: Where ``name=value`` path segments start being partition values (NULL: anywhere in the path).
        SqlColumn("location", String, nullable=True),
    )
)
_live("ducklake_table", "uq_ducklake_table_live_name", "schema_id", "table_name", unique=True)


#: ``ducklake_column``: the table's columns, dotted names for struct leaves and Variants nested
#: in structs (``parent_column`` stays NULL: a name is the whole address). ``column_kind`` says
#: which: ``variant`` (``column_type`` ``variant``), ``plain`` (a primitive column, ``column_type``
#: the DuckLake type name of the first file that had it) or ``partition`` (a Hive partition
#: column; ``type_declared`` when the table declares its type, else Spark's inference merged over
#: the files as they are committed).
Column = Columns(
    SqlTable(
        "ducklake_column",
        _metadata,
        SqlColumn("column_id", BigId, primary_key=True, autoincrement=True),
        SqlColumn("begin_snapshot", BigInteger, nullable=False),
        SqlColumn("end_snapshot", BigInteger, nullable=True),
        SqlColumn("table_id", ForeignKey("ducklake_table.table_id"), nullable=False),
        SqlColumn("column_order", BigInteger, nullable=False),
        SqlColumn("column_name", String, nullable=False),
        SqlColumn("column_type", String, nullable=False),
        SqlColumn("nulls_allowed", Boolean, default=True, nullable=False),
        SqlColumn("parent_column", BigInteger, nullable=True),
        # shredcat
        SqlColumn("column_kind", String, server_default="variant", nullable=False),
        SqlColumn("type_declared", Boolean, server_default=false(), nullable=False),
    )
)
_live("ducklake_column", "uq_ducklake_column_live_name", "table_id", "column_name", unique=True)


#: ``ducklake_data_file`` plus ``content_id`` (etag or ``mtime_ns:size``) and the file's
#: Variant columns, to detect a path that now holds different content and to return the file's
#: stats as they were committed.
DataFile = Columns(
    SqlTable(
        "ducklake_data_file",
        _metadata,
        SqlColumn("data_file_id", BigId, primary_key=True, autoincrement=True),
        SqlColumn("table_id", ForeignKey("ducklake_table.table_id"), nullable=False),
        SqlColumn("begin_snapshot", BigInteger, nullable=False),
        SqlColumn("end_snapshot", BigInteger, nullable=True),
        SqlColumn("file_order", BigInteger, nullable=True),
        SqlColumn("path", PathString, nullable=False),
        SqlColumn("path_is_relative", Boolean, default=False, nullable=False),
        SqlColumn("file_format", String, default="parquet", nullable=False),
        SqlColumn("record_count", BigInteger, nullable=False),
        SqlColumn("file_size_bytes", BigInteger, nullable=False),
        SqlColumn("footer_size", BigInteger, nullable=False),
        # shredcat
        SqlColumn("content_id", String, nullable=True),
        #: JSON array of the Variant columns found in the file (FileStats.variant_columns).
        SqlColumn("variant_columns", Text, nullable=False),
        # Listing the files of any (historical) snapshot in path order.
        Index("ix_ducklake_data_file_table_id_path", "table_id", "path"),
    )
)
# A path is live at most once per table: the database itself refuses a double registration.
_live("ducklake_data_file", "uq_ducklake_data_file_live_path", "table_id", "path", unique=True)
# A dense plan's walk over a table's live files in id order (planner.routes.walk).
_live("ducklake_data_file", "ix_ducklake_data_file_live_table_id", "table_id", "data_file_id")
# The dashboard's files list by size or by record count, a keyset page each (migration 0013).
_live("ducklake_data_file", "ix_ducklake_data_file_live_size", "table_id", "file_size_bytes", "path")
_live("ducklake_data_file", "ix_ducklake_data_file_live_records", "table_id", "record_count", "path")


#: ``shredcat_variant_path``: dictionary of (column, variant_path, shredded_type) per table, with
#: live counters (for global stats and pruning) and the maximum bound width ever seen: the stats
#: keys of the planner. A plain or partition column's keys have ``variant_path = ''`` (the column
#: itself; no DuckLake path is empty) and their rows live in ``ducklake_file_column_stats``;
#: readers of Variant paths filter them out (``variant_path <> :data:`COLUMN_KEY_PATH```).
VariantPath = Columns(
    SqlTable(
        "shredcat_variant_path",
        _metadata,
        SqlColumn("path_id", BigId, primary_key=True, autoincrement=True),
        SqlColumn("table_id", ForeignKey("ducklake_table.table_id"), nullable=False),
        SqlColumn("column_id", ForeignKey("ducklake_column.column_id"), nullable=False),
        SqlColumn("variant_path", String, nullable=False),
        SqlColumn("shredded_type", String, nullable=False),
        #: Live files having a stats row for this path (i.e. in which it is fully shredded with this type).
        SqlColumn("live_file_count", BigInteger, default=0, nullable=False),
        SqlColumn("live_value_count", BigInteger, default=0, nullable=False),
        SqlColumn("live_null_count", BigInteger, default=0, nullable=False),
        SqlColumn("live_size_bytes", BigInteger, default=0, nullable=False),
        #: Live files with contains_nan true / NULL.
        SqlColumn("live_nan_files", BigInteger, default=0, nullable=False),
        SqlColumn("live_nan_unknown_files", BigInteger, default=0, nullable=False),
        #: Live files with values but no min (max) bound.
        SqlColumn("live_min_unknown_files", BigInteger, default=0, nullable=False),
        SqlColumn("live_max_unknown_files", BigInteger, default=0, nullable=False),
        #: Live files with values and a bound that has no typed key (decimals beyond int64).
        SqlColumn("live_min_keyless_files", BigInteger, default=0, nullable=False),
        SqlColumn("live_max_keyless_files", BigInteger, default=0, nullable=False),
        #: Live files whose min is -0.0 (max is +0.0): ties the typed keys cannot tell apart.
        SqlColumn("live_min_negzero_files", BigInteger, default=0, nullable=False),
        SqlColumn("live_max_poszero_files", BigInteger, default=0, nullable=False),
        #: Max over files ever committed of (max_num - min_num); NULL = unbounded (overflow). 0 initially.
        SqlColumn("max_width_num", BigInteger, default=0, nullable=True),
        #: Max over files ever committed of (max_real - min_real), rounded up; NULL = unbounded.
        SqlColumn("max_width_real", Double, default=0.0, nullable=True),
        #: A file committed with this key held a value that is not NULL (kept when the files go): a
        #: partition column's types at a past snapshot probe only such keys for a row live then
        #: (:func:`~service.catalog.repository.tables.partition_types_at`), since a NULL value
        #: (``__HIVE_DEFAULT_PARTITION__``, stored under varchar) is no type. Migration
        #: 0008 filled it from the stats rows for plain and partition column keys, and from the live
        #: counters for Variant paths, which do not read it.
        SqlColumn("had_values", Boolean, default=False, server_default=false(), nullable=False),
        #: A path's type timeline (the dashboard's) without reading its removed rows, which no
        #: index serves by path: stats rows ever added under this key, the least snapshot one
        #: began at (NULL: none yet) and the greatest one ended at (NULL: none ended). Kept by the
        #: writes that keep the live counters; migration 0012 filled them from the stats rows.
        SqlColumn("files_ever", BigInteger, default=0, server_default="0", nullable=False),
        SqlColumn("first_snapshot", BigInteger, nullable=True),
        SqlColumn("last_end_snapshot", BigInteger, nullable=True),
        Index(
            "uq_shredcat_variant_path_key",
            "table_id",
            "column_id",
            "variant_path",
            "shredded_type",
            unique=True,
        ),
    )
)


#: The dictionary's plain and partition column keys (the "path" of the column itself).
COLUMN_KEY_PATH = ""


#: A key's live rows in file order, with what every test reads: a page of candidates in
#: ``data_file_id`` order is one index-only range scan that stops when the page is full, wherever
#: the candidates are (a 10 % run mid-table, 1 % spread). Key columns, not INCLUDE (SQLite has
#: none); ``(path_id, data_file_id)`` is unique, so PostgreSQL's suffix truncation keeps the rest
#: out of the inner pages anyway. ``end_snapshot`` (always NULL here) is there because SQLite
#: counts an index as covering only if it holds every column the statement names.
PATH_FILE_COLUMNS = (
    "path_id", "data_file_id", "value_count", "min_num", "max_num", "min_real", "max_real", "contains_nan",
    "end_snapshot",
)  # fmt: skip


def _counts_and_bounds() -> list[SchemaItem]:
    """DuckLake's per-file statistics of a stats row, ``column_size_bytes`` to ``extra_stats``: the
    same in both stats tables."""
    return [
        SqlColumn("column_size_bytes", BigInteger, nullable=False),
        SqlColumn("value_count", BigInteger, nullable=False),
        SqlColumn("null_count", BigInteger, nullable=False),
        SqlColumn("min_value", String, nullable=True),
        SqlColumn("max_value", String, nullable=True),
        SqlColumn("contains_nan", Boolean, nullable=True),
        SqlColumn("extra_stats", String, nullable=True),
    ]


def _keys_and_snapshots(table: str) -> list[SchemaItem]:
    """shredcat's typed keys of a stats row and its file's snapshots, with the partial indexes
    over them (declared here): the same in both stats tables."""
    for key in ("min_num", "max_num", "min_real", "max_real", "min_bin", "max_bin"):
        _live(table, f"ix_{table}_live_{key}", "path_id", key, extra=f"{key} IS NOT NULL")
    # The live rows without values (NULLs only): a predicate's test fails there, so the
    # planner asks whether any exist before it treats a test as passed by every file.
    _live(table, f"ix_{table}_live_novalues", "path_id", extra="value_count = 0")
    _live(table, f"ix_{table}_live_path_file", *PATH_FILE_COLUMNS)
    return [
        SqlColumn("min_num", BigInteger, nullable=True),
        SqlColumn("max_num", BigInteger, nullable=True),
        SqlColumn("min_real", Double, nullable=True),
        SqlColumn("max_real", Double, nullable=True),
        SqlColumn("min_bin", LargeBinary, nullable=True),
        SqlColumn("max_bin", LargeBinary, nullable=True),
        SqlColumn("begin_snapshot", BigInteger, nullable=False),
        SqlColumn("end_snapshot", BigInteger, nullable=True),
    ]


#: ``ducklake_file_variant_stats``: DuckLake's twelve columns byte for byte, then shredcat's.
FileVariantStats = Columns(
    SqlTable(
        "ducklake_file_variant_stats",
        _metadata,
        # Primary key (data_file_id, path_id): also serves every lookup by data file. No foreign keys
        # on this, the largest table (like DuckLake): per-row RI checks doubled the cost of a bulk
        # insert; data_file_id and path_id are written by the one commit path, under the table lock.
        SqlColumn("data_file_id", BigInteger, primary_key=True),
        SqlColumn("table_id", BigInteger, nullable=False),
        SqlColumn("column_id", BigInteger, nullable=False),
        SqlColumn("variant_path", String, nullable=False),
        SqlColumn("shredded_type", String, nullable=False),
        *_counts_and_bounds(),
        # shredcat
        SqlColumn("path_id", BigInteger, primary_key=True),
        *_keys_and_snapshots("ducklake_file_variant_stats"),
    )
)


#: ``ducklake_file_column_stats``: DuckLake's ten columns, then shredcat's, as
#: :class:`FileVariantStats` (same typed keys and partial indexes). ``path_id`` is the key's row in
#: ``shredcat_variant_path`` (``variant_path = ''`` for a plain or partition column), so the planner
#: treats both kinds of key alike and only the stats table differs; ``column_type`` is the file's
#: own type of the column (which the table's type need not be). A partition column's value is one
#: row per file with min = max.
FileColumnStats = Columns(
    SqlTable(
        "ducklake_file_column_stats",
        _metadata,
        SqlColumn("data_file_id", BigInteger, primary_key=True),
        SqlColumn("table_id", BigInteger, nullable=False),
        SqlColumn("column_id", BigInteger, nullable=False),
        *_counts_and_bounds(),
        # shredcat
        SqlColumn("path_id", BigInteger, primary_key=True),
        SqlColumn("column_type", String, nullable=False),
        *_keys_and_snapshots("ducklake_file_column_stats"),
    )
)


#: Data file ids per zone of :class:`StatsZone` (``zone = data_file_id / ZONE_FILES``).
ZONE_FILES = 1024


#: ``shredcat_stats_zone``: per key and run of :data:`ZONE_FILES` consecutive data file ids, the
#: statistics of the key's stats rows there taken together, as if they were one file's (a zone
#: map, like PostgreSQL's BRIN): the number of rows, their values, the least min and greatest max
#: key, whether any may hold NaN. A test that no row of that union can pass is passed by no row of
#: the zone, so a scan in file order skips the zone (:mod:`service.catalog.planner`).
#:
#: Written with the rows (:func:`service.catalog.repository.commit.add_zones`), never narrowed: a
#: removal leaves the zone wider than its live rows, which is still sound. Keys follow the stats
#: rows' NULL rule: NULL with ``value_count > 0`` means some row had values but no key for that
#: bound (unknown: every test passes it), NULL with ``value_count = 0`` that no row had values.
StatsZone = Columns(
    SqlTable(
        "shredcat_stats_zone",
        _metadata,
        SqlColumn("path_id", BigInteger, primary_key=True),
        SqlColumn("zone", BigInteger, primary_key=True),
        SqlColumn("files", BigInteger, nullable=False),
        SqlColumn("value_count", BigInteger, nullable=False),
        SqlColumn("min_num", BigInteger, nullable=True),
        SqlColumn("max_num", BigInteger, nullable=True),
        SqlColumn("min_real", Double, nullable=True),
        SqlColumn("max_real", Double, nullable=True),
        SqlColumn("contains_nan", Boolean, nullable=True),
    )
)


#: ``ducklake_file_partition_value``: DuckLake's four columns (``partition_value`` the raw,
#: unescaped path text, NULL for ``__HIVE_DEFAULT_PARTITION__``; ``partition_key_index`` the
#: column's place among the table's partition columns), then the column and the file's snapshots.
#: The typed value for pruning is the column's row in ``ducklake_file_column_stats``.
FilePartitionValue = Columns(
    SqlTable(
        "ducklake_file_partition_value",
        _metadata,
        SqlColumn("data_file_id", BigInteger, primary_key=True),
        SqlColumn("table_id", BigInteger, nullable=False),
        SqlColumn("partition_key_index", BigInteger, primary_key=True),
        SqlColumn("partition_value", String, nullable=True),
        SqlColumn("column_id", BigInteger, nullable=False),
        SqlColumn("begin_snapshot", BigInteger, nullable=False),
        SqlColumn("end_snapshot", BigInteger, nullable=True),
    )
)


#: ``ducklake_table_column_stats``: for a Variant column, ``extra_stats`` holds the global
#: Variant stats as DuckLake's JSON (NULL when no path is kept).
TableColumnStats = Columns(
    SqlTable(
        "ducklake_table_column_stats",
        _metadata,
        SqlColumn("table_id", ForeignKey("ducklake_table.table_id"), primary_key=True),
        SqlColumn("column_id", ForeignKey("ducklake_column.column_id"), primary_key=True),
        SqlColumn("contains_null", Boolean, nullable=True),
        SqlColumn("contains_nan", Boolean, nullable=True),
        SqlColumn("min_value", String, nullable=True),
        SqlColumn("max_value", String, nullable=True),
        SqlColumn("extra_stats", String, nullable=True),
    )
)


#: ``shredcat_commit_key``: idempotency keys of commits, per table and principal (who committed),
#: with the original result.
CommitKey = Columns(
    SqlTable(
        "shredcat_commit_key",
        _metadata,
        SqlColumn("table_id", ForeignKey("ducklake_table.table_id"), primary_key=True),
        SqlColumn("principal", String, primary_key=True),
        SqlColumn("idempotency_key", String, primary_key=True),
        SqlColumn("request_hash", String(64), nullable=False),
        SqlColumn("snapshot_id", BigInteger, nullable=True),
        SqlColumn("result", Text, nullable=False),
        SqlColumn("created_at", DateTime(timezone=True), index=True, nullable=False),
    )
)


#: ``shredcat_revoked_session``: the sha256 of each signed-out dashboard session cookie, kept
#: until the cookie's own expiry (then it is refused anyway, and the row is deleted).
RevokedSession = Columns(
    SqlTable(
        "shredcat_revoked_session",
        _metadata,
        SqlColumn("session_digest", String(64), primary_key=True),
        SqlColumn("expires_at", DateTime(timezone=True), nullable=False),
    )
)


#: ``shredcat_login_failure``: one row per failed dashboard sign-in of the last minute, by the
#: sha256 of the client's address (:mod:`service.catalog.repository.logins`); shared by every
#: worker and replica, pruned as new ones are written.
LoginFailure = Columns(
    SqlTable(
        "shredcat_login_failure",
        _metadata,
        SqlColumn("failure_id", BigId, primary_key=True, autoincrement=True),
        SqlColumn("address_digest", String(64), nullable=False),
        SqlColumn("failed_at", DateTime(timezone=True), index=True, nullable=False),
        Index("ix_shredcat_login_failure_address", "address_digest", "failed_at"),
    )
)


#: ``shredcat_object_shape``: per table, Variant column and object path, each distinct set of
#: fields a file's object was proven fully shredded with (:class:`~service.stats.model.ShreddedObject`;
#: ``fields`` a JSON array of the names, in the file's order). A table's files share few of
#: them, so the planner reads the shapes of a path (a handful of rows) and picks those lacking a
#: field in Python, whatever the number of files. ``fields_digest`` is the sha256 of ``fields``
#: (hex): the unique key (an object of many fields is past an index entry's size).
#: ``live_file_count``: live files with this shape: when a path's shapes cover every live file, the
#: files that may hold a key are those whose shape has it (found by shape, not by scanning files).
ObjectShape = Columns(
    SqlTable(
        "shredcat_object_shape",
        _metadata,
        SqlColumn("shape_id", BigId, primary_key=True, autoincrement=True),
        SqlColumn("table_id", ForeignKey("ducklake_table.table_id"), nullable=False),
        SqlColumn("column_id", ForeignKey("ducklake_column.column_id"), nullable=False),
        SqlColumn("object_path", String, nullable=False),
        SqlColumn("fields", Text, nullable=False),
        SqlColumn("fields_digest", String(64), nullable=False),
        SqlColumn("live_file_count", BigInteger, default=0, nullable=False),
        Index(
            "uq_shredcat_object_shape_key",
            "table_id",
            "column_id",
            "object_path",
            "fields_digest",
            unique=True,
        ),
    )
)


#: ``shredcat_file_object``: the shapes proven for each data file (a fact of its content, so no
#: snapshots of its own: a file's liveness is its ``ducklake_data_file`` row's). A file without a
#: row for an object path proved nothing there: it is never pruned as lacking a field. Keyed by
#: file (its facts, read back) and by shape (the files a shape proves a field absent from);
#: ``ordinal`` is the object's place in the file's list (FileStats.objects comes back in
#: extraction's order).
FileObject = Columns(
    SqlTable(
        "shredcat_file_object",
        _metadata,
        SqlColumn("data_file_id", BigInteger, primary_key=True),
        SqlColumn("shape_id", BigInteger, primary_key=True),
        SqlColumn("ordinal", Integer, nullable=False),
        Index("ix_shredcat_file_object_shape_id", "shape_id", "data_file_id"),
    )
)
