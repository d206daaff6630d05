"""Each key's live stats rows in file order, covering what the planner's tests read.

A page of candidates comes in ``data_file_id`` order. Through the key indexes, a page of a
mid-selectivity answer (10 % of the files in one run mid-table, or 1 % spread) had to collect and
sort every candidate first, reading a heap row for each (215-240 ms at 1,000,000 files). This
index gives the same rows in file order with everything a test reads, so a page is one
index-only range scan that stops when it is full (:mod:`service.catalog.planner`).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LIVE = sa.text("end_snapshot IS NULL")
TABLES = ("ducklake_file_variant_stats", "ducklake_file_column_stats")
#: As service.catalog.models.PATH_FILE_COLUMNS when this revision was written.
COLUMNS = [
    "path_id", "data_file_id", "value_count", "min_num", "max_num", "min_real", "max_real", "contains_nan",
    "end_snapshot",
]  # fmt: skip


def upgrade() -> None:
    for table in TABLES:
        op.create_index(f"ix_{table}_live_path_file", table, COLUMNS, postgresql_where=LIVE, sqlite_where=LIVE)


def downgrade() -> None:
    for table in TABLES:
        op.drop_index(f"ix_{table}_live_path_file", table_name=table)
