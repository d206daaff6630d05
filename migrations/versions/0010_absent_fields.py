"""Fully shredded objects per file, so plans prove a Variant field absent without reading footers.

``shredcat_object_shape`` holds each distinct (column, object path, field set) of a table;
``shredcat_file_object`` which shapes each data file was proven to have (issue 34). Files committed
before this revision have no rows: nothing is proven for them (unknown, never absent), so they are
kept as before. Downgrade drops both tables (the facts are re-read on the next registration).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "shredcat_object_shape",
        sa.Column("shape_id", BIG_ID, autoincrement=True, nullable=False),
        sa.Column("table_id", BIG_ID, nullable=False),
        sa.Column("column_id", BIG_ID, nullable=False),
        sa.Column("object_path", sa.String(), nullable=False),
        sa.Column("fields", sa.Text(), nullable=False),
        sa.Column("fields_digest", sa.String(64), nullable=False),
        sa.Column("live_file_count", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["column_id"], ["ducklake_column.column_id"], name="fk_shredcat_object_shape_column_id_ducklake_column"
        ),
        sa.ForeignKeyConstraint(
            ["table_id"], ["ducklake_table.table_id"], name="fk_shredcat_object_shape_table_id_ducklake_table"
        ),
        sa.PrimaryKeyConstraint("shape_id", name="pk_shredcat_object_shape"),
    )
    op.create_index(
        "uq_shredcat_object_shape_key",
        "shredcat_object_shape",
        ["table_id", "column_id", "object_path", "fields_digest"],
        unique=True,
    )
    op.create_table(
        "shredcat_file_object",
        sa.Column("data_file_id", sa.BigInteger(), nullable=False),
        sa.Column("shape_id", sa.BigInteger(), nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("data_file_id", "shape_id", name="pk_shredcat_file_object"),
    )
    op.create_index("ix_shredcat_file_object_shape_id", "shredcat_file_object", ["shape_id", "data_file_id"])


def downgrade() -> None:
    op.drop_index("ix_shredcat_file_object_shape_id", table_name="shredcat_file_object")
    op.drop_table("shredcat_file_object")
    op.drop_index("uq_shredcat_object_shape_key", table_name="shredcat_object_shape")
    op.drop_table("shredcat_object_shape")
