"""SQLAlchemy 2 models of the catalog. The schema itself is created and changed only by the Alembic
migrations in ``migrations/``; these models are the source autogenerate compares against.

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

import uuid
from datetime import datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    DateTime,
    Double,
    ForeignKey,
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
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

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


def _live(extra: str | None = None) -> dict[str, object]:
    """Partial-index predicate for both backends."""
    cond = LIVE if extra is None else f"{LIVE} AND {extra}"
    return {"postgresql_where": text(cond), "sqlite_where": text(cond)}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class Snapshot(Base):
    """``ducklake_snapshot``: one per change, globally and monotonically numbered."""

    __tablename__ = "ducklake_snapshot"
    __table_args__ = (
        Index("ix_ducklake_snapshot_table_id_snapshot_id", "table_id", "snapshot_id"),
        {"sqlite_autoincrement": True},
    )

    snapshot_id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    snapshot_time: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    #: The table this snapshot changed (NULL for a namespace change).
    table_id: Mapped[int | None] = mapped_column(BigInteger)
    #: DuckLake-style summary: ``inserted_into_table:3``, ``created_table:"ns"."t"``...
    changes_made: Mapped[str] = mapped_column(String)
    added_files: Mapped[int] = mapped_column(BigInteger, default=0)
    removed_files: Mapped[int] = mapped_column(BigInteger, default=0)


class Schema(Base):
    """``ducklake_schema``: namespaces."""

    __tablename__ = "ducklake_schema"
    __table_args__ = (Index("uq_ducklake_schema_live_name", "schema_name", unique=True, **_live()),)

    schema_id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    schema_uuid: Mapped[uuid.UUID] = mapped_column(Uuid)
    begin_snapshot: Mapped[int] = mapped_column(BigInteger)
    end_snapshot: Mapped[int | None] = mapped_column(BigInteger)
    schema_name: Mapped[str] = mapped_column(String)


class Table(Base):
    """``ducklake_table`` plus live counters and the table's current snapshot (the row writers lock)."""

    __tablename__ = "ducklake_table"
    __table_args__ = (
        Index("uq_ducklake_table_live_name", "schema_id", "table_name", unique=True, **_live()),
    )

    table_id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    table_uuid: Mapped[uuid.UUID] = mapped_column(Uuid)
    begin_snapshot: Mapped[int] = mapped_column(BigInteger)
    end_snapshot: Mapped[int | None] = mapped_column(BigInteger)
    schema_id: Mapped[int] = mapped_column(ForeignKey("ducklake_schema.schema_id"))
    table_name: Mapped[str] = mapped_column(String)
    # shredcat: maintained on every commit/removal, under the table lock.
    live_file_count: Mapped[int] = mapped_column(BigInteger, default=0)
    live_record_count: Mapped[int] = mapped_column(BigInteger, default=0)
    live_bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    current_snapshot_id: Mapped[int] = mapped_column(BigInteger)
    #: Where ``name=value`` path segments start being partition values (NULL: anywhere in the path).
    location: Mapped[str | None] = mapped_column(String)


class Column(Base):
    """``ducklake_column``: the table's columns, dotted names for struct leaves and Variants nested
    in structs (``parent_column`` stays NULL: a name is the whole address). ``column_kind`` says
    which: ``variant`` (``column_type`` ``variant``), ``plain`` (a primitive column, ``column_type``
    the DuckLake type name of the first file that had it) or ``partition`` (a Hive partition
    column; ``type_declared`` when the table declares its type, else Spark's inference merged over
    the files as they are committed)."""

    __tablename__ = "ducklake_column"
    __table_args__ = (
        Index("uq_ducklake_column_live_name", "table_id", "column_name", unique=True, **_live()),
    )

    column_id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    begin_snapshot: Mapped[int] = mapped_column(BigInteger)
    end_snapshot: Mapped[int | None] = mapped_column(BigInteger)
    table_id: Mapped[int] = mapped_column(ForeignKey("ducklake_table.table_id"))
    column_order: Mapped[int] = mapped_column(BigInteger)
    column_name: Mapped[str] = mapped_column(String)
    column_type: Mapped[str] = mapped_column(String)
    nulls_allowed: Mapped[bool] = mapped_column(Boolean, default=True)
    parent_column: Mapped[int | None] = mapped_column(BigInteger)
    # shredcat
    column_kind: Mapped[str] = mapped_column(String, server_default="variant")
    type_declared: Mapped[bool] = mapped_column(Boolean, server_default=false())


