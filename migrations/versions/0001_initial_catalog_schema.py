"""Initial catalog schema: DuckLake's tables for namespaces, tables, Variant columns, snapshots, data
files, per-file Variant stats and global column stats, plus shredcat's path dictionary and commit keys.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Same types as service.catalog.models (kept literal here: a migration must not change with the models).
BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
PATH = sa.String().with_variant(sa.String(collation="C"), "postgresql")


def _live(extra: str | None = None) -> dict[str, object]:
    cond = "end_snapshot IS NULL" if extra is None else f"end_snapshot IS NULL AND {extra}"
    return {"postgresql_where": sa.text(cond), "sqlite_where": sa.text(cond)}


def _big(name: str, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.BigInteger(), nullable=nullable)


STAT_KEYS = ("min_num", "max_num", "min_real", "max_real", "min_bin", "max_bin")

PATH_COUNTERS = (
    "live_file_count",
    "live_value_count",
    "live_null_count",
    "live_size_bytes",
    "live_nan_files",
    "live_nan_unknown_files",
    "live_min_unknown_files",
    "live_max_unknown_files",
    "live_min_keyless_files",
    "live_max_keyless_files",
    "live_min_negzero_files",
    "live_max_poszero_files",
)


def upgrade() -> None:
    op.create_table(
        "ducklake_schema",
        sa.Column("schema_id", BIG_ID, autoincrement=True, nullable=False),
        sa.Column("schema_uuid", sa.Uuid(), nullable=False),
        _big("begin_snapshot"),
        _big("end_snapshot", nullable=True),
        sa.Column("schema_name", sa.String(), nullable=False),
        sa.PrimaryKeyConstraint("schema_id", name="pk_ducklake_schema"),
    )
    op.create_index(
        "uq_ducklake_schema_live_name", "ducklake_schema", ["schema_name"], unique=True, **_live()
    )

    op.create_table(
        "ducklake_snapshot",
        sa.Column("snapshot_id", BIG_ID, autoincrement=True, nullable=False),
        sa.Column("snapshot_time", sa.DateTime(timezone=True), nullable=False),
        _big("table_id", nullable=True),
        sa.Column("changes_made", sa.String(), nullable=False),
        _big("added_files"),
        _big("removed_files"),
        sa.PrimaryKeyConstraint("snapshot_id", name="pk_ducklake_snapshot"),
        sqlite_autoincrement=True,
    )
    op.create_index(
        "ix_ducklake_snapshot_table_id_snapshot_id", "ducklake_snapshot", ["table_id", "snapshot_id"]
    )

    op.create_table(
        "ducklake_table",
        sa.Column("table_id", BIG_ID, autoincrement=True, nullable=False),
        sa.Column("table_uuid", sa.Uuid(), nullable=False),
        _big("begin_snapshot"),
        _big("end_snapshot", nullable=True),
        sa.Column("schema_id", BIG_ID, nullable=False),
        sa.Column("table_name", sa.String(), nullable=False),
        _big("live_file_count"),
        _big("live_record_count"),
        _big("live_bytes"),
        _big("current_snapshot_id"),
        sa.ForeignKeyConstraint(
            ["schema_id"], ["ducklake_schema.schema_id"], name="fk_ducklake_table_schema_id_ducklake_schema"
        ),
        sa.PrimaryKeyConstraint("table_id", name="pk_ducklake_table"),
    )
    op.create_index(
        "uq_ducklake_table_live_name", "ducklake_table", ["schema_id", "table_name"], unique=True, **_live()
    )

    op.create_table(
        "ducklake_column",
        sa.Column("column_id", BIG_ID, autoincrement=True, nullable=False),
        _big("begin_snapshot"),
        _big("end_snapshot", nullable=True),
        sa.Column("table_id", BIG_ID, nullable=False),
        _big("column_order"),
        sa.Column("column_name", sa.String(), nullable=False),
        sa.Column("column_type", sa.String(), nullable=False),
        sa.Column("nulls_allowed", sa.Boolean(), nullable=False),
        _big("parent_column", nullable=True),
        sa.ForeignKeyConstraint(
            ["table_id"], ["ducklake_table.table_id"], name="fk_ducklake_column_table_id_ducklake_table"
        ),
        sa.PrimaryKeyConstraint("column_id", name="pk_ducklake_column"),
    )
    op.create_index(
        "uq_ducklake_column_live_name", "ducklake_column", ["table_id", "column_name"], unique=True, **_live()
    )

    op.create_table(
        "ducklake_data_file",
        sa.Column("data_file_id", BIG_ID, autoincrement=True, nullable=False),
        sa.Column("table_id", BIG_ID, nullable=False),
        _big("begin_snapshot"),
        _big("end_snapshot", nullable=True),
        _big("file_order", nullable=True),
        sa.Column("path", PATH, nullable=False),
        sa.Column("path_is_relative", sa.Boolean(), nullable=False),
        sa.Column("file_format", sa.String(), nullable=False),
        _big("record_count"),
        _big("file_size_bytes"),
        _big("footer_size"),
        sa.Column("content_id", sa.String(), nullable=True),
        sa.Column("variant_columns", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["table_id"], ["ducklake_table.table_id"], name="fk_ducklake_data_file_table_id_ducklake_table"
        ),
        sa.PrimaryKeyConstraint("data_file_id", name="pk_ducklake_data_file"),
    )
    op.create_index(
        "uq_ducklake_data_file_live_path", "ducklake_data_file", ["table_id", "path"], unique=True, **_live()
    )
    op.create_index("ix_ducklake_data_file_table_id_path", "ducklake_data_file", ["table_id", "path"])

    op.create_table(
        "shredcat_commit_key",
        sa.Column("table_id", BIG_ID, nullable=False),
        sa.Column("idempotency_key", sa.String(), nullable=False),
        sa.Column("request_hash", sa.String(length=64), nullable=False),
        _big("snapshot_id", nullable=True),
        sa.Column("result", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["table_id"], ["ducklake_table.table_id"], name="fk_shredcat_commit_key_table_id_ducklake_table"
        ),
        sa.PrimaryKeyConstraint("table_id", "idempotency_key", name="pk_shredcat_commit_key"),
    )

    op.create_table(
        "ducklake_table_column_stats",
        sa.Column("table_id", BIG_ID, nullable=False),
        sa.Column("column_id", BIG_ID, nullable=False),
        sa.Column("contains_null", sa.Boolean(), nullable=True),
        sa.Column("contains_nan", sa.Boolean(), nullable=True),
        sa.Column("min_value", sa.String(), nullable=True),
        sa.Column("max_value", sa.String(), nullable=True),
        sa.Column("extra_stats", sa.String(), nullable=True),
        sa.ForeignKeyConstraint(
            ["column_id"],
            ["ducklake_column.column_id"],
            name="fk_ducklake_table_column_stats_column_id_ducklake_column",
        ),
        sa.ForeignKeyConstraint(
            ["table_id"],
            ["ducklake_table.table_id"],
            name="fk_ducklake_table_column_stats_table_id_ducklake_table",
        ),
        sa.PrimaryKeyConstraint("table_id", "column_id", name="pk_ducklake_table_column_stats"),
    )

    op.create_table(
        "shredcat_variant_path",
        sa.Column("path_id", BIG_ID, autoincrement=True, nullable=False),
        sa.Column("table_id", BIG_ID, nullable=False),
        sa.Column("column_id", BIG_ID, nullable=False),
        sa.Column("variant_path", sa.String(), nullable=False),
        sa.Column("shredded_type", sa.String(), nullable=False),
        *(_big(name) for name in PATH_COUNTERS),
        _big("max_width_num", nullable=True),
        sa.Column("max_width_real", sa.Double(), nullable=True),
        sa.ForeignKeyConstraint(
            ["column_id"],
            ["ducklake_column.column_id"],
            name="fk_shredcat_variant_path_column_id_ducklake_column",
        ),
        sa.ForeignKeyConstraint(
            ["table_id"], ["ducklake_table.table_id"], name="fk_shredcat_variant_path_table_id_ducklake_table"
        ),
        sa.PrimaryKeyConstraint("path_id", name="pk_shredcat_variant_path"),
    )
    op.create_index(
        "uq_shredcat_variant_path_key",
        "shredcat_variant_path",
        ["table_id", "column_id", "variant_path", "shredded_type"],
        unique=True,
    )

    op.create_table(
        "ducklake_file_variant_stats",
        # DuckLake's columns, in DuckLake's order.
        _big("data_file_id"),
        _big("table_id"),
        _big("column_id"),
        sa.Column("variant_path", sa.String(), nullable=False),
        sa.Column("shredded_type", sa.String(), nullable=False),
        _big("column_size_bytes"),
        _big("value_count"),
        _big("null_count"),
        sa.Column("min_value", sa.String(), nullable=True),
        sa.Column("max_value", sa.String(), nullable=True),
        sa.Column("contains_nan", sa.Boolean(), nullable=True),
        sa.Column("extra_stats", sa.String(), nullable=True),
        # shredcat's. No foreign keys on this table (see models.FileVariantStats).
        _big("path_id"),
        _big("min_num", nullable=True),
        _big("max_num", nullable=True),
        sa.Column("min_real", sa.Double(), nullable=True),
        sa.Column("max_real", sa.Double(), nullable=True),
        sa.Column("min_bin", sa.LargeBinary(), nullable=True),
        sa.Column("max_bin", sa.LargeBinary(), nullable=True),
        _big("begin_snapshot"),
        _big("end_snapshot", nullable=True),
        sa.PrimaryKeyConstraint("data_file_id", "path_id", name="pk_ducklake_file_variant_stats"),
    )
    for key in STAT_KEYS:
        op.create_index(
            f"ix_ducklake_file_variant_stats_live_{key}",
            "ducklake_file_variant_stats",
            ["path_id", key],
            **_live(f"{key} IS NOT NULL"),
        )


def downgrade() -> None:
    for key in STAT_KEYS:
        op.drop_index(f"ix_ducklake_file_variant_stats_live_{key}", table_name="ducklake_file_variant_stats")
    op.drop_table("ducklake_file_variant_stats")
    op.drop_index("uq_shredcat_variant_path_key", table_name="shredcat_variant_path")
    op.drop_table("shredcat_variant_path")
    op.drop_table("ducklake_table_column_stats")
    op.drop_table("shredcat_commit_key")
    op.drop_index("ix_ducklake_data_file_table_id_path", table_name="ducklake_data_file")
    op.drop_index("uq_ducklake_data_file_live_path", table_name="ducklake_data_file")
    op.drop_table("ducklake_data_file")
    op.drop_index("uq_ducklake_column_live_name", table_name="ducklake_column")
    op.drop_table("ducklake_column")
    op.drop_index("uq_ducklake_table_live_name", table_name="ducklake_table")
    op.drop_table("ducklake_table")
    op.drop_index("ix_ducklake_snapshot_table_id_snapshot_id", table_name="ducklake_snapshot")
    op.drop_table("ducklake_snapshot")
    op.drop_index("uq_ducklake_schema_live_name", table_name="ducklake_schema")
    op.drop_table("ducklake_schema")
