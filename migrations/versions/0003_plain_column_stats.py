"""Plain-column statistics and Hive partition values.

* ``ducklake_column`` gains ``column_kind`` (``variant`` for every existing row, ``plain`` for a
  primitive column or struct leaf, dotted ``a.b``; ``partition`` for a Hive partition column) and
  ``type_declared`` (a partition column whose type the table declares, never re-inferred).
* ``ducklake_table`` gains ``location``: the base under which ``name=value`` directory segments
  are partition values (NULL: every such segment of a file's path).
* ``ducklake_file_column_stats``: DuckLake's ten columns, then shredcat's, like
  ``ducklake_file_variant_stats``: ``path_id`` into the same key dictionary
  (``shredcat_variant_path``, whose rows for plain and partition columns have ``variant_path = ''``:
  the column itself), ``column_type`` (the file's own type of the column), the typed keys, and the
  file's ``begin_snapshot``/``end_snapshot``, with the same partial indexes. A partition column's
  constant value is stored here too (one row per file, min = max), so it prunes through the same
  index ranges.
* ``ducklake_file_partition_value``: DuckLake's four columns (the raw, unescaped text of the path
  segment, NULL for ``__HIVE_DEFAULT_PARTITION__``; re-typing reads it), then ``column_id`` and the
  snapshot range.

Existing tables get these rows from ``shredcat refresh`` (which re-reads live files' footers).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

STAT_KEYS = ("min_num", "max_num", "min_real", "max_real", "min_bin", "max_bin")


def _live(extra: str) -> dict[str, object]:
    cond = f"end_snapshot IS NULL AND {extra}"
    return {"postgresql_where": sa.text(cond), "sqlite_where": sa.text(cond)}


def _big(name: str, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.BigInteger(), nullable=nullable)


def upgrade() -> None:
    # Plain ALTER TABLE ... ADD COLUMN on both backends: batch mode would recreate ducklake_column,
    # which other tables reference (a foreign-key failure on SQLite).
    op.add_column("ducklake_column", sa.Column("column_kind", sa.String(), nullable=False, server_default="variant"))
    op.add_column(
        "ducklake_column", sa.Column("type_declared", sa.Boolean(), nullable=False, server_default=sa.false())
    )
    op.add_column("ducklake_table", sa.Column("location", sa.String(), nullable=True))

    op.create_table(
        "ducklake_file_column_stats",
        # DuckLake's columns, in DuckLake's order.
        _big("data_file_id"),
        _big("table_id"),
        _big("column_id"),
        _big("column_size_bytes"),
        _big("value_count"),
        _big("null_count"),
        sa.Column("min_value", sa.String(), nullable=True),
        sa.Column("max_value", sa.String(), nullable=True),
        sa.Column("contains_nan", sa.Boolean(), nullable=True),
        sa.Column("extra_stats", sa.String(), nullable=True),
        # shredcat's (no foreign keys, as ducklake_file_variant_stats).
        _big("path_id"),
        sa.Column("column_type", sa.String(), nullable=False),
        _big("min_num", nullable=True),
        _big("max_num", nullable=True),
        sa.Column("min_real", sa.Double(), nullable=True),
        sa.Column("max_real", sa.Double(), nullable=True),
        sa.Column("min_bin", sa.LargeBinary(), nullable=True),
        sa.Column("max_bin", sa.LargeBinary(), nullable=True),
        _big("begin_snapshot"),
        _big("end_snapshot", nullable=True),
        sa.PrimaryKeyConstraint("data_file_id", "path_id", name="pk_ducklake_file_column_stats"),
    )
    for key in STAT_KEYS:
        op.create_index(
            f"ix_ducklake_file_column_stats_live_{key}",
            "ducklake_file_column_stats",
            ["path_id", key],
            **_live(f"{key} IS NOT NULL"),
        )

    op.create_table(
        "ducklake_file_partition_value",
        _big("data_file_id"),
        _big("table_id"),
        _big("partition_key_index"),
        sa.Column("partition_value", sa.String(), nullable=True),
        _big("column_id"),
        _big("begin_snapshot"),
        _big("end_snapshot", nullable=True),
        sa.PrimaryKeyConstraint("data_file_id", "partition_key_index", name="pk_ducklake_file_partition_value"),
    )


def downgrade() -> None:
    op.drop_table("ducklake_file_partition_value")
    for key in STAT_KEYS:
        op.drop_index(f"ix_ducklake_file_column_stats_live_{key}", table_name="ducklake_file_column_stats")
    op.drop_table("ducklake_file_column_stats")
    # Plain and partition columns have no place in the older schema; their dictionary rows go too.
    op.execute("DELETE FROM shredcat_variant_path WHERE variant_path = ''")
    op.execute(
        "DELETE FROM ducklake_table_column_stats WHERE column_id IN "
        "(SELECT column_id FROM ducklake_column WHERE column_kind <> 'variant')"
    )
    op.execute("DELETE FROM ducklake_column WHERE column_kind <> 'variant'")
    # Plain ALTER TABLE ... DROP COLUMN (SQLite >= 3.35), as in the upgrade.
    op.execute("ALTER TABLE ducklake_table DROP COLUMN location")
    op.execute("ALTER TABLE ducklake_column DROP COLUMN type_declared")
    op.execute("ALTER TABLE ducklake_column DROP COLUMN column_kind")
