"""An index of each table's live files in id order.

A plan whose candidates are dense walks the table's live files in ``data_file_id`` order and stops
when its page is full (:mod:`service.catalog.planner`). Without this index that walk follows the
primary key through every table's files; with it, through this table's live files only.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LIVE = sa.text("end_snapshot IS NULL")


def upgrade() -> None:
    op.create_index(
        "ix_ducklake_data_file_live_table_id",
        "ducklake_data_file",
        ["table_id", "data_file_id"],
        postgresql_where=LIVE,
        sqlite_where=LIVE,
    )


def downgrade() -> None:
    op.drop_index("ix_ducklake_data_file_live_table_id", table_name="ducklake_data_file")