class DataFile(Base):
    """``ducklake_data_file`` plus ``content_id`` (etag or ``mtime_ns:size``) and the file's
    Variant columns, to detect a path that now holds different content and to return the file's
    stats as they were committed."""

    __tablename__ = "ducklake_data_file"
    __table_args__ = (
        # A path is live at most once per table: the database itself refuses a double registration.
        Index("uq_ducklake_data_file_live_path", "table_id", "path", unique=True, **_live()),
        # Listing the files of any (historical) snapshot in path order.
        Index("ix_ducklake_data_file_table_id_path", "table_id", "path"),
        # A dense plan's walk over a table's live files in id order (planner.routes.walk).
        Index("ix_ducklake_data_file_live_table_id", "table_id", "data_file_id", **_live()),
    )

    data_file_id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    table_id: Mapped[int] = mapped_column(ForeignKey("ducklake_table.table_id"))
    begin_snapshot: Mapped[int] = mapped_column(BigInteger)
    end_snapshot: Mapped[int | None] = mapped_column(BigInteger)
    file_order: Mapped[int | None] = mapped_column(BigInteger)
    path: Mapped[str] = mapped_column(PathString)
    path_is_relative: Mapped[bool] = mapped_column(Boolean, default=False)
    file_format: Mapped[str] = mapped_column(String, default="parquet")
    record_count: Mapped[int] = mapped_column(BigInteger)
    file_size_bytes: Mapped[int] = mapped_column(BigInteger)
    footer_size: Mapped[int] = mapped_column(BigInteger)
    # shredcat
    content_id: Mapped[str | None] = mapped_column(String)
    #: JSON array of the Variant columns found in the file (FileStats.variant_columns).
    variant_columns: Mapped[str] = mapped_column(Text)


class VariantPath(Base):
    """``shredcat_variant_path``: dictionary of (column, variant_path, shredded_type) per table, with
    live counters (for global stats and pruning) and the maximum bound width ever seen: the stats
    keys of the planner. A plain or partition column's keys have ``variant_path = ''`` (the column
    itself; no DuckLake path is empty) and their rows live in ``ducklake_file_column_stats``;
    readers of Variant paths filter them out (``variant_path <> :data:`COLUMN_KEY_PATH```)."""

    __tablename__ = "shredcat_variant_path"
    __table_args__ = (
        Index(
            "uq_shredcat_variant_path_key",
            "table_id",
            "column_id",
            "variant_path",
            "shredded_type",
            unique=True,
        ),
    )

    path_id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    table_id: Mapped[int] = mapped_column(ForeignKey("ducklake_table.table_id"))
    column_id: Mapped[int] = mapped_column(ForeignKey("ducklake_column.column_id"))
    variant_path: Mapped[str] = mapped_column(String)
    shredded_type: Mapped[str] = mapped_column(String)
    #: Live files having a stats row for this path (i.e. in which it is fully shredded with this type).
    live_file_count: Mapped[int] = mapped_column(BigInteger, default=0)
    live_value_count: Mapped[int] = mapped_column(BigInteger, default=0)
    live_null_count: Mapped[int] = mapped_column(BigInteger, default=0)
    live_size_bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    #: Live files with contains_nan true / NULL.
    live_nan_files: Mapped[int] = mapped_column(BigInteger, default=0)
    live_nan_unknown_files: Mapped[int] = mapped_column(BigInteger, default=0)
    #: Live files with values but no min (max) bound.
    live_min_unknown_files: Mapped[int] = mapped_column(BigInteger, default=0)
    live_max_unknown_files: Mapped[int] = mapped_column(BigInteger, default=0)
    #: Live files with values and a bound that has no typed key (decimals beyond int64).
    live_min_keyless_files: Mapped[int] = mapped_column(BigInteger, default=0)
    live_max_keyless_files: Mapped[int] = mapped_column(BigInteger, default=0)
    #: Live files whose min is -0.0 (max is +0.0): ties the typed keys cannot tell apart.
    live_min_negzero_files: Mapped[int] = mapped_column(BigInteger, default=0)
    live_max_poszero_files: Mapped[int] = mapped_column(BigInteger, default=0)
    #: Max over files ever committed of (max_num - min_num); NULL = unbounded (overflow). 0 initially.
    max_width_num: Mapped[int | None] = mapped_column(BigInteger, default=0)
    #: Max over files ever committed of (max_real - min_real), rounded up; NULL = unbounded.
    max_width_real: Mapped[float | None] = mapped_column(Double, default=0.0)
    #: A file committed with this key held a value that is not NULL (kept when the files go): a
    #: partition column's types at a past snapshot are those its values were ever stored as, and
    #: a NULL value (``__HIVE_DEFAULT_PARTITION__``, stored under varchar) is no type. Migration
    #: 0008 filled it from the stats rows for plain and partition column keys, and from the live
    #: counters for Variant paths, which do not read it.
    had_values: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())


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


