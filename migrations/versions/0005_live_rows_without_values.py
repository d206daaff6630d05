"""An index of the live stats rows that hold no values, per key.

The planner replaces a one-sided range test by TRUE when every live file's stats row passes it
(:meth:`service.catalog.planner._Planner.holds_everywhere`), so that ``score > 0`` over a table
whose every score is positive pages through the live files without a lookup per file. A row
without values (NULLs only) fails every such test; this index answers "is there one?" with a
single probe. Such rows are rare, so the index is small and costs a commit next to nothing.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

WHERE = sa.text("end_snapshot IS NULL AND value_count = 0")
TABLES = ("ducklake_file_variant_stats", "ducklake_file_column_stats")


def upgrade() -> None:
    for table in TABLES:
        op.create_index(f"ix_{table}_live_novalues", table, ["path_id"], postgresql_where=WHERE, sqlite_where=WHERE)


def downgrade() -> None:
    for table in TABLES:
        op.drop_index(f"ix_{table}_live_novalues", table_name=table)
