"""Zone maps of the stats rows: per key and run of 1,024 data file ids, their stats taken together.

A page of a clustered range that starts mid-table (a 10 % run of ids, timestamps of one week) had
to collect every candidate through the key indexes and sort them (64-325 ms at 1,000,000 files on
SQLite), or scan the file-order index from the table's first file. With a zone map the scan starts
at the first zone whose rows might pass, and skips the zones none can pass
(:mod:`service.catalog.planner`). Filled here from the live rows of both stats tables, in one pass
over their file-order indexes; kept up to date by every insert of stats rows.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: As service.catalog.models.ZONE_FILES and repository.commit.ZONE_AGGREGATES when this revision
#: was written.
ZONE_FILES = 1024
AGGREGATES = (
    "count(*), sum(s.value_count), "
    + ", ".join(
        f"CASE WHEN sum(CASE WHEN s.value_count > 0 AND s.{k} IS NULL THEN 1 ELSE 0 END) > 0 THEN NULL "
        f"ELSE {agg}(CASE WHEN s.value_count > 0 THEN s.{k} END) END"
        for agg, k in (("min", "min_num"), ("max", "max_num"), ("min", "min_real"), ("max", "max_real"))
    )
    + ", CASE WHEN sum(CASE WHEN s.value_count > 0 AND s.contains_nan IS NULL THEN 1 ELSE 0 END) > 0 THEN NULL "
    "ELSE max(CASE WHEN s.value_count > 0 AND s.contains_nan THEN 1 ELSE 0 END) = 1 END"
)
COLUMNS = "path_id, zone, files, value_count, min_num, max_num, min_real, max_real, contains_nan"


def upgrade() -> None:
    op.create_table(
        "shredcat_stats_zone",
        sa.Column("path_id", sa.BigInteger(), nullable=False),
        sa.Column("zone", sa.BigInteger(), nullable=False),
        sa.Column("files", sa.BigInteger(), nullable=False),
        sa.Column("value_count", sa.BigInteger(), nullable=False),
        sa.Column("min_num", sa.BigInteger(), nullable=True),
        sa.Column("max_num", sa.BigInteger(), nullable=True),
        sa.Column("min_real", sa.Double(), nullable=True),
        sa.Column("max_real", sa.Double(), nullable=True),
        sa.Column("contains_nan", sa.Boolean(), nullable=True),
        sa.PrimaryKeyConstraint("path_id", "zone", name="pk_shredcat_stats_zone"),
    )
    # The two stats tables hold different keys (Variant paths; plain and partition columns), so
    # each (path_id, zone) comes from one of them.
    for table in ("ducklake_file_variant_stats", "ducklake_file_column_stats"):
        op.execute(
            f"INSERT INTO shredcat_stats_zone ({COLUMNS}) "
            f"SELECT s.path_id, s.data_file_id / {ZONE_FILES}, {AGGREGATES} FROM {table} s "
            f"WHERE s.end_snapshot IS NULL GROUP BY s.path_id, s.data_file_id / {ZONE_FILES}"
        )


def downgrade() -> None:
    op.drop_table("shredcat_stats_zone")