class FileVariantStats(Base):
    """``ducklake_file_variant_stats``: DuckLake's twelve columns byte for byte, then shredcat's."""

    __tablename__ = "ducklake_file_variant_stats"
    __table_args__ = (
        *(
            Index(f"ix_ducklake_file_variant_stats_live_{key}", "path_id", key, **_live(f"{key} IS NOT NULL"))
            for key in ("min_num", "max_num", "min_real", "max_real", "min_bin", "max_bin")
        ),
        # The live rows without values (NULLs only): a predicate's test fails there, so the
        # planner asks whether any exist before it treats a test as passed by every file.
        Index("ix_ducklake_file_variant_stats_live_novalues", "path_id", **_live("value_count = 0")),
        Index("ix_ducklake_file_variant_stats_live_path_file", *PATH_FILE_COLUMNS, **_live()),
    )

    # Primary key (data_file_id, path_id): also serves every lookup by data file. No foreign keys
    # on this, the largest table (like DuckLake): per-row RI checks doubled the cost of a bulk
    # insert; data_file_id and path_id are written by the one commit path, under the table lock.
    data_file_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    table_id: Mapped[int] = mapped_column(BigInteger)
    column_id: Mapped[int] = mapped_column(BigInteger)
    variant_path: Mapped[str] = mapped_column(String)
    shredded_type: Mapped[str] = mapped_column(String)
    column_size_bytes: Mapped[int] = mapped_column(BigInteger)
    value_count: Mapped[int] = mapped_column(BigInteger)
    null_count: Mapped[int] = mapped_column(BigInteger)
    min_value: Mapped[str | None] = mapped_column(String)
    max_value: Mapped[str | None] = mapped_column(String)
    contains_nan: Mapped[bool | None] = mapped_column(Boolean)
    extra_stats: Mapped[str | None] = mapped_column(String)
    # shredcat
    path_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    min_num: Mapped[int | None] = mapped_column(BigInteger)
    max_num: Mapped[int | None] = mapped_column(BigInteger)
    min_real: Mapped[float | None] = mapped_column(Double)
    max_real: Mapped[float | None] = mapped_column(Double)
    min_bin: Mapped[bytes | None] = mapped_column(LargeBinary)
    max_bin: Mapped[bytes | None] = mapped_column(LargeBinary)
    begin_snapshot: Mapped[int] = mapped_column(BigInteger)
    end_snapshot: Mapped[int | None] = mapped_column(BigInteger)


class FileColumnStats(Base):
    """``ducklake_file_column_stats``: DuckLake's ten columns, then shredcat's, as
    :class:`FileVariantStats` (same typed keys and partial indexes). ``path_id`` is the key's row in
    ``shredcat_variant_path`` (``variant_path = ''`` for a plain or partition column), so the planner
    treats both kinds of key alike and only the stats table differs; ``column_type`` is the file's
    own type of the column (which the table's type need not be). A partition column's value is one
    row per file with min = max."""

    __tablename__ = "ducklake_file_column_stats"
    __table_args__ = (
        *(
            Index(f"ix_ducklake_file_column_stats_live_{key}", "path_id", key, **_live(f"{key} IS NOT NULL"))
            for key in ("min_num", "max_num", "min_real", "max_real", "min_bin", "max_bin")
        ),
        # The live rows without values (NULLs only): a predicate's test fails there, so the
        # planner asks whether any exist before it treats a test as passed by every file.
        Index("ix_ducklake_file_column_stats_live_novalues", "path_id", **_live("value_count = 0")),
        Index("ix_ducklake_file_column_stats_live_path_file", *PATH_FILE_COLUMNS, **_live()),
    )

    data_file_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    table_id: Mapped[int] = mapped_column(BigInteger)
    column_id: Mapped[int] = mapped_column(BigInteger)
    column_size_bytes: Mapped[int] = mapped_column(BigInteger)
    value_count: Mapped[int] = mapped_column(BigInteger)
    null_count: Mapped[int] = mapped_column(BigInteger)
    min_value: Mapped[str | None] = mapped_column(String)
    max_value: Mapped[str | None] = mapped_column(String)
    contains_nan: Mapped[bool | None] = mapped_column(Boolean)
    extra_stats: Mapped[str | None] = mapped_column(String)
    # shredcat
    path_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    column_type: Mapped[str] = mapped_column(String)
    min_num: Mapped[int | None] = mapped_column(BigInteger)
    max_num: Mapped[int | None] = mapped_column(BigInteger)
    min_real: Mapped[float | None] = mapped_column(Double)
    max_real: Mapped[float | None] = mapped_column(Double)
    min_bin: Mapped[bytes | None] = mapped_column(LargeBinary)
    max_bin: Mapped[bytes | None] = mapped_column(LargeBinary)
    begin_snapshot: Mapped[int] = mapped_column(BigInteger)
    end_snapshot: Mapped[int | None] = mapped_column(BigInteger)


