"""Whether a key ever held a value that is not NULL: ``shredcat_variant_path.had_values``.

A plan at a past snapshot types an undeclared partition column by every type its values were ever
stored as (the live counters describe today's files, not the files live then). A NULL partition
value (``__HIVE_DEFAULT_PARTITION__``) is stored under varchar but has no type; counting it made
such a column a string at every past snapshot, so its files were never pruned on it there. Commits
set the flag from now on; here it is filled for plain and partition column keys from their stats
rows (one pass over the rows of the keys whose live counters hold no value), and for Variant
paths from the live counters (no reader needs more).

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "shredcat_variant_path", sa.Column("had_values", sa.Boolean(), nullable=False, server_default=sa.false())
    )
    op.execute("UPDATE shredcat_variant_path SET had_values = true WHERE live_value_count > 0")
    op.execute(
        "UPDATE shredcat_variant_path SET had_values = true WHERE path_id IN ("
        "SELECT s.path_id FROM ducklake_file_column_stats s WHERE s.value_count > 0 AND s.path_id IN ("
        "SELECT path_id FROM shredcat_variant_path WHERE variant_path = '' AND live_value_count = 0))"
    )


def downgrade() -> None:
    with op.batch_alter_table("shredcat_variant_path") as batch:
        batch.drop_column("had_values")
