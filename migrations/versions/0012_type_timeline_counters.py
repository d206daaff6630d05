"""A path's type timeline from its dictionary row: ``shredcat_variant_path.files_ever``,
``first_snapshot`` and ``last_end_snapshot``.

The dashboard's type timeline grouped every stats row of a path, live and removed; no index
serves removed rows by path, so PostgreSQL read the whole stats table (1.9 s at 10^6 files) after
every commit. Commits and removals keep these columns from now on; here they are filled from the
existing rows of both stats tables in one grouped pass.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ROWS = (
    "SELECT path_id, begin_snapshot, end_snapshot FROM ducklake_file_variant_stats "
    "UNION ALL SELECT path_id, begin_snapshot, end_snapshot FROM ducklake_file_column_stats"
)


def upgrade() -> None:
    op.add_column("shredcat_variant_path", sa.Column("files_ever", sa.BigInteger(), nullable=False, server_default="0"))
    op.add_column("shredcat_variant_path", sa.Column("first_snapshot", sa.BigInteger(), nullable=True))
    op.add_column("shredcat_variant_path", sa.Column("last_end_snapshot", sa.BigInteger(), nullable=True))
    # UPDATE ... FROM: PostgreSQL, and SQLite since 3.33.
    op.execute(
        "UPDATE shredcat_variant_path SET files_ever = a.n, first_snapshot = a.first, last_end_snapshot = a.last_end "
        f"FROM (SELECT path_id, count(*) AS n, min(begin_snapshot) AS first, max(end_snapshot) AS last_end FROM ({_ROWS}) s "
        "GROUP BY path_id) a WHERE a.path_id = shredcat_variant_path.path_id"
    )


def downgrade() -> None:
    with op.batch_alter_table("shredcat_variant_path") as batch:
        batch.drop_column("last_end_snapshot")
        batch.drop_column("first_snapshot")
        batch.drop_column("files_ever")