#: Data file ids per zone of :class:`StatsZone` (``zone = data_file_id / ZONE_FILES``).
ZONE_FILES = 1024


class StatsZone(Base):
    """``shredcat_stats_zone``: per key and run of :data:`ZONE_FILES` consecutive data file ids, the
    statistics of the key's stats rows there taken together, as if they were one file's (a zone
    map, like PostgreSQL's BRIN): the number of rows, their values, the least min and greatest max
    key, whether any may hold NaN. A test that no row of that union can pass is passed by no row of
    the zone, so a scan in file order skips the zone (:mod:`service.catalog.planner`).

    Written with the rows (:func:`service.catalog.repository.commit.add_zones`), never narrowed: a
    removal leaves the zone wider than its live rows, which is still sound. Keys follow the stats
    rows' NULL rule: NULL with ``value_count > 0`` means some row had values but no key for that
    bound (unknown: every test passes it), NULL with ``value_count = 0`` that no row had values."""

    __tablename__ = "shredcat_stats_zone"

    path_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    zone: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    files: Mapped[int] = mapped_column(BigInteger)
    value_count: Mapped[int] = mapped_column(BigInteger)
    min_num: Mapped[int | None] = mapped_column(BigInteger)
    max_num: Mapped[int | None] = mapped_column(BigInteger)
    min_real: Mapped[float | None] = mapped_column(Double)
    max_real: Mapped[float | None] = mapped_column(Double)
    contains_nan: Mapped[bool | None] = mapped_column(Boolean)


class FilePartitionValue(Base):
    """``ducklake_file_partition_value``: DuckLake's four columns (``partition_value`` the raw,
    unescaped path text, NULL for ``__HIVE_DEFAULT_PARTITION__``; ``partition_key_index`` the
    column's place among the table's partition columns), then the column and the file's snapshots.
    The typed value for pruning is the column's row in ``ducklake_file_column_stats``."""

    __tablename__ = "ducklake_file_partition_value"

    data_file_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    table_id: Mapped[int] = mapped_column(BigInteger)
    partition_key_index: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    partition_value: Mapped[str | None] = mapped_column(String)
    column_id: Mapped[int] = mapped_column(BigInteger)
    begin_snapshot: Mapped[int] = mapped_column(BigInteger)
    end_snapshot: Mapped[int | None] = mapped_column(BigInteger)


class TableColumnStats(Base):
    """``ducklake_table_column_stats``: for a Variant column, ``extra_stats`` holds the global
    Variant stats as DuckLake's JSON (NULL when no path is kept)."""

    __tablename__ = "ducklake_table_column_stats"

    table_id: Mapped[int] = mapped_column(ForeignKey("ducklake_table.table_id"), primary_key=True)
    column_id: Mapped[int] = mapped_column(ForeignKey("ducklake_column.column_id"), primary_key=True)
    contains_null: Mapped[bool | None] = mapped_column(Boolean)
    contains_nan: Mapped[bool | None] = mapped_column(Boolean)
    min_value: Mapped[str | None] = mapped_column(String)
    max_value: Mapped[str | None] = mapped_column(String)
    extra_stats: Mapped[str | None] = mapped_column(String)


class CommitKey(Base):
    """``shredcat_commit_key``: idempotency keys of commits, per table and principal (who committed),
    with the original result."""

    __tablename__ = "shredcat_commit_key"

    table_id: Mapped[int] = mapped_column(ForeignKey("ducklake_table.table_id"), primary_key=True)
    principal: Mapped[str] = mapped_column(String, primary_key=True)
    idempotency_key: Mapped[str] = mapped_column(String, primary_key=True)
    request_hash: Mapped[str] = mapped_column(String(64))
    snapshot_id: Mapped[int | None] = mapped_column(BigInteger)
    result: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)


class RevokedSession(Base):
    """``shredcat_revoked_session``: the sha256 of each signed-out dashboard session cookie, kept
    until the cookie's own expiry (then it is refused anyway, and the row is deleted)."""

    __tablename__ = "shredcat_revoked_session"

    session_digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
